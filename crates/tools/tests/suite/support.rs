//! A registry over a real database (SQLite in a temporary directory, or a fresh database
//! of the PostgreSQL test server), with a read tool, a tool that stages writing a note
//! file, a failing tool, and a clock the test moves.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::time::Duration as StdDuration;

use futures::future::BoxFuture;
use hearth_core::{
    ApplyOutput, ChatUri, HarnessId, ProposalDraft, ProposalId, Scope, SessionId, SessionUri,
    Timestamp, ToolCallContext, ToolError, ToolHandler, ToolOutput, Toolbox, TurnId,
};
use hearth_store::{AuditStore, PgStore, ProposalStore, SqliteStore};
use hearth_tools::{
    ApprovalGate, AuditFiles, AuditLog, Proposal, ToolRegistry, UserActor, sha256_hex,
};
use serde_json::{Value, json};

/// A clock that stands still until moved.
#[derive(Clone)]
pub struct ManualClock(Arc<AtomicI64>);

impl ManualClock {
    pub fn new() -> Self {
        Self(Arc::new(AtomicI64::new(1_800_000_000_000)))
    }

    pub fn now(&self) -> Timestamp {
        Timestamp::from_timestamp_millis(self.0.load(Ordering::SeqCst)).unwrap()
    }

    pub fn advance(&self, by: chrono::Duration) {
        self.0.fetch_add(by.num_milliseconds(), Ordering::SeqCst);
    }
}

/// `echo`: a read tool.
pub struct EchoTool;

impl ToolHandler for EchoTool {
    fn name(&self) -> &str {
        "echo"
    }

    fn description(&self) -> &str {
        "Repeats its text."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "api_key": {"type": "string"},
            },
            "required": ["text"],
            "additionalProperties": false,
        })
    }

    fn mutates(&self) -> bool {
        false
    }

    fn execute<'a>(
        &'a self,
        _call: &'a ToolCallContext,
        arguments: Value,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            Ok(ToolOutput::text(format!(
                "echo: {}",
                arguments["text"].as_str().unwrap_or_default()
            )))
        })
    }
}

/// `fail`: a read tool whose error mentions a secret.
pub struct FailTool;

impl ToolHandler for FailTool {
    fn name(&self) -> &str {
        "fail"
    }

    fn description(&self) -> &str {
        "Always fails."
    }

    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }

    fn mutates(&self) -> bool {
        false
    }

    fn execute<'a>(
        &'a self,
        _call: &'a ToolCallContext,
        _arguments: Value,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            Err(ToolError::Failed(
                "upstream refused Authorization: Bearer sk-live-0123456789abcdefghij".to_owned(),
            ))
        })
    }
}

/// `note_write`: stages writing a note in its folder; applying writes it, refusing when
/// the file changed since staging. Counts applies.
pub struct NoteWriteTool {
    pub folder: PathBuf,
    pub applies: Arc<AtomicUsize>,
}

fn fingerprint(path: &Path) -> String {
    match std::fs::read(path) {
        Ok(bytes) => sha256_hex(&bytes),
        Err(_) => "absent".to_owned(),
    }
}

impl ToolHandler for NoteWriteTool {
    fn name(&self) -> &str {
        "note_write"
    }

    fn description(&self) -> &str {
        "Proposes writing a note."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "text": {"type": "string"},
            },
            "required": ["name", "text"],
            "additionalProperties": false,
        })
    }

    fn mutates(&self) -> bool {
        true
    }

    fn execute<'a>(
        &'a self,
        _call: &'a ToolCallContext,
        arguments: Value,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let name = arguments["name"].as_str().unwrap_or_default();
            if name.contains('/') || name.is_empty() {
                return Err(ToolError::InvalidArguments(format!(
                    "`{name}` is not a note name"
                )));
            }
            let path = self.folder.join(name);
            let before = std::fs::read_to_string(&path).unwrap_or_default();
            let text = arguments["text"].as_str().unwrap_or_default();
            Ok(ToolOutput::Staged(ProposalDraft {
                summary: format!("Write note '{name}'"),
                diff: format!("- {before}\n+ {text}"),
                payload: json!({
                    "path": path,
                    "text": text,
                    "before": fingerprint(&path),
                }),
            }))
        })
    }

    fn apply<'a>(&'a self, payload: &'a Value) -> BoxFuture<'a, Result<ApplyOutput, ToolError>> {
        Box::pin(async move {
            let path = PathBuf::from(payload["path"].as_str().unwrap_or_default());
            if fingerprint(&path) != payload["before"].as_str().unwrap_or_default() {
                return Err(ToolError::Conflict(format!(
                    "{} changed since the proposal was staged",
                    path.display()
                )));
            }
            // Widens the window in which concurrent applies could interfere.
            tokio::time::sleep(StdDuration::from_millis(20)).await;
            std::fs::write(&path, payload["text"].as_str().unwrap_or_default())
                .map_err(|error| ToolError::Failed(error.to_string()))?;
            self.applies.fetch_add(1, Ordering::SeqCst);
            Ok(ApplyOutput {
                summary: format!("wrote {}", path.display()),
            })
        })
    }
}

/// The database a bench keeps proposals and the audit log in.
#[derive(Clone)]
pub enum Backend {
    /// `hearth.db` in the bench's directory.
    Sqlite(Arc<SqliteStore>),
    /// A database of the PostgreSQL test server, at this URL.
    Postgres(Arc<PgStore>, String),
}

/// A registry, its gate and its audit log over a database, with a temporary directory
/// for the notes (and the SQLite database, and the audit log's key and head files).
pub struct Bench {
    pub dir: tempfile::TempDir,
    pub backend: Backend,
    pub registry: ToolRegistry,
    pub gate: ApprovalGate,
    pub audit: AuditLog,
    pub clock: ManualClock,
    pub applies: Arc<AtomicUsize>,
}

pub fn user() -> UserActor {
    UserActor::new("test")
}

pub fn context() -> ToolCallContext {
    let session = SessionUri::new(HarnessId::parse("openai").unwrap(), SessionId::generate());
    ToolCallContext {
        chat: ChatUri::default_for(&session),
        session,
        turn_id: TurnId::generate(),
        call_id: "call-1".to_owned(),
        scope: Scope::Global,
        working_directories: Vec::new(),
    }
}

impl Bench {
    /// A bench on SQLite.
    pub async fn new() -> Self {
        let dir = Self::directory();
        let store = Arc::new(
            SqliteStore::open(&dir.path().join("hearth.db"))
                .await
                .unwrap(),
        );
        Self::open(
            dir,
            Backend::Sqlite(store),
            ManualClock::new(),
            Arc::default(),
        )
    }

    /// A bench on a fresh database of the PostgreSQL test server (`None`, the test
    /// skipped, when there is none).
    pub async fn on_postgres() -> Option<Self> {
        let url = hearth_test_support::postgres::fresh_database().await?;
        let store = Arc::new(PgStore::connect(&url).await.unwrap());
        Some(Self::open(
            Self::directory(),
            Backend::Postgres(store, url),
            ManualClock::new(),
            Arc::default(),
        ))
    }

    fn directory() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("notes")).unwrap();
        dir
    }

    fn open(
        dir: tempfile::TempDir,
        backend: Backend,
        clock: ManualClock,
        applies: Arc<AtomicUsize>,
    ) -> Self {
        let (proposals, audit): (Arc<dyn ProposalStore>, Arc<dyn AuditStore>) = match &backend {
            Backend::Sqlite(store) => (store.clone(), store.clone()),
            Backend::Postgres(store, _) => (store.clone(), store.clone()),
        };
        // The log's key and head file in the data directory, whichever the database.
        let audit = AuditLog::with_files(audit, AuditFiles::in_dir(dir.path()));
        let mut builder = ToolRegistry::builder(proposals, audit.clone());
        builder
            .register(Arc::new(EchoTool))
            .unwrap()
            .register(Arc::new(FailTool))
            .unwrap()
            .register(Arc::new(NoteWriteTool {
                folder: dir.path().join("notes"),
                applies: Arc::clone(&applies),
            }))
            .unwrap();
        let time = clock.clone();
        builder.clock(Arc::new(move || time.now()));
        let registry = builder.build();
        let gate = registry.gate();
        Self {
            dir,
            backend,
            registry,
            gate,
            audit,
            clock,
            applies,
        }
    }

    /// The SQLite store, for tests that reach into its file.
    pub fn sqlite(&self) -> &SqliteStore {
        match &self.backend {
            Backend::Sqlite(store) => store,
            Backend::Postgres(..) => panic!("this test reads the SQLite database"),
        }
    }

    /// Closes the database and opens everything again, as a new process would.
    pub async fn restart(self) -> Self {
        let Self {
            dir,
            backend,
            clock,
            applies,
            ..
        } = self;
        let backend = match backend {
            Backend::Sqlite(store) => {
                store.close().await;
                Backend::Sqlite(Arc::new(
                    SqliteStore::open(&dir.path().join("hearth.db"))
                        .await
                        .unwrap(),
                ))
            }
            Backend::Postgres(store, url) => {
                store.close().await;
                Backend::Postgres(Arc::new(PgStore::connect(&url).await.unwrap()), url)
            }
        };
        Self::open(dir, backend, clock, applies)
    }

    /// What an agent gets.
    pub fn toolbox(&self) -> Arc<dyn Toolbox> {
        Arc::new(self.registry.clone())
    }

    pub fn note(&self, name: &str) -> PathBuf {
        self.dir.path().join("notes").join(name)
    }

    pub fn note_text(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.note(name)).ok()
    }

    /// An agent stages writing a note; returns the proposal.
    pub async fn stage(&self, name: &str, text: &str) -> Proposal {
        let outcome = self
            .toolbox()
            .call(
                &context(),
                "note_write",
                json!({"name": name, "text": text}),
            )
            .await;
        assert!(!outcome.is_error, "{}", outcome.content);
        let staged = outcome.proposal.expect("a staged proposal");
        self.gate.get(&staged.id).await.unwrap()
    }

    pub async fn proposal(&self, id: &ProposalId) -> Proposal {
        self.gate.get(id).await.unwrap()
    }
}

/// Runs each named test, an `async fn(Bench)`, on every backend as its own test:
/// `NAME::sqlite` and `NAME::postgres` (skipped, saying why, when no test server runs
/// and none is required).
macro_rules! on_every_backend {
    ($($name:ident),+ $(,)?) => {
        $(
            mod $name {
                #[tokio::test]
                async fn sqlite() {
                    super::$name(super::Bench::new().await).await;
                }

                #[tokio::test]
                async fn postgres() {
                    if let Some(bench) = super::Bench::on_postgres().await {
                        super::$name(bench).await;
                    }
                }
            }
        )+
    };
}
pub(crate) use on_every_backend;
