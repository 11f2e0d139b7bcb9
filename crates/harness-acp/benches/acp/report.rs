//! What the runs report (the real agent's process sends its rows as JSON lines), and
//! the table printed at the end.

use serde::{Deserialize, Serialize};

use crate::measure::{Spread, megabytes};
use crate::{FAN_OUT_CHUNKS, LATENCY_CHUNKS};

/// When in a run memory is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Point {
    /// The benchmark's process before its runtime started.
    Start,
    /// The runtime and an SQLite host started, the agent not yet.
    Idle,
    /// The agent started and answered one turn.
    Ready,
    /// The highest reading while the long answer streamed (sampled every 2 ms).
    Streaming,
    /// The long answer done.
    After,
    /// The process's high-water mark (`VmHWM`) at the end.
    HighWater,
}

impl Point {
    fn describe(self) -> String {
        match self {
            Point::Start => "benchmark process at start".into(),
            Point::Idle => "idle runtime + SQLite host".into(),
            Point::Ready => "started, one turn done".into(),
            Point::Streaming => format!("streaming {FAN_OUT_CHUNKS} chunks, peak *"),
            Point::After => "after the answer".into(),
            Point::HighWater => "high-water mark (VmHWM) *".into(),
        }
    }
}

/// Memory at one point of a run, in KiB.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct MemoryRow {
    /// The agent driven.
    pub(crate) run: String,
    pub(crate) point: Point,
    /// This process: runtime, SQLite host, harness (and the benchmark's own records).
    pub(crate) hearth: u64,
    /// The agent's process tree (its own process alone at `Streaming` and `HighWater`).
    pub(crate) agent: Option<u64>,
    /// The same process with an idle runtime and SQLite host.
    pub(crate) idle: u64,
}

/// One fan-out run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct FanOutRow {
    pub(crate) label: String,
    pub(crate) chunks: u32,
    pub(crate) bytes: usize,
    pub(crate) deltas: usize,
    /// From sending the prompt to the first delta, to the last one, to the end of the
    /// turn, in seconds.
    pub(crate) first: f64,
    pub(crate) last: f64,
    pub(crate) complete: f64,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Row {
    Memory(MemoryRow),
    FanOut(FanOutRow),
}

#[derive(Default)]
pub(crate) struct Report {
    pub(crate) latency: Vec<(String, Spread)>,
    pub(crate) memory: Vec<MemoryRow>,
    pub(crate) fan_out: Vec<FanOutRow>,
    pub(crate) notes: Vec<String>,
}

impl Report {
    pub(crate) fn take(&mut self, row: Row) {
        match row {
            Row::Memory(row) => self.memory.push(row),
            Row::FanOut(row) => self.fan_out.push(row),
        }
    }

    pub(crate) fn print(&self) {
        println!();
        println!("1. added latency: the agent writes an agent_message_chunk → its envelope");
        println!("   leaves the host subscription ({LATENCY_CHUNKS} chunks, 1 ms apart, ms)");
        println!(
            "   {:<44} {:>8} {:>8} {:>8} {:>8} {:>8}",
            "", "median", "p90", "p99", "min", "max"
        );
        for (label, figures) in &self.latency {
            println!(
                "   {label:<44} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3}",
                figures.median, figures.p90, figures.p99, figures.min, figures.max
            );
        }
        println!("   target: median ≤ 1 ms through Hearth");
        println!();
        println!("2. memory (RSS, MB): Hearth = this benchmark's process (runtime, SQLite host,");
        println!("   harness); agent = the agent's process tree (* its own process alone)");
        println!(
            "   {:<44} {:>8} {:>8} {:>8} {:>10}",
            "", "Hearth", "agent", "total", "Δ idle"
        );
        for row in &self.memory {
            let agent = row
                .agent
                .map_or_else(|| "-".to_owned(), |kib| format!("{:.1}", megabytes(kib)));
            let total = row.agent.map_or_else(
                || "-".to_owned(),
                |kib| format!("{:.1}", megabytes(kib + row.hearth)),
            );
            let growth = row.hearth as f64 - row.idle as f64;
            let label = format!("{}: {}", row.run, row.point.describe());
            println!(
                "   {label:<44} {:>8.1} {agent:>8} {total:>8} {:>+10.1}",
                megabytes(row.hearth),
                growth / 1024.0
            );
        }
        let peaks: Vec<String> = self
            .memory
            .iter()
            .filter(|row| row.point == Point::HighWater)
            .map(|row| format!("{} {:.1} MB", row.run, megabytes(row.hearth)))
            .collect();
        println!(
            "   Hearth's own memory (total − agent), at its peak: {}",
            peaks.join(", ")
        );
        println!("   target: ≤ 15 MB over the agent's process tree");
        println!();
        println!(
            "3. fan-out of a {FAN_OUT_CHUNKS}-chunk answer to one subscriber (checked: no envelope"
        );
        println!("   missing, text whole and in order, stored turn identical)");
        println!(
            "   {:<44} {:>7} {:>9} {:>9} {:>9} {:>10} {:>7}",
            "", "deltas", "first ms", "last ms", "done ms", "chunks/s", "MB/s"
        );
        for row in &self.fan_out {
            let streaming = (row.last - row.first).max(1e-9);
            println!(
                "   {:<44} {:>7} {:>9.1} {:>9.1} {:>9.1} {:>10.0} {:>7.2}",
                row.label,
                row.deltas,
                row.first * 1e3,
                row.last * 1e3,
                row.complete * 1e3,
                f64::from(row.chunks) / streaming,
                row.bytes as f64 / streaming / 1e6
            );
        }
        println!("   chunks/s and MB/s over first → last delta");
        for note in &self.notes {
            println!();
            println!("{note}");
        }
    }
}
