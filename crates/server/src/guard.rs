//! The checks every HTTP and WebSocket request passes before it reaches a handler, in
//! this order:
//!
//! 1. `Host` is one of the exact loopback authorities with the server's port (DNS
//!    rebinding defence); an empty or missing `Host` is refused.
//! 2. `Origin`, when present, is one of the exact allowed origins including the port
//!    (`null` and foreign origins are refused; programs that send none pass). No CORS
//!    headers are ever sent, so no foreign page can read a response.
//! 3. The caller is authenticated: `Authorization: Bearer <token>` compared in constant
//!    time, or a browser session that Agent Home's page sends itself: the
//!    `X-Hearth-Session` header, or on the WebSocket upgrade (where browsers cannot set
//!    headers) a `hearth.session.<credential>` entry of its `Sec-WebSocket-Protocol`
//!    offer. Never a cookie (a browser hands a host's cookies to every port of it, so
//!    another local web service the browser visits would receive them) and never a URL:
//!    the page keeps its session in `localStorage`, which only its exact origin can read.
//!    Only Agent Home's static page and assets (`GET /`, `/assets/…`) are served without
//!    it (they hold no data, and the page asks the user to log in), and the login itself:
//!    `GET /auth` (the one-time link) and `POST /auth/session` (the page trading the
//!    link's code for a session), which check their code themselves, and on a server with
//!    OpenID Connect login `GET /auth/oidc` and `GET /auth/oidc/callback`, which check the
//!    provider's answer themselves.
//! 4. A browser session is current: sealed under the present login key (derived from
//!    the token and `login.key`; `hearth login --revoke` replaces the key and tells the
//!    running server, which also closes the session's open sockets) and before the expiry
//!    sealed into it (`[server] login_days`, 30 by default).
//! 5. A `POST` body is JSON (a cross-site form can only send `text/plain`,
//!    `multipart/form-data` or `application/x-www-form-urlencoded`).
//!
//! Tokens, sessions, login codes and query strings never reach the logs.
//!
//! Each check has one end-to-end test against the real binary, named after its number
//! (`check_1_…` to `check_5_…` in `crates/cli/tests/suite/security.rs`); the server
//! crate's `suite::login` follows a browser session through its life (expiry included),
//! and Agent Home's browser tests show another local web service getting nothing.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::access::Principal;
use crate::login::{BrowserSession, Logins};

/// The header carrying a browser session on fetches.
pub const SESSION_HEADER: &str = "x-hearth-session";
/// The WebSocket subprotocol Agent Home's page asks for (and the server selects).
pub const RPC_PROTOCOL: &str = "hearth.rpc";
/// The prefix of the WebSocket protocol offer entry that carries a browser session.
pub const SESSION_PROTOCOL_PREFIX: &str = "hearth.session.";
/// The one-time login link's route: `GET /auth?code=…`.
pub const AUTH_PATH: &str = "/auth";
/// `POST`: a login code traded for a browser session; `GET`: the session's expiry.
pub const AUTH_SESSION_PATH: &str = "/auth/session";
/// `GET`: how a browser may log in here (whether OpenID Connect is offered).
pub const AUTH_METHODS_PATH: &str = "/auth/methods";
/// `GET`: starts an OpenID Connect login (team servers).
pub const OIDC_PATH: &str = "/auth/oidc";
/// `GET`: where the OpenID provider sends the browser back.
pub const OIDC_CALLBACK_PATH: &str = "/auth/oidc/callback";
/// Where Agent Home's assets are served from (without authentication).
pub const ASSETS_PATH: &str = "/assets/";

/// Who a request was authenticated as.
#[derive(Clone, Debug)]
pub(crate) enum Caller {
    /// A program holding the token.
    Bearer,
    /// A browser session.
    Browser(BrowserSession),
    /// A team server's user, by their API token.
    User(Arc<crate::access::UserView>),
}

/// The server's checks and the state they need.
pub(crate) struct Guard {
    hosts: Vec<String>,
    origins: Vec<String>,
    token: crate::token::Secret,
    logins: Logins,
    /// A team server's users, whose API tokens are accepted besides the install token.
    accounts: Option<Arc<dyn hearth_store::Stores>>,
}

impl Guard {
    pub fn new(
        hosts: Vec<String>,
        origins: Vec<String>,
        token: crate::token::Secret,
        logins: Logins,
        accounts: Option<Arc<dyn hearth_store::Stores>>,
    ) -> Arc<Self> {
        Arc::new(Self {
            hosts,
            origins,
            token,
            logins,
            accounts,
        })
    }

    /// The user whose API token `presented` is, with their teams.
    async fn user_of_token(&self, presented: &str) -> Result<Caller, Refusal> {
        let Some(accounts) = &self.accounts else {
            return Err(Refusal::Unauthenticated);
        };
        let digest = hearth_fs::sha256_hex(presented.as_bytes());
        let user = match accounts.user_by_token(&digest).await {
            Ok(Some(user)) => user,
            Ok(None) => return Err(Refusal::Unauthenticated),
            Err(error) => {
                tracing::warn!(%error, "cannot look up a user's token");
                return Err(Refusal::Unavailable);
            }
        };
        self.view_of(user).await.map(Caller::User)
    }

    /// A user as requests see them: with their teams, read now.
    async fn view_of(
        &self,
        user: hearth_store::UserRecord,
    ) -> Result<Arc<crate::access::UserView>, Refusal> {
        let Some(accounts) = &self.accounts else {
            return Err(Refusal::Unauthenticated);
        };
        let teams = accounts.memberships(&user.id).await.map_err(|error| {
            tracing::warn!(%error, "cannot look up a user's teams");
            Refusal::Unavailable
        })?;
        Ok(Arc::new(crate::access::UserView {
            id: user.id,
            name: user.name,
            teams,
        }))
    }

    /// Who an admitted caller acts as: the operator (the token, or a browser it logged
    /// in), or a user (their token, or their web login). A web login of a user who is
    /// gone, or on a server without users, is refused.
    async fn principal_of(&self, caller: &Caller) -> Result<Principal, Refusal> {
        let id = match caller {
            Caller::Bearer => return Ok(Principal::Operator),
            Caller::User(user) => return Ok(Principal::User(Arc::clone(user))),
            Caller::Browser(session) => match &session.user {
                None => return Ok(Principal::Operator),
                Some(id) => id,
            },
        };
        let Some(accounts) = &self.accounts else {
            return Err(Refusal::SessionEnded);
        };
        match accounts.user(id).await {
            Ok(Some(user)) if &user.id == id => self.view_of(user).await.map(Principal::User),
            Ok(_) => Err(Refusal::SessionEnded),
            Err(error) => {
                tracing::warn!(%error, "cannot look up a logged-in user");
                Err(Refusal::Unavailable)
            }
        }
    }

    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    pub fn origins(&self) -> &[String] {
        &self.origins
    }

    /// Login codes and browser sessions.
    pub fn logins(&self) -> &Logins {
        &self.logins
    }

    /// Whether `candidate` is the token.
    pub fn is_token(&self, candidate: &str) -> bool {
        self.token.matches(candidate)
    }

    fn check_host(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let host = headers
            .get(header::HOST)
            .and_then(|value| value.to_str().ok())
            .map(str::trim)
            .unwrap_or_default();
        if host.is_empty() {
            return Err(Refusal::Host("a Host header is required"));
        }
        let host = host.to_ascii_lowercase();
        if self.hosts.contains(&host) {
            Ok(())
        } else {
            Err(Refusal::Host(
                "the Host header does not name this server (DNS rebinding is refused)",
            ))
        }
    }

    fn check_origin(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let mut origins = headers.get_all(header::ORIGIN).iter();
        let Some(origin) = origins.next() else {
            return Ok(());
        };
        if origins.next().is_some() {
            return Err(Refusal::Origin);
        }
        let origin = origin
            .to_str()
            .map(|origin| origin.trim().to_ascii_lowercase())
            .map_err(|_| Refusal::Origin)?;
        if self.origins.contains(&origin) {
            Ok(())
        } else {
            Err(Refusal::Origin)
        }
    }

    /// Check 3: who the caller is (a browser session's credential is checked in 4).
    fn authenticate<'a>(&self, request: &'a Request) -> Result<Presented<'a>, Refusal> {
        let headers = request.headers();
        if let Some(value) = headers.get(header::AUTHORIZATION) {
            let presented = value
                .to_str()
                .ok()
                .and_then(|value| value.strip_prefix("Bearer "))
                .map(str::trim)
                .unwrap_or_default();
            return if self.is_token(presented) {
                Ok(Presented::Bearer)
            } else if self.accounts.is_some() && !presented.is_empty() {
                Ok(Presented::UserToken(presented))
            } else {
                Err(Refusal::Unauthenticated)
            };
        }
        if let Some(value) = headers.get(SESSION_HEADER) {
            return value
                .to_str()
                .map(|value| Presented::Browser(value.trim()))
                .map_err(|_| Refusal::Unauthenticated);
        }
        if is_websocket_upgrade(request)
            && let Some(credential) = offered_session(headers)
        {
            return Ok(Presented::Browser(credential));
        }
        Err(Refusal::Unauthenticated)
    }

    /// Check 4: a browser session's credential is sealed under the present key and has
    /// not expired.
    fn check_session(&self, presented: Presented<'_>) -> Result<Caller, Refusal> {
        match presented {
            Presented::Bearer => Ok(Caller::Bearer),
            // Looked up in the database instead (`user_of_token`).
            Presented::UserToken(_) => Err(Refusal::Unauthenticated),
            Presented::Browser(credential) => self
                .logins
                .session(credential)
                .map(Caller::Browser)
                .ok_or(Refusal::SessionEnded),
        }
    }
}

/// What the synchronous checks admitted a request as.
enum Admitted {
    /// A public or login route: no caller.
    Anyone,
    /// The token or a browser session.
    Caller(Caller),
    /// A user's API token, to look up.
    Token(String),
}

/// What a request presented to authenticate.
enum Presented<'a> {
    /// The token (already compared).
    Bearer,
    /// Not the token: a team server's user's API token, to look up.
    UserToken(&'a str),
    /// A browser session's credential, to check.
    Browser(&'a str),
}

/// The browser session in a WebSocket upgrade's protocol offer, if any.
fn offered_session(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .find_map(|protocol| protocol.trim().strip_prefix(SESSION_PROTOCOL_PREFIX))
}

/// Why a request was refused.
#[derive(Debug)]
enum Refusal {
    Host(&'static str),
    Origin,
    Unauthenticated,
    SessionEnded,
    NotJson,
    /// The users' store could not be read.
    Unavailable,
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let (status, message) = match self {
            Self::Host(message) => (StatusCode::FORBIDDEN, message),
            Self::Origin => (
                StatusCode::FORBIDDEN,
                "the Origin header is not allowed to use this server",
            ),
            Self::Unauthenticated => (
                StatusCode::UNAUTHORIZED,
                "missing or wrong token: send `Authorization: Bearer <token>` with the token from Hearth's data directory",
            ),
            Self::SessionEnded => (
                StatusCode::UNAUTHORIZED,
                "this browser session has expired or was ended: run `hearth login` for a new login link",
            ),
            Self::NotJson => (
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "the request body must be application/json",
            ),
            Self::Unavailable => (
                StatusCode::SERVICE_UNAVAILABLE,
                "the server cannot check users' tokens now (its database does not answer); try again",
            ),
        };
        let mut response = (status, message).into_response();
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"hearth\""),
            );
        }
        response
    }
}

fn is_websocket_upgrade(request: &Request) -> bool {
    request
        .headers()
        .get(header::UPGRADE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.eq_ignore_ascii_case("websocket"))
}

fn check_json(request: &Request) -> Result<(), Refusal> {
    if *request.method() != Method::POST {
        return Ok(());
    }
    let is_json = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|value| value.trim().eq_ignore_ascii_case("application/json"));
    if is_json {
        Ok(())
    } else {
        Err(Refusal::NotJson)
    }
}

/// Agent Home's page and assets: static, holding no data, served to anyone who passes
/// the Host and Origin checks (the page then asks the user to log in).
fn is_public(method: &Method, path: &str) -> bool {
    matches!(*method, Method::GET | Method::HEAD)
        && (path == "/" || path == "/favicon.svg" || path.starts_with(ASSETS_PATH))
}

/// The login routes, which take a one-time code (or the OpenID provider's answer)
/// instead of a session.
fn is_login(method: &Method, path: &str) -> bool {
    (*method == Method::GET
        && matches!(
            path,
            AUTH_PATH | AUTH_METHODS_PATH | OIDC_PATH | OIDC_CALLBACK_PATH
        ))
        || (*method == Method::POST && path == AUTH_SESSION_PATH)
}

/// The middleware: every request passes these checks or is refused.
pub(crate) async fn guard(
    State(guard): State<Arc<Guard>>,
    mut request: Request<Body>,
    next: Next,
) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let checked = guard
        .check_host(request.headers())
        .and_then(|()| guard.check_origin(request.headers()))
        .and_then(|()| {
            if is_public(&method, &path) {
                return Ok(Admitted::Anyone);
            }
            if is_login(&method, &path) {
                check_json(&request)?;
                return Ok(Admitted::Anyone);
            }
            let presented = guard.authenticate(&request)?;
            let admitted = match presented {
                Presented::UserToken(token) => Admitted::Token(token.to_owned()),
                presented => Admitted::Caller(guard.check_session(presented)?),
            };
            check_json(&request)?;
            Ok(admitted)
        });
    // A user's token is looked up in the database, once the other checks passed.
    let checked = match checked {
        Ok(Admitted::Token(token)) => guard.user_of_token(&token).await.map(Some),
        Ok(Admitted::Caller(caller)) => Ok(Some(caller)),
        Ok(Admitted::Anyone) => Ok(None),
        Err(refusal) => Err(refusal),
    };
    let checked = match checked {
        Ok(Some(caller)) => match guard.principal_of(&caller).await {
            Ok(principal) => Ok(Some((caller, principal))),
            Err(refusal) => Err(refusal),
        },
        Ok(None) => Ok(None),
        Err(refusal) => Err(refusal),
    };
    match checked {
        Ok(caller) => {
            if let Some((caller, principal)) = caller {
                request.extensions_mut().insert(caller);
                request.extensions_mut().insert(principal);
            }
            let response = next.run(request).await;
            tracing::debug!(%method, %path, status = response.status().as_u16(), "request");
            response
        }
        Err(refusal) => {
            tracing::info!(%method, %path, ?refusal, "refused a request");
            refusal.into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(
                header::SEC_WEBSOCKET_PROTOCOL,
                HeaderValue::from_str(value).unwrap(),
            );
        }
        headers
    }

    #[test]
    fn a_session_is_found_in_a_websocket_protocol_offer() {
        assert_eq!(
            offered_session(&offer(&["hearth.rpc, hearth.session.1.ab.cd"])),
            Some("1.ab.cd")
        );
        assert_eq!(
            offered_session(&offer(&["hearth.rpc", "hearth.session.9.x.y"])),
            Some("9.x.y")
        );
        assert_eq!(offered_session(&offer(&["hearth.rpc"])), None);
        assert_eq!(offered_session(&offer(&["session.1.a.b"])), None);
        assert_eq!(offered_session(&offer(&[])), None);
    }
}
