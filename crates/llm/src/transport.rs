//! One HTTP attempt and the retry rules around it, shared by every protocol.

use std::sync::OnceLock;
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue, USER_AGENT};
use reqwest::{Response, StatusCode};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use url::Url;

use crate::client::{ClientOptions, endpoint, is_loopback};
use crate::diagnostics::{describe_error_value, error_chain, excerpt, truncate};
use crate::error::{ApiError, LlmError, Result, TimeoutPhase};
use crate::retry::RetryDecision;

/// Largest error body read.
const MAX_ERROR_BODY: usize = 64 * 1024;
/// Longest provider message kept.
const MAX_MESSAGE_CHARS: usize = 2000;
/// Request rephrasings tried for one call (see `Exchange::adapt`).
const MAX_ADAPTATIONS: u32 = 4;

/// How the API key is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Auth {
    /// `Authorization: Bearer <key>`.
    Bearer,
    /// `x-api-key: <key>`.
    XApiKey,
}

/// Whether a client of `base_url` can need the system's TLS roots. Not for plain HTTP on
/// loopback: its requests go to the base URL alone, it follows no redirect, and no proxy
/// (which might be reached over TLS) is used for loopback.
fn needs_tls_roots(base_url: &Url) -> bool {
    !(base_url.scheme() == "http" && is_loopback(base_url))
}

/// The HTTP client of one provider, with its settings.
#[derive(Debug)]
pub(crate) struct Transport {
    /// Built on first use: loading the TLS roots is the costly part of start-up, and most
    /// configured providers are never called in a given run.
    http: OnceLock<std::result::Result<reqwest::Client, String>>,
    headers: HeaderMap,
    pub(crate) options: ClientOptions,
}

impl Transport {
    /// Builds the HTTP client: no redirects, no proxy for loopback, key header marked
    /// sensitive, `fixed_headers` (e.g. the API version) on every request.
    pub(crate) fn new(
        options: ClientOptions,
        auth: Auth,
        fixed_headers: &[(&'static str, &'static str)],
    ) -> Result<Self> {
        let mut headers = HeaderMap::new();
        let invalid = |what: &str| {
            LlmError::InvalidRequest(format!(
                "provider {}: {what} is not a valid HTTP header",
                options.provider
            ))
        };
        for (name, value) in fixed_headers {
            headers.insert(*name, HeaderValue::from_static(value));
        }
        for (name, value) in &options.headers {
            let header = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| invalid(&format!("header name `{name}`")))?;
            let mut value = HeaderValue::from_str(value)
                .map_err(|_| invalid(&format!("the value of header `{name}`")))?;
            value.set_sensitive(true);
            headers.insert(header, value);
        }
        if let Some(key) = &options.api_key {
            let (name, text) = match auth {
                Auth::Bearer => (AUTHORIZATION, format!("Bearer {}", key.expose())),
                Auth::XApiKey => (
                    HeaderName::from_static("x-api-key"),
                    key.expose().to_owned(),
                ),
            };
            let mut value = HeaderValue::from_str(&text).map_err(|_| invalid("the API key"))?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        headers.insert(
            USER_AGENT,
            HeaderValue::from_static(concat!("hearth/", env!("CARGO_PKG_VERSION"))),
        );
        Ok(Self {
            http: OnceLock::new(),
            headers,
            options,
        })
    }

    /// The HTTP client, built on first use.
    pub(crate) fn http(&self) -> Result<&reqwest::Client> {
        let built = self.http.get_or_init(|| {
            let mut builder = reqwest::Client::builder()
                .default_headers(self.headers.clone())
                .connect_timeout(self.options.connect_timeout)
                .redirect(reqwest::redirect::Policy::none())
                .tcp_nodelay(true)
                .pool_idle_timeout(Duration::from_secs(90));
            if is_loopback(&self.options.base_url) {
                builder = builder.no_proxy();
            }
            if !needs_tls_roots(&self.options.base_url) {
                // The system's TLS roots (read and parsed from disk: most of the work of
                // a one-shot run against a local model) would never be used.
                builder = builder.tls_certs_only([]);
            }
            if let Some(resolver) = &self.options.resolver {
                // Every name goes through it: no proxy resolves names on its behalf.
                builder = builder
                    .dns_resolver(std::sync::Arc::clone(resolver))
                    .no_proxy();
            }
            builder.build().map_err(|error| error_chain(&error))
        });
        built.as_ref().map_err(|message| {
            LlmError::InvalidRequest(format!(
                "cannot build the HTTP client for {}: {message}",
                self.options.provider
            ))
        })
    }

    /// The provider id.
    pub(crate) fn provider(&self) -> &str {
        &self.options.provider
    }

    /// An endpoint below the base URL.
    pub(crate) fn url(&self, path: &str) -> Url {
        endpoint(&self.options.base_url, path)
    }

    /// Sends one request; on success waits for the first body bytes, so that a failure
    /// before any byte arrived can still be retried.
    async fn attempt(
        &self,
        request: reqwest::Request,
        response_timeout: Duration,
        cancel: &CancellationToken,
    ) -> Attempt {
        let url = request.url().to_string();
        let http = match self.http() {
            Ok(http) => http,
            Err(error) => return Attempt::Failed(error),
        };
        let sent = tokio::select! {
            biased;
            () = cancel.cancelled() => return Attempt::Failed(LlmError::Cancelled),
            sent = tokio::time::timeout(response_timeout, http.execute(request)) => sent,
        };
        let mut response = match sent {
            Err(_) => {
                return Attempt::Unreached(self.timeout(TimeoutPhase::Response, response_timeout));
            }
            Ok(Err(error)) => return self.send_failed(&url, &error),
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        if status.is_redirection() {
            let location = header(response.headers(), "location")
                .unwrap_or("?")
                .to_owned();
            return Attempt::Failed(LlmError::Redirect {
                provider: self.provider().to_owned(),
                location,
            });
        }
        if !status.is_success() {
            let headers = response.headers().clone();
            let body = tokio::select! {
                biased;
                () = cancel.cancelled() => return Attempt::Failed(LlmError::Cancelled),
                body = read_capped(&mut response, MAX_ERROR_BODY, response_timeout) => body,
            };
            let error = self.api_error(status, &headers, &body);
            return Attempt::Rejected {
                error,
                status: status.as_u16(),
                headers,
            };
        }
        let first = tokio::select! {
            biased;
            () = cancel.cancelled() => return Attempt::Failed(LlmError::Cancelled),
            first = tokio::time::timeout(response_timeout, response.chunk()) => first,
        };
        match first {
            Err(_) => Attempt::Unreached(self.timeout(TimeoutPhase::Response, response_timeout)),
            Ok(Err(error)) => self.send_failed(&url, &error),
            Ok(Ok(first)) => Attempt::Opened { response, first },
        }
    }

    /// Runs attempts until one opens a response, one fails for good, or a retry is due.
    pub(crate) async fn open(
        &self,
        exchange: &mut dyn Exchange,
        retries_done: u32,
        cancel: &CancellationToken,
    ) -> Opening {
        let response_timeout = if exchange.streaming() {
            self.options.idle_timeout
        } else {
            self.options.request_timeout
        };
        let mut adaptations = 0;
        loop {
            let request = match exchange.build(self) {
                Ok(request) => request,
                Err(error) => return Opening::Failed(error),
            };
            match self.attempt(request, response_timeout, cancel).await {
                Attempt::Opened { response, first } => {
                    return Opening::Opened { response, first };
                }
                Attempt::Failed(error) => return Opening::Failed(error),
                Attempt::Unreached(error) => {
                    return match self.options.retry.for_connection_error(retries_done) {
                        RetryDecision::Retry(delay) => Opening::Retry { delay, error },
                        RetryDecision::GiveUp | RetryDecision::WaitTooLong(_) => {
                            Opening::Failed(error)
                        }
                    };
                }
                Attempt::Rejected {
                    error,
                    status,
                    headers,
                } => {
                    if adaptations < MAX_ADAPTATIONS && exchange.adapt(&error) {
                        adaptations += 1;
                        tracing::info!(provider = %self.provider(), status, "rephrasing the request the provider rejected: {}", error.message);
                        continue;
                    }
                    return match self
                        .options
                        .retry
                        .for_response(status, &headers, retries_done)
                    {
                        RetryDecision::Retry(delay) => Opening::Retry {
                            delay,
                            error: LlmError::Api(Box::new(error)),
                        },
                        RetryDecision::WaitTooLong(retry_after) => {
                            Opening::Failed(LlmError::RateLimited {
                                error: Box::new(error),
                                retry_after,
                            })
                        }
                        RetryDecision::GiveUp => Opening::Failed(LlmError::Api(Box::new(error))),
                    };
                }
            }
        }
    }

    /// Sends a request whose whole answer is JSON, with retries; for listings and checks.
    pub(crate) async fn fetch_json(
        &self,
        exchange: &mut dyn Exchange,
        cancel: &CancellationToken,
    ) -> Result<Value> {
        let mut retries_done = 0;
        loop {
            match self.open(exchange, retries_done, cancel).await {
                Opening::Opened {
                    mut response,
                    first,
                } => {
                    let mut body = first.map(|bytes| bytes.to_vec()).unwrap_or_default();
                    let rest = tokio::select! {
                        biased;
                        () = cancel.cancelled() => return Err(LlmError::Cancelled),
                        rest = read_capped(&mut response, 64 * 1024 * 1024, self.options.request_timeout) => rest,
                    };
                    body.extend_from_slice(&rest);
                    return serde_json::from_slice(&body).map_err(|error| LlmError::Decode {
                        provider: self.provider().to_owned(),
                        message: format!("{error} in {}", excerpt(&String::from_utf8_lossy(&body))),
                    });
                }
                Opening::Retry { delay, error } => {
                    retries_done += 1;
                    tracing::warn!(provider = %self.provider(), attempt = retries_done, ?delay, "retrying: {error}");
                    tokio::select! {
                        biased;
                        () = cancel.cancelled() => return Err(LlmError::Cancelled),
                        () = tokio::time::sleep(delay) => {}
                    }
                }
                Opening::Failed(error) => return Err(error),
            }
        }
    }

    pub(crate) fn timeout(&self, phase: TimeoutPhase, after: Duration) -> LlmError {
        LlmError::Timeout {
            provider: self.provider().to_owned(),
            phase,
            after,
        }
    }

    fn send_failed(&self, url: &str, error: &reqwest::Error) -> Attempt {
        if error.is_builder() {
            return Attempt::Failed(LlmError::InvalidRequest(format!(
                "cannot build the request to {}: {}",
                self.provider(),
                error_chain(error)
            )));
        }
        if error.is_timeout() {
            let phase = if error.is_connect() {
                TimeoutPhase::Connect
            } else {
                TimeoutPhase::Response
            };
            let after = match phase {
                TimeoutPhase::Connect => self.options.connect_timeout,
                _ => self.options.request_timeout,
            };
            return Attempt::Unreached(self.timeout(phase, after));
        }
        Attempt::Unreached(LlmError::Connect {
            provider: self.provider().to_owned(),
            url: url.to_owned(),
            message: error_chain(error),
        })
    }

    /// The provider's error answer, read leniently from any of the common shapes.
    pub(crate) fn api_error(
        &self,
        status: StatusCode,
        headers: &HeaderMap,
        body: &[u8],
    ) -> ApiError {
        let request_id = header(headers, "x-request-id")
            .or_else(|| header(headers, "request-id"))
            .map(str::to_owned);
        let text = String::from_utf8_lossy(body);
        let (message, error_type, code) = match serde_json::from_slice::<Value>(body) {
            Ok(value) => describe_error_value(&value),
            Err(_) => (text.trim().to_owned(), None, None),
        };
        let message = if message.is_empty() {
            status.canonical_reason().unwrap_or("no message").to_owned()
        } else {
            message
        };
        ApiError {
            provider: self.provider().to_owned(),
            status: Some(status.as_u16()),
            error_type,
            code,
            message: self.clean(&message),
            request_id,
        }
    }

    /// A provider message with the key removed and its length bounded.
    pub(crate) fn clean(&self, message: &str) -> String {
        let message = match &self.options.api_key {
            Some(key) => key.redact(message),
            None => message.to_owned(),
        };
        truncate(&message, MAX_MESSAGE_CHARS)
    }
}

/// The request of one protocol operation, rebuilt for every attempt.
pub(crate) trait Exchange: Send {
    /// Builds the HTTP request.
    fn build(&self, transport: &Transport) -> Result<reqwest::Request>;

    /// Whether the answer streams (chooses the idle rather than the request timeout).
    fn streaming(&self) -> bool;

    /// Rephrases the request after the provider rejected it (e.g. a server that does not
    /// stream); returns whether anything changed, in which case it is sent again at once.
    fn adapt(&mut self, _error: &ApiError) -> bool {
        false
    }
}

/// Outcome of one attempt.
enum Attempt {
    Opened {
        response: Response,
        first: Option<Bytes>,
    },
    /// The provider answered with an error.
    Rejected {
        error: ApiError,
        status: u16,
        headers: HeaderMap,
    },
    /// No response arrived (connection error, timeout): retryable.
    Unreached(LlmError),
    /// Final.
    Failed(LlmError),
}

/// Outcome of [`Transport::open`].
pub(crate) enum Opening {
    /// A successful response with its first body bytes (`None`: empty body).
    Opened {
        response: Response,
        first: Option<Bytes>,
    },
    /// Send again after `delay`.
    Retry { delay: Duration, error: LlmError },
    /// Give up.
    Failed(LlmError),
}

async fn read_capped(response: &mut Response, cap: usize, timeout: Duration) -> Vec<u8> {
    let mut body = Vec::new();
    let read = async {
        while let Ok(Some(chunk)) = response.chunk().await {
            let room = cap.saturating_sub(body.len());
            body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if body.len() >= cap {
                break;
            }
        }
    };
    if tokio::time::timeout(timeout, read).await.is_err() {
        tracing::debug!("gave up reading a response body after {timeout:?}");
    }
    body
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_plain_loopback_provider_goes_without_the_systems_tls_roots() {
        let needs = |url: &str| needs_tls_roots(&Url::parse(url).unwrap());
        assert!(!needs("http://127.0.0.1:11434/v1"));
        assert!(!needs("http://localhost:8080/v1"));
        assert!(needs("https://api.openai.com/v1"));
        assert!(needs("https://127.0.0.1:8443/v1"));
        // A model elsewhere over plain HTTP may be reached through a proxy over TLS.
        assert!(needs("http://10.0.0.5:8000/v1"));
    }
}
