//! Hearth's harness for external agents that speak the Agent Client Protocol (ACP):
//! Claude (through its ACP adapters), Codex, Gemini CLI, OpenCode, GitHub Copilot, and any
//! other.
//!
//! One [`AcpHarness`] per configured agent ([`AgentSpec`]). It starts the agent's
//! process when a chat first needs it and keeps it for all of the agent's chats; each
//! chat is one session of the agent, whose id is the chat's conversation. What the agent can
//! do comes from its `initialize` answer, never from its name: reopening sessions after
//! a restart (`session/load`, `session/resume`), listing them (discovery of the
//! conversations Hearth did not create), its own forks; forks and side chats of agents
//! without one hand the copied history to a new session.
//!
//! Owns: the agent's process (spawned in a process group of its own, stopped with
//! everything it started; see [`supervise`]), the connection and its limits (line
//! length, junk, how many messages may wait), mapping every `session/update` to progress
//! signals, the agent's permission requests (its configured [`PermissionPolicy`], then
//! the user) and its questions to the user (elicitation, asked the same way), its file requests confined to the session's directories
//! (`hearth-confine`) and written only when the user allowed them, its terminals, and
//! lending Hearth's own tools to it as an MCP server ([`LentTools`]), and signing in to
//! it and out ([`SignInMethod`]: its own sign-in run in a terminal, or `authenticate`;
//! `logout`).
//!
//! Does not own: URIs, the chat catalog, persistence (the host); what the user is shown
//! and how they answer (the CLI, the server, the web UI).

mod agent;
mod chats;
mod compaction;
mod connection;
mod conversation;
mod elicitation;
mod error;
mod files;
mod grants;
mod handlers;
mod harness;
mod imported;
mod lines;
mod live;
mod mapping;
mod options;
mod permissions;
mod presets;
mod process;
mod prompt;
mod reopen;
mod settings;
mod shared;
mod sign_in;
mod spec;
pub mod supervise;
mod terminal_output;
mod terminals;

pub use error::{Error, Result};
pub use harness::{AcpHarness, AgentStatus};
pub use imported::ImportedConversations;
pub use live::LiveLimits;
pub use options::{AcpOptions, LentOverHttp, StartPhase, StartProgress, Timeouts};
pub use presets::{ConfiguredAgent, PRESETS, Preset, configured_agents};
pub use reopen::LastReopen;
pub use sign_in::{SignInCommand, SignInMethod, SignInWay};
pub use spec::{AgentSpec, LentTools, PermissionMode, PermissionPolicy};
