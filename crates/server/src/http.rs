//! The HTTP surface: `/rpc` (WebSocket, or one request per `POST`), `/health`, browser
//! logins under `/auth`, and `/mcp`. Every route sits behind the guard.
//!
//! A browser logs in in two steps, so its session never travels where another origin
//! could see it: the one-time link `GET /auth?code=…` sends it on to `/#login=<code>`
//! (a fragment, which no request carries), and the page trades that code with
//! `POST /auth/session` for a session credential that only its own origin can read (no
//! CORS header is ever sent) and keeps in its `localStorage`.
//!
//! On a team server a person logs in with OpenID Connect instead: `GET /auth/oidc` sends
//! the browser to the provider, and `GET /auth/oidc/callback` (see `oidc`) ends the same
//! way as the link, at `/#login=<code>`, with a code bound to the user the provider's
//! answer named; the session traded for it carries that user.

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

use crate::access::Principal;
use crate::backend::Shared;
use crate::connection::Connection;
use crate::dispatch;
use crate::guard::{
    AUTH_METHODS_PATH, AUTH_PATH, AUTH_SESSION_PATH, Caller, Guard, OIDC_CALLBACK_PATH, OIDC_PATH,
    RPC_PROTOCOL, guard,
};
use crate::login::BrowserSession;
use crate::oidc::{Callback, LoginFailure, Oidc};
use crate::writer::Outgoing;

/// What the routes share.
#[derive(Clone)]
pub(crate) struct App {
    pub shared: Arc<Shared>,
    pub guard: Arc<Guard>,
    pub max_request_bytes: usize,
    /// OpenID Connect login, on a server that has it.
    pub oidc: Option<Arc<Oidc>>,
}

/// The router with every route behind the guard.
pub(crate) fn router(app: App, mcp: Option<Router>) -> Router {
    let limit = app.max_request_bytes;
    let guard_state = Arc::clone(&app.guard);
    let mut router = Router::new()
        .route("/health", get(health))
        .route("/rpc", get(rpc_socket).post(rpc_post))
        .route(AUTH_PATH, get(login_link))
        .route(
            AUTH_SESSION_PATH,
            get(browser_session).post(start_browser_session),
        )
        .route("/auth/code", axum::routing::post(login_code))
        .route("/auth/revoke", axum::routing::post(revoke_browser_sessions))
        .route(AUTH_METHODS_PATH, get(login_methods))
        .route(OIDC_PATH, get(oidc_login))
        .route(OIDC_CALLBACK_PATH, get(oidc_callback))
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

/// WebSocket upgrade of `/rpc`. A browser's offer carries its session besides
/// [`RPC_PROTOCOL`]; only [`RPC_PROTOCOL`] is ever answered.
async fn rpc_socket(
    State(app): State<App>,
    caller: Option<Extension<Caller>>,
    Extension(principal): Extension<Principal>,
    upgrade: WebSocketUpgrade,
) -> Response {
    let limit = app.max_request_bytes;
    let browser = match caller {
        Some(Extension(Caller::Browser(session))) => Some(session),
        _ => None,
    };
    upgrade
        .protocols([RPC_PROTOCOL])
        .read_buffer_size(8 * 1024)
        .max_message_size(limit)
        .max_frame_size(limit)
        .on_upgrade(move |socket| serve_socket(app.shared, principal, socket, browser))
}

/// Resolves when a browser's session ends (revoked, or expired); never for a program.
async fn session_end(browser: Option<BrowserSession>) {
    let Some(session) = browser else {
        return std::future::pending().await;
    };
    let left = session.expires_at.saturating_sub(crate::login::unix_now());
    tokio::select! {
        () = session.revoked.cancelled() => {}
        () = tokio::time::sleep(std::time::Duration::from_secs(left)) => {}
    }
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

async fn serve_socket(
    shared: Arc<Shared>,
    principal: Principal,
    socket: WebSocket,
    browser: Option<BrowserSession>,
) {
    let (sink, mut stream) = socket.split();
    let (connection, writer) = Connection::start(shared, principal, SocketOut(sink));
    let ended = session_end(browser);
    tokio::pin!(ended);
    loop {
        let message = tokio::select! {
            message = stream.next() => message,
            () = &mut ended => {
                tracing::debug!("a browser session ended; closing its socket");
                break;
            }
        };
        let Some(message) = message else {
            break;
        };
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
async fn rpc_post(
    State(app): State<App>,
    Extension(principal): Extension<Principal>,
    body: String,
) -> Response {
    let text = match Incoming::parse(&body) {
        Ok(Incoming::Request { id, method, params }) => match ClientMethod::from_name(&method) {
            Some(method) => dispatch::call(&app.shared, &principal, method, id, params).await,
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
struct LoginLink {
    token: Option<String>,
    code: Option<String>,
}

/// A response no cache keeps.
fn no_store(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn server_error(what: &'static str, error: &crate::ServerError) -> Response {
    tracing::error!(%error, "{what}");
    (StatusCode::INTERNAL_SERVER_ERROR, what).into_response()
}

/// `GET /auth?code=…` (the one-time link `hearth serve` and `hearth login` print), or
/// `GET /auth?token=…`: sends the browser on to `/#login=<code>`, where the page trades
/// the code for a session. The code is not used up here (a link preview cannot spend
/// it); the token is never handed to the page, only a fresh code.
async fn login_link(State(app): State<App>, Query(link): Query<LoginLink>) -> Response {
    let logins = app.guard.logins();
    let code = match (link.token, link.code) {
        (Some(token), _) if app.guard.is_token(&token) => match logins.issue_code() {
            Ok(code) => code.expose().to_owned(),
            Err(error) => return server_error("cannot make a login code", &error),
        },
        (None, Some(code)) if logins.code_is_live(&code) => code,
        _ => return (StatusCode::UNAUTHORIZED, Html(crate::web::LOGIN_REFUSED)).into_response(),
    };
    to_page_with_code(&code).unwrap_or_else(|| {
        (StatusCode::UNAUTHORIZED, Html(crate::web::LOGIN_REFUSED)).into_response()
    })
}

/// Sends the browser on to `/#login=<code>`, where the page trades the code for a session
/// (a fragment: no request carries it on).
fn to_page_with_code(code: &str) -> Option<Response> {
    let location = HeaderValue::from_str(&format!("/#login={code}")).ok()?;
    Some(see_other(location))
}

/// A `303 See Other` to `location` that no cache keeps and that sends no referrer on.
fn see_other(location: HeaderValue) -> Response {
    let mut response = no_store((StatusCode::SEE_OTHER, "").into_response());
    let headers = response.headers_mut();
    headers.insert(header::LOCATION, location);
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

#[derive(Deserialize)]
struct SessionRequest {
    code: String,
}

fn expires_at_text(expires_at: u64) -> String {
    i64::try_from(expires_at)
        .ok()
        .and_then(|seconds| chrono::DateTime::<chrono::Utc>::from_timestamp(seconds, 0))
        .map(|time| time.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default()
}

/// `POST /auth/session` `{"code": …}`: uses up a login code and answers a new browser
/// session's credential, for the page to keep in its origin's storage.
async fn start_browser_session(State(app): State<App>, body: String) -> Response {
    let redeemed = serde_json::from_str::<SessionRequest>(&body)
        .ok()
        .and_then(|request| app.guard.logins().redeem_code(&request.code));
    let Some(redeemed) = redeemed else {
        return (
            StatusCode::UNAUTHORIZED,
            "this login code does not work (a link works once): run `hearth login` for a new one",
        )
            .into_response();
    };
    let started = match &redeemed.user {
        Some(user) => app.guard.logins().start_user_session(user),
        None => app.guard.logins().start_session(),
    };
    match started {
        Ok((session, expires_at)) => no_store(
            axum::Json(json!({
                "session": session.expose(),
                "expiresAt": expires_at_text(expires_at),
            }))
            .into_response(),
        ),
        Err(error) => server_error("cannot start a browser session", &error),
    }
}

/// `GET /auth/session`: whether the browser session sent is current, when it ends, and
/// (for a session a user logged in to) whose it is.
async fn browser_session(caller: Option<Extension<Caller>>) -> Response {
    match caller {
        Some(Extension(Caller::Browser(session))) => {
            let mut answer = json!({ "expiresAt": expires_at_text(session.expires_at) });
            if let Some(user) = &session.user {
                answer["user"] = json!(user);
            }
            no_store(axum::Json(answer).into_response())
        }
        _ => (
            StatusCode::BAD_REQUEST,
            "only a browser session has an expiry; programs use the token",
        )
            .into_response(),
    }
}

/// `POST /auth/revoke`: ends every browser session at once, for a program holding the
/// token (`hearth login --revoke`).
async fn revoke_browser_sessions(
    State(app): State<App>,
    caller: Option<Extension<Caller>>,
) -> Response {
    if !matches!(caller, Some(Extension(Caller::Bearer))) {
        return (
            StatusCode::FORBIDDEN,
            "only a program holding the token can end browser sessions",
        )
            .into_response();
    }
    match app.guard.logins().revoke() {
        Ok(()) => no_store(axum::Json(json!({ "revoked": true })).into_response()),
        Err(error) => server_error("cannot replace the login key", &error),
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
    let code = match app.guard.logins().issue_code() {
        Ok(code) => code,
        Err(error) => return server_error("cannot make a login code", &error),
    };
    let host = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    no_store(
        axum::Json(json!({
            "code": code.expose(),
            "url": format!("http://{host}{AUTH_PATH}?code={}", code.expose()),
        }))
        .into_response(),
    )
}

/// The cookie that ties an OpenID Connect login to the browser that started it. It is not
/// a credential: it only matters together with a pending login's state.
const OIDC_BINDING_COOKIE: &str = "hearth_oidc_login";

/// This server's own origin as the browser sees it: the `Host` the guard accepted, over
/// HTTPS when that origin is among the allowed ones (a server behind a TLS front end).
fn own_origin(guard: &Guard, headers: &axum::http::HeaderMap) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .map(|host| host.trim().to_ascii_lowercase())
        .unwrap_or_default();
    let secure = format!("https://{host}");
    if guard.origins().contains(&secure) {
        secure
    } else {
        format!("http://{host}")
    }
}

/// `GET /auth/methods`: how a browser logs in here, for Agent Home's login page: with a
/// one-time link always, and with the team's OpenID provider when one is set.
async fn login_methods(State(app): State<App>) -> Response {
    no_store(axum::Json(json!({ "oidc": app.oidc.is_some() })).into_response())
}

/// `GET /auth/oidc`: starts an OpenID Connect login, sending the browser to the provider.
async fn oidc_login(State(app): State<App>, headers: axum::http::HeaderMap) -> Response {
    let Some(oidc) = &app.oidc else {
        return LoginFailure::NotConfigured.into_response();
    };
    let origin = own_origin(&app.guard, &headers);
    let started = match oidc.start(&origin, app.guard.logins()).await {
        Ok(started) => started,
        Err(failure) => return failure.into_response(),
    };
    let Ok(location) = HeaderValue::from_str(&started.authorize_url) else {
        return LoginFailure::Internal("the provider's login URL is not a header".to_owned())
            .into_response();
    };
    let secure = if origin.starts_with("https://") {
        "; Secure"
    } else {
        ""
    };
    let cookie = format!(
        "{OIDC_BINDING_COOKIE}={}; Path={OIDC_CALLBACK_PATH}; Max-Age={}; HttpOnly; SameSite=Lax{secure}",
        started.binding,
        crate::oidc::PENDING_LOGIN_LIFETIME.as_secs(),
    );
    let mut response = see_other(location);
    match HeaderValue::from_str(&cookie) {
        Ok(cookie) => {
            response.headers_mut().insert(header::SET_COOKIE, cookie);
            response
        }
        Err(_) => {
            LoginFailure::Internal("the login cookie is not a header".to_owned()).into_response()
        }
    }
}

/// The binding cookie the browser sent, if any.
fn binding_cookie(headers: &axum::http::HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .find_map(|pair| {
            let (name, value) = pair.trim().split_once('=')?;
            (name == OIDC_BINDING_COOKIE).then_some(value)
        })
}

/// `GET /auth/oidc/callback?code&state`: finishes an OpenID Connect login and sends the
/// browser on to `/#login=<code>` with a login code bound to the user, as a login link
/// does; a failed login gets a page saying what failed and what to do.
async fn oidc_callback(
    State(app): State<App>,
    Query(callback): Query<Callback>,
    headers: axum::http::HeaderMap,
) -> Response {
    let Some(oidc) = &app.oidc else {
        return LoginFailure::NotConfigured.into_response();
    };
    let mut response = match oidc
        .finish(callback, binding_cookie(&headers), app.guard.logins())
        .await
    {
        Ok(user) => match app.guard.logins().issue_user_code(&user) {
            Ok(code) => {
                tracing::info!(%user, "a user logged in with OpenID Connect");
                to_page_with_code(code.expose()).unwrap_or_else(|| {
                    LoginFailure::Internal("a login code is not a header".to_owned())
                        .into_response()
                })
            }
            Err(error) => server_error("cannot make a login code", &error),
        },
        Err(failure) => failure.into_response(),
    };
    let expired = format!(
        "{OIDC_BINDING_COOKIE}=; Path={OIDC_CALLBACK_PATH}; Max-Age=0; HttpOnly; SameSite=Lax"
    );
    if let Ok(expired) = HeaderValue::from_str(&expired) {
        response.headers_mut().insert(header::SET_COOKIE, expired);
    }
    response
}
