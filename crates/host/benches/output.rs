//! One turn of hostile output through a real host: an SQLite store in a temporary
//! directory, the event loop, the write-behind queue and one subscriber that drains every
//! envelope. The fake harness pushes the signals as fast as the host takes them.
//!
//! `cargo bench -p hearth-host --bench output` prints, per run: the time from the first
//! signal to the turn's completion reaching the subscriber, the peak RSS of the process
//! that ran it (each run in a fresh process of its own, so one run's memory does not show
//! in the next), the stored turn's size and the database's.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use hearth_core::OutputLimits;
use hearth_core::{
    ChatUri, Harness, ResourceUri, Signal, ToolCallContent, ToolCallPart, ToolCallPatch,
    ToolCallStatus, ToolResult, UserMessage,
};
use hearth_host::HostConfig;
use hearth_test_support::{FakeAgent, TestHost, test_config};
use tokio::sync::broadcast::error::RecvError;

/// One kind of output, with its size.
#[derive(Clone, Copy, Debug)]
enum Run {
    /// An answer of this many bytes, in 64 KiB deltas.
    Answer(usize),
    /// This many updates over this many tool calls, round robin: each update a status and
    /// a short text (as a terminal's output streams).
    Updates(usize, usize),
    /// This many tool calls, each announced and finished.
    Calls(usize),
}

impl Run {
    fn label(self) -> String {
        match self {
            Self::Answer(bytes) => format!("answer of {} MB", bytes / 1_000_000),
            Self::Updates(updates, calls) => {
                format!("{updates} tool-call updates over {calls} calls")
            }
            Self::Calls(calls) => format!("{calls} tool calls"),
        }
    }

    fn args(self) -> Vec<String> {
        match self {
            Self::Answer(bytes) => vec!["answer".into(), bytes.to_string()],
            Self::Updates(updates, calls) => {
                vec!["updates".into(), updates.to_string(), calls.to_string()]
            }
            Self::Calls(calls) => vec!["calls".into(), calls.to_string()],
        }
    }

    fn parse(args: &[String]) -> Self {
        let number = |index: usize| args[index].parse::<usize>().unwrap();
        match args[0].as_str() {
            "answer" => Self::Answer(number(1)),
            "updates" => Self::Updates(number(1), number(2)),
            "calls" => Self::Calls(number(1)),
            other => panic!("unknown run {other}"),
        }
    }
}

const DELTA: usize = 64 * 1024;

fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

async fn push(fake: &FakeAgent, chat: &ChatUri, turn_id: &hearth_core::TurnId, run: Run) {
    match run {
        Run::Answer(bytes) => {
            let delta = "x".repeat(DELTA);
            let mut sent = 0;
            while sent < bytes {
                fake.progress(
                    chat,
                    Signal::TextDelta {
                        turn_id: turn_id.clone(),
                        text: delta.clone(),
                    },
                )
                .await;
                sent += DELTA;
            }
        }
        Run::Updates(updates, calls) => {
            for index in 0..calls {
                let call = ToolCallPart::new(
                    format!("call-{index}"),
                    "terminal",
                    serde_json::json!({"command": "make"}),
                    ToolCallStatus::Pending,
                );
                fake.progress(
                    chat,
                    Signal::ToolCallStarted {
                        turn_id: turn_id.clone(),
                        call,
                    },
                )
                .await;
            }
            for index in 0..updates {
                fake.progress(
                    chat,
                    Signal::ToolCallUpdated {
                        turn_id: turn_id.clone(),
                        call_id: format!("call-{}", index % calls),
                        status: ToolCallStatus::Running,
                        result: None,
                        patch: ToolCallPatch {
                            content: Some(vec![ToolCallContent::Text {
                                text: format!("compiling unit {index} of the build\n"),
                            }]),
                            ..ToolCallPatch::default()
                        },
                    },
                )
                .await;
            }
            for index in 0..calls {
                fake.progress(chat, finished(turn_id, format!("call-{index}")))
                    .await;
            }
        }
        Run::Calls(calls) => {
            for index in 0..calls {
                let call_id = format!("call-{index}");
                let call = ToolCallPart::new(
                    call_id.clone(),
                    "file_read",
                    serde_json::json!({"path": format!("notes/{index}.md")}),
                    ToolCallStatus::Running,
                );
                fake.progress(
                    chat,
                    Signal::ToolCallStarted {
                        turn_id: turn_id.clone(),
                        call,
                    },
                )
                .await;
                fake.progress(chat, finished(turn_id, call_id)).await;
            }
        }
    }
}

fn finished(turn_id: &hearth_core::TurnId, call_id: String) -> Signal {
    Signal::ToolCallUpdated {
        turn_id: turn_id.clone(),
        call_id,
        status: ToolCallStatus::Completed,
        result: Some(ToolResult {
            content: "done".into(),
            is_error: false,
        }),
        patch: ToolCallPatch::default(),
    }
}

/// Runs one turn in this process and prints `millis peak_kib turn_bytes db_bytes`.
async fn probe(run: Run, config: HostConfig) {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start_with(vec![fake.clone() as Arc<dyn Harness>], config).await;
    let session = test.session("fake").await;
    let chat = ChatUri::default_for(&session);
    let mut subscription = test
        .host
        .subscribe(&ResourceUri::Chat(chat.clone()))
        .await
        .unwrap();
    let turn_id = test
        .host
        .send(&chat, UserMessage::text("go"))
        .await
        .unwrap();
    assert_eq!(fake.wait_for_send(&chat).await, turn_id);
    let drain = tokio::spawn(async move {
        loop {
            match subscription.receiver.recv().await {
                Ok(envelope) => {
                    if matches!(envelope.action, hearth_core::Action::TurnCompleted { .. }) {
                        return;
                    }
                }
                Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => panic!("the subscription closed"),
            }
        }
    });
    let started = Instant::now();
    push(&fake, &chat, &turn_id, run).await;
    fake.finish_ok(&chat);
    tokio::time::timeout(Duration::from_secs(900), drain)
        .await
        .expect("the turn did not complete")
        .unwrap();
    let elapsed = started.elapsed();
    test.host.shutdown().await;
    let turns = test.store.turns(&chat).await.unwrap();
    let stored = serde_json::to_string(&turns[0]).unwrap().len();
    let database: u64 = ["", "-wal"]
        .iter()
        .filter_map(|suffix| {
            std::fs::metadata(format!("{}{suffix}", test.database().display())).ok()
        })
        .map(|metadata| metadata.len())
        .sum();
    println!(
        "{} {} {stored} {database}",
        elapsed.as_millis(),
        peak_rss_kib()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--probe") {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let output_limits = match args[1].as_str() {
            "default" => OutputLimits::default(),
            _ => OutputLimits {
                answer_bytes: usize::MAX,
                tool_calls: usize::MAX,
                tool_call_updates: usize::MAX,
                tool_result_bytes: usize::MAX,
                tool_output_bytes: usize::MAX,
            },
        };
        let config = HostConfig {
            output_limits,
            ..test_config()
        };
        runtime.block_on(probe(Run::parse(&args[2..]), config));
        return;
    }
    let runs = [
        ("default", Run::Answer(200_000_000)),
        ("default", Run::Updates(200_000, 1)),
        ("default", Run::Updates(200_000, 1_000)),
        ("default", Run::Calls(200_000)),
        ("none", Run::Updates(10_000, 1_000)),
        ("none", Run::Updates(40_000, 1_000)),
        ("none", Run::Updates(200_000, 1_000)),
        ("none", Run::Calls(10_000)),
        ("none", Run::Calls(40_000)),
        ("none", Run::Calls(200_000)),
    ];
    println!(
        "{:<8} {:<44} {:>10} {:>12} {:>14} {:>12}",
        "limits", "run", "time", "peak RSS", "stored turn", "database"
    );
    for (limits, run) in runs {
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .arg("--probe")
            .arg(limits)
            .args(run.args())
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}: {}",
            run.label(),
            String::from_utf8_lossy(&output.stderr)
        );
        let text = String::from_utf8(output.stdout).unwrap();
        let fields: Vec<u64> = text
            .split_whitespace()
            .map(|field| field.parse().unwrap())
            .collect();
        println!(
            "{limits:<8} {:<44} {:>8.2} s {:>9.1} MB {:>11.1} MB {:>9.1} MB",
            run.label(),
            fields[0] as f64 / 1000.0,
            fields[1] as f64 / 1024.0,
            fields[2] as f64 / 1_000_000.0,
            fields[3] as f64 / 1_000_000.0
        );
    }
}
