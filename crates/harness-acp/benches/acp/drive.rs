//! Driving a harness inside a host: configuration, sessions, turns, envelopes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hearth_core::{
    Action, ChatUri, Envelope, Harness, HarnessId, Scope, StopReason, TurnId, UserMessage,
};
use hearth_harness_acp::{AcpHarness, AcpOptions, AgentSpec, PermissionPolicy, Timeouts};
use hearth_host::{Host, HostConfig, NewSessionRequest};
use hearth_test_support::TestHost;
use tokio::sync::broadcast;

use crate::WAIT;
use crate::measure::own_memory;
use crate::report::{MemoryRow, Point, Row};

/// How to start an agent: its program, arguments and environment.
pub(crate) struct Program {
    pub(crate) command: PathBuf,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
}

/// One agent driven by the ACP harness in a host on SQLite, with the default host
/// configuration (checkpoints included) and no supervisor process.
pub(crate) struct Driven {
    /// The agent's name in the figures.
    pub(crate) name: String,
    provider: HarnessId,
    pub(crate) harness: AcpHarness,
    pub(crate) test: TestHost,
    /// This process's RSS (KiB) with the host started and the agent not yet.
    pub(crate) idle: u64,
    /// The agent's working directory (canonical).
    pub(crate) work: PathBuf,
    _work: tempfile::TempDir,
    _data: tempfile::TempDir,
}

impl Driven {
    /// Starts the host with a harness for `program`; the agent starts with the first
    /// session. `prepare` may write the agent's configuration for its working directory.
    pub(crate) async fn start(
        id: &str,
        name: &str,
        prepare: impl FnOnce(&Path) -> Program,
    ) -> Self {
        let work_directory = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let work = work_directory.path().canonicalize().unwrap();
        let program = prepare(&work);
        let provider = HarnessId::parse(id).unwrap();
        let spec = AgentSpec {
            id: provider.clone(),
            name: name.to_owned(),
            command: program.command,
            args: program.args,
            env: program.env,
            pass_env: Vec::new(),
            policy: PermissionPolicy::default(),
            lent_tools: None,
            auth_method: None,
            reads_agents_file: false,
        };
        let options = AcpOptions {
            data_directory: Some(data.path().to_path_buf()),
            supervisor: None,
            process_directory: Some(work.clone()),
            audit: None,
            timeouts: Timeouts::default(),
            readable: Vec::new(),
            output_limits: hearth_core::OutputLimits::default(),
            progress: None,
            live: hearth_harness_acp::LiveLimits::default(),
            lent_http: None,
        };
        let harness = AcpHarness::new(spec, options);
        let agents: Vec<Arc<dyn Harness>> = vec![Arc::new(harness.clone())];
        let config = HostConfig {
            source: "bench".into(),
            working_directories: vec![work.clone()],
            ..HostConfig::default()
        };
        let test = TestHost::start_with(agents, config).await;
        Self {
            name: name.to_owned(),
            provider,
            harness,
            test,
            idle: own_memory().now,
            work,
            _work: work_directory,
            _data: data,
        }
    }

    pub(crate) fn host(&self) -> &Host {
        &self.test.host
    }

    /// A new session of the agent (which starts it, the first time); its default chat.
    pub(crate) async fn new_chat(&self) -> ChatUri {
        let session = self
            .host()
            .create_session(NewSessionRequest {
                provider: self.provider.clone(),
                scope: Scope::Global,
                title: None,
                model: None,
                working_directories: vec![self.work.clone()],
                owner: None,
            })
            .await
            .unwrap_or_else(|error| panic!("creating a session of {}: {error}", self.name));
        ChatUri::default_for(&session)
    }

    /// Memory at `point`: this process's, and the agent's (`agent` KiB, or its
    /// process tree's now).
    pub(crate) async fn memory(&self, point: Point, hearth: u64, agent: Option<u64>) -> Row {
        let agent = match (point, agent) {
            (Point::Idle, _) => None,
            (_, Some(agent)) => Some(agent),
            (_, None) => self.harness.agent_memory_kib().await,
        };
        Row::Memory(MemoryRow {
            run: self.name.clone(),
            point,
            hearth,
            agent,
            idle: self.idle,
        })
    }

    pub(crate) async fn stop(self) {
        self.test.host.shutdown().await;
    }
}

/// The next envelope; a subscriber that fell behind lost envelopes, which fails the run.
pub(crate) async fn next(receiver: &mut hearth_host::EnvelopeReceiver) -> Envelope {
    match tokio::time::timeout(WAIT, receiver.recv()).await {
        Ok(Ok(envelope)) => envelope,
        Ok(Err(broadcast::error::RecvError::Lagged(missed))) => {
            panic!("the subscriber fell behind: {missed} envelopes lost to it")
        }
        Ok(Err(broadcast::error::RecvError::Closed)) => panic!("the subscription closed"),
        Err(_) => panic!("no envelope within {WAIT:?}"),
    }
}

/// What a turn that ended says about its end, for failures.
pub(crate) async fn turn_errors(host: &Host, chat: &ChatUri) -> String {
    let state = host.chat(chat).await.unwrap();
    let turn = state.turns.last().unwrap();
    format!("{:?}", turn.parts.iter().rev().take(3).collect::<Vec<_>>())
}

/// Sends `prompt` and waits for the turn to end with `end_turn`; returns its text.
pub(crate) async fn turn(host: &Host, chat: &ChatUri, prompt: &str) -> String {
    let (turn_id, mut subscription) = host
        .send_streaming(chat, UserMessage::text(prompt))
        .await
        .unwrap();
    loop {
        if let Action::TurnCompleted {
            turn_id: id,
            stop_reason,
            ..
        } = next(&mut subscription.receiver).await.action
            && id == turn_id
        {
            assert_eq!(
                stop_reason,
                StopReason::EndTurn,
                "turn {prompt:?}: {}",
                turn_errors(host, chat).await
            );
            break;
        }
    }
    let state = host.chat(chat).await.unwrap();
    state.turns.last().unwrap().response_text()
}

/// Whether an envelope ends the turn `turn_id`; panics unless it ended with `end_turn`.
pub(crate) fn ends(envelope: &Envelope, turn_id: &TurnId) -> bool {
    match &envelope.action {
        Action::TurnCompleted {
            turn_id: id,
            stop_reason,
            ..
        } if id == turn_id => {
            assert_eq!(
                *stop_reason,
                StopReason::EndTurn,
                "the turn did not end well"
            );
            true
        }
        _ => false,
    }
}
