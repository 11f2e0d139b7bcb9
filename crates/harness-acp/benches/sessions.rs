//! Twenty chats of one real agent (Claude through Zed's adapter, which runs one Claude
//! Code process per open session), each answered once by the mock model server: what
//! the agent's process tree holds afterwards (processes, resident memory) with Hearth's
//! default limit of open sessions and with a limit of twenty (every chat's session left
//! open, as before the limit existed), and Hearth's own memory per chat.
//!
//! `cargo bench -p hearth-harness-acp --bench sessions` (`HEARTH_BENCH_AGENT=codex` or
//! another id picks the agent; `HEARTH_BENCH_CHATS` the number of chats). Skipped with a
//! note when the agent is not installed (`.ci/install-acp-agents`).

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a benchmark prints its figures and fails loudly"
)]

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use hearth_core::{ChatUri, Harness, HarnessId, Scope, StopReason, UserMessage};
use hearth_harness_acp::{AcpHarness, AcpOptions, AgentSpec, LiveLimits, PermissionPolicy};
use hearth_host::NewSessionRequest;
use hearth_test_support::{MockModelServer, ModelTurn, RealAgent, TestHost, until_turn_completes};

/// What the agent's process group holds: processes and resident memory in KiB.
fn group_figures(group: u32) -> (usize, u64) {
    let mut processes = 0;
    let mut memory = 0;
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let path = entry.path();
        if entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<u32>().ok())
            .is_none()
        {
            continue;
        }
        if hearth_process::group::group_of(&path) != Some(group) {
            continue;
        }
        processes += 1;
        memory += hearth_process::group::process_rss_kib(&path).unwrap_or(0);
    }
    (processes, memory)
}

/// This process's resident memory in KiB.
fn own_kib() -> u64 {
    hearth_process::group::process_rss_kib(Path::new("/proc/self")).unwrap_or(0)
}

struct Figures {
    limit: usize,
    processes: usize,
    agent_kib: u64,
    own_per_chat_kib: f64,
    seconds: f64,
}

async fn twenty_chats(agent: RealAgent, chats: usize, limit: usize) -> Figures {
    let server = MockModelServer::start().await.unwrap();
    let model = agent.model();
    for _ in 0..chats {
        model.push(ModelTurn::text("pong"));
    }
    model.install(&server);
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let workdir = work.path().canonicalize().unwrap();
    let launch = agent.prepare(home.path(), &server.url(), &workdir);
    let spec = AgentSpec {
        id: HarnessId::parse(agent.id()).unwrap(),
        name: agent.id().to_owned(),
        command: launch.command.clone(),
        args: launch.args.clone(),
        env: launch.env.clone(),
        pass_env: Vec::new(),
        policy: PermissionPolicy::default(),
        lent_tools: None,
        auth_method: None,
        reads_agents_file: false,
    };
    let data = tempfile::tempdir().unwrap();
    let options = AcpOptions {
        data_directory: Some(data.path().to_path_buf()),
        process_directory: Some(workdir.clone()),
        live: LiveLimits {
            max_sessions: limit,
            ..LiveLimits::default()
        },
        ..AcpOptions::default()
    };
    let harness = AcpHarness::new(spec, options);
    let test = TestHost::start(vec![Arc::new(harness.clone()) as Arc<dyn Harness>]).await;
    let started = Instant::now();
    let before = own_kib();
    for index in 0..chats {
        let session = test
            .host
            .create_session(NewSessionRequest {
                provider: HarnessId::parse(agent.id()).unwrap(),
                scope: Scope::Global,
                title: None,
                model: None,
                working_directories: vec![workdir.clone()],
                owner: None,
            })
            .await
            .unwrap();
        let chat = ChatUri::default_for(&session);
        let (turn_id, mut subscription) = test
            .host
            .send_streaming(&chat, UserMessage::text(format!("ping {index}")))
            .await
            .unwrap();
        let (_, reason) = until_turn_completes(&mut subscription.receiver, &turn_id).await;
        assert_eq!(reason, StopReason::EndTurn, "chat {index} did not answer");
    }
    let seconds = started.elapsed().as_secs_f64();
    let own = own_kib().saturating_sub(before);
    let group = harness.process_id().await.expect("the agent runs");
    let (processes, agent_kib) = group_figures(group);
    test.host.shutdown().await;
    harness.stop().await;
    Figures {
        limit,
        processes,
        agent_kib,
        own_per_chat_kib: own as f64 / chats as f64,
        seconds,
    }
}

fn main() {
    let agent = std::env::var("HEARTH_BENCH_AGENT")
        .ok()
        .and_then(|id| RealAgent::from_id(&id))
        .unwrap_or(RealAgent::ClaudeAgent);
    let chats: usize = std::env::var("HEARTH_BENCH_CHATS")
        .ok()
        .and_then(|count| count.parse().ok())
        .unwrap_or(20);
    if let Err(reason) = agent.locate() {
        println!("sessions: skipped: {reason}");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let default_limit = LiveLimits::default().max_sessions;
    println!(
        "{chats} chats of {} (one answer each); the agent's process group afterwards",
        agent.id()
    );
    println!(
        "limit of open sessions | processes | agent tree RSS | Hearth's own RSS per chat | time"
    );
    for limit in [chats, default_limit] {
        let figures = runtime.block_on(twenty_chats(agent, chats, limit));
        println!(
            "{:>22} | {:>9} | {:>11.1} MB | {:>22.1} KiB | {:.1} s",
            figures.limit,
            figures.processes,
            figures.agent_kib as f64 / 1024.0,
            figures.own_per_chat_kib,
            figures.seconds
        );
    }
}
