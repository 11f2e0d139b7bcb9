//! A host over a real SQLite database in a temporary directory, restartable, plus
//! helpers that wait (bounded) for envelopes.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hearth_core::{
    Action, ChatSeed, ChatUri, Envelope, Harness, HarnessId, Scope, SessionUri, StopReason, TurnId,
};
use hearth_host::{EnvelopeReceiver, Host, HostConfig, NewSessionRequest};
use hearth_store::SqliteStore;
use tempfile::TempDir;

/// How long any wait in a test may take before it fails. Generous, so that a machine
/// busy with other builds never fails a test that waits on an event; a test that does
/// fail waits this long, once.
pub const WAIT: Duration = Duration::from_secs(30);

/// A host on a real database in a temporary directory.
pub struct TestHost {
    /// The directory holding the database.
    pub dir: TempDir,
    /// The host.
    pub host: Host,
    /// Its store.
    pub store: Arc<SqliteStore>,
}

/// A host configuration fit for tests: quick checkpoints and a short abort grace.
pub fn test_config() -> HostConfig {
    HostConfig {
        source: "test".into(),
        checkpoint_interval: Duration::from_millis(50),
        abort_grace: Duration::from_secs(2),
        ..HostConfig::default()
    }
}

impl TestHost {
    /// Starts a host with these harnesses on a fresh database.
    pub async fn start(agents: Vec<Arc<dyn Harness>>) -> Self {
        Self::start_with(agents, test_config()).await
    }

    /// Starts a host with a configuration of the test's choosing.
    pub async fn start_with(agents: Vec<Arc<dyn Harness>>, config: HostConfig) -> Self {
        let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("tempdir: {error}"));
        Self::start_in(dir, agents, config).await
    }

    async fn start_in(dir: TempDir, agents: Vec<Arc<dyn Harness>>, config: HostConfig) -> Self {
        let path = dir.path().join("hearth.db");
        let store = Arc::new(
            SqliteStore::open(&path)
                .await
                .unwrap_or_else(|error| panic!("open: {error}")),
        );
        let host = Host::start(store.clone(), agents, config);
        Self { dir, host, store }
    }

    /// The database file.
    pub fn database(&self) -> PathBuf {
        self.dir.path().join("hearth.db")
    }

    /// Shuts the host down cleanly and starts a new one on the same database with new
    /// harness instances (a process restart).
    pub async fn restart(self, agents: Vec<Arc<dyn Harness>>) -> Self {
        self.host.shutdown().await;
        let Self { dir, host, store } = self;
        drop(host);
        store.close().await;
        Self::start_in(dir, agents, test_config()).await
    }

    /// Drops the host without shutting it down (a crash: nothing is flushed).
    pub async fn crash_and_restart(self, agents: Vec<Arc<dyn Harness>>) -> Self {
        let Self { dir, host, store } = self;
        drop(host);
        store.close().await;
        Self::start_in(dir, agents, test_config()).await
    }

    /// A fresh peer chat in `session`.
    pub async fn peer(&self, session: &SessionUri) -> ChatUri {
        self.host
            .create_chat(session, ChatSeed::Fresh)
            .await
            .unwrap_or_else(|error| panic!("create peer chat: {error}"))
    }

    /// Creates a global session on a provider.
    pub async fn session(&self, provider: &str) -> SessionUri {
        self.host
            .create_session(NewSessionRequest {
                provider: HarnessId::parse(provider).unwrap_or_else(|error| panic!("{error}")),
                scope: Scope::Global,
                title: None,
                model: None,
                working_directories: Vec::new(),
            })
            .await
            .unwrap_or_else(|error| panic!("create session: {error}"))
    }
}

/// Receives the next envelope, failing the test after [`WAIT`].
pub async fn next_envelope(receiver: &mut EnvelopeReceiver) -> Envelope {
    match tokio::time::timeout(WAIT, receiver.recv()).await {
        Ok(Ok(envelope)) => envelope,
        Ok(Err(error)) => panic!("subscription broke: {error}"),
        Err(_) => panic!("no envelope within {WAIT:?}"),
    }
}

/// Receives envelopes until the turn completes; returns them all and the stop reason.
pub async fn until_turn_completes(
    receiver: &mut EnvelopeReceiver,
    turn_id: &TurnId,
) -> (Vec<Envelope>, StopReason) {
    let mut seen = Vec::new();
    loop {
        let envelope = next_envelope(receiver).await;
        let done = match &envelope.action {
            Action::TurnCompleted {
                turn_id: id,
                stop_reason,
                ..
            } if id == turn_id => Some(stop_reason.clone()),
            _ => None,
        };
        seen.push(envelope);
        if let Some(reason) = done {
            return (seen, reason);
        }
    }
}

/// Polls `condition` until it holds, failing the test after [`WAIT`].
pub async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !condition() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
