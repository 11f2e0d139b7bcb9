//! The checks every HTTP and WebSocket request passes before it reaches a handler, in
//! this order:
//!
//! 1. `Host` is one of the exact loopback authorities with the server's port (DNS
//!    rebinding defence); an empty or missing `Host` is refused.
//! 2. `Origin`, when present, is one of the exact allowed origins including the port
//!    (`null` and foreign origins are refused; programs that send none pass). No CORS
//!    headers are ever sent, so no foreign page can read a response.
//! 3. The caller is authenticated: `Authorization: Bearer <token>` compared in constant
//!    time, or a browser-session cookie made by `/auth` (the only route that accepts
//!    the token, or a one-time login code, in its URL, exchanged once for the cookie).
//!    Only Agent Home's static page and assets (`GET /`, `/assets/…`) are served
//!    without it: they hold no data, and the page asks the user to log in.
//! 4. A browser session's writes carry its CSRF token: the `X-Hearth-CSRF` header, or
//!    the `csrf` query parameter on the WebSocket upgrade (browsers cannot set headers
//!    there).
//! 5. A `POST` body is JSON (a cross-site form can only send `text/plain`,
//!    `multipart/form-data` or `application/x-www-form-urlencoded`).
//!
//! Tokens, cookies and query strings never reach the logs.

use std::sync::{Arc, Mutex, MutexGuard};

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ServerError;
use crate::token::Secret;

/// The cookie holding a browser session's id.
pub const SESSION_COOKIE: &str = "hearth_session";
/// The header carrying a browser session's CSRF token on writes.
pub const CSRF_HEADER: &str = "x-hearth-csrf";
/// The route that exchanges the token for a browser session.
pub const AUTH_PATH: &str = "/auth";
/// Where Agent Home's assets are served from (without authentication).
pub const ASSETS_PATH: &str = "/assets/";
/// One-time login codes waiting to be used; the oldest goes first.
const MAX_LOGIN_CODES: usize = 8;

/// Who a request was authenticated as.
#[derive(Clone, Debug)]
pub(crate) enum Caller {
    /// A program holding the token.
    Bearer,
    /// A browser session; its CSRF token guards writes.
    Browser {
        /// The session's CSRF token.
        csrf: Secret,
    },
}

/// The server's checks and the state they need.
///
/// A browser session is not kept in memory: its cookie is a random nonce with an
/// HMAC-SHA256 of it under the token, and its CSRF token another HMAC of the nonce. So a
/// browser stays logged in across server restarts, and replacing the token file logs
/// every browser out.
pub(crate) struct Guard {
    hosts: Vec<String>,
    origins: Vec<String>,
    token: Secret,
    /// HMAC-SHA256 keyed with the token (HMAC takes keys of any length, so it is there).
    sealer: Option<Hmac<Sha256>>,
    login_codes: Mutex<Vec<Secret>>,
}

impl Guard {
    pub fn new(hosts: Vec<String>, origins: Vec<String>, token: Secret) -> Arc<Self> {
        let sealer = Hmac::<Sha256>::new_from_slice(token.expose().as_bytes()).ok();
        Arc::new(Self {
            hosts,
            origins,
            token,
            sealer,
            login_codes: Mutex::new(Vec::new()),
        })
    }

    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    pub fn origins(&self) -> &[String] {
        &self.origins
    }

    fn login_codes(&self) -> MutexGuard<'_, Vec<Secret>> {
        self.login_codes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether `candidate` is the token.
    pub fn is_token(&self, candidate: &str) -> bool {
        self.token.matches(candidate)
    }

    /// A new login code: `/auth?code=…` accepts it once.
    pub fn issue_login_code(&self) -> crate::Result<Secret> {
        let code = Secret::generate()?;
        let mut codes = self.login_codes();
        if codes.len() >= MAX_LOGIN_CODES {
            codes.remove(0);
        }
        codes.push(code.clone());
        Ok(code)
    }

    /// Whether `candidate` is a login code not used yet; it is used up.
    pub fn redeem_login_code(&self, candidate: &str) -> bool {
        let mut codes = self.login_codes();
        // Every code is compared, so the time taken does not say which one matched.
        let mut found = None;
        for (index, code) in codes.iter().enumerate() {
            if code.matches(candidate) {
                found = Some(index);
            }
        }
        found.map(|index| codes.remove(index)).is_some()
    }

    /// Starts a browser session; returns its cookie value and CSRF token.
    pub fn open_browser_session(&self) -> crate::Result<(Secret, Secret)> {
        let nonce = Secret::generate()?;
        let (Some(seal), Some(csrf)) = (
            self.seal("session", nonce.expose()),
            self.seal("csrf", nonce.expose()),
        ) else {
            return Err(ServerError::Random(
                "cannot key the session seal".to_owned(),
            ));
        };
        let cookie = format!("{}.{seal}", nonce.expose());
        Ok((Secret::from_trusted(cookie), Secret::from_trusted(csrf)))
    }

    /// The CSRF token of the browser session a cookie value names, if it is one.
    fn browser_session(&self, cookie: &str) -> Option<Secret> {
        let (nonce, seal) = cookie.split_once('.')?;
        let expected = Secret::from_trusted(self.seal("session", nonce)?);
        if !expected.matches(seal) {
            return None;
        }
        self.seal("csrf", nonce).map(Secret::from_trusted)
    }

    /// HMAC-SHA256 under the token of `purpose:nonce`, hex-encoded.
    fn seal(&self, purpose: &str, nonce: &str) -> Option<String> {
        let mut mac = self.sealer.clone()?;
        mac.update(purpose.as_bytes());
        mac.update(b":");
        mac.update(nonce.as_bytes());
        let bytes = mac.finalize().into_bytes();
        let mut text = String::with_capacity(bytes.len() * 2);
        for byte in bytes {
            text.push_str(&format!("{byte:02x}"));
        }
        Some(text)
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

    fn authenticate(&self, headers: &HeaderMap) -> Result<Caller, Refusal> {
        if let Some(value) = headers.get(header::AUTHORIZATION) {
            let presented = value
                .to_str()
                .ok()
                .and_then(|value| value.strip_prefix("Bearer "))
                .map(str::trim)
                .unwrap_or_default();
            return if self.is_token(presented) {
                Ok(Caller::Bearer)
            } else {
                Err(Refusal::Unauthenticated)
            };
        }
        for value in headers.get_all(header::COOKIE) {
            let Ok(cookies) = value.to_str() else {
                continue;
            };
            for cookie in cookies.split(';') {
                if let Some((name, id)) = cookie.trim().split_once('=')
                    && name == SESSION_COOKIE
                    && let Some(csrf) = self.browser_session(id.trim())
                {
                    return Ok(Caller::Browser { csrf });
                }
            }
        }
        Err(Refusal::Unauthenticated)
    }
}

/// Why a request was refused.
#[derive(Debug)]
enum Refusal {
    Host(&'static str),
    Origin,
    Unauthenticated,
    Csrf,
    NotJson,
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
            Self::Csrf => (
                StatusCode::FORBIDDEN,
                "missing or wrong CSRF token (X-Hearth-CSRF)",
            ),
            Self::NotJson => (
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "the request body must be application/json",
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

fn query_parameter<'a>(request: &'a Request, name: &str) -> Option<&'a str> {
    request.uri().query()?.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=')?;
        (key == name).then_some(value)
    })
}

fn check_csrf(request: &Request, csrf: &Secret) -> Result<(), Refusal> {
    let read_only = matches!(*request.method(), Method::GET | Method::HEAD);
    if is_websocket_upgrade(request) {
        return match query_parameter(request, "csrf") {
            Some(presented) if csrf.matches(presented) => Ok(()),
            _ => Err(Refusal::Csrf),
        };
    }
    if read_only {
        return Ok(());
    }
    let presented = request
        .headers()
        .get(CSRF_HEADER)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    if csrf.matches(presented) {
        Ok(())
    } else {
        Err(Refusal::Csrf)
    }
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
            if path == AUTH_PATH {
                // The exchange checks the token from its URL itself.
                return Ok(None);
            }
            if is_public(&method, &path) {
                return Ok(None);
            }
            let caller = guard.authenticate(request.headers())?;
            if let Caller::Browser { csrf } = &caller {
                check_csrf(&request, csrf)?;
            }
            check_json(&request)?;
            Ok(Some(caller))
        });
    match checked {
        Ok(caller) => {
            if let Some(caller) = caller {
                request.extensions_mut().insert(caller);
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

    fn guard(token: &Secret) -> Arc<Guard> {
        Guard::new(Vec::new(), Vec::new(), token.clone())
    }

    #[test]
    fn a_browser_session_outlives_the_server_but_not_its_token() {
        let token = Secret::generate().unwrap();
        let (cookie, csrf) = guard(&token).open_browser_session().unwrap();
        // Another server on the same token (a restart) knows the session and its CSRF.
        let restarted = guard(&token);
        let found = restarted.browser_session(cookie.expose()).unwrap();
        assert!(found.matches(csrf.expose()));
        assert_ne!(cookie.expose(), csrf.expose());
        // A new token logs every browser out.
        let replaced = guard(&Secret::generate().unwrap());
        assert!(replaced.browser_session(cookie.expose()).is_none());
    }

    #[test]
    fn a_forged_or_altered_cookie_is_refused() {
        let token = Secret::generate().unwrap();
        let guard = guard(&token);
        let (cookie, _) = guard.open_browser_session().unwrap();
        let (nonce, seal) = cookie.expose().split_once('.').unwrap();
        let mut altered = seal.to_owned();
        let last = if altered.ends_with('0') { "1" } else { "0" };
        altered.replace_range(altered.len() - 1.., last);
        for forged in [
            format!("{nonce}.{altered}"),
            format!("{}.{seal}", "0".repeat(64)),
            nonce.to_owned(),
            String::new(),
            format!("{nonce}."),
            token.expose().to_owned(),
        ] {
            assert!(guard.browser_session(&forged).is_none(), "{forged}");
        }
    }

    #[test]
    fn a_login_code_works_once() {
        let guard = guard(&Secret::generate().unwrap());
        let code = guard.issue_login_code().unwrap();
        assert!(!guard.redeem_login_code(&"0".repeat(64)));
        assert!(guard.redeem_login_code(code.expose()));
        assert!(!guard.redeem_login_code(code.expose()), "used up");
        // Only the newest few stay valid.
        let codes: Vec<_> = (0..=MAX_LOGIN_CODES)
            .map(|_| guard.issue_login_code().unwrap())
            .collect();
        assert!(!guard.redeem_login_code(codes[0].expose()));
        assert!(guard.redeem_login_code(codes[MAX_LOGIN_CODES].expose()));
    }
}
