//! Figures of the ACP harness inside a real host (SQLite store, event loop,
//! subscriptions), driving the deterministic test agent (its release build) and, when it
//! is installed, a real agent (Codex, against a loopback mock model):
//!
//! 1. Added latency: from the agent writing an `agent_message_chunk` to stdout to its
//!    `textDelta` envelope coming out of the host subscription. The test agent's
//!    `/timed N` stamps each chunk with CLOCK_MONOTONIC just before writing it, 1 ms
//!    apart so nothing queues; this process reads the same clock on receipt. Next to
//!    it, the floor: the same agent read by a bare line reader (no ACP SDK, harness or
//!    host), which is what the pipe and the two processes' wake-ups cost anyway.
//! 2. Hearth's own memory while it drives one agent: the RSS of this process (runtime,
//!    SQLite host, harness; also this benchmark's few hundred KiB of records) next to
//!    the RSS of the agent's process tree, from an idle runtime with an SQLite host to
//!    the high-water mark after a long answer.
//! 3. Fan-out of a 10,000-chunk answer to a subscriber: every envelope is checked (none
//!    missing, the text whole and in order, the same text in the stored turn); time and
//!    throughput, next to the bare reader's for the test agent. Real agents may merge
//!    or split chunks: for them the whole text is checked and the deltas counted.
//!
//! `cargo bench -p hearth-harness-acp --bench acp`
//!
//! Each agent runs in a process of its own, so one run's memory does not show in the
//! next: this process drives the test agent; the real agent is driven by a child
//! process (this binary again), whose mock model server runs in a grandchild. Agents
//! start directly, not under Hearth's supervisor process, with this process's
//! environment plus their own, as Hearth starts them. A failed check panics; timings
//! are only printed.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "acp/bare.rs"]
mod bare;
#[path = "acp/drive.rs"]
mod drive;
#[path = "acp/fan_out.rs"]
mod fan_out;
#[path = "acp/latency.rs"]
mod latency;
#[path = "acp/measure.rs"]
mod measure;
#[path = "acp/real_agent.rs"]
mod real_agent;
#[path = "acp/report.rs"]
mod report;
#[path = "acp/test_agent.rs"]
mod test_agent;

use std::time::{Duration, Instant};

use hearth_test_support::RealAgent;

use crate::measure::{load_average, own_memory};
use crate::report::{MemoryRow, Point, Report};

/// Which part of the benchmark this process runs (unset: the main one).
pub(crate) const ROLE_VARIABLE: &str = "HEARTH_ACP_BENCH_ROLE";
/// The real agent a child process drives.
pub(crate) const AGENT_VARIABLE: &str = "HEARTH_ACP_BENCH_AGENT";
/// Chunks of the latency run, and of the warm-up turn before it.
pub(crate) const LATENCY_CHUNKS: u32 = 2_000;
pub(crate) const WARM_UP_CHUNKS: u32 = 50;
/// Chunks of the fan-out answer, and the size of each (the test agent's default).
pub(crate) const FAN_OUT_CHUNKS: u32 = 10_000;
pub(crate) const CHUNK_SIZE: usize = 16;
/// The bound on every wait.
pub(crate) const WAIT: Duration = Duration::from_secs(90);
/// How often memory is sampled while an answer streams.
pub(crate) const SAMPLE_EVERY: Duration = Duration::from_millis(2);
/// The real agent measured when installed (the lightest of them).
pub(crate) const REAL_AGENT: RealAgent = RealAgent::Codex;

fn main() {
    match std::env::var(ROLE_VARIABLE).as_deref() {
        Ok("real-agent") => real_agent::agent_process(),
        Ok("model-server") => real_agent::model_server_process(),
        _ => main_process(),
    }
}

fn main_process() {
    let load_before = load_average();
    let agent = test_agent::release_build();
    let started = Instant::now();
    let mut report = Report::default();
    let at_start = own_memory().now;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(test_agent::runs(agent, &mut report));
    drop(runtime);
    let idle = report.memory.first().map_or(at_start, |row| row.idle);
    report.memory.insert(
        0,
        MemoryRow {
            run: "test agent".into(),
            point: Point::Start,
            hearth: at_start,
            agent: None,
            idle,
        },
    );

    match REAL_AGENT.locate_or_skip() {
        Some(_) => {
            for row in real_agent::run_in_child() {
                report.take(row);
            }
        }
        None => report.notes.push(format!(
            "{}: skipped, not installed (run .ci/install-acp-agents)",
            REAL_AGENT.id()
        )),
    }

    println!(
        "ACP harness (release build, {} cores; load average {load_before} before, {} after; {:.0} s)",
        std::thread::available_parallelism().map_or(0, usize::from),
        load_average(),
        started.elapsed().as_secs_f64()
    );
    println!("Timings come from a shared machine: compare runs, not single figures.");
    report.print();
}
