//! What a new user sees in the first ten minutes: stderr that says each thing once and
//! without escape codes on a pipe, a closed pipe ending quietly, two Ctrl-C leaving a
//! chat, honest notices, whole tool summaries, and refused tool calls audited as such.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use hearth_test_support::{BoundedChild, BoundedCommand, MockResponse, OpenAiStream, PROCESS_WAIT};
use pretty_assertions::assert_eq;
use serde_json::Value;

use super::mock::{MODEL, command, configure, eventually, mock_config, server};
use super::support::Hearth;
use super::tool_support::{audit_rows, stage_event, with_calendar};

/// Runs `args` with stdout a pipe whose reader has already gone, as after
/// `hearth … | head -1` once `head` has its line.
fn with_closed_stdout(hearth: &Hearth, args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let child = hearth
        .command()
        .args(args)
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.wait_with_output_within(PROCESS_WAIT)
}

#[test]
fn a_closed_stdout_ends_lists_quietly_with_status_0() {
    let (hearth, _) = with_calendar();
    for _ in 0..3 {
        hearth.ok(&["run", "--provider", "replay", "hello"]);
    }
    hearth.ok(&["tools", "call", "calendar_list"]);
    stage_event(&hearth, "Dentist", "2030-03-04T09:00");
    for args in [
        ["sessions", "list"],
        ["audit", "list"],
        ["proposals", "list"],
    ] {
        // Control: each has something to write.
        assert!(
            !hearth.ok(&args).is_empty(),
            "hearth {args:?} wrote nothing"
        );
        let output = with_closed_stdout(&hearth, &args);
        assert_eq!(
            (
                output.status.code(),
                String::from_utf8(output.stderr).unwrap()
            ),
            (Some(0), String::new()),
            "hearth {args:?} with a closed stdout"
        );
    }
}

#[test]
fn a_reader_that_stops_after_one_line_ends_hearth_quietly() {
    let hearth = Hearth::new();
    // An answer far larger than a pipe holds: Hearth is still writing when the reader goes.
    let scenario = hearth.write(
        "long.yaml",
        &format!(
            "name: long\nturns:\n  - steps:\n      - text: \"{}\"\n",
            "a line of the long answer\\n".repeat(20_000)
        ),
    );
    hearth.ok(&[
        "run",
        "--provider",
        "replay",
        "--scenario",
        scenario.to_str().unwrap(),
        "tell me everything",
    ]);
    let session = hearth.session_uris().remove(0);
    let mut child = hearth
        .command()
        .args(["sessions", "show", &session])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(!first.is_empty());
    // The reader is dropped here, as `head -1` exits.
    let status = child.wait_within(PROCESS_WAIT);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!((status.code(), stderr), (Some(0), String::new()));
}

#[test]
fn a_model_request_retry_is_reported_once() {
    let server = server();
    server.enqueue(
        MockResponse::openai_error(503, "overloaded", "server_error")
            .with_header("retry-after-ms", "10"),
    );
    server.set_fallback(OpenAiStream::text_answer(MODEL, &["o", "k"], 1, 1));
    let hearth = Hearth::new();
    configure(
        &hearth,
        &mock_config(&server).replace("max_retries = 0", "max_retries = 1"),
    );
    let output = command(&hearth)
        .args(["run", "hello"])
        .output_within(PROCESS_WAIT);
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "ok\n", "{stderr}");
    let retries = stderr.lines().filter(|line| line.contains("retry")).count();
    assert_eq!(retries, 1, "{stderr}");
}

#[test]
fn a_warning_is_said_once_and_without_escape_codes_on_a_pipe() {
    let server = server();
    server.set_fallback(OpenAiStream::text_answer(MODEL, &["o", "k"], 1, 1));
    let hearth = Hearth::new();
    configure(
        &hearth,
        &mock_config(&server).replace("Europe/Berlin", "Mars/Olympus"),
    );
    let output = command(&hearth)
        .args(["run", "hello"])
        .output_within(PROCESS_WAIT);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(output.status.success(), "{stderr}");
    let warnings = stderr
        .lines()
        .filter(|line| line.contains("\"Mars/Olympus\" in config.toml is not an IANA time"))
        .count();
    assert_eq!(warnings, 1, "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
}

#[test]
fn the_chosen_demo_says_it_is_the_demo_and_no_more() {
    let server = server();
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));
    let output = command(&hearth)
        .args(["run", "--provider", "replay", "hello"])
        .output_within(PROCESS_WAIT);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(output.status.success(), "{stderr}");
    // Hearth's own lines (the demo's scripted tool call names the variables too).
    let notices: Vec<&str> = stderr
        .lines()
        .filter(|line| line.starts_with("hearth:"))
        .collect();
    assert_eq!(
        notices,
        ["hearth: this is the built-in demo (scripted answers, no model)."]
    );
}

/// A description's first sentence as `hearth tools list` promises it.
/// Up to the first full stop that ends a sentence (not the one of "e.g.", "i.e.", "etc.").
fn first_sentence(description: &str) -> &str {
    let description = description.trim();
    let end = description
        .match_indices(". ")
        .map(|(at, _)| at)
        .find(|&at| {
            !["e.g", "i.e", "etc"]
                .iter()
                .any(|abbreviation| description[..at].ends_with(abbreviation))
        });
    match end {
        Some(at) => &description[..at],
        None => description.trim_end_matches('.'),
    }
}

#[test]
fn tools_list_prints_whole_first_sentences() {
    let hearth = Hearth::new();
    let listed = hearth.ok(&["tools", "list"]);
    let described: Vec<Value> = hearth
        .ok(&["tools", "list", "--json"])
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    // Each tool's line and its continuation lines (indented), as one summary.
    let mut summaries: Vec<(String, String)> = Vec::new();
    for line in listed.lines() {
        if line.starts_with(' ') {
            let (_, summary) = summaries.last_mut().unwrap();
            summary.push(' ');
            summary.push_str(line.trim());
        } else {
            let name = line.split_whitespace().next().unwrap().to_owned();
            let summary = line[38..].trim().to_owned();
            summaries.push((name, summary));
        }
    }
    let expected: Vec<(String, String)> = described
        .iter()
        .map(|tool| {
            let words: Vec<&str> = first_sentence(tool["description"].as_str().unwrap())
                .split_whitespace()
                .collect();
            (tool["name"].as_str().unwrap().to_owned(), words.join(" "))
        })
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(summaries, expected);
    assert!(
        listed.lines().all(|line| line.chars().count() <= 100),
        "{listed}"
    );
}

#[test]
fn a_mutating_tool_call_with_bad_arguments_is_audited_as_denied() {
    let (hearth, _) = with_calendar();
    let arguments = serde_json::json!({"title": "Dentist", "start": "not a time"}).to_string();
    hearth.fails(&["tools", "call", "event_create", &arguments]);
    let rows = audit_rows(&hearth);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (rows[0]["tool"].as_str(), rows[0]["decision"].as_str()),
        (Some("event_create"), Some("denied"))
    );
    let outcome = rows[0]["outcome"].as_str().unwrap();
    assert!(
        outcome.starts_with("error: ") && outcome.contains("not a time"),
        "{outcome}"
    );
}

/// Collects what a pipe carries into a shared string, on a thread.
fn collect(mut pipe: impl Read + Send + 'static) -> (Arc<Mutex<String>>, JoinHandle<()>) {
    let seen = Arc::new(Mutex::new(String::new()));
    let reader = {
        let seen = Arc::clone(&seen);
        std::thread::spawn(move || {
            let mut buffer = [0_u8; 256];
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
    (seen, reader)
}

fn ctrl_c(child: &Child) {
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// A chat with a mock model whose answer streams a word every 100 ms for a minute,
/// asked one question; returns the chat, its stdin (kept open: an end of input would
/// leave the chat by itself) and what it writes to stdout and stderr.
struct SlowChat {
    child: Child,
    stdin: std::process::ChildStdin,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
    readers: Vec<JoinHandle<()>>,
    _hearth: Hearth,
}

impl SlowChat {
    fn start() -> Self {
        let server = server();
        let slow = (1..=600).fold(OpenAiStream::new(MODEL).role(), |stream, n| {
            stream
                .text(&format!("w{n} "))
                .pause(Duration::from_millis(100))
        });
        server.enqueue(slow.finish("stop").done());
        let hearth = Hearth::new();
        configure(&hearth, &mock_config(&server));
        let mut child = command(&hearth)
            .arg("chat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"talk slowly\n").unwrap();
        stdin.flush().unwrap();
        let (stdout, out_reader) = collect(child.stdout.take().unwrap());
        let (stderr, err_reader) = collect(child.stderr.take().unwrap());
        eventually("streamed words", || stdout.lock().unwrap().contains("w2 "));
        Self {
            child,
            stdin,
            stdout,
            stderr,
            readers: vec![out_reader, err_reader],
            _hearth: hearth,
        }
    }

    fn wait_for_stderr(&self, text: &str) {
        eventually(text, || self.stderr.lock().unwrap().contains(text));
    }

    /// Waits for the end; returns the exit code, stdout and stderr.
    fn finish(mut self) -> (Option<i32>, String, String) {
        let status = self.child.wait_within(PROCESS_WAIT);
        drop(self.stdin);
        for reader in self.readers {
            reader.join().unwrap();
        }
        let stdout = self.stdout.lock().unwrap().clone();
        let stderr = self.stderr.lock().unwrap().clone();
        (status.code(), stdout, stderr)
    }
}

#[test]
fn a_second_ctrl_c_while_the_answer_stops_leaves_the_chat_with_status_130() {
    let chat = SlowChat::start();
    ctrl_c(&chat.child);
    chat.wait_for_stderr("stopping the answer");
    // Right after the first: a double press, whether the answer has stopped yet or not.
    ctrl_c(&chat.child);
    let (code, stdout, stderr) = chat.finish();
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("hearth: leaving the chat"), "{stderr}");
    assert!(
        stdout.contains("w2 ") && !stdout.contains("w600"),
        "{stdout}"
    );
}

#[test]
fn a_ctrl_c_at_the_prompt_after_a_stopped_answer_leaves_the_chat_with_status_130() {
    let chat = SlowChat::start();
    ctrl_c(&chat.child);
    chat.wait_for_stderr("answer stopped; what arrived is kept");
    ctrl_c(&chat.child);
    let (code, _, stderr) = chat.finish();
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("hearth: leaving the chat"), "{stderr}");
}

#[test]
fn an_error_after_a_partial_answer_is_on_a_line_of_its_own() {
    let server = server();
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));
    server.enqueue(
        OpenAiStream::new(MODEL)
            .role()
            .text("slow ")
            .text("pon")
            .reset(),
    );
    // stdout and stderr into one file, as `hearth run … 2>&1` on a terminal shows them.
    let both = tempfile::NamedTempFile::new().unwrap();
    let shared = both.reopen().unwrap();
    let status = command(&hearth)
        .args(["run", "count"])
        .stdin(Stdio::null())
        .stdout(shared.try_clone().unwrap())
        .stderr(shared)
        .spawn()
        .unwrap()
        .wait_within(PROCESS_WAIT);
    assert!(!status.success());
    let mut seen = String::new();
    both.reopen().unwrap().read_to_string(&mut seen).unwrap();
    let error_line = seen
        .lines()
        .find(|line| line.contains('✗'))
        .unwrap_or_else(|| panic!("no error line:\n{seen}"));
    assert!(error_line.starts_with('✗'), "glued to the answer:\n{seen}");
    assert!(seen.lines().any(|line| line == "slow pon"), "{seen}");
}
