//! What can go wrong with an MCP server. Messages never show the credentials of a URL
//! (a server's `url`, or one its transport's errors name).

use std::time::Duration;

use hearth_core::redact_userinfo;

/// An MCP server problem, worded for the user or the model.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The configuration cannot be used.
    #[error("[mcp_servers.{server}]: {}", redact_userinfo(message))]
    Config {
        /// The server.
        server: String,
        /// What is wrong and what to do.
        message: String,
    },
    /// The server could not be started or did not complete the handshake.
    #[error(
        "MCP server `{server}` could not be started: {}",
        redact_userinfo(message)
    )]
    Start {
        /// The server.
        server: String,
        /// Why.
        message: String,
    },
    /// The server did not answer in time.
    #[error("MCP server `{server}` did not answer within {} s; it will be restarted on the next use", limit.as_secs_f64())]
    Timeout {
        /// The server.
        server: String,
        /// The limit.
        limit: Duration,
    },
    /// The connection broke (the server crashed or sent something that is not MCP).
    #[error(
        "MCP server `{server}` failed: {}; it will be restarted on the next use",
        redact_userinfo(message)
    )]
    Connection {
        /// The server.
        server: String,
        /// What happened.
        message: String,
    },
    /// The server answered the request with an error.
    #[error("MCP server `{server}` refused the call: {}", redact_userinfo(message))]
    Refused {
        /// The server.
        server: String,
        /// Its message.
        message: String,
    },
    /// Hearth's MCP runtime is gone (Hearth is shutting down).
    #[error("the MCP client has stopped")]
    Stopped,
}

/// Results of this crate.
pub type Result<T, E = McpError> = std::result::Result<T, E>;
