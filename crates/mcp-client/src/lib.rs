//! MCP servers as tools of Hearth's own agent.
//!
//! Owns:
//! - the servers configured in `[mcp_servers.<name>]` ([`McpTools::from_config`]): stdio
//!   (`command`, `args`, `env`) or streamable HTTP (`url`, a bearer token from the
//!   environment variable `bearer_token_env`; the URL passes the guarded fetcher's rules
//!   unless the server is marked `local = true`);
//! - their life: each starts on first use (the first listing or call), runs on a runtime
//!   of its own so a hung server cannot stall a turn, gets a time limit per call, and is
//!   restarted on the next use after it crashed, hung or spoke garbage;
//! - their tools, offered as `<server>__<tool>`; a tool whose input schema is invalid is
//!   not offered and says why ([`McpTools::reports`]);
//! - the call path: arguments checked against the schema; a tool annotated
//!   `readOnlyHint: true` or named in the server's `allow` list runs at once; any other
//!   call is put to the user as a permission request showing the exact arguments and
//!   their hash (through the [`PermissionAsker`](hearth_tools::PermissionAsker) of the
//!   running turn) and runs only if the user allows it; results (text, images,
//!   resources, structured content) become the text the model reads, `isError`
//!   honoured; every call and answer goes to the audit log;
//! - servers that belong to one session ([`SessionMcpServers`]: those an editor passes
//!   with an ACP session), offered only in that session's turns, under the same rules.
//!
//! It does not own the tool registry (hearth-tools), the agent loop (hearth-harness-native) or the
//! command line (`hearth mcp list`, `hearth doctor` live in hearth-cli).

mod error;
mod render;
mod runtime;
mod server;
mod session;
mod spec;
mod toolbox;

pub use error::{McpError, Result};
pub use render::render_result;
pub use server::{ServerReport, ServerStatus, ToolReport};
pub use session::SessionMcpServers;
pub use spec::{DEFAULT_CALL_TIMEOUT, DEFAULT_STARTUP_TIMEOUT, ServerSpec, Transport};
pub use toolbox::{McpTools, SEPARATOR};
