//! Whole-process figures of `hearth run "say ping"` with Hearth's own agent against a
//! loopback mock model server speaking OpenAI SSE, on a warm data directory: wall time
//! and peak RSS, medians over repeated runs.
//!
//! `cargo bench -p hearth-cli --bench say_ping`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use hearth_test_support::{MockModelServer, OpenAiStream};

const RUNS: usize = 30;

/// Starts the mock server on a thread of its own; it lives until the process ends.
fn mock_server() -> Arc<MockModelServer> {
    let (ready, started) = mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let server = Arc::new(MockModelServer::start().await.unwrap());
            server.set_fallback(OpenAiStream::text_answer("mock-model", &["pong"], 9, 1));
            ready.send(Arc::clone(&server)).unwrap();
            std::future::pending::<()>().await;
        });
    });
    started.recv().unwrap()
}

fn hearth(home: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hearth"));
    command
        .arg("--home")
        .arg(home)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .env_remove("OLLAMA_HOST")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

fn median<T: Ord + Copy>(mut values: Vec<T>) -> T {
    values.sort();
    values[values.len() / 2]
}

/// Peak RSS in KiB of one run, measured by GNU time.
fn peak_rss(home: &Path) -> Option<u64> {
    let output = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(env!("CARGO_BIN_EXE_hearth"))
        .arg("--home")
        .arg(home)
        .args(["run", "say ping"])
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .output()
        .ok()?;
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .last()?
        .trim()
        .parse()
        .ok()
}

fn main() {
    let server = mock_server();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "[defaults]\nprovider = \"mock\"\n\n[providers.mock]\nkind = \"openai\"\nbase_url = \"{}\"\ndefault_model = \"mock-model\"\n",
            server.url_with("/v1")
        ),
    )
    .unwrap();
    // Warm up: create the database and load the binary into the page cache.
    for _ in 0..3 {
        assert!(
            hearth(home.path())
                .args(["run", "say ping"])
                .status()
                .unwrap()
                .success()
        );
    }
    let mut walls = Vec::new();
    for _ in 0..RUNS {
        let started = Instant::now();
        let status = hearth(home.path())
            .args(["run", "say ping"])
            .status()
            .unwrap();
        walls.push(started.elapsed());
        assert!(status.success());
    }
    let rss: Vec<u64> = (0..10).filter_map(|_| peak_rss(home.path())).collect();
    let ms = |duration: Duration| duration.as_secs_f64() * 1000.0;
    println!(
        "hearth run \"say ping\" (native agent, loopback mock): median wall {:>7.2} ms   min {:>7.2} ms   (target ≤ 30 ms)",
        ms(median(walls.clone())),
        ms(*walls.iter().min().unwrap())
    );
    if rss.is_empty() {
        println!("peak RSS: /usr/bin/time not available");
    } else {
        println!(
            "hearth run \"say ping\" peak RSS:                    median      {:>7.1} MB   (target ≤ 25 MB)",
            median(rss) as f64 / 1024.0
        );
    }
    println!("model requests served: {}", server.requests().len());
}
