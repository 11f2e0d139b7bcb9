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
        .route("/auth/code", axum::routing::post(login_code))
        .with_state(app)
        .merge(crate::web::pages());
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
    code: Option<String>,
}

/// `GET /auth?token=…` or `GET /auth?code=…` (a one-time login code `hearth serve`
/// prints): trades it for an HttpOnly, SameSite=Strict session cookie and sends the
/// browser on to `/`, so the secret leaves the address bar.
async fn exchange_token(State(app): State<App>, Query(exchange): Query<Exchange>) -> Response {
    let accepted = match (exchange.token, exchange.code) {
        (Some(token), _) => app.guard.is_token(&token),
        (None, Some(code)) => app.guard.redeem_login_code(&code),
        (None, None) => false,
    };
    if !accepted {
        return (StatusCode::UNAUTHORIZED, Html(crate::web::LOGIN_REFUSED)).into_response();
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

/// `POST /auth/code`: a one-time login link for a browser, for a program holding the
/// token (`hearth login`).
async fn login_code(
    State(app): State<App>,
    caller: Option<Extension<Caller>>,
    headers: axum::http::HeaderMap,
) -> Response {
    if !matches!(caller, Some(Extension(Caller::Bearer))) {
        return (
            StatusCode::FORBIDDEN,
            "only a program holding the token can ask for a login link",
        )
            .into_response();
    }
    let code = match app.guard.issue_login_code() {
        Ok(code) => code,
        Err(error) => {
            tracing::error!(%error, "cannot make a login code");
            return (
                StatusCode::INTERNAL_SERVER_ERROR,
                "cannot make a login code",
            )
                .into_response();
        }
    };
    let host = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let mut response = axum::Json(json!({
        "code": code.expose(),
        "url": format!("http://{host}{AUTH_PATH}?code={}", code.expose()),
    }))
    .into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
