//! Server errors (starting, serving, and the client side of the protocol). Mapping host
//! failures to JSON-RPC error codes is in `edge`, the one place that does it.

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;

use hearth_protocol::{ProtocolError, RpcError};
use thiserror::Error;

/// A failure of the server or of a client of it.
#[derive(Debug, Error)]
pub enum ServerError {
    /// The system's random source failed.
    #[error("cannot read random bytes from the system: {0}")]
    Random(String),
    /// There is no token file (clients: no server ever started with this data dir).
    #[error("no server token at {} (start `hearth serve` first)", path.display())]
    TokenMissing {
        /// The token file.
        path: PathBuf,
    },
    /// The token file holds something else.
    #[error(
        "{} does not hold a token (64 hex digits); delete it and `hearth serve` makes a new one",
        path.display()
    )]
    TokenInvalid {
        /// The token file.
        path: PathBuf,
    },
    /// Other users can read the token file.
    #[error(
        "{} can be read by other users (mode {mode:o}); run `chmod 600 {}` or delete it to get a new token",
        path.display(),
        path.display()
    )]
    TokenExposed {
        /// The token file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The token file cannot be read or written.
    #[error("cannot use the token file {}: {source}", path.display())]
    TokenIo {
        /// The file (or its folder).
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The login key file (browser sessions) cannot be read or written.
    #[error("cannot use the login key file {}: {source}", path.display())]
    LoginKeyIo {
        /// The file (or its folder).
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A user id a browser session cannot carry.
    #[error("`{0}` is not a user id: use 1 to 64 letters, digits, `_` or `-`")]
    UserId(String),
    /// The OpenID Connect login settings cannot be used.
    #[error("cannot use the OpenID Connect login settings: {0}")]
    Oidc(String),
    /// A non-loopback address without `--allow-remote`.
    #[error(
        "refusing to listen on {address}: it is not a loopback address, so other machines could reach Hearth; pass --allow-remote if that is what you want"
    )]
    RemoteBind {
        /// The address asked for.
        address: SocketAddr,
    },
    /// Extra `Host` names were given for a server that listens on loopback only.
    #[error(
        "--allow-host {0} widens the Host check, which only makes sense for a server other machines reach; pass --allow-remote with a non-loopback --bind, or drop --allow-host"
    )]
    HostWithoutRemote(String),
    /// The address to listen on is not an IP address.
    #[error("`{0}` is not an IP address to listen on (e.g. 127.0.0.1)")]
    BadAddress(String),
    /// Listening failed.
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// Why.
        source: io::Error,
    },
    /// Serving failed.
    #[error("the server stopped: {0}")]
    Serve(#[source] io::Error),
    /// The discovery file cannot be written or read.
    #[error("cannot use {}: {source}", path.display())]
    Discovery {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Another server already serves the data directory.
    #[error(
        "another hearth serve already serves {}{holder}; stop it first, talk to it (the other commands find it by themselves), or serve another data directory with --home",
        home.display()
    )]
    AlreadyServed {
        /// The data directory.
        home: PathBuf,
        /// ` (pid N, at URL)` when known.
        holder: String,
    },
    /// A client could not reach the server.
    #[error("cannot connect to Hearth at {url}: {message}")]
    Connect {
        /// Where.
        url: String,
        /// Why.
        message: String,
    },
    /// The connection to the server ended.
    #[error("the connection to the Hearth server closed")]
    Closed,
    /// The server answered with an error.
    #[error(transparent)]
    Rpc(#[from] RpcError),
    /// A message did not have the expected shape.
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
    /// The MCP service failed.
    #[error("MCP: {0}")]
    Mcp(String),
    /// A server did not give a login link.
    #[error("{0}")]
    Login(String),
}

impl ServerError {
    /// Whether retrying may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Connect { .. } | Self::Closed | Self::Bind { .. } => true,
            Self::Rpc(error) => error.is_retryable(),
            Self::Random(_)
            | Self::TokenMissing { .. }
            | Self::TokenInvalid { .. }
            | Self::TokenExposed { .. }
            | Self::TokenIo { .. }
            | Self::LoginKeyIo { .. }
            | Self::UserId(_)
            | Self::Oidc(_)
            | Self::RemoteBind { .. }
            | Self::HostWithoutRemote(_)
            | Self::BadAddress(_)
            | Self::Serve(_)
            | Self::Discovery { .. }
            | Self::AlreadyServed { .. }
            | Self::Protocol(_)
            | Self::Mcp(_)
            | Self::Login(_) => false,
        }
    }
}

/// Result of a server operation.
pub type Result<T> = std::result::Result<T, ServerError>;
