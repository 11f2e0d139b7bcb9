//! The HTTP surface: `/rpc` (WebSocket, or one request per `POST`), `/health`, the
//! browser's token exchange at `/auth`, and `/mcp`. Every route sits behind the guard.

use std::sync::Arc;

use axum::Router;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{DefaultBodyLimit, Extension, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use futures::{SinkExt, StreamExt};
use hearth_protocol::{ClientMethod, ErrorKind, Incoming, RpcError, error_text};
use serde::Deserialize;
use serde_json::json;
use tower_http::limit::RequestBodyLimitLayer;

use crate::backend::Shared;
use crate::connection::Connection;
use crate::dispatch;
use crate::guard::{AUTH_PATH, Caller, Guard, SESSION_COOKIE, guard};
use crate::writer::Outgoing;

/// What the routes share.
#[derive(Clone)]
pub(crate) struct App {
    pub shared: Arc<Shared>,
    pub guard: Arc<Guard>,
    pub max_request_bytes: usize,
}

/// The router with every route behind the guard.
pub(crate) fn router(app: App, mcp: Option<Router>) -> Router {
    let limit = app.max_request_bytes;
    let guard_state = Arc::clone(&app.guard);
    let mut router = Router::new()
        .route("/health", get(health))
        .route("/rpc", get(rpc_socket).post(rpc_post))
        .route(AUTH_PATH, get(exchange_token))
        .route("/auth/csrf", get(browser_csrf))
        .route("/", get(home))
        .with_state(app);
    if let Some(mcp) = mcp {
        router = router.nest_service("/mcp", mcp);
    }
    router
        .layer(axum::middleware::from_fn_with_state(guard_state, guard))
        .layer(DefaultBodyLimit::max(limit))
        .layer(RequestBodyLimitLayer::new(limit))
}

async fn health() -> Response {
    axum::Json(json!({
        "status": "ok",
        "name": "hearth",
        "version": env!("CARGO_PKG_VERSION"),
        "protocolVersion": hearth_protocol::PROTOCOL_VERSION,
    }))
    .into_response()
}

async fn home() -> Html<&'static str> {
    Html(
        "<!doctype html><meta charset=utf-8><title>Hearth</title>\
         <p>Hearth is running. Clients speak JSON-RPC at <code>/rpc</code>.</p>",
    )
}

/// WebSocket upgrade of `/rpc`.
async fn rpc_socket(State(app): State<App>, upgrade: WebSocketUpgrade) -> Response {
    let limit = app.max_request_bytes;
    upgrade
        .read_buffer_size(8 * 1024)
        .max_message_size(limit)
        .max_frame_size(limit)
        .on_upgrade(move |socket| serve_socket(app.shared, socket))
}

struct SocketOut(futures::stream::SplitSink<WebSocket, Message>);

impl Outgoing for SocketOut {
    async fn feed(&mut self, text: axum::extract::ws::Utf8Bytes) -> std::io::Result<()> {
        self.0
            .feed(Message::Text(text))
            .await
            .map_err(std::io::Error::other)
    }

    async fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush().await.map_err(std::io::Error::other)
    }
}

async fn serve_socket(shared: Arc<Shared>, socket: WebSocket) {
    let (sink, mut stream) = socket.split();
    let (connection, writer) = Connection::start(shared, SocketOut(sink));
    while let Some(message) = stream.next().await {
        match message {
            Ok(Message::Text(text)) => connection.receive(text.as_str()).await,
            Ok(Message::Binary(_)) => {
                let error = RpcError::new(
                    ErrorKind::InvalidRequest,
                    "send JSON-RPC messages as text frames",
                    false,
                );
                connection.receive_error(error).await;
            }
            Ok(Message::Close(_)) => break,
            Ok(Message::Ping(_) | Message::Pong(_)) => {}
            Err(error) => {
                tracing::debug!(%error, "a WebSocket connection failed");
                break;
            }
        }
    }
    connection.close();
    drop(connection);
    writer.abort();
}

/// `POST /rpc`: one request, one response (no subscriptions).
async fn rpc_post(State(app): State<App>, body: String) -> Response {
    let text = match Incoming::parse(&body) {
        Ok(Incoming::Request { id, method, params }) => match ClientMethod::from_name(&method) {
            Some(method) => dispatch::call(&app.shared, method, id, params).await,
            None => error_text(
                Some(id),
                RpcError::new(
                    ErrorKind::MethodNotFound,
                    format!("no method `{method}`"),
                    false,
                ),
            ),
        },
        Ok(_) => {
            return (StatusCode::NO_CONTENT, "").into_response();
        }
        Err(error) => error_text(None, error),
    };
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        text,
    )
        .into_response()
}

#[derive(Deserialize)]
struct Exchange {
    token: Option<String>,
}

/// `GET /auth?token=…`: trades the token for an HttpOnly, SameSite=Strict session cookie
/// and sends the browser on to `/`, so the token leaves the address bar.
async fn exchange_token(State(app): State<App>, Query(exchange): Query<Exchange>) -> Response {
    let presented = exchange.token.unwrap_or_default();
    if !app.guard.is_token(&presented) {
        return (StatusCode::UNAUTHORIZED, "missing or wrong token").into_response();
    }
    let (session, _csrf) = match app.guard.open_browser_session() {
        Ok(handles) => handles,
        Err(error) => {
            tracing::error!(%error, "cannot start a browser session");
            return (StatusCode::INTERNAL_SERVER_ERROR, "cannot start a session").into_response();
        }
    };
    let cookie = format!(
        "{SESSION_COOKIE}={}; HttpOnly; SameSite=Strict; Path=/",
        session.expose()
    );
    let mut response = (StatusCode::SEE_OTHER, "").into_response();
    let headers = response.headers_mut();
    headers.insert(header::LOCATION, HeaderValue::from_static("/"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    match HeaderValue::from_str(&cookie) {
        Ok(value) => {
            headers.insert(header::SET_COOKIE, value);
            response
        }
        Err(_) => (StatusCode::INTERNAL_SERVER_ERROR, "cannot set the cookie").into_response(),
    }
}

/// `GET /auth/csrf`: a browser session's CSRF token, for its page's scripts (same origin
/// only: no CORS header lets another origin read it).
async fn browser_csrf(caller: Option<Extension<Caller>>) -> Response {
    match caller {
        Some(Extension(Caller::Browser { csrf })) => {
            let mut response = axum::Json(json!({ "csrf": csrf.expose() })).into_response();
            response
                .headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            response
        }
        _ => (
            StatusCode::BAD_REQUEST,
            "only a browser session has a CSRF token",
        )
            .into_response(),
    }
}
