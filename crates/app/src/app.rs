//! What every command shares: the data directory (kept private), the configuration, the
//! store and the host.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use hearth_config::{Config, Paths};
use hearth_core::Harness;
use hearth_host::{Host, HostConfig, MessageLimits, ScopeSeam};
use hearth_projects::{ProjectScopes, Projects};
use hearth_store::{Access, PgStore, SqliteStore, Stores};
use tokio::sync::OnceCell;

/// Where notes about the data directory go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notices {
    /// One line on stderr (`hearth: note: …`): a command run in a terminal.
    Stderr,
    /// A warning in the log: a server.
    Log,
}

/// Whether this process already said that its database is open for reading only.
static READ_ONLY_NOTED: AtomicBool = AtomicBool::new(false);

/// The data directory and configuration of this run.
#[derive(Clone)]
pub struct App {
    pub paths: Paths,
    pub config: Config,
    /// The port this process serves on (`hearth serve`), which the fetcher denies.
    pub serving_port: Option<u16>,
    /// Where notes about the data directory go.
    pub notices: Notices,
    /// A PostgreSQL database to keep everything in instead of the data directory's
    /// SQLite database (`hearth serve --store`, `HEARTH_STORE_URL`, `[store] url`).
    pub store_url: Option<String>,
    /// The store, opened on first use: one handle (one connection pool) per process,
    /// shared by every clone of this `App`.
    store: Arc<OnceCell<Arc<dyn Stores>>>,
}

/// How long a command's end waits for the store's connections in use.
const CLOSE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// The environment variable naming a PostgreSQL store.
pub const STORE_URL_VARIABLE: &str = "HEARTH_STORE_URL";

impl App {
    /// Resolves the data directory and reads the configuration.
    pub fn load(home: Option<&Path>, config: Option<&Path>) -> anyhow::Result<Self> {
        let paths = Paths::resolve(home, config)?;
        let config = Config::load_from(&paths.config_file, paths.config_origin)?;
        let store_url = std::env::var(STORE_URL_VARIABLE)
            .ok()
            .filter(|url| !url.trim().is_empty())
            .or_else(|| config.store.url.clone());
        Ok(Self {
            paths,
            config,
            serving_port: None,
            notices: Notices::Stderr,
            store_url,
            store: Arc::default(),
        })
    }

    /// Makes the data directory ready: created private (0700) on a new machine, and an
    /// existing one narrowed to its owner — 0700, everything in it readable by its owner
    /// only — for installs made before Hearth kept it so, or changed since; says so once
    /// when it changed (or could not change) anything.
    pub fn prepare_home(&self) -> anyhow::Result<()> {
        if let Some(notice) = self.paths.prepare()?.notice(&self.paths.home) {
            self.note(&notice);
        }
        for deprecation in &self.config.deprecations {
            self.note(&format!(
                "{}: {deprecation}",
                self.paths.config_file.display()
            ));
        }
        Ok(())
    }

    #[allow(clippy::print_stderr)]
    fn note(&self, message: &str) {
        match self.notices {
            Notices::Stderr => eprintln!("hearth: note: {message}"),
            Notices::Log => tracing::warn!("{message}"),
        }
    }

    /// The same app serving on `port` (which the fetcher then denies).
    pub fn serving_on(&self, port: u16) -> Self {
        Self {
            serving_port: Some(port),
            ..self.clone()
        }
    }

    /// The same app keeping everything in the PostgreSQL database at `url` (unchanged
    /// when `None`), with a store handle of its own.
    pub fn with_store_url(&self, url: Option<String>) -> Self {
        match url {
            None => self.clone(),
            Some(url) => Self {
                store_url: Some(url),
                store: Arc::default(),
                ..self.clone()
            },
        }
    }

    /// The database (created on first use), opened once per process: every caller gets
    /// the same handle. A database this process cannot write is opened for reading
    /// only, with a note: what only reads works, and every change fails saying why.
    pub async fn open_store(&self) -> anyhow::Result<Arc<dyn Stores>> {
        let store = self.store.get_or_try_init(|| self.open_new_store()).await?;
        Ok(Arc::clone(store))
    }

    /// Closes the store if this process opened it, waiting a moment for connections in
    /// use. SQLite then folds its write-ahead log into the database and removes it, so
    /// that the next command opens a tidy file instead of reading the log back.
    pub async fn close_store(&self) {
        if let Some(store) = self.store.get()
            && tokio::time::timeout(CLOSE_WAIT, store.close())
                .await
                .is_err()
        {
            tracing::debug!("the store still had connections in use when the command ended");
        }
    }

    async fn open_new_store(&self) -> anyhow::Result<Arc<dyn Stores>> {
        let store: Arc<dyn Stores> = match &self.store_url {
            Some(url) => Arc::new(PgStore::connect(url).await?),
            None => Arc::new(SqliteStore::open_or_read_only(&self.paths.database()).await?),
        };
        if let Access::ReadOnly { reason } = store.access()
            && !READ_ONLY_NOTED.swap(true, Ordering::Relaxed)
        {
            self.note(&format!(
                "{} is open for reading only ({reason}): what you look at is shown, but nothing can be changed or saved",
                store.location()
            ));
        }
        let audit = self.audit_log(store.clone());
        if let Err(error) = self.empty_expired_trash(&store, &audit).await {
            self.note(&format!(
                "could not empty the trash of expired items: {error:#}"
            ));
        }
        Ok(store)
    }

    /// The audit log kept in `store`, sealed with the key of this data directory and its
    /// head file beside it. Every node of a team server (one PostgreSQL database) needs
    /// the same key: the first node makes `audit.key`; copy it into the others' data
    /// directories before they start, or they refuse to write the log.
    pub fn audit_log(&self, store: Arc<dyn Stores>) -> hearth_tools::AuditLog {
        hearth_tools::AuditLog::with_files(
            store,
            hearth_tools::AuditFiles {
                key: self.paths.audit_key(),
                head: self.paths.audit_head(),
            },
        )
    }

    /// Starts a host with these harnesses over an open store.
    pub fn start_host(
        &self,
        store: Arc<dyn Stores>,
        agents: Vec<Arc<dyn Harness>>,
        source: &str,
    ) -> Host {
        let config = self.host_config(source, self.scopes(&store));
        Host::start(store, agents, config)
    }

    /// A host's settings from the configuration: limits, this node's name and lease
    /// length, and the scopes its sessions run in.
    pub fn host_config(&self, source: &str, scopes: ScopeSeam) -> HostConfig {
        let server = &self.config.server;
        HostConfig {
            source: source.to_owned(),
            working_directories: std::env::current_dir().into_iter().collect(),
            limits: self.limits(),
            output_limits: self.output_limits(),
            scopes,
            node: std::env::var("HEARTH_NODE")
                .ok()
                .filter(|node| !node.trim().is_empty())
                .or_else(|| server.node.clone()),
            lease_ttl: server
                .lease_seconds
                .map_or(HostConfig::default().lease_ttl, |seconds| {
                    std::time::Duration::from_secs(seconds.max(1))
                }),
            ..HostConfig::default()
        }
    }

    /// Projects as the host's scopes, with their context prepared in this data
    /// directory's cache through the guarded fetcher.
    pub fn scopes(&self, store: &Arc<dyn Stores>) -> ScopeSeam {
        let projects = Projects::new(store.clone());
        let materializer = match crate::backend::materializer(self, store) {
            Ok(materializer) => Some(materializer),
            Err(error) => {
                tracing::warn!("project context will not be prepared: {error:#}");
                None
            }
        };
        ScopeSeam(Some(Arc::new(ProjectScopes::new(projects, materializer))))
    }

    /// Where untrusted documents and web pages are converted: children of this binary
    /// (`__isolated-job`), limited to `[limits] converter_memory_bytes` of address space.
    pub fn isolator(&self) -> anyhow::Result<(hearth_process::Isolator, u64)> {
        let isolator = hearth_process::Isolator::current_exe().map_err(|error| {
            anyhow::anyhow!("cannot find Hearth's own program to convert documents with: {error}")
        })?;
        let memory = self
            .config
            .limits
            .converter_memory_bytes
            .unwrap_or(hearth_process::DEFAULT_JOB_MEMORY_BYTES);
        Ok((isolator, memory))
    }

    /// How much of an agent's output one turn keeps, from `[limits]`.
    pub fn output_limits(&self) -> hearth_core::OutputLimits {
        let limits = &self.config.limits;
        let defaults = hearth_core::OutputLimits::default();
        hearth_core::OutputLimits {
            answer_bytes: limits.answer_bytes.unwrap_or(defaults.answer_bytes),
            tool_calls: limits.tool_calls.unwrap_or(defaults.tool_calls),
            tool_call_updates: limits
                .tool_call_updates
                .unwrap_or(defaults.tool_call_updates),
            tool_result_bytes: limits
                .tool_result_bytes
                .unwrap_or(defaults.tool_result_bytes),
            tool_output_bytes: limits
                .tool_output_bytes
                .unwrap_or(defaults.tool_output_bytes),
        }
    }

    /// The largest message accepted, from `[limits]`.
    pub fn limits(&self) -> MessageLimits {
        let defaults = MessageLimits::default();
        MessageLimits {
            prompt_bytes: self
                .config
                .limits
                .prompt_bytes
                .unwrap_or(defaults.prompt_bytes),
            attachment_bytes: self
                .config
                .limits
                .attachment_bytes
                .unwrap_or(defaults.attachment_bytes),
        }
    }
}
