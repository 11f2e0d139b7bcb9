//! A 10,000-line answer at a real terminal, end to end: a model on loopback streams it in
//! ~4-character deltas as fast as it can, `hearth chat` runs on a pseudo-terminal
//! (`script`), and the bench types the prompt and Enter, then times the screen: from the
//! key press to the answer's first line, and to its last. Rendered (Markdown, colour) and
//! plain (`--color never`) runs, and `hearth run` into a pipe for the pipeline alone.
//! Prints deltas per second (one delta counted as one token); the target is keeping up
//! with a 2,000 token/s stream.
//!
//! `cargo bench -p hearth-cli --bench terminal_stream`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const LINES: usize = 10_000;
const DELTA: usize = 4;
const LAST_LINE: &str = "That is the whole answer.";

/// A long answer of the blocks models write, `LINES` lines, ending with [`LAST_LINE`].
fn answer() -> String {
    let mut lines: Vec<String> = Vec::with_capacity(LINES + 8);
    let mut section = 0;
    while lines.len() < LINES {
        section += 1;
        lines.push(format!("## Section {section}"));
        lines.push(String::new());
        for n in 0..3 {
            lines.push(format!(
                "Line {n} with **bold**, *emphasis*, `code` and a [link](https://example.com/{section})."
            ));
        }
        lines.push(String::new());
        lines.push("- a point".to_owned());
        lines.push("  - a nested point".to_owned());
        lines.push(String::new());
        lines.push("| name | value |".to_owned());
        lines.push("|------|------:|".to_owned());
        lines.push(format!("| row {section} | {} |", section * 7));
        lines.push(String::new());
        lines.push("```rust".to_owned());
        lines.push(format!("fn section_{section}() -> u32 {{ {section} }}"));
        lines.push("```".to_owned());
        lines.push(String::new());
    }
    lines.truncate(LINES - 1);
    lines.push(LAST_LINE.to_owned());
    lines.join("\n") + "\n"
}

/// The answer cut into deltas of [`DELTA`] characters.
fn deltas(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(DELTA)
        .map(|chunk| chunk.iter().collect())
        .collect()
}

/// A model on loopback answering every request with `pieces`, from a thread of its own.
fn loopback_model(pieces: Vec<String>) -> String {
    let (ready, started) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let server = hearth_test_support::MockModelServer::start().await.unwrap();
            let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
            server.set_fallback(hearth_test_support::OpenAiStream::text_answer(
                "bench-model",
                &pieces,
                10,
                pieces.len() as u64,
            ));
            ready.send(server.url_with("/v1")).unwrap();
            std::future::pending::<()>().await;
        });
    });
    started.recv().unwrap()
}

fn home(model: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "[defaults]\nprovider = \"model\"\n\n[providers.model]\nkind = \"openai\"\nbase_url = \"{model}\"\ndefault_model = \"bench-model\"\nmax_retries = 0\n"
        ),
    )
    .unwrap();
    home
}

/// What the screen showed, and when each byte came.
struct Screen {
    bytes: Arc<Mutex<Vec<u8>>>,
}

impl Screen {
    fn contains_after(&self, from: usize, text: &str) -> Option<usize> {
        let bytes = self.bytes.lock().unwrap();
        let shown = String::from_utf8_lossy(bytes.get(from..).unwrap_or_default());
        shown.find(text).map(|at| from + at)
    }

    fn len(&self) -> usize {
        self.bytes.lock().unwrap().len()
    }

    /// Waits until `text` shows after byte `from`; when it did.
    fn wait(&self, from: usize, text: &str) -> Instant {
        let deadline = Instant::now() + Duration::from_secs(300);
        loop {
            if self.contains_after(from, text).is_some() {
                return Instant::now();
            }
            assert!(Instant::now() < deadline, "`{text}` never showed");
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

/// One chat on a terminal: (key press → first line, key press → last line).
fn chat_on_a_terminal(home: &Path, colour: &str) -> (Duration, Duration) {
    let line = format!(
        "stty cols 120 rows 40; exec '{}' --home '{}' --color {colour} chat",
        env!("CARGO_BIN_EXE_hearth"),
        home.display()
    );
    let mut child = Command::new("script")
        .args(["-q", "-e", "-c", &line, "/dev/null"])
        .env("TERM", "xterm-256color")
        .env_remove("NO_COLOR")
        .env_remove("OPENAI_BASE_URL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let bytes = Arc::new(Mutex::new(Vec::new()));
    let mut output = child.stdout.take().unwrap();
    let collected = Arc::clone(&bytes);
    std::thread::spawn(move || {
        let mut buffer = [0u8; 65536];
        while let Ok(read) = output.read(&mut buffer) {
            if read == 0 {
                break;
            }
            collected.lock().unwrap().extend_from_slice(&buffer[..read]);
        }
    });
    let screen = Screen { bytes };
    screen.wait(0, "› ");
    let mut input = child.stdin.take().unwrap();
    let from = screen.len();
    let pressed = Instant::now();
    input.write_all(b"go\r").unwrap();
    input.flush().unwrap();
    let first = screen.wait(from, "Section 1");
    let last = screen.wait(from, LAST_LINE);
    input.write_all(b"\x04").unwrap();
    drop(input);
    let _ignored = child.wait();
    (first - pressed, last - pressed)
}

/// `hearth run` into a pipe: the whole answer's time.
fn run_into_a_pipe(home: &Path) -> Duration {
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_hearth"))
        .arg("--home")
        .arg(home)
        .args(["run", "go"])
        .env_remove("OPENAI_BASE_URL")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).contains(LAST_LINE));
    started.elapsed()
}

fn rate(deltas: usize, took: Duration) -> f64 {
    deltas as f64 / took.as_secs_f64()
}

fn main() {
    let pieces = deltas(&answer());
    let count = pieces.len();
    let model = loopback_model(pieces);
    let home = home(&model);
    // Warm up: the database, the page cache.
    run_into_a_pipe(home.path());
    println!("a {LINES}-line answer in {count} deltas of {DELTA} characters");
    let piped = (0..3).map(|_| run_into_a_pipe(home.path())).min().unwrap();
    println!(
        "hearth run into a pipe:        whole answer {:>7.0} ms  ({:>7.0} deltas/s)",
        piped.as_secs_f64() * 1e3,
        rate(count, piped)
    );
    for colour in ["never", "always"] {
        let runs: Vec<(Duration, Duration)> = (0..3)
            .map(|_| chat_on_a_terminal(home.path(), colour))
            .collect();
        let (first, last) = runs.iter().min_by_key(|(_, last)| *last).copied().unwrap();
        println!(
            "hearth chat on a terminal, --color {colour:<6}: key press → first line {:>5.0} ms, → last line {:>7.0} ms  ({:>7.0} deltas/s)",
            first.as_secs_f64() * 1e3,
            last.as_secs_f64() * 1e3,
            rate(count, last)
        );
    }
}
