//! `hearth run` when saving fails or another process answers in the chat: on a real,
//! nearly full file system the answer is printed, the exit status is 74 and the message
//! says what was not saved; two runs on one session at once never interleave (the second
//! is refused, exit status 75, naming the first's process); a killed run's lease is taken
//! over at once; a chat process builds on a turn another process added meanwhile.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hearth_test_support::OpenAiStream;
use pretty_assertions::assert_eq;

use super::mock::{MODEL, completions, configure, conversation, mock_config, pair, server};
use super::support::Hearth;

/// How long any process of these tests may take.
const DEADLINE: Duration = Duration::from_secs(60);

/// A scenario with a turn that stops half-way for ten minutes, a quick one, and a small
/// one for any other prompt.
const SCENARIO: &str = r#"
name: leases
turns:
  - when: slow
    steps:
      - text: "first part "
      - text: "second part"
        delay_ms: 600000
  - when: quick
    steps:
      - text: "quick answer"
  - steps:
      - text: "small answer"
"#;

/// A child process whose stdout is read as it arrives.
struct Running {
    child: Child,
    stdout: Arc<Mutex<String>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Running {
    fn spawn(mut command: Command) -> Self {
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        Self::from_child(child)
    }

    /// Reads a spawned child's stdout as it arrives.
    fn from_child(mut child: Child) -> Self {
        let stdout = Arc::new(Mutex::new(String::new()));
        let reader = {
            let seen = Arc::clone(&stdout);
            let mut pipe = child.stdout.take().unwrap();
            std::thread::spawn(move || {
                let mut buffer = [0_u8; 4096];
                while let Ok(count) = pipe.read(&mut buffer) {
                    if count == 0 {
                        break;
                    }
                    seen.lock()
                        .unwrap()
                        .push_str(&String::from_utf8_lossy(&buffer[..count]));
                }
            })
        };
        Self {
            child,
            stdout,
            reader: Some(reader),
        }
    }

    /// Waits (bounded) until stdout holds `text`.
    fn wait_for(&mut self, text: &str) {
        let deadline = Instant::now() + DEADLINE;
        while !self.stdout.lock().unwrap().contains(text) {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!(
                    "the process ended ({status}) before printing {text:?}: {}",
                    self.stdout.lock().unwrap()
                );
            }
            assert!(Instant::now() < deadline, "{text:?} never arrived");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits (bounded) for the process to end; returns its status, stdout and stderr.
    fn finish(mut self) -> (ExitStatus, String, String) {
        let status = wait_bounded(&mut self.child);
        if let Some(reader) = self.reader.take() {
            reader.join().unwrap();
        }
        let mut stderr = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let stdout = self.stdout.lock().unwrap().clone();
        (status, stdout, stderr)
    }
}

/// Waits for a child, killing it and failing the test after the deadline.
fn wait_bounded(child: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + DEADLINE;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("the process did not end within {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs `hearth` to the end (bounded); returns its status, stdout and stderr.
fn run_bounded(command: Command) -> (ExitStatus, String, String) {
    Running::spawn(command).finish()
}

fn replay_run(hearth: &Hearth, scenario: &Path, args: &[&str]) -> Command {
    let mut command = hearth.command();
    command
        .args(["run", "--provider", "replay", "--scenario"])
        .arg(scenario)
        .args(args);
    command
}

fn scenario_file(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("scenario.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

/// A small tmpfs mounted over a data directory, unmounted when dropped.
struct SmallDisk {
    hearth: Hearth,
}

impl SmallDisk {
    /// Mounts the disk; without the privilege to mount, says so and returns `None`.
    #[allow(clippy::print_stderr)]
    fn mount(size: &str) -> Option<Self> {
        let hearth = Hearth::new();
        let output = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(hearth.home.path())
            .output()
            .ok()?;
        if !output.status.success() {
            eprintln!(
                "skipping: cannot mount a tmpfs here ({})",
                String::from_utf8_lossy(&output.stderr).trim()
            );
            return None;
        }
        Some(Self { hearth })
    }

    /// Fills the disk, then frees `leave` bytes.
    fn fill_leaving(&self, leave: u64) {
        let path = self.hearth.home.path().join("filler");
        let mut file = std::fs::File::create(&path).unwrap();
        let chunk = vec![0xa5_u8; 64 * 1024];
        let mut written = 0_u64;
        loop {
            match file.write(&chunk) {
                Ok(0) => break,
                Ok(count) => written += count as u64,
                Err(error) if error.raw_os_error() == Some(28) => break,
                Err(error) => panic!("filling the disk: {error}"),
            }
        }
        file.set_len(written.saturating_sub(leave)).unwrap();
        file.sync_all().unwrap();
    }

    fn free(&self) {
        std::fs::remove_file(self.hearth.home.path().join("filler")).unwrap();
    }
}

impl Drop for SmallDisk {
    #[allow(clippy::print_stderr)]
    fn drop(&mut self) {
        if let Err(error) = Command::new("umount")
            .arg("-l")
            .arg(self.hearth.home.path())
            .status()
        {
            eprintln!(
                "could not unmount {}: {error}",
                self.hearth.home.path().display()
            );
        }
    }
}

#[test]
fn run_on_a_full_disk_prints_the_answer_exits_74_and_says_it_was_not_saved() {
    let Some(disk) = SmallDisk::mount("8m") else {
        return;
    };
    let hearth = &disk.hearth;
    let scenarios = tempfile::tempdir().unwrap();
    // An answer of 1.2 MB, far more than the room the disk will have left.
    let large: String = (0..400_000).map(|n| format!("w{} ", n % 10)).collect();
    let scenario = scenario_file(
        scenarios.path(),
        &format!(
            "name: full\nturns:\n  - when: quick\n    steps:\n      - text: \"quick answer\"\n  \
             - when: large\n    steps:\n      - text: \"{large}\"\n  \
             - steps:\n      - text: \"small answer\"\n"
        ),
    );
    let (status, stdout, stderr) = run_bounded(replay_run(hearth, &scenario, &["hello"]));
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout, "small answer\n");
    let session = hearth.session_uris().remove(0);

    // The disk fills up: room for the prompt, none for the answer.
    disk.fill_leaving(192 * 1024);
    let (status, stdout, stderr) = run_bounded(replay_run(
        hearth,
        &scenario,
        &["--session", &session, "a large answer please"],
    ));
    // The whole answer was printed,
    assert_eq!(stdout, format!("{large}\n"), "{stderr}");
    // and the run says that it was not saved, and why.
    assert_eq!(status.code(), Some(74), "{stderr}");
    assert!(
        stderr.contains("hearth: the answer was not saved: the disk holding"),
        "{stderr}"
    );
    assert!(stderr.contains("is full"), "{stderr}");
    assert!(
        stderr.contains("the answer printed here is the only copy"),
        "{stderr}"
    );

    // What was saved is consistent: the prompt, marked incomplete; reading works.
    let show = hearth.ok(&["sessions", "show", &session]);
    assert!(show.contains("› hello\nsmall answer"), "{show}");
    assert!(show.contains("› a large answer please"), "{show}");
    assert!(show.contains("[incomplete]"), "{show}");
    // With space again, the session goes on.
    disk.free();
    let (status, stdout, stderr) = run_bounded(replay_run(
        hearth,
        &scenario,
        &["--session", &session, "quick one"],
    ));
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout, "quick answer\n");
}

#[test]
fn run_help_lists_the_exit_statuses() {
    let hearth = Hearth::new();
    let help = hearth.ok(&["run", "--help"]);
    for line in [
        "  74   the answer was printed but could not be saved",
        "  75   another Hearth process is answering in the chat; nothing was sent",
    ] {
        assert!(help.contains(line), "{help}");
    }
}

#[test]
fn two_runs_on_one_session_at_once_the_second_is_refused_and_nothing_interleaves() {
    let hearth = Hearth::new();
    let scenarios = tempfile::tempdir().unwrap();
    let scenario = scenario_file(scenarios.path(), SCENARIO);
    let (status, _, stderr) = run_bounded(replay_run(&hearth, &scenario, &["hello"]));
    assert!(status.success(), "{stderr}");
    let session = hearth.session_uris().remove(0);

    let mut slow = replay_run(&hearth, &scenario, &["--session", &session, "slow one"]);
    slow.env("HEARTH_REPLAY_DELAY_SCALE", "1");
    let mut first = Running::spawn(slow);
    first.wait_for("first part");
    let first_pid = first.child.id();

    let (status, stdout, stderr) = run_bounded(replay_run(
        &hearth,
        &scenario,
        &["--session", &session, "quick two"],
    ));
    assert_eq!(status.code(), Some(75), "{stderr}");
    assert_eq!(stdout, "");
    assert!(
        stderr.contains(&format!(
            "is answering in another Hearth process (pid {first_pid} on "
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("; wait for it or abort it there"),
        "{stderr}"
    );

    // The first is stopped there (Ctrl-C) and keeps what it said.
    let interrupted = Command::new("kill")
        .args(["-INT", &first_pid.to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let (status, _, stderr) = first.finish();
    assert_eq!(status.code(), Some(130), "{stderr}");

    // Then a run goes through, after the first's turn.
    let (status, stdout, stderr) = run_bounded(replay_run(
        &hearth,
        &scenario,
        &["--session", &session, "quick three"],
    ));
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout, "quick answer\n");
    let shown = hearth.ok(&["sessions", "show", &session, "--json"]);
    let shown: serde_json::Value = serde_json::from_str(&shown).unwrap();
    let prompts: Vec<&str> = shown["chats"][0]["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|turn| turn["user"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(prompts, ["hello", "slow one", "quick three"]);
    let show = hearth.ok(&["sessions", "show", &session]);
    assert!(show.contains("› slow one\nfirst part"), "{show}");
    assert!(show.contains("[aborted]"), "{show}");
}

#[test]
fn a_killed_runs_chat_is_taken_over_at_once() {
    let hearth = Hearth::new();
    let scenarios = tempfile::tempdir().unwrap();
    let scenario = scenario_file(scenarios.path(), SCENARIO);
    let (status, _, stderr) = run_bounded(replay_run(&hearth, &scenario, &["hello"]));
    assert!(status.success(), "{stderr}");
    let session = hearth.session_uris().remove(0);
    let mut slow = replay_run(&hearth, &scenario, &["--session", &session, "slow one"]);
    slow.env("HEARTH_REPLAY_DELAY_SCALE", "1");
    let mut first = Running::spawn(slow);
    first.wait_for("first part");
    // Killed: its lease stays behind, live for half a minute, held by a process that
    // no longer runs.
    first.child.kill().unwrap();
    first.finish();

    let (status, stdout, stderr) = run_bounded(replay_run(
        &hearth,
        &scenario,
        &["--session", &session, "quick two"],
    ));
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout, "quick answer\n");
    let show = hearth.ok(&["sessions", "show", &session]);
    assert!(show.contains("› slow one"), "{show}");
    assert!(show.contains("[incomplete]"), "{show}");
    assert!(show.contains("› quick two\nquick answer"), "{show}");
}

#[test]
fn run_between_two_turns_of_a_chat_is_in_the_chats_next_request() {
    let server = server();
    for answer in ["one", "two", "three", "four"] {
        server.enqueue(OpenAiStream::text_answer(MODEL, &[answer], 1, 1));
    }
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));
    let (status, _, stderr) = run_bounded(mock_command(&hearth, &["run", "first"]));
    assert!(status.success(), "{stderr}");
    let session = hearth.session_uris().remove(0);

    // A chat holds the session in memory.
    let mut chat_command = mock_command(&hearth, &["chat", "--session", &session]);
    let mut child = chat_command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut chat = Running::from_child(child);
    stdin.write_all(b"second\n").unwrap();
    stdin.flush().unwrap();
    chat.wait_for("two\n");

    // Another process adds a turn (waiting, bounded, while the chat releases the lease
    // of the turn it just ended).
    let deadline = Instant::now() + DEADLINE;
    loop {
        let (status, stdout, stderr) = run_bounded(mock_command(
            &hearth,
            &["run", "--session", &session, "third"],
        ));
        if status.code() == Some(75) {
            assert!(
                Instant::now() < deadline,
                "the chat never released its lease"
            );
            continue;
        }
        assert!(status.success(), "{stderr}");
        assert_eq!(stdout, "three\n");
        break;
    }

    // The chat's next request carries it.
    stdin.write_all(b"fourth\n/quit\n").unwrap();
    drop(stdin);
    let (status, stdout, stderr) = chat.finish();
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout, "two\nfour\n");
    let requests = completions(&server);
    assert_eq!(requests.len(), 4);
    assert_eq!(
        conversation(&requests[3]),
        vec![
            pair("user", "first"),
            pair("assistant", "one"),
            pair("user", "second"),
            pair("assistant", "two"),
            pair("user", "third"),
            pair("assistant", "three"),
            pair("user", "fourth"),
        ]
    );
    // And the stored chat holds the four turns in the order they were answered.
    let shown = hearth.ok(&["sessions", "show", &session, "--json"]);
    let shown: serde_json::Value = serde_json::from_str(&shown).unwrap();
    let prompts: Vec<&str> = shown["chats"][0]["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|turn| turn["user"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(prompts, ["first", "second", "third", "fourth"]);
    // A new process continues from everything.
    server.enqueue(OpenAiStream::text_answer(MODEL, &["five"], 1, 1));
    let (status, _, stderr) = run_bounded(mock_command(
        &hearth,
        &["run", "--session", &session, "fifth"],
    ));
    assert!(status.success(), "{stderr}");
    assert_eq!(conversation(&completions(&server)[4]).len(), 9);
}

fn mock_command(hearth: &Hearth, args: &[&str]) -> Command {
    let mut command = super::mock::command(hearth);
    command.args(args);
    command
}
