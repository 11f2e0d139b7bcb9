//! Why an OpenID Connect login failed, and the page that tells the person: what failed
//! and what to do, with a 4xx or 5xx status. Codes, states and tokens are never in it.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use openidconnect::RequestTokenError;
use openidconnect::core::CoreErrorResponseType;

use super::provider_http::ProviderHttpError;

/// Why a login failed.
#[derive(Debug)]
pub(crate) enum LoginFailure {
    /// This server has no OpenID Connect login.
    NotConfigured,
    /// The provider's discovery document could not be read.
    Unreachable {
        /// The provider.
        issuer: String,
        /// Why.
        error: String,
    },
    /// The callback's state is not a pending login (unknown, used, or expired).
    UnknownState,
    /// The callback came to a browser that did not start the login.
    OtherBrowser,
    /// The callback names another provider than this server's (a mix-up).
    OtherIssuer {
        /// The provider the callback names.
        answered: String,
        /// This server's provider.
        expected: String,
    },
    /// The provider sent an error instead of a code.
    ProviderRefused {
        /// Its error code (`access_denied`, …).
        error: String,
        /// Its explanation, if any.
        description: Option<String>,
    },
    /// The callback has neither a code nor an error.
    NoCode,
    /// The provider refused the code (its token endpoint answered an error).
    CodeRejected(String),
    /// The provider could not be asked, or answered something unusable.
    Provider(String),
    /// The ID token failed its checks.
    Unverified(String),
    /// The user directory refused the identity, with this message.
    Refused(String),
    /// Hearth's own fault.
    Internal(String),
}

impl LoginFailure {
    /// The status, what failed, and what to do.
    fn explain(&self) -> (StatusCode, String, &'static str) {
        const AGAIN: &str = "Start the login again.";
        match self {
            Self::NotConfigured => (
                StatusCode::NOT_FOUND,
                "This server has no OpenID Connect login.".to_owned(),
                "Log in with a login link: run `hearth login` where Hearth runs.",
            ),
            Self::Unreachable { issuer, error } => (
                StatusCode::BAD_GATEWAY,
                format!("Cannot reach the OpenID provider at {issuer}: {error}."),
                "Try again in a moment; if it keeps failing, ask the server's administrator to check the provider's address.",
            ),
            Self::UnknownState => (
                StatusCode::BAD_REQUEST,
                "This login is unknown, was already used, or took longer than 10 minutes.".to_owned(),
                AGAIN,
            ),
            Self::OtherBrowser => (
                StatusCode::BAD_REQUEST,
                "This login was started in another browser (or this browser did not keep its login cookie).".to_owned(),
                "Start the login again in this browser, with cookies allowed for this server.",
            ),
            Self::OtherIssuer { answered, expected } => (
                StatusCode::BAD_REQUEST,
                format!(
                    "This login's answer came from the OpenID provider {answered}, not from this server's ({expected})."
                ),
                AGAIN,
            ),
            Self::ProviderRefused { error, description } => (
                if error == "access_denied" {
                    StatusCode::FORBIDDEN
                } else {
                    StatusCode::BAD_REQUEST
                },
                match description {
                    Some(description) => {
                        format!("The OpenID provider refused the login: {error} ({description}).")
                    }
                    None => format!("The OpenID provider refused the login: {error}."),
                },
                AGAIN,
            ),
            Self::NoCode => (
                StatusCode::BAD_REQUEST,
                "The OpenID provider sent the browser back without a login code.".to_owned(),
                AGAIN,
            ),
            Self::CodeRejected(error) => (
                StatusCode::BAD_REQUEST,
                format!("The OpenID provider did not accept the login code: {error}."),
                AGAIN,
            ),
            Self::Provider(error) => (
                StatusCode::BAD_GATEWAY,
                format!("The OpenID provider's answer could not be used: {error}."),
                "Try again in a moment; if it keeps failing, ask the server's administrator.",
            ),
            Self::Unverified(error) => (
                StatusCode::FORBIDDEN,
                format!("The OpenID provider's ID token failed its checks: {error}."),
                "Start the login again; if it keeps failing, ask the server's administrator.",
            ),
            Self::Refused(message) => (
                StatusCode::FORBIDDEN,
                message.clone(),
                "Ask the server's administrator for access.",
            ),
            Self::Internal(error) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("The login failed on this server: {error}."),
                "Try again; if it keeps failing, the server's log says more.",
            ),
        }
    }
}

impl IntoResponse for LoginFailure {
    fn into_response(self) -> Response {
        let (status, what, todo) = self.explain();
        if status.is_server_error() {
            tracing::warn!(
                status = status.as_u16(),
                "an OpenID Connect login failed: {what}"
            );
        } else {
            tracing::info!(
                status = status.as_u16(),
                "an OpenID Connect login failed: {what}"
            );
        }
        let page = format!(
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"referrer\" content=\"no-referrer\"><title>Login failed</title></head>\
             <body><h1>Login failed</h1><p>{}</p><p>{}</p>\
             <p><a href=\"{}\">Log in again</a></p></body></html>\n",
            escape_html(&what),
            escape_html(todo),
            crate::guard::OIDC_PATH,
        );
        let mut response = (status, Html(page)).into_response();
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    }
}

/// How a failed code exchange is told: the provider's own refusal, or a failure to ask it.
pub(super) fn exchange_failure(
    error: RequestTokenError<
        ProviderHttpError,
        openidconnect::StandardErrorResponse<CoreErrorResponseType>,
    >,
) -> LoginFailure {
    match error {
        RequestTokenError::ServerResponse(response) => {
            let mut text = response.error().to_string();
            if let Some(description) = response.error_description() {
                text.push_str(&format!(" ({description})"));
            }
            LoginFailure::CodeRejected(text)
        }
        other => LoginFailure::Provider(error_chain(&other)),
    }
}

/// An error with its causes, `: `-separated.
pub(super) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// `text` safe inside HTML elements and quoted attributes.
fn escape_html(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            other => escaped.push(other),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_escapes_what_the_provider_sent() {
        let failure = LoginFailure::ProviderRefused {
            error: "invalid_request".to_owned(),
            description: Some("<script>alert(1)</script>".to_owned()),
        };
        let response = failure.into_response();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        let (_, what, _) = LoginFailure::ProviderRefused {
            error: "invalid_request".to_owned(),
            description: Some("<script>alert(1)</script>".to_owned()),
        }
        .explain();
        assert!(what.contains("<script>"), "the raw text: {what}");
        assert_eq!(
            escape_html(&what),
            "The OpenID provider refused the login: invalid_request (&lt;script&gt;alert(1)&lt;/script&gt;)."
        );
    }

    #[test]
    fn each_failure_has_its_status() {
        let cases = [
            (LoginFailure::NotConfigured, 404),
            (
                LoginFailure::Unreachable {
                    issuer: "http://127.0.0.1:1".to_owned(),
                    error: "refused".to_owned(),
                },
                502,
            ),
            (LoginFailure::UnknownState, 400),
            (LoginFailure::OtherBrowser, 400),
            (
                LoginFailure::OtherIssuer {
                    answered: "a".to_owned(),
                    expected: "b".to_owned(),
                },
                400,
            ),
            (
                LoginFailure::ProviderRefused {
                    error: "access_denied".to_owned(),
                    description: None,
                },
                403,
            ),
            (LoginFailure::NoCode, 400),
            (LoginFailure::CodeRejected("invalid_grant".to_owned()), 400),
            (LoginFailure::Provider("bad JSON".to_owned()), 502),
            (LoginFailure::Unverified("bad signature".to_owned()), 403),
            (LoginFailure::Refused("not in the team".to_owned()), 403),
            (LoginFailure::Internal("oops".to_owned()), 500),
        ];
        for (failure, status) in cases {
            assert_eq!(failure.explain().0.as_u16(), status, "{failure:?}");
        }
    }
}
