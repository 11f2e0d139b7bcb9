//! How an external agent is started and what it may do without asking: its program,
//! arguments and environment, its permission policy, and whether it borrows Hearth's
//! tools.

use std::path::PathBuf;

use hearth_core::{HarnessId, ToolKind};

/// Who answers an agent's permission requests when the user is not asked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum PermissionMode {
    /// The user decides (the default).
    #[default]
    Ask,
    /// Every request is refused.
    Reject,
}

/// An agent's permission policy: requests for tool calls of an allowed kind are
/// allowed without asking; the rest go by the mode.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PermissionPolicy {
    /// What happens to requests not allowed by kind.
    pub mode: PermissionMode,
    /// Tool kinds allowed without asking (e.g. `read`, `search`).
    pub allow_kinds: Vec<ToolKind>,
}

/// How to start Hearth's MCP server for an agent, so it can use Hearth's tools (reading
/// calendars, staging changes the user approves in Hearth).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LentTools {
    /// The program (the `hearth` binary).
    pub command: PathBuf,
    /// Its arguments (`mcp --stdio`, the data directory).
    pub args: Vec<String>,
    /// Extra environment.
    pub env: Vec<(String, String)>,
}

/// One configured external agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentSpec {
    /// Provider id: the first segment of the URIs of its sessions.
    pub id: HarnessId,
    /// Display name.
    pub name: String,
    /// The program to start.
    pub command: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables set for it. It gets no other of Hearth's environment than the minimal
    /// one (`PATH`, `HOME`, the locale, …) and those in `pass_env`.
    pub env: Vec<(String, String)>,
    /// Variables of Hearth's environment it gets by name (`NAME` or `PREFIX*`): its own
    /// vendor's key and settings for a built-in agent, plus the configured `pass_env`.
    pub pass_env: Vec<String>,
    /// Who answers its permission requests.
    pub policy: PermissionPolicy,
    /// Hearth's tools lent to it, or `None` when the user opted out.
    pub lent_tools: Option<LentTools>,
    /// The sign-in method to use when the agent asks for one (one of the ids it offers).
    pub auth_method: Option<String>,
    /// Whether the agent reads `AGENTS.md` in its working directory by itself: then a
    /// project's instructions mirrored there are not repeated in its first prompt.
    pub reads_agents_file: bool,
}
