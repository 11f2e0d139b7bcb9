//! `hearth export` and `hearth import`: a data directory holding every kind of turn —
//! Hearth's own agent calling a tool that staged a proposal, an external (ACP test)
//! agent's turn with a permission request, a turn killed mid-answer (incomplete), a turn
//! that failed, a turn with an attachment, a fork, a project, a session in the trash —
//! exported with `--all`, imported into a fresh data directory and exported again: the
//! SHA-256 of every record (every line after the header: each project, session, chat,
//! turn, backing and proposal row with all its columns, and the end record's count) is
//! the same in both archives. Importing again skips everything and names it; a cut or
//! foreign archive fails and imports nothing. A session reads as Markdown too.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

use hearth_test_support::{
    BoundedCommand, MockModelServer, MockResponse, OpenAiStream, PROCESS_WAIT, acp_test_agent,
};
use pretty_assertions::assert_eq;

use super::mock::{MODEL, command, mock_config, ok, server, tool_call};
use super::support::Hearth;

/// Every record after the header, by the SHA-256 of its line, counted.
fn record_hashes(archive: &Path) -> BTreeMap<String, usize> {
    let text = std::fs::read_to_string(archive).unwrap();
    let mut hashes = BTreeMap::new();
    for line in text.lines().skip(1) {
        *hashes
            .entry(hearth_fs::sha256_hex(line.as_bytes()))
            .or_default() += 1;
    }
    hashes
}

fn types(archive: &Path) -> Vec<String> {
    std::fs::read_to_string(archive)
        .unwrap()
        .lines()
        .map(|line| {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            record["type"].as_str().unwrap().to_owned()
        })
        .collect()
}

/// A replayed answer that stops half-way for ten minutes.
const SLOW: &str = r#"
name: slow
turns:
  - steps:
      - text: "half an answer "
      - text: "never sent"
        delay_ms: 600000
"#;

/// A turn killed while its answer streams: it stays, marked incomplete.
fn killed_mid_answer(hearth: &Hearth, work: &Path) {
    let scenario = work.join("slow.yaml");
    std::fs::write(&scenario, SLOW).unwrap();
    let mut child = command(hearth)
        .args(["run", "--provider", "replay", "--scenario"])
        .arg(&scenario)
        .arg("a long story")
        .env("HEARTH_REPLAY_DELAY_SCALE", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let deadline = Instant::now() + PROCESS_WAIT;
    let mut seen = Vec::new();
    let mut buffer = [0_u8; 256];
    while !String::from_utf8_lossy(&seen).contains("half an") {
        assert!(Instant::now() < deadline, "the answer never started");
        let read = stdout.read(&mut buffer).unwrap();
        assert!(read > 0, "the run ended before its answer streamed");
        seen.extend_from_slice(&buffer[..read]);
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

/// A config with the mock model, a calendar and the ACP test agent `tester`.
fn configure_everything(hearth: &Hearth, work: &Path, server: &MockModelServer) {
    let calendar = hearth.home.path().join("home.ics");
    hearth.write(
        "config.toml",
        &format!(
            "{}\n[calendars.home]\nkind = \"ics\"\npath = {:?}\ndefault = true\n\n[agents.tester]\ncommand = \"{}\"\nenv = {{ HEARTH_TEST_AGENT_STATE = \"{}\" }}\n",
            mock_config(server),
            calendar.display().to_string(),
            acp_test_agent().display(),
            work.join("agent-state").display()
        ),
    );
}

/// Fills a data directory with every kind of turn; returns a session to export alone.
fn every_kind_of_turn(hearth: &Hearth, work: &Path) -> String {
    let server = server();
    configure_everything(hearth, work, &server);
    let folder = work.join("thesis");
    hearth.ok(&[
        "projects",
        "new",
        "Thesis",
        "--folder",
        folder.to_str().unwrap(),
    ]);
    server.enqueue(OpenAiStream::text_answer(MODEL, &["Noted."], 1, 1));
    ok(hearth, &["run", "--project", "Thesis", "start the thesis"]);

    server.enqueue(tool_call(
        "event_create",
        r#"{"title": "Dentist", "start": "2030-03-04T09:00"}"#,
    ));
    server.enqueue(OpenAiStream::text_answer(
        MODEL,
        &["It awaits your approval."],
        1,
        1,
    ));
    ok(hearth, &["run", "book the dentist"]);
    let staged = hearth.session_uris().remove(0);
    assert!(hearth.ok(&["proposals", "list"]).contains("Dentist"));

    std::fs::write(work.join("notes.md"), "# Notes\nship on Friday\n").unwrap();
    server.enqueue(OpenAiStream::text_answer(MODEL, &["Ship Friday."], 1, 1));
    let attached = command(hearth)
        .current_dir(work)
        .args(["run", "--attach", "notes.md", "what do they say?"])
        .output_within(PROCESS_WAIT);
    assert!(attached.status.success(), "{attached:?}");
    hearth.ok(&["sessions", "fork", &hearth.session_uris().remove(0)]);

    let target = work.join("refused.txt");
    let asked = command(hearth)
        .current_dir(work)
        .args([
            "run",
            "--agent",
            "tester",
            &format!("/write {} nope", target.display()),
        ])
        .output_within(PROCESS_WAIT);
    assert!(asked.status.success(), "{asked:?}");

    killed_mid_answer(hearth, work);
    server.enqueue(MockResponse::reset());
    assert!(
        !command(hearth)
            .args(["run", "this one fails"])
            .output_within(PROCESS_WAIT)
            .status
            .success()
    );
    server.enqueue(OpenAiStream::text_answer(MODEL, &["Gone soon."], 1, 1));
    ok(hearth, &["run", "delete me later"]);
    hearth.ok(&["sessions", "delete", &hearth.session_uris().remove(0)]);
    staged
}

/// The archive holds every kind of record, and the turns as stored.
fn archive_holds_every_kind(archive: &Path) {
    let kinds = types(archive);
    for kind in [
        "header", "project", "session", "chat", "turn", "backing", "proposal", "end",
    ] {
        assert!(
            kinds.iter().any(|found| found == kind),
            "no {kind} record: {kinds:?}"
        );
    }

    // The turns are there as stored: the attachment, the tool call, the permission
    // request, the turn cut short (still running when its process died: its prompt is
    // kept, its answer as far as it was checkpointed), the failure.
    let text = std::fs::read_to_string(archive).unwrap();
    for stored in [
        "notes.md",
        "event_create",
        "permission_request",
        "\"running\":1",
        "a long story",
        "\\\"stop_reason\\\":\\\"error\\\"",
    ] {
        assert!(text.contains(stored), "no {stored} in the archive");
    }
}

/// Imports `archive` again: everything is already there, skipped and named, and the
/// data directory exports the same records as before.
fn imports_again_and_skips_everything(second: &Hearth, archive: &Path, again: &Path, staged: &str) {
    // Again: everything is already there, skipped and named, nothing changed.
    let output = second.run(&["import", archive.to_str().unwrap()]);
    assert!(output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains(&format!(
            "skipped session {staged}: this data directory already has it"
        )),
        "{said}"
    );
    second.ok(&["export", "--all", "-o", again.to_str().unwrap()]);
    assert_eq!(record_hashes(again), record_hashes(archive));
}

#[test]
fn everything_exported_imports_elsewhere_and_exports_the_same_records() {
    let work = tempfile::tempdir().unwrap();
    let work = work.path().canonicalize().unwrap();
    let first = Hearth::new();
    let staged = every_kind_of_turn(&first, &work);
    let archive = work.join("all.jsonl");
    first.ok(&["export", "--all", "-o", archive.to_str().unwrap()]);
    archive_holds_every_kind(&archive);
    let second = Hearth::new();
    let imported = second.ok(&["import", archive.to_str().unwrap()]);
    assert!(
        imported.starts_with("Imported 1 project, 8 sessions"),
        "{imported}"
    );
    let again = work.join("again.jsonl");
    second.ok(&["export", "--all", "-o", again.to_str().unwrap()]);
    assert_eq!(record_hashes(&again), record_hashes(&archive));
    assert_eq!(second.session_uris(), first.session_uris());
    for session in first.session_uris() {
        assert_eq!(
            second.ok(&["sessions", "show", &session, "--json"]),
            first.ok(&["sessions", "show", &session, "--json"])
        );
    }
    assert_eq!(
        second.ok(&["trash", "list", "--json"]),
        first.ok(&["trash", "list", "--json"])
    );
    assert_eq!(
        second.ok(&["proposals", "list", "--json"]),
        first.ok(&["proposals", "list", "--json"])
    );
    let found = second.ok(&["search", "dentist"]);
    assert!(found.contains("book the «dentist»"), "{found}");

    imports_again_and_skips_everything(&second, &archive, &again, &staged);
    let markdown = first.ok(&["export", &staged]);
    assert!(
        markdown.contains("**Tool call** `event_create`"),
        "{markdown}"
    );
    assert!(markdown.contains("> book the dentist"), "{markdown}");
}

#[test]
fn a_cut_or_foreign_archive_imports_nothing_and_says_why() {
    let work = tempfile::tempdir().unwrap();
    let first = Hearth::new();
    let server = server();
    super::mock::configure(&first, &mock_config(&server));
    server.enqueue(OpenAiStream::text_answer(MODEL, &["Kept."], 1, 1));
    ok(&first, &["run", "keep this"]);
    let session = first.session_uris().remove(0);
    let archive = work.path().join("one.jsonl");
    first.ok(&[
        "export",
        &session,
        "--format",
        "jsonl",
        "-o",
        archive.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&archive).unwrap();

    let cut = work.path().join("cut.jsonl");
    std::fs::write(&cut, &text[..text.len() / 2]).unwrap();
    let foreign = work.path().join("foreign.jsonl");
    std::fs::write(&foreign, "{\"conversation\": []}\n").unwrap();
    let second = Hearth::new();
    for (file, why) in [
        (&cut, "nothing was imported"),
        (&foreign, "not a Hearth archive"),
    ] {
        let error = second.fails(&["import", file.to_str().unwrap()]);
        assert!(error.contains(why), "{error}");
        assert!(second.session_uris().is_empty());
    }
    let imported = second.ok(&["import", archive.to_str().unwrap()]);
    assert_eq!(
        imported,
        "Imported 0 projects, 1 session (1 chat, 1 turn) and 0 proposals.\n"
    );
    assert_eq!(second.session_uris(), vec![session]);
}

/// `hearth ARGS` of `hearth` with its store on PostgreSQL at `url`; what it printed.
fn ok_on_postgres(hearth: &Hearth, url: &str, args: &[&str]) -> String {
    let output = hearth
        .command()
        .env("HEARTH_STORE_URL", url)
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "hearth {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test]
async fn everything_moves_into_a_team_servers_postgresql_and_back_the_same() {
    let Some(url) = hearth_test_support::postgres::fresh_database().await else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let work = work.path().canonicalize().unwrap();
    let laptop = Hearth::new();
    every_kind_of_turn(&laptop, &work);
    let archive = work.join("all.jsonl");
    laptop.ok(&["export", "--all", "-o", archive.to_str().unwrap()]);

    let team = Hearth::new();
    let imported = ok_on_postgres(&team, &url, &["import", archive.to_str().unwrap()]);
    assert!(
        imported.starts_with("Imported 1 project, 8 sessions"),
        "{imported}"
    );
    let listed = ok_on_postgres(&team, &url, &["sessions", "list", "--json"]);
    assert_eq!(listed, laptop.ok(&["sessions", "list", "--json"]));
    let from_team = work.join("team.jsonl");
    ok_on_postgres(
        &team,
        &url,
        &["export", "--all", "-o", from_team.to_str().unwrap()],
    );
    assert_eq!(record_hashes(&from_team), record_hashes(&archive));

    // The team's archive imports into a new laptop as it was.
    let back = Hearth::new();
    back.ok(&["import", from_team.to_str().unwrap()]);
    assert_eq!(back.session_uris(), laptop.session_uris());
}
