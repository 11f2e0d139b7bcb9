//! `hearth serve` and its relatives: Hearth's JSON-RPC protocol over WebSocket (`/rpc`)
//! and stdio (`hearth app-server --stdio`), the security around it, the fan-out of
//! action envelopes to subscribers, and the MCP endpoint (`/mcp`, `hearth mcp
//! --stdio`) that lends Hearth's tools to other agents.
//!
//! Owns: binding (loopback unless `allow_remote`) and serving connections (header and
//! idle timeouts, a connection cap that closes the oldest connections that sent nothing
//! first), the per-install token and its file, browser logins (one-time codes traded for
//! sessions the page keeps in its origin's storage and sends in a header; they expire,
//! and replacing `login.key` ends them all), the request guard (Host, Origin, token or
//! browser session, JSON bodies, size limits), OpenID Connect login for team servers
//! (the provider vouches for a person, a resolver handed in names their user, and their
//! browser session carries it), dispatch of every method to the host,
//! mapping host failures to JSON-RPC errors, per-connection bounded queues with resync
//! for slow readers, reconnect with the last seq, the discovery file, and a client for
//! all of it.
//!
//! Does not own: the wire types (`hearth-protocol`), the orchestration (`hearth-host`),
//! the tools themselves (handed in as a [`hearth_core::Toolbox`]; the approval gate
//! reaches the protocol through [`Approvals`], which [`GateApprovals`] implements), or
//! which harnesses exist (the binary registers them).

mod access;
mod approvals;
mod attachments;
mod backend;
mod calendar;
mod calendar_proposals;
mod chats;
mod client;
mod connection;
mod connections;
mod discovery;
mod dispatch;
mod edge;
mod error;
mod export;
mod fanout;
mod gate;
mod guard;
mod http;
mod login;
mod mcp;
mod mcp_users;
mod oidc;
mod options;
mod permissions;
mod project_context;
mod projects;
mod proposal_watch;
mod proposals;
mod provider_setup;
mod providers;
mod root_view;
mod sealed;
mod search;
mod server;
mod sessions;
mod stdio;
mod token;
mod trash;
mod user_agents;
mod user_providers;
pub use sealed::PROVIDER_KEYS_FILE;
mod web;
mod writer;

pub use approvals::Approvals;
pub use backend::{Backend, ProviderHarnesses};
pub use client::{Client, Notifications, Notified, login_link, revoke_browser_sessions, rpc_url};
pub use connections::raise_open_file_limit;
pub use discovery::{
    LOCK_FILE, SERVER_FILE, ServeLock, ServerRecord, lock_data_directory, read_record,
    remove_record, server_file, write_record,
};
pub use error::{Result, ServerError};
pub use gate::{GateApprovals, proposal_from_wire, proposal_status_to_wire};
pub use guard::{
    OIDC_CALLBACK_PATH, OIDC_PATH, RPC_PROTOCOL, SESSION_HEADER, SESSION_PROTOCOL_PREFIX,
};
pub use login::{DEFAULT_LOGIN_LIFETIME, LOGIN_KEY_FILE, login_key_file, rotate_login_key};
pub use mcp::{LentEndpoint, MCP_PROVIDER, McpTools, serve_mcp_stdio};
pub use oidc::{IdentityResolver, OidcIdentity, OidcOptions, PENDING_LOGIN_LIFETIME};
pub use options::{
    DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_REQUEST_BYTES, DEFAULT_PORT, DEFAULT_QUEUE_CAPACITY, ServerOptions,
};
pub use server::{Listener, Server};
pub use stdio::{serve_lines, serve_stdio};
pub use token::{Secret, load_or_create_token, read_token};
