//! Whole-process figures of `hearth run` with the replay harness (no delays), on a warm
//! data directory: wall time and peak RSS, medians over repeated runs.
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

/// Peak RSS in KiB of one run, measured by GNU time.
fn peak_rss(home: &Path) -> Option<u64> {
    let output = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(env!("CARGO_BIN_EXE_hearth"))
        .arg("--home")
        .arg(home)
        .args(["run", "hello"])
        .env("HEARTH_REPLAY_DELAY_SCALE", "0")
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
}
