//! Clocks, memory and statistics.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::SAMPLE_EVERY;

/// Now on CLOCK_MONOTONIC in nanoseconds: the clock the test agent stamps chunks with.
pub(crate) fn monotonic_nanos() -> u64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    u64::try_from(now.tv_sec).unwrap() * 1_000_000_000 + u64::try_from(now.tv_nsec).unwrap()
}

/// Resident memory of a process, in KiB: now (`VmRSS`) and at its peak (`VmHWM`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Resident {
    pub(crate) now: u64,
    pub(crate) peak: u64,
}

pub(crate) fn resident(process: &str) -> Option<Resident> {
    let status = std::fs::read_to_string(format!("/proc/{process}/status")).ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|line| line.starts_with(name))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    Some(Resident {
        now: field("VmRSS:")?,
        peak: field("VmHWM:")?,
    })
}

pub(crate) fn own_memory() -> Resident {
    resident("self").unwrap()
}

/// Samples this process's RSS, and the agent's, until stopped; keeps the highest.
pub(crate) struct Sampler {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<(u64, u64)>,
}

impl Sampler {
    pub(crate) fn start(agent: Option<u32>) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut highest = (0, 0);
            let agent = agent.map(|pid| pid.to_string());
            loop {
                highest.0 = highest.0.max(own_memory().now);
                if let Some(memory) = agent.as_deref().and_then(resident) {
                    highest.1 = highest.1.max(memory.now);
                }
                if stopped.load(Ordering::Relaxed) {
                    return highest;
                }
                std::thread::sleep(SAMPLE_EVERY);
            }
        });
        Self { stop, thread }
    }

    /// The highest RSS of this process and of the agent's process, in KiB.
    pub(crate) fn finish(self) -> (u64, u64) {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap()
    }
}

/// Latency figures in milliseconds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Spread {
    pub(crate) median: f64,
    pub(crate) p90: f64,
    pub(crate) p99: f64,
    pub(crate) min: f64,
    pub(crate) max: f64,
}

pub(crate) fn spread(mut nanos: Vec<u64>) -> Spread {
    assert!(!nanos.is_empty(), "no latency was measured");
    nanos.sort_unstable();
    let at = |fraction: f64| {
        let index = ((nanos.len() as f64 - 1.0) * fraction).round() as usize;
        nanos[index] as f64 / 1e6
    };
    Spread {
        median: at(0.5),
        p90: at(0.9),
        p99: at(0.99),
        min: at(0.0),
        max: at(1.0),
    }
}

pub(crate) fn megabytes(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}
