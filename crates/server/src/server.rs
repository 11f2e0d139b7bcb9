//! `hearth serve`: binding (loopback unless told otherwise) and serving the router until
//! asked to stop.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::serve::ListenerExt;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::backend::{Backend, Shared};
use crate::error::{Result, ServerError};
use crate::guard::Guard;
use crate::http::{App, router};
use crate::login::Logins;
use crate::mcp;
use crate::options::{ServerOptions, allowed_authorities, loopback_url};
use crate::token::Secret;

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
        let listener =
            TcpListener::bind(options.address)
                .await
                .map_err(|source| ServerError::Bind {
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
        let guard = Guard::new(hosts, origins, token, logins);
        let login = Arc::clone(&guard);
        let stop = CancellationToken::new();
        let mcp = backend.toolbox.clone().map(|toolbox| {
            mcp::http_service(
                toolbox,
                guard.hosts(),
                guard.origins(),
                options.max_request_bytes,
                stop.child_token(),
            )
        });
        let app = App {
            shared: Shared::new(backend, options.queue_capacity),
            guard,
            max_request_bytes: options.max_request_bytes,
        };
        Ok(Server {
            listener,
            address,
            router: router(app, mcp),
            stop,
            guard: login,
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
        let stop = self.stop.clone();
        tracing::info!(url = %format!("http://{}", self.address), "Hearth is listening");
        // Envelopes are small and latency matters: no Nagle delay.
        let listener = self.listener.tap_io(|stream| {
            if let Err(error) = stream.set_nodelay(true) {
                tracing::debug!(%error, "cannot turn off Nagle's algorithm");
            }
        });
        axum::serve(listener, self.router)
            .with_graceful_shutdown(async move {
                shutdown.await;
                stop.cancel();
            })
            .await
            .map_err(ServerError::Serve)
    }
}
