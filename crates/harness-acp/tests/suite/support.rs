//! A harness over the test agent, with its state kept in a directory that outlives a
//! harness instance (a restart), and helpers to drive turns.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hearth_core::{
    Action, ChatUri, Envelope, Harness, HarnessId, ResponsePart, Scope, SessionUri, StopReason,
    TurnId, UserMessage,
};
use hearth_harness_acp::{AcpHarness, AcpOptions, AgentSpec, PermissionPolicy};
use hearth_host::{Host, NewSessionRequest, Subscription};
use hearth_test_support::{acp_test_agent, next_envelope};
use tempfile::TempDir;

/// The provider id the test agent is registered under.
pub const AGENT: &str = "tester";

/// The test agent's setup: its state directory, a working directory, Hearth's data
/// directory, and the environment.
pub struct Setup {
    /// The agent's sessions, kept across harness instances (held for its lifetime).
    pub _state: TempDir,
    pub work: TempDir,
    pub data: TempDir,
    pub env: Vec<(String, String)>,
    pub policy: PermissionPolicy,
    pub supervisor: Option<PathBuf>,
    pub audit: Option<hearth_tools::AuditLog>,
}

impl Setup {
    pub fn new() -> Self {
        Self::with_env(&[])
    }

    pub fn with_env(env: &[(&str, &str)]) -> Self {
        let state = tempfile::tempdir().unwrap();
        let mut variables = vec![(
            "HEARTH_TEST_AGENT_STATE".to_owned(),
            state.path().display().to_string(),
        )];
        variables.extend(
            env.iter()
                .map(|(key, value)| ((*key).to_owned(), (*value).to_owned())),
        );
        Self {
            _state: state,
            work: tempfile::tempdir().unwrap(),
            data: tempfile::tempdir().unwrap(),
            env: variables,
            policy: PermissionPolicy::default(),
            supervisor: None,
            audit: None,
        }
    }

    /// Records into an audit log of its own (in the data directory).
    pub async fn with_audit(mut self) -> Self {
        let store = hearth_store::SqliteStore::open(&self.data.path().join("audit.db"))
            .await
            .unwrap();
        self.audit = Some(hearth_tools::AuditLog::new(Arc::new(store)));
        self
    }

    /// The audit rows, oldest first, as `kind decision outcome`.
    pub async fn audit_rows(&self) -> Vec<(String, String, String, serde_json::Value)> {
        let log = self.audit.as_ref().expect("an audit log");
        let mut rows = log
            .list(&hearth_store::AuditQuery {
                limit: 1000,
                ..hearth_store::AuditQuery::default()
            })
            .await
            .unwrap();
        rows.reverse();
        rows.into_iter()
            .map(|row| {
                (
                    row.entry.kind,
                    row.entry.decision,
                    row.entry.outcome,
                    row.entry.detail.unwrap_or_default(),
                )
            })
            .collect()
    }

    /// The working directory, canonical.
    pub fn work(&self) -> PathBuf {
        self.work.path().canonicalize().unwrap()
    }

    pub fn spec(&self) -> AgentSpec {
        AgentSpec {
            id: HarnessId::parse(AGENT).unwrap(),
            name: "Test agent".into(),
            command: acp_test_agent(),
            args: Vec::new(),
            env: self.env.clone(),
            pass_env: Vec::new(),
            policy: self.policy.clone(),
            lent_tools: None,
            auth_method: None,
            reads_agents_file: false,
        }
    }

    pub fn options(&self) -> AcpOptions {
        AcpOptions {
            data_directory: Some(self.data.path().to_path_buf()),
            supervisor: self.supervisor.clone(),
            process_directory: Some(self.work()),
            audit: self.audit.clone(),
            timeouts: hearth_harness_acp::Timeouts::default(),
            readable: Vec::new(),
            output_limits: hearth_core::OutputLimits::default(),
            progress: None,
            live: hearth_harness_acp::LiveLimits::default(),
            lent_http: None,
        }
    }

    pub fn harness(&self) -> AcpHarness {
        AcpHarness::new(self.spec(), self.options())
    }

    pub fn agents(&self) -> Vec<Arc<dyn Harness>> {
        vec![Arc::new(self.harness())]
    }
}

/// A session of the test agent working in `work`.
pub async fn session(host: &Host, work: &Path) -> SessionUri {
    host.create_session(NewSessionRequest {
        provider: HarnessId::parse(AGENT).unwrap(),
        scope: Scope::Global,
        title: None,
        model: None,
        working_directories: vec![work.to_path_buf()],
        owner: None,
    })
    .await
    .unwrap_or_else(|error| panic!("create session: {error}"))
}

/// Sends a prompt and returns the turn id and its subscription.
pub async fn send(host: &Host, chat: &ChatUri, text: &str) -> (TurnId, Subscription) {
    host.send_streaming(chat, UserMessage::text(text))
        .await
        .unwrap_or_else(|error| panic!("send: {error}"))
}

/// Envelopes until the turn completes.
pub async fn finish(
    subscription: &mut Subscription,
    turn_id: &TurnId,
) -> (Vec<Envelope>, StopReason) {
    hearth_test_support::until_turn_completes(&mut subscription.receiver, turn_id).await
}

/// Waits for the next permission request of a turn; returns its id and options.
pub async fn permission_request(
    subscription: &mut Subscription,
) -> (String, Vec<hearth_core::PermissionOption>, Option<String>) {
    loop {
        let envelope = next_envelope(&mut subscription.receiver).await;
        if let Action::PartAdded {
            part:
                ResponsePart::PermissionRequest {
                    request_id,
                    options,
                    tool_call_id,
                    ..
                },
            ..
        } = envelope.action
        {
            return (request_id, options, tool_call_id);
        }
    }
}

/// The answer text of a chat's last turn.
pub async fn last_answer(host: &Host, chat: &ChatUri) -> String {
    let state = host.chat(chat).await.unwrap();
    state
        .turns
        .last()
        .map(hearth_core::Turn::response_text)
        .unwrap_or_default()
}
