//! What `hearth sessions …` and `hearth chats …` promise about stored conversations:
//! deleting one erases what was said in it, one damaged turn does not hide the rest, and a
//! database that cannot be written can still be read.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output};

use hearth_test_support::{BoundedCommand, PROCESS_WAIT};

use super::support::{Hearth, stderr_line_count};
use super::tool_support::tamper;

/// The database and its write-ahead log, as someone reading the disk sees them.
fn raw_bytes(database: &Path) -> Vec<u8> {
    let mut bytes = std::fs::read(database).unwrap();
    let mut wal = database.as_os_str().to_owned();
    wal.push("-wal");
    if let Ok(log) = std::fs::read(wal) {
        bytes.extend(log);
    }
    bytes
}

fn holds(bytes: &[u8], text: &str) -> bool {
    bytes
        .windows(text.len())
        .any(|window| window == text.as_bytes())
}

fn default_chat(session: &str) -> String {
    format!(
        "{}/default",
        session.replace("hearth-session:", "hearth-chat:")
    )
}

#[test]
fn a_deleted_session_emptied_from_the_trash_is_erased_from_the_database_and_its_log() {
    let hearth = Hearth::new();
    let secret = format!("pin-{}", std::process::id() * 7919);
    hearth.ok(&["run", &format!("my bank pin is {secret}")]);
    let session = hearth.session_uris().remove(0);
    hearth.ok(&["run", "--session", &session, &format!("again: {secret}")]);
    hearth.ok(&["run", "keep this one: walnut-kept"]);
    assert!(
        holds(&raw_bytes(&hearth.database()), &secret),
        "the control failed: the prompt never reached the disk"
    );

    hearth.ok(&["sessions", "delete", &session]);
    // In the trash, restorable: its words are kept until the trash is emptied.
    assert!(holds(&raw_bytes(&hearth.database()), &secret));
    hearth.ok(&["trash", "empty"]);

    let bytes = raw_bytes(&hearth.database());
    assert!(
        !holds(&bytes, &secret),
        "the deleted session's words are still in hearth.db or hearth.db-wal"
    );
    assert!(
        holds(&bytes, "walnut-kept"),
        "the other session was damaged"
    );
    let error = hearth.fails(&["sessions", "show", &session]);
    assert!(error.contains("was deleted"), "{error}");
    assert_eq!(hearth.session_uris().len(), 1);
}

#[test]
fn a_damaged_turn_is_shown_as_unreadable_and_the_rest_of_the_session_reads() {
    let hearth = Hearth::new();
    hearth.ok(&["run", "first question"]);
    let session = hearth.session_uris().remove(0);
    hearth.ok(&["run", "--session", &session, "second question"]);
    tamper(
        &hearth.database(),
        &["UPDATE turns SET body = '{\"id\": \"cut off' WHERE seq = 1"],
    );
    let shown: serde_json::Value =
        serde_json::from_str(&hearth.ok(&["sessions", "show", "--json", &session])).unwrap();
    let turns = shown["chats"][0]["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[0]["stopReason"], "error");
    let message = turns[0]["parts"][0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("this turn could not be read"),
        "{message}"
    );
    assert!(message.contains(&default_chat(&session)), "{message}");
    let damaged = turns[0]["id"].as_str().unwrap();
    assert!(message.contains(damaged), "{message}");
    assert_eq!(turns[1]["user"]["text"], "second question");
    assert!(
        turns[1]["parts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|part| part["type"] == "text")
    );

    let text = hearth.ok(&["chats", "show", &default_chat(&session)]);
    assert!(text.contains("this turn could not be read"), "{text}");
    assert!(text.contains("› second question"), "{text}");
    let list = hearth.ok(&["sessions", "list"]);
    assert!(list.contains(&session), "{list}");
}

/// Runs `hearth` as a user file permissions apply to: this one, or — when the tests run
/// as root, whom permissions do not stop — `nobody`, owning the data directory.
fn unprivileged(hearth: &Hearth, args: &[&str]) -> Output {
    let mut command: Command = hearth.command();
    command.args(args);
    let home = hearth.home.path();
    let running_as_root = tempfile::tempfile().unwrap().metadata().unwrap().uid() == 0;
    if running_as_root {
        use std::os::unix::process::CommandExt;
        const NOBODY: u32 = 65534;
        chown_tree(home, NOBODY);
        command.uid(NOBODY).gid(NOBODY);
    }
    command.output_within(PROCESS_WAIT)
}

fn chown_tree(path: &Path, owner: u32) {
    std::os::unix::fs::lchown(path, Some(owner), Some(owner)).unwrap();
    if path.is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            chown_tree(&entry.unwrap().path(), owner);
        }
    }
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Every read-only command works, with one note on stderr; a change fails saying why.
fn reads_and_refuses_changes(hearth: &Hearth, session: &str) {
    let chat = default_chat(session);
    for args in [
        vec!["sessions", "list"],
        vec!["sessions", "show", session],
        vec!["chats", "list", session],
        vec!["chats", "show", &chat],
        vec!["audit", "list"],
        vec!["proposals", "list"],
    ] {
        let output = unprivileged(hearth, &args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "hearth {args:?} failed: {stderr}");
        assert!(
            stderr.contains("is open for reading only"),
            "hearth {args:?}: {stderr}"
        );
        // Besides, once, that a database file others could read was made private.
        let tightened = usize::from(stderr.contains("readable by you only"));
        assert_eq!(
            stderr_line_count(&stderr) - tightened,
            1,
            "hearth {args:?}: {stderr}"
        );
        if args[0] != "audit" && args[0] != "proposals" {
            let stdout = String::from_utf8_lossy(&output.stdout);
            assert!(
                stdout.contains("walnut") || stdout.contains(session),
                "hearth {args:?}: {stdout}"
            );
        }
    }
    let output = unprivileged(hearth, &["sessions", "delete", session]);
    assert!(!output.status.success(), "a read-only database was changed");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("open for reading only"), "{stderr}");
    assert!(
        stderr.contains(&hearth.database().display().to_string()),
        "{stderr}"
    );
}

#[test]
fn a_database_file_that_cannot_be_written_is_still_read() {
    let hearth = Hearth::new();
    hearth.ok(&["run", "walnut"]);
    let session = hearth.session_uris().remove(0);
    set_mode(&hearth.database(), 0o444);
    reads_and_refuses_changes(&hearth, &session);
}

#[test]
fn a_data_directory_that_cannot_be_written_is_still_read() {
    let hearth = Hearth::new();
    hearth.ok(&["run", "walnut"]);
    let session = hearth.session_uris().remove(0);
    // No log beside the database, and none can be made.
    tamper(&hearth.database(), &["PRAGMA wal_checkpoint(TRUNCATE)"]);
    for suffix in ["-wal", "-shm"] {
        let mut companion = hearth.database().into_os_string();
        companion.push(suffix);
        if let Err(error) = std::fs::remove_file(&companion) {
            assert_eq!(error.kind(), std::io::ErrorKind::NotFound, "{error}");
        }
    }
    set_mode(hearth.home.path(), 0o500);
    reads_and_refuses_changes(&hearth, &session);
    set_mode(hearth.home.path(), 0o700);
}

/// A session whose provider is not configured any more can still be forked (a fork
/// copies stored turns) and deleted; the deletion says in a `hearth:` note that only
/// Hearth's record went, never in a raw log line.
#[test]
fn a_session_whose_provider_is_gone_is_forked_and_deleted_with_a_clear_note() {
    use hearth_test_support::OpenAiStream;

    use super::mock::{MODEL, configure, mock_config, ok, run, server};

    let model = server();
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&model));
    model.enqueue(OpenAiStream::text_answer(MODEL, &["one"], 1, 1));
    model.enqueue(OpenAiStream::text_answer(MODEL, &["two"], 1, 1));
    ok(&hearth, &["run", "first"]);
    let session = hearth.session_uris().remove(0);
    ok(&hearth, &["run", "--session", &session, "second"]);
    // The provider is taken out of the configuration.
    configure(&hearth, "[defaults]\ntime_zone = \"Europe/Berlin\"\n");

    let (forked, _) = ok(&hearth, &["sessions", "fork", &session]);
    let forked = forked.trim().to_owned();
    assert!(forked.starts_with("hearth-session:mock/"), "{forked}");
    let shown = hearth.ok(&["sessions", "show", &forked]);
    assert!(shown.contains("› first\none"), "{shown}");
    assert!(shown.contains("› second\ntwo"), "{shown}");
    let turns: serde_json::Value =
        serde_json::from_str(&hearth.ok(&["chats", "show", "--json", &default_chat(&session)]))
            .unwrap();
    let first_turn = turns["turns"][0]["id"].as_str().unwrap().to_owned();
    let (at_first, _) = ok(
        &hearth,
        &["sessions", "fork", &session, "--turn", &first_turn],
    );
    let at_first = hearth.ok(&["sessions", "show", at_first.trim()]);
    assert!(at_first.contains("› first\none"), "{at_first}");
    assert!(!at_first.contains("second"), "{at_first}");

    let output = run(&hearth, &["sessions", "delete", &session]);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(output.status.success(), "{stderr}");
    assert!(
        String::from_utf8(output.stdout)
            .unwrap()
            .starts_with(&format!("deleted {session}")),
    );
    assert!(
        stderr.contains("hearth: its agent could not open it (")
            && stderr.contains("only Hearth's record was deleted"),
        "{stderr}"
    );
    assert!(!stderr.contains("WARN"), "{stderr}");
    assert!(!hearth.session_uris().contains(&session));
    assert!(hearth.session_uris().contains(&forked));
}
