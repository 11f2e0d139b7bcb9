//! How the harness runs its agents: where Hearth's data lives (never reachable by an
//! agent's file requests), where Hearth's binary is (to supervise agents), the audit
//! log, and the time limits.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hearth_core::HarnessId;

use hearth_tools::AuditLog;

/// Time limits of an agent's requests.
#[derive(Clone, Copy, Debug)]
pub struct Timeouts {
    /// Starting the agent: from spawning it until it answers `initialize`.
    pub start: Duration,
    /// Opening, reopening or listing sessions, changing settings.
    pub request: Duration,
    /// How long an aborted turn may take to end before the harness ends it (shorter
    /// than the host's own grace, so the harness is done with the turn first).
    pub cancel_grace: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            start: Duration::from_secs(60),
            request: Duration::from_secs(60),
            cancel_grace: Duration::from_secs(1),
        }
    }
}

/// A step of bringing an agent up, for a client to show while it waits (an agent can
/// take seconds to start, and minutes when it hangs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartPhase {
    /// Its process is being started and asked `initialize`.
    Starting,
    /// It answered `initialize`.
    Started,
    /// A session is being opened for a chat (`session/new`, `load`, `resume`, `fork`).
    OpeningSession,
    /// The session is open.
    SessionOpen,
    /// Starting it or opening the session failed.
    Failed,
}

/// Told each [`StartPhase`] of an agent as it happens.
pub type StartProgress = Arc<dyn Fn(&HarnessId, StartPhase) + Send + Sync>;

/// Hearth's tools lent over one HTTP endpoint for the whole process, to agents that
/// take MCP over HTTP (instead of a `hearth mcp --stdio` process per session).
pub trait LentOverHttp: Send + Sync {
    /// The endpoint's URL and the bearer token of `chat`'s sessions; `None` when the
    /// tools cannot be lent this way now (the session then gets a process of its own).
    fn lend(&self, chat: &hearth_core::ChatUri) -> Option<(String, String)>;
    /// Forgets `chat`'s token: its sessions can no longer call the tools.
    fn revoke(&self, chat: &hearth_core::ChatUri);
}

/// How the harness runs its agents.
#[derive(Clone, Default)]
pub struct AcpOptions {
    /// Hearth's data directory: off limits to agents' file and terminal requests.
    pub data_directory: Option<PathBuf>,
    /// Hearth's own binary, to run each agent under its supervisor (see
    /// [`supervise`](crate::supervise)); `None` starts agents directly.
    pub supervisor: Option<PathBuf>,
    /// Where agent processes start (their sessions each get their own directory).
    pub process_directory: Option<PathBuf>,
    /// Where permission requests, answers, file writes and commands are recorded.
    pub audit: Option<AuditLog>,
    /// Time limits.
    pub timeouts: Timeouts,
    /// Directories inside the data directory that agents may read (never write): the
    /// cache of projects' context snapshots. A session directory inside the data
    /// directory and inside one of these is readable; any other is refused.
    pub readable: Vec<PathBuf>,
    /// How much of an agent's output one turn keeps (the harness's own record of it
    /// too).
    pub output_limits: hearth_core::OutputLimits,
    /// Told how starting the agent and opening sessions go.
    pub progress: Option<StartProgress>,
    /// How many sessions stay open, and for how long unused.
    pub live: crate::live::LiveLimits,
    /// The process's lent-tools endpoint, for agents that take MCP over HTTP.
    pub lent_http: Option<Arc<dyn LentOverHttp>>,
}

impl std::fmt::Debug for AcpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AcpOptions")
            .field("data_directory", &self.data_directory)
            .field("supervisor", &self.supervisor)
            .field("process_directory", &self.process_directory)
            .field("audit", &self.audit.is_some())
            .field("timeouts", &self.timeouts)
            .field("readable", &self.readable)
            .field("output_limits", &self.output_limits)
            .field("progress", &self.progress.is_some())
            .field("live", &self.live)
            .field("lent_http", &self.lent_http.is_some())
            .finish()
    }
}
