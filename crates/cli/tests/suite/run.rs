use std::io::Read;
use std::process::{Child, Stdio};
use std::sync::mpsc;

use hearth_test_support::{BoundedChild, PROCESS_WAIT, WAIT};

use super::support::Hearth;

/// A word every 150 ms for a minute and a half, ending in "finale": no test waits for its
/// end, so none depends on the machine being quick enough to act before it.
fn slow_scenario() -> String {
    format!(
        "name: slow\nturns:\n  - steps:\n      - text: \"one two three four{} finale\"\n        stream: words\n        delay_ms: 150\n",
        " more".repeat(600)
    )
}

#[test]
fn run_streams_the_demo_and_the_session_is_listed() {
    let hearth = Hearth::new();
    let output = hearth.run(&["run", "hello"]);
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stdout.contains("scripted demo"), "{stdout}");
    assert!(stderr.contains("built-in demo"), "{stderr}");
    let sessions = hearth.session_uris();
    assert_eq!(sessions.len(), 1);
    let list = hearth.ok(&["sessions", "list"]);
    assert!(
        list.contains("hello") && list.contains(&sessions[0]),
        "{list}"
    );
    let show = hearth.ok(&["sessions", "show", &sessions[0]]);
    assert!(show.contains("› hello"), "{show}");
    assert!(show.contains("provider  replay (demo)"), "{show}");
    assert!(show.contains("scripted demo"), "{show}");
    assert!(!show.contains("[incomplete]"), "{show}");
}

/// The write-ahead log beside the database, and its length (0 when there is none).
fn log_length(hearth: &Hearth) -> u64 {
    let mut log = hearth.database().into_os_string();
    log.push("-wal");
    std::fs::metadata(log).map_or(0, |metadata| metadata.len())
}

#[test]
fn a_finished_command_folds_its_write_ahead_log_into_the_database() {
    let hearth = Hearth::new();
    for prompt in ["first", "second", "third"] {
        hearth.ok(&["run", prompt]);
        // Left behind, the log would be read back in whole by the next command to open
        // the database.
        assert_eq!(log_length(&hearth), 0, "after `hearth run {prompt}`");
    }
    let list = hearth.ok(&["sessions", "list"]);
    assert_eq!(log_length(&hearth), 0, "after `hearth sessions list`");
    for prompt in ["first", "second", "third"] {
        assert!(list.contains(prompt), "{list}");
    }
}

#[test]
fn run_continues_a_session_and_prints_json_events() {
    let hearth = Hearth::new();
    hearth.ok(&["run", "first question"]);
    let session = hearth.session_uris().remove(0);
    let json = hearth.ok(&["run", "--json", "--session", &session, "second question"]);
    let lines: Vec<serde_json::Value> = json
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "started");
    assert_eq!(lines[0]["session"], session.as_str());
    assert!(
        lines
            .iter()
            .any(|line| line["action"]["type"] == "text_delta")
    );
    let last = lines.last().unwrap();
    assert_eq!(last["action"]["type"], "turn_completed");
    assert_eq!(last["action"]["stopReason"], "end_turn");
    let shown = hearth.ok(&["sessions", "show", "--json", &session]);
    let shown: serde_json::Value = serde_json::from_str(&shown).unwrap();
    let turns = shown["chats"][0]["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[1]["user"]["text"], "second question");
    assert_eq!(hearth.session_uris().len(), 1);
}

/// What becomes of the slow answer's stdout once "four" arrived.
#[derive(Clone, Copy)]
enum Then {
    /// A thread drains it, so the process never writes into a closed pipe.
    Drain,
    /// It is closed.
    Close,
}

/// Starts a slow answer and reads stdout (bounded) until "four" arrived; returns the
/// process and what it printed so far.
fn spawn_slow(hearth: &Hearth, prompt: &str, then: Then) -> (Child, String) {
    let scenario = hearth.write("slow.yaml", &slow_scenario());
    let mut child = hearth
        .command()
        .env("HEARTH_REPLAY_DELAY_SCALE", "1")
        .args(["run", "--scenario", scenario.to_str().unwrap(), prompt])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let (arrived, seen) = mpsc::channel();
    std::thread::spawn(move || {
        let mut seen = String::new();
        let mut buffer = [0_u8; 64];
        while !seen.contains("four") {
            match stdout.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(count) => seen.push_str(&String::from_utf8_lossy(&buffer[..count])),
            }
        }
        arrived.send(seen).ok();
        match then {
            Then::Drain => {
                std::io::copy(&mut stdout, &mut std::io::sink()).ok();
            }
            Then::Close => drop(stdout),
        }
    });
    let Ok(seen) = seen.recv_timeout(WAIT) else {
        child.kill().unwrap();
        child.wait().unwrap();
        panic!("no streamed text within {WAIT:?}");
    };
    assert!(seen.contains("four"), "stdout closed early: {seen}");
    (child, seen)
}

#[test]
fn kill_9_mid_answer_keeps_the_partial_answer_marked_incomplete() {
    let hearth = Hearth::new();
    let (mut child, seen) = spawn_slow(&hearth, "count slowly", Then::Drain);
    // Killed once a checkpoint holds what streamed so far.
    super::mock::eventually("a checkpoint of the streamed words", || {
        hearth.session_uris().first().is_some_and(|session| {
            hearth
                .ok(&["sessions", "show", session])
                .contains(seen.trim())
        })
    });
    child.kill().unwrap();
    child.wait().unwrap();
    let session = hearth.session_uris().remove(0);
    let show = hearth.ok(&["sessions", "show", &session]);
    assert!(show.contains("› count slowly"), "{show}");
    assert!(
        show.contains(seen.trim()),
        "the partial answer {seen:?} is missing:\n{show}"
    );
    assert!(show.contains("[incomplete]"), "{show}");
    assert!(
        !show.contains("finale"),
        "the answer cannot have finished: {show}"
    );
}

#[test]
fn a_closed_stdout_aborts_the_turn_and_keeps_what_streamed() {
    let hearth = Hearth::new();
    let (mut child, seen) = spawn_slow(&hearth, "count slowly", Then::Close);
    let status = child.wait_within(PROCESS_WAIT);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    // The reader went away (`| head -1`): Hearth ends quietly, as a pipeline expects.
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(
        !stderr.contains("error") && !stderr.contains("Broken pipe"),
        "{stderr}"
    );
    let session = hearth.session_uris().remove(0);
    let show = hearth.ok(&["sessions", "show", &session]);
    assert!(show.contains(seen.trim()), "{show}");
    assert!(show.contains("[aborted]"), "{show}");
}

#[test]
fn ctrl_c_aborts_the_turn_and_keeps_what_streamed() {
    let hearth = Hearth::new();
    let (mut child, seen) = spawn_slow(&hearth, "count slowly", Then::Drain);
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let status = child.wait_within(PROCESS_WAIT);
    assert_eq!(status.code(), Some(130));
    let session = hearth.session_uris().remove(0);
    let show = hearth.ok(&["sessions", "show", &session]);
    assert!(show.contains(seen.trim()), "{show}");
    assert!(show.contains("[aborted]"), "{show}");
}

#[test]
fn several_processes_share_one_data_directory() {
    let hearth = Hearth::new();
    let children: Vec<_> = (0..4)
        .map(|index| {
            hearth
                .command()
                .args(["run", &format!("question {index}")])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output_within(PROCESS_WAIT);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    assert_eq!(hearth.session_uris().len(), 4);
}

#[test]
fn sessions_fork_and_delete() {
    let hearth = Hearth::new();
    hearth.ok(&["run", "one"]);
    let session = hearth.session_uris().remove(0);
    hearth.ok(&["run", "--session", &session, "two"]);
    let forked = hearth.ok(&["sessions", "fork", &session]).trim().to_owned();
    assert!(forked.starts_with("hearth-session:replay/"), "{forked}");
    let chats = hearth.ok(&["chats", "list", &forked]);
    assert!(chats.contains("default chat"), "{chats}");
    let shown = hearth.ok(&[
        "chats",
        "show",
        "--json",
        &format!(
            "{}/default",
            forked.replace("hearth-session:", "hearth-chat:")
        ),
    ]);
    let shown: serde_json::Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(shown["turns"].as_array().unwrap().len(), 2);
    hearth.ok(&["sessions", "delete", &session]);
    assert_eq!(hearth.session_uris(), vec![forked]);
    let error = hearth.fails(&["sessions", "show", &session]);
    assert!(error.contains("was deleted"), "{error}");
}
