//! A hostile agent's output through Hearth: the deterministic test agent (its release
//! build) streams a 200 MB answer, or hundreds of thousands of tool-call updates, to the
//! ACP harness in a host on SQLite (default host configuration, checkpoints included)
//! with one subscriber draining every envelope.
//!
//! `cargo bench -p hearth-harness-acp --bench output` prints, per run: the time from the prompt
//! to the turn's completion reaching the subscriber, the peak RSS of the process that ran
//! Hearth (each run in a fresh process of its own), the stored turn's size, the
//! harness's own record of the chat, and the database's size. The runs with the default
//! limits are the hostile inputs; those with no limits show that applying
//! updates costs time linear in their number.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hearth_core::{
    Action, ChatUri, Harness, HarnessId, OutputLimits, Scope, StopReason, UserMessage,
};
use hearth_harness_acp::{AcpHarness, AcpOptions, AgentSpec, PermissionPolicy, Timeouts};
use hearth_host::{HostConfig, NewSessionRequest};
use hearth_test_support::TestHost;
use tokio::sync::broadcast::error::RecvError;

/// The longest one run may take.
const RUN_LIMIT: Duration = Duration::from_secs(900);

/// The release build of the test agent, built (or brought up to date) first.
fn release_agent() -> PathBuf {
    const NAME: &str = "hearth-acp-test-agent";
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--quiet", "--release", "-p", NAME])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .unwrap();
    assert!(status.success(), "building {NAME} failed");
    // This benchmark is `<target>/release/deps/output-<hash>`.
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().join(NAME)
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn unlimited() -> OutputLimits {
    OutputLimits {
        answer_bytes: usize::MAX,
        tool_calls: usize::MAX,
        tool_call_updates: usize::MAX,
        tool_result_bytes: usize::MAX,
        tool_output_bytes: usize::MAX,
    }
}

/// One run in this process: prints `millis peak_kib turn_bytes record_bytes db_bytes`.
async fn probe(agent: PathBuf, limits: OutputLimits, prompt: String) {
    let state = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let work = work.path().canonicalize().unwrap();
    let provider = HarnessId::parse("tester").unwrap();
    let spec = AgentSpec {
        id: provider.clone(),
        name: "test agent".into(),
        command: agent,
        args: Vec::new(),
        env: vec![(
            "HEARTH_TEST_AGENT_STATE".into(),
            state.path().display().to_string(),
        )],
        policy: PermissionPolicy::default(),
        lent_tools: None,
        auth_method: None,
        reads_agents_file: false,
        pass_env: Vec::new(),
    };
    let options = AcpOptions {
        data_directory: Some(data.path().to_path_buf()),
        supervisor: None,
        process_directory: Some(work.clone()),
        audit: None,
        timeouts: Timeouts::default(),
        readable: Vec::new(),
        output_limits: limits,
        progress: None,
        live: hearth_harness_acp::LiveLimits::default(),
        lent_http: None,
    };
    let agents: Vec<Arc<dyn Harness>> = vec![Arc::new(AcpHarness::new(spec, options))];
    let config = HostConfig {
        source: "bench".into(),
        working_directories: vec![work.clone()],
        output_limits: limits,
        ..HostConfig::default()
    };
    let test = TestHost::start_with(agents, config).await;
    let session = test
        .host
        .create_session(NewSessionRequest {
            provider,
            scope: Scope::Global,
            title: None,
            model: None,
            working_directories: vec![work],
            owner: None,
        })
        .await
        .unwrap();
    let chat = ChatUri::default_for(&session);
    // The agent starts with a first, short turn.
    let (turn_id, mut subscription) = test
        .host
        .send_streaming(&chat, UserMessage::text("hello"))
        .await
        .unwrap();
    wait(&mut subscription.receiver, &turn_id).await;
    let started = Instant::now();
    let (turn_id, mut subscription) = test
        .host
        .send_streaming(&chat, UserMessage::text(prompt))
        .await
        .unwrap();
    let reason = tokio::time::timeout(RUN_LIMIT, wait(&mut subscription.receiver, &turn_id))
        .await
        .expect("the turn did not complete");
    let elapsed = started.elapsed();
    assert_eq!(reason, StopReason::EndTurn);
    test.host.flush().await;
    let turn = test.store.turns(&chat).await.unwrap().pop().unwrap();
    let turn_bytes = serde_json::to_vec(&turn).unwrap().len();
    let record = test
        .store
        .chats(&session)
        .await
        .unwrap()
        .into_iter()
        .find_map(|record| (record.summary.uri == chat).then_some(record.provider_data))
        .flatten()
        .map_or(0, |data| data.as_bytes().len());
    let peak = peak_rss_kib();
    test.host.shutdown().await;
    let database: u64 = ["", "-wal"]
        .iter()
        .filter_map(|suffix| {
            std::fs::metadata(format!("{}{suffix}", test.database().display())).ok()
        })
        .map(|metadata| metadata.len())
        .sum();
    println!(
        "{} {peak} {turn_bytes} {record} {database}",
        elapsed.as_millis()
    );
}

async fn wait(
    receiver: &mut hearth_host::EnvelopeReceiver,
    turn_id: &hearth_core::TurnId,
) -> StopReason {
    loop {
        match receiver.recv().await {
            Ok(envelope) => {
                if let Action::TurnCompleted {
                    turn_id: id,
                    stop_reason,
                    ..
                } = envelope.action
                    && &id == turn_id
                {
                    return stop_reason;
                }
            }
            Err(RecvError::Lagged(_)) => {}
            Err(RecvError::Closed) => panic!("the subscription closed"),
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--probe") {
        let limits = match args[2].as_str() {
            "default" => OutputLimits::default(),
            _ => unlimited(),
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(probe(PathBuf::from(&args[1]), limits, args[3].clone()));
        return;
    }
    let agent = release_agent();
    let runs = [
        ("default", "/big-answer 209715200"),
        ("default", "/tool-updates 200000 1"),
        ("default", "/tool-updates 200000 1000"),
        ("default", "/big-result 20000000"),
        ("none", "/tool-updates 10000 1000"),
        ("none", "/tool-updates 40000 1000"),
        ("none", "/tool-updates 200000 1000"),
        ("none", "/tool-updates 200000 1"),
    ];
    println!(
        "{:<8} {:<28} {:>9} {:>11} {:>12} {:>12} {:>11}",
        "limits", "prompt", "time", "peak RSS", "stored turn", "agent record", "database"
    );
    for (limits, prompt) in runs {
        let output = Command::new(std::env::current_exe().unwrap())
            .arg("--probe")
            .arg(&agent)
            .arg(limits)
            .arg(prompt)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{prompt}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let fields: Vec<u64> = String::from_utf8(output.stdout)
            .unwrap()
            .split_whitespace()
            .map(|field| field.parse().unwrap())
            .collect();
        let megabytes = |bytes: u64| bytes as f64 / 1_000_000.0;
        println!(
            "{limits:<8} {prompt:<28} {:>7.2} s {:>8.1} MB {:>9.2} MB {:>9.2} MB {:>8.2} MB",
            fields[0] as f64 / 1000.0,
            fields[1] as f64 / 1024.0,
            megabytes(fields[2]),
            megabytes(fields[3]),
            megabytes(fields[4]),
        );
    }
}
