//! Whole-process figures of `hearth run` on a warm data directory: with the replay
//! harness (no delays), and against a model on loopback (an OpenAI-compatible server
//! streaming real SSE, so the HTTP client and Hearth's own agent are part of the run):
//! wall time and peak RSS, medians over repeated runs.
//!
//! `cargo bench -p hearth-cli --bench oneshot`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 30;

fn hearth(home: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hearth"));
    command
        .arg("--home")
        .arg(home)
        .env("HEARTH_REPLAY_DELAY_SCALE", "0")
        .env_remove("HEARTH_REPLAY_SCENARIO")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

fn median<T: Ord + Copy>(mut values: Vec<T>) -> T {
    values.sort();
    values[values.len() / 2]
}

/// Peak RSS in KiB of one `hearth run hello`, measured by GNU time.
fn peak_rss(home: &Path) -> Option<u64> {
    let output = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(env!("CARGO_BIN_EXE_hearth"))
        .arg("--home")
        .arg(home)
        .args(["run", "hello"])
        .env("HEARTH_REPLAY_DELAY_SCALE", "0")
        .env_remove("OPENAI_BASE_URL")
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

/// A model on loopback answering every request with the same short streamed answer,
/// served from a thread of its own for the life of the bench.
fn loopback_model() -> String {
    let (ready, started) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let server = hearth_test_support::MockModelServer::start().await.unwrap();
            server.set_fallback(hearth_test_support::OpenAiStream::text_answer(
                "bench-model",
                &["Hello ", "from ", "the ", "model."],
                10,
                4,
            ));
            ready.send(server.url_with("/v1")).unwrap();
            std::future::pending::<()>().await;
        });
    });
    started.recv().unwrap()
}

/// `hearth run` against the loopback model: median wall time and median peak RSS (KiB).
fn against_a_model() -> (Duration, Option<u64>) {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "[defaults]\nprovider = \"model\"\n\n[providers.model]\nkind = \"openai\"\nbase_url = \"{}\"\ndefault_model = \"bench-model\"\nmax_retries = 0\n",
            loopback_model()
        ),
    )
    .unwrap();
    let run = || {
        let status = hearth(home.path())
            .env_remove("OPENAI_BASE_URL")
            .args(["run", "hello"])
            .status()
            .unwrap();
        assert!(status.success());
    };
    for _ in 0..3 {
        run();
    }
    let mut walls = Vec::new();
    for _ in 0..RUNS {
        let started = Instant::now();
        run();
        walls.push(started.elapsed());
    }
    let rss: Vec<u64> = (0..10).filter_map(|_| peak_rss(home.path())).collect();
    (median(walls), (!rss.is_empty()).then(|| median(rss)))
}

fn main() {
    let home = tempfile::tempdir().unwrap();
    // Warm up: create the database and load the binary into the page cache.
    for _ in 0..3 {
        assert!(
            hearth(home.path())
                .args(["run", "hello"])
                .status()
                .unwrap()
                .success()
        );
    }
    let mut walls = Vec::new();
    for _ in 0..RUNS {
        let started = Instant::now();
        let status = hearth(home.path()).args(["run", "hello"]).status().unwrap();
        walls.push(started.elapsed());
        assert!(status.success());
    }
    let mut lists = Vec::new();
    for _ in 0..RUNS {
        let started = Instant::now();
        assert!(
            hearth(home.path())
                .args(["sessions", "list"])
                .status()
                .unwrap()
                .success()
        );
        lists.push(started.elapsed());
    }
    let rss: Vec<u64> = (0..10).filter_map(|_| peak_rss(home.path())).collect();
    let ms = |duration: Duration| duration.as_secs_f64() * 1000.0;
    println!(
        "hearth run \"hello\" (replay, no delays): median wall {:>7.2} ms   min {:>7.2} ms   (target ≤ 30 ms)",
        ms(median(walls.clone())),
        ms(*walls.iter().min().unwrap())
    );
    println!(
        "hearth sessions list:                   median wall {:>7.2} ms",
        ms(median(lists))
    );
    if rss.is_empty() {
        println!("peak RSS: /usr/bin/time not available");
    } else {
        println!(
            "hearth run peak RSS:                    median      {:>7.1} MB   (target ≤ 25 MB)",
            median(rss) as f64 / 1024.0
        );
    }
    let (wall, rss) = against_a_model();
    println!(
        "hearth run \"hello\" (loopback model):   median wall {:>7.2} ms",
        ms(wall)
    );
    match rss {
        Some(rss) => println!(
            "hearth run peak RSS (loopback model):   median      {:>7.1} MB   (target ≤ 20 MB)",
            rss as f64 / 1024.0
        ),
        None => println!("peak RSS (loopback model): /usr/bin/time not available"),
    }
}
