//! `hearth serve`: binding (loopback unless told otherwise) and serving the router until
//! asked to stop (connections are served by `connections`, with its timeouts and cap).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::backend::{Backend, Shared};
use crate::connections::{self, Limits};
use crate::error::{Result, ServerError};
use crate::guard::Guard;
use crate::http::{App, router};
use crate::login::Logins;
use crate::mcp;
use crate::options::{ServerOptions, allowed_authorities, loopback_url};
use crate::token::Secret;

/// Connections the kernel completes and queues before the server accepts them (it caps
/// this at `net.core.somaxconn`). The usual 128 overflows when many clients connect at
/// once, and a client whose connection attempt is dropped waits a second to retry.
const LISTEN_BACKLOG: u32 = 4096;

/// Binds `address` and listens, with [`LISTEN_BACKLOG`] (and `SO_REUSEADDR`, so a
/// restarted server gets its port back while old connections linger).
fn listen(address: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if address.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(LISTEN_BACKLOG)
}

/// A bound listening socket, before the backend exists: whoever builds the backend can
/// learn the real port first (the fetcher denies Hearth's own port).
pub struct Listener {
    listener: TcpListener,
    address: SocketAddr,
    options: ServerOptions,
}

impl Listener {
    /// Checks the address (a non-loopback one needs `allow_remote`) and binds it.
    pub async fn bind(options: ServerOptions) -> Result<Self> {
        options.check()?;
        let listener = listen(options.address).map_err(|source| ServerError::Bind {
            address: options.address,
            source,
        })?;
        let address = listener.local_addr().map_err(|source| ServerError::Bind {
            address: options.address,
            source,
        })?;
        Ok(Self {
            listener,
            address,
            options,
        })
    }

    /// The address it listens on (with the real port when port 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.address
    }

    /// The same, logging users in with OpenID Connect (a team server's web login).
    #[must_use]
    pub fn with_oidc(mut self, oidc: crate::oidc::OidcOptions) -> Self {
        self.options.oidc = Some(oidc);
        self
    }

    /// Builds the routes around the backend (and reads or makes the login key file).
    pub fn into_server(self, backend: Backend, token: Secret) -> Result<Server> {
        let Self {
            listener,
            address,
            options,
        } = self;
        let (hosts, origins) = allowed_authorities(&options, address);
        let logins = Logins::open(
            token.clone(),
            options.login_key_file.clone(),
            options.login_lifetime,
        )?;
        let guard = Guard::new(hosts, origins, token, logins, backend.accounts.clone());
        let login = Arc::clone(&guard);
        let stop = CancellationToken::new();
        let mcp = backend.toolbox.clone().map(|toolbox| {
            mcp::http_service(
                toolbox,
                guard.hosts(),
                guard.origins(),
                options.max_request_bytes,
                stop.child_token(),
                backend
                    .accounts
                    .clone()
                    .zip(backend.paths.as_ref())
                    .map(|(stores, paths)| crate::mcp_users::McpUsers {
                        stores,
                        home: paths.home.clone(),
                    }),
            )
        });
        if backend.approvals.is_some() {
            tokio::spawn(crate::proposal_watch::watch_proposals(
                backend.host.clone(),
                stop.child_token(),
            ));
        }
        let oidc = options
            .oidc
            .clone()
            .map(crate::oidc::Oidc::new)
            .transpose()?
            .map(Arc::new);
        let app = App {
            shared: Shared::new(backend, options.queue_capacity),
            guard,
            max_request_bytes: options.max_request_bytes,
            oidc,
        };
        let open_files = connections::raise_open_file_limit();
        let limits = Limits {
            header_read_timeout: options.header_read_timeout,
            idle_timeout: options.idle_timeout,
            max_connections: connections::connection_cap(options.max_connections, open_files),
        };
        if limits.max_connections < options.max_connections {
            tracing::info!(
                max_connections = limits.max_connections,
                ?open_files,
                "the open-file limit lowers the connection cap"
            );
        }
        Ok(Server {
            listener,
            address,
            router: router(app, mcp),
            stop,
            guard: login,
            limits,
        })
    }
}

/// A server bound to its address, ready to serve.
pub struct Server {
    listener: TcpListener,
    address: SocketAddr,
    router: Router,
    stop: CancellationToken,
    guard: Arc<Guard>,
    limits: Limits,
}

impl Server {
    /// Checks the address (a non-loopback one needs `allow_remote`), binds it, and
    /// builds the routes around the backend.
    pub async fn bind(backend: Backend, options: ServerOptions, token: Secret) -> Result<Self> {
        Listener::bind(options).await?.into_server(backend, token)
    }

    /// The address it listens on (with the real port when port 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.address
    }

    /// Its base URL for clients on this machine (`http://127.0.0.1:8421`; a wildcard
    /// address is reached through loopback).
    pub fn url(&self) -> String {
        loopback_url(self.address)
    }

    /// A one-time login link for Agent Home: opening it logs the browser in.
    pub fn login_url(&self) -> Result<String> {
        let code = self.guard.logins().issue_code()?;
        Ok(format!("{}/auth?code={}", self.url(), code.expose()))
    }

    /// Serves until `shutdown` completes.
    pub async fn serve(self, shutdown: impl Future<Output = ()> + Send + 'static) -> Result<()> {
        tracing::info!(url = %format!("http://{}", self.address), "Hearth is listening");
        connections::serve(self.listener, self.router, self.limits, shutdown, self.stop).await;
        Ok(())
    }
}
