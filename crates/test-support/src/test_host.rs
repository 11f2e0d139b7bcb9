//! A host over a real database — SQLite in a temporary directory, or a fresh PostgreSQL
//! database of the test server — restartable, plus helpers that wait (bounded) for
//! envelopes.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hearth_core::{
    Action, ChatSeed, ChatUri, Envelope, Harness, HarnessId, Scope, SessionUri, StopReason, TurnId,
};
use hearth_host::{EnvelopeReceiver, Host, HostConfig, NewSessionRequest};
use hearth_store::{PgStore, SqliteStore, Store};
use tempfile::TempDir;

/// How long any wait in a test may take before it fails. Generous, so that a machine
/// busy with other builds never fails a test that waits on an event; a test that does
/// fail waits this long, once.
pub const WAIT: Duration = Duration::from_secs(30);

/// Which database a test host runs on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Backend {
    /// SQLite, in the test host's temporary directory.
    Sqlite,
    /// PostgreSQL: the database at this URL (see [`crate::postgres::fresh_database`]).
    Postgres(String),
}

tokio::task_local! {
    /// The backend test hosts started in this task use (SQLite when unset): set by
    /// [`on_backend`], so one test body runs on every backend unchanged.
    static BACKEND: Backend;
}

/// Runs `test` with every [`TestHost`] it starts (and every [`TestHost::open_store`]) on
/// `backend`.
pub async fn on_backend<F: std::future::Future>(backend: Backend, test: F) -> F::Output {
    BACKEND.scope(backend, test).await
}

/// The backend of the running test (see [`on_backend`]).
pub fn current_backend() -> Backend {
    BACKEND.try_with(Clone::clone).unwrap_or(Backend::Sqlite)
}

/// A store opened for a test host, kept by its type so it can be closed.
#[derive(Clone)]
enum Opened {
    Sqlite(Arc<SqliteStore>),
    Postgres(Arc<PgStore>),
}

impl Opened {
    fn shared(&self) -> Arc<dyn Store> {
        match self {
            Self::Sqlite(store) => store.clone(),
            Self::Postgres(store) => store.clone(),
        }
    }

    async fn close(&self) {
        match self {
            Self::Sqlite(store) => store.close().await,
            Self::Postgres(store) => store.close().await,
        }
    }
}

/// A host on a real database: SQLite in a temporary directory, or PostgreSQL (see
/// [`on_backend`]).
pub struct TestHost {
    /// The directory holding the database (SQLite), and the test's other files.
    pub dir: TempDir,
    /// The host.
    pub host: Host,
    /// Its store.
    pub store: Arc<dyn Store>,
    backend: Backend,
    opened: Opened,
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
        let backend = current_backend();
        let opened = open(&backend, &dir.path().join("hearth.db")).await;
        let store = opened.shared();
        let host = Host::start(store.clone(), agents, config);
        Self {
            dir,
            host,
            store,
            backend,
            opened,
        }
    }

    /// The database file (SQLite).
    pub fn database(&self) -> PathBuf {
        self.dir.path().join("hearth.db")
    }

    /// Which database the host runs on.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// The host's store as SQLite, for tests of what only SQLite has; fails the test on
    /// another backend.
    pub fn sqlite(&self) -> Arc<SqliteStore> {
        match &self.opened {
            Opened::Sqlite(store) => store.clone(),
            Opened::Postgres(_) => panic!("this test needs the SQLite store"),
        }
    }

    /// The host's store as one handle on all it keeps (its change feed, its users).
    pub fn stores(&self) -> Arc<dyn hearth_store::Stores> {
        match &self.opened {
            Opened::Sqlite(store) => store.clone(),
            Opened::Postgres(store) => store.clone(),
        }
    }

    /// Another handle on the host's database, as a second process (or node) opens it.
    pub async fn open_store(&self) -> Arc<dyn Store> {
        open(&self.backend, &self.database()).await.shared()
    }

    /// Shuts the host down cleanly and starts a new one on the same database with new
    /// harness instances (a process restart).
    pub async fn restart(self, agents: Vec<Arc<dyn Harness>>) -> Self {
        self.host.shutdown().await;
        self.crash_and_restart(agents).await
    }

    /// Drops the host without shutting it down (a crash: nothing is flushed).
    pub async fn crash_and_restart(self, agents: Vec<Arc<dyn Harness>>) -> Self {
        let Self {
            dir,
            host,
            store,
            backend,
            opened,
        } = self;
        drop(host);
        drop(store);
        opened.close().await;
        on_backend(backend, Self::start_in(dir, agents, test_config())).await
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
                owner: None,
            })
            .await
            .unwrap_or_else(|error| panic!("create session: {error}"))
    }
}

/// Opens the backend's database (SQLite at `path`).
async fn open(backend: &Backend, path: &std::path::Path) -> Opened {
    match backend {
        Backend::Sqlite => Opened::Sqlite(Arc::new(
            SqliteStore::open(path)
                .await
                .unwrap_or_else(|error| panic!("open: {error}")),
        )),
        Backend::Postgres(url) => Opened::Postgres(Arc::new(
            PgStore::connect(url)
                .await
                .unwrap_or_else(|error| panic!("open {url}: {error}")),
        )),
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

/// Runs each named test, an `async fn()` starting its hosts with [`TestHost`], on every
/// backend as its own test: `NAME::sqlite` and `NAME::postgres` (a fresh database of the
/// test server; skipped, saying why, when none runs and none is required).
#[macro_export]
macro_rules! on_every_backend {
    ($($name:ident),+ $(,)?) => {
        $(
            mod $name {
                #[tokio::test]
                async fn sqlite() {
                    super::$name().await;
                }

                #[tokio::test]
                async fn postgres() {
                    if let Some(url) = $crate::postgres::fresh_database().await {
                        $crate::on_backend($crate::Backend::Postgres(url), super::$name()).await;
                    }
                }
            }
        )+
    };
}
