use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::support::Hearth;

const SLOW: &str = r#"
name: slow
turns:
  - steps:
      - text: "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty"
        stream: words
        delay_ms: 150
"#;

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
    assert_eq!(last["action"]["stop_reason"], "end_turn");
    let shown = hearth.ok(&["sessions", "show", "--json", &session]);
    let shown: serde_json::Value = serde_json::from_str(&shown).unwrap();
    let turns = shown["chats"][0]["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[1]["user"]["text"], "second question");
    assert_eq!(hearth.session_uris().len(), 1);
}

/// Starts a slow answer and reads stdout until "four" arrived; a thread keeps draining
/// stdout afterwards so the process never writes into a closed pipe.
fn spawn_slow(hearth: &Hearth, prompt: &str) -> (std::process::Child, String) {
    let scenario = hearth.write("slow.yaml", SLOW);
    let mut child = hearth
        .command()
        .env("HEARTH_REPLAY_DELAY_SCALE", "1")
        .args(["run", "--scenario", scenario.to_str().unwrap(), prompt])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = String::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut buffer = [0_u8; 64];
    while !seen.contains("four") {
        assert!(Instant::now() < deadline, "no streamed text: {seen}");
        let count = stdout.read(&mut buffer).unwrap();
        assert!(count > 0, "stdout closed early: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buffer[..count]));
    }
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    (child, seen)
}

#[test]
fn kill_9_mid_answer_keeps_the_partial_answer_marked_incomplete() {
    let hearth = Hearth::new();
    let (mut child, seen) = spawn_slow(&hearth, "count slowly");
    // Longer than the checkpoint interval, shorter than the whole answer.
    std::thread::sleep(Duration::from_millis(700));
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
        !show.contains("twenty"),
        "the answer cannot have finished: {show}"
    );
}

#[test]
fn a_closed_stdout_aborts_the_turn_and_keeps_what_streamed() {
    let hearth = Hearth::new();
    let (mut child, seen) = spawn_slow_unread(&hearth, "count slowly");
    let status = child.wait().unwrap();
    assert!(!status.success());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(stderr.contains("partial answer saved"), "{stderr}");
    let session = hearth.session_uris().remove(0);
    let show = hearth.ok(&["sessions", "show", &session]);
    assert!(show.contains(seen.trim()), "{show}");
    assert!(show.contains("[aborted]"), "{show}");
}

/// Like `spawn_slow`, but closes stdout after "four" arrived.
fn spawn_slow_unread(hearth: &Hearth, prompt: &str) -> (std::process::Child, String) {
    let scenario = hearth.write("slow.yaml", SLOW);
    let mut child = hearth
        .command()
        .env("HEARTH_REPLAY_DELAY_SCALE", "1")
        .args(["run", "--scenario", scenario.to_str().unwrap(), prompt])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = String::new();
    let mut buffer = [0_u8; 64];
    while !seen.contains("four") {
        let count = stdout.read(&mut buffer).unwrap();
        assert!(count > 0, "stdout closed early: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buffer[..count]));
    }
    drop(stdout);
    (child, seen)
}

#[test]
fn ctrl_c_aborts_the_turn_and_keeps_what_streamed() {
    let hearth = Hearth::new();
    let (mut child, seen) = spawn_slow(&hearth, "count slowly");
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let status = child.wait().unwrap();
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
        let output = child.wait_with_output().unwrap();
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
