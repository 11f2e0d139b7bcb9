//! Hearth's native agent served to editors over the Agent Client Protocol: the agent
//! side of ACP on any transport (`hearth acp` uses stdin/stdout).
//!
//! It owns the translation between ACP and Hearth's host: each ACP session is a Hearth
//! session in the same store (its ACP id is the Hearth session URI, so any Hearth session
//! can be loaded and any ACP session resumed from another Hearth surface), each prompt a
//! turn whose action envelopes stream as session updates, and each calendar change the
//! agent stages a `session/request_permission` whose answer decides exactly that proposal
//! (bound to its payload hash, audited as the user's decision through `acp`); a
//! permission request the agent raises (a tool that must not run unasked) is put to the
//! editor the same way and answered as the user through `acp`.
//!
//! It does not own the host, the harnesses, the tools or the store: the binary builds
//! those and hands them in ([`Services`]), as this process's Hearth ([`LocalHearth`]) or
//! as a running server's, spoken to as the person whose token the editor's command
//! presents (any [`Hearth`]); then that server's access rules decide what the editor may
//! see and do, and the sessions are kept there. The stdio MCP servers a client passes in
//! `session/new` (or `session/load`/`resume`) are handed to the native agent's toolbox
//! for that session alone ([`hearth_mcp_client::SessionMcpServers`]). A client that
//! declares `fs.readTextFile` serves the native agent's `file_read` in its sessions
//! ([`hearth_projects::ClientFiles`]), so the agent reads the editor's buffers.

mod agent;
mod error;
mod files;
mod hearth;
mod mapping;
mod permissions;
mod proposals;
mod server;
mod turn;

pub use error::{AcpServerError, Refusal, Result};
pub use hearth::{Decided, Fed, Hearth, LocalHearth, Staged, TurnFeed};
pub use server::{AGENT_NAME, Services, serve, stdio};
