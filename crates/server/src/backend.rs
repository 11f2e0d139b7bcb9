//! What a server serves: the host and the optional parts of Hearth around it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use hearth_config::Config;
use hearth_core::{Harness, HarnessId, Toolbox};
use hearth_host::Host;

use crate::approvals::Approvals;
use crate::fanout::FanOut;

/// The parts of Hearth a server (WebSocket, stdio or MCP) is built on.
#[derive(Clone)]
pub struct Backend {
    /// The orchestrator.
    pub host: Host,
    /// The configuration (`provider/list`, `provider/test`).
    pub config: Config,
    /// The provider `session/create` uses when none is named.
    pub default_provider: Option<HarnessId>,
    /// The tools lent to MCP clients; `None` turns `/mcp` off.
    pub toolbox: Option<Arc<dyn Toolbox>>,
    /// Proposals and the audit log; `None` makes `proposal/*` and `audit/list` answer
    /// that they are not available.
    pub approvals: Option<Arc<dyn Approvals>>,
    /// The projects; `None` makes `project/*` answer that they are not available.
    pub projects: Option<hearth_projects::Projects>,
    /// The calendars (`calendar/list`, `calendar/events`); `None` makes them answer that
    /// they are not available.
    pub calendars: Option<hearth_calendar::Calendars>,
    /// Where uploaded attachments are kept; `None` makes `attachment/upload` answer that
    /// it is not available.
    pub attachments: Option<std::path::PathBuf>,
    /// Prepares projects' context sources (`project/context`, `project/retrySource`);
    /// `None` makes them answer that they are not available.
    pub materializer: Option<hearth_projects::context::Materializer>,
    /// The data directory and `config.toml` that `provider/add` and `provider/remove`
    /// change; `None` makes them answer that they are not available.
    pub paths: Option<hearth_config::Paths>,
    /// The audit log that records emptying the trash; `None` makes `trash/empty` answer
    /// that it is not available.
    pub audit: Option<hearth_tools::AuditLog>,
    /// Makes the harness of a provider `provider/add` saved, so it can be used without a
    /// restart; `None` leaves it for the next start (`usableNow: false`).
    pub provider_harnesses: Option<Arc<dyn ProviderHarnesses>>,
    /// A team server's users (`hearth serve --users`): their API tokens and logins are
    /// accepted, and each reaches only what is theirs or their teams'. `None`: only the
    /// operator (the install token) is admitted, as on a single user's Hearth.
    pub accounts: Option<Arc<dyn hearth_store::Stores>>,
}

/// Makes the harness of a model provider saved while the server runs (`provider/add`):
/// Hearth's own agent over it, built as the ones found when the server started were.
pub trait ProviderHarnesses: Send + Sync {
    /// The harness of provider `id` as `config` declares it, its keys and base URLs
    /// resolved in `env`, or why none can be made (said to the user as is). With
    /// `resolver`, its client resolves the base URL's host through it on every
    /// connection (a user's provider, whose addresses the server checks).
    fn harness(
        &self,
        config: &Config,
        id: &str,
        env: &hearth_llm::Environment,
        resolver: Option<Arc<dyn reqwest::dns::Resolve>>,
    ) -> Result<Arc<dyn Harness>, String>;

    /// The server's external agent `agent` run for one user, as the harness `id`: with
    /// only the base variables of the server's environment, the user's `env`, and
    /// `home` as its home (so its sign-in and settings are the user's), or why it
    /// cannot be made.
    fn user_agent(
        &self,
        agent: &str,
        id: &str,
        env: Vec<(String, String)>,
        home: &std::path::Path,
    ) -> Result<Arc<dyn Harness>, String> {
        let _ = (agent, id, env, home);
        Err("this server cannot run users' own agents".to_owned())
    }
}

impl Backend {
    /// A backend of just a host (no tools, no approvals, empty configuration).
    pub fn new(host: Host) -> Self {
        Self {
            host,
            config: Config::default(),
            default_provider: None,
            toolbox: None,
            approvals: None,
            projects: None,
            calendars: None,
            attachments: None,
            materializer: None,
            paths: None,
            audit: None,
            provider_harnesses: None,
            accounts: None,
        }
    }
}

/// What every connection of one server shares.
pub(crate) struct Shared {
    pub backend: Backend,
    /// The configuration as `provider/*` reads it now: `provider/add` and
    /// `provider/remove` replace it, so the change shows without a restart.
    pub config: std::sync::RwLock<Config>,
    /// The preparations of project context running here.
    pub context_runs: crate::project_context::ContextRuns,
    /// What this node keeps of users' own providers.
    pub user_providers: crate::user_providers::UserProviders,
    pub fanout: Arc<FanOut>,
    pub queue_capacity: usize,
    next_connection: AtomicU64,
}

impl Shared {
    pub fn new(backend: Backend, queue_capacity: usize) -> Arc<Self> {
        Arc::new(Self {
            fanout: FanOut::new(backend.host.clone()),
            config: std::sync::RwLock::new(backend.config.clone()),
            context_runs: crate::project_context::ContextRuns::default(),
            user_providers: crate::user_providers::UserProviders::default(),
            backend,
            queue_capacity,
            next_connection: AtomicU64::new(1),
        })
    }

    /// A fresh connection id.
    pub fn connection_id(&self) -> u64 {
        self.next_connection.fetch_add(1, Ordering::Relaxed)
    }

    pub fn host(&self) -> &Host {
        &self.backend.host
    }
}
