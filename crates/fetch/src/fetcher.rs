//! The guarded fetcher: one request (a GET, or the method a protocol such as WebDAV
//! needs), its redirects followed by hand, each hop checked.

use std::error::Error as _;
use std::sync::{Arc, OnceLock};

use bytes::{Bytes, BytesMut};
use reqwest::header::{ACCEPT, CONTENT_TYPE, ETAG, LOCATION};
use reqwest::{Client, StatusCode};
use url::{Host, Url};

use crate::content::{ContentTypes, MediaType, decode_text};
use crate::error::{FetchError, Result, Rule};
use crate::guard::{check_address, check_url, parse_url, redacted, refusal};
use crate::policy::FetchPolicy;
use crate::resolve::{GuardRefusal, GuardedResolver, LookupFailure, Resolver, SystemResolver};

/// One fetch: a URL and what the caller accepts.
#[derive(Clone, PartialEq, Eq)]
pub struct FetchRequest {
    url: String,
    accept: ContentTypes,
    max_bytes: Option<u64>,
    method: Option<String>,
    headers: Vec<(String, String)>,
    credentials: Vec<(String, String)>,
    body: Option<String>,
    any_status: bool,
}

impl std::fmt::Debug for FetchRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let credentials: Vec<(&str, &str)> = self
            .credentials
            .iter()
            .map(|(name, _)| (name.as_str(), "<redacted>"))
            .collect();
        f.debug_struct("FetchRequest")
            .field("url", &self.url)
            .field("accept", &self.accept)
            .field("max_bytes", &self.max_bytes)
            .field("method", &self.method)
            .field("headers", &self.headers)
            .field("credentials", &credentials)
            .field("any_status", &self.any_status)
            .finish_non_exhaustive()
    }
}

impl FetchRequest {
    /// A GET of `url` accepting the `accept` content types.
    pub fn new(url: impl Into<String>, accept: ContentTypes) -> Self {
        Self {
            url: url.into(),
            accept,
            max_bytes: None,
            method: None,
            headers: Vec::new(),
            credentials: Vec::new(),
            body: None,
            any_status: false,
        }
    }

    /// Uses another method than GET (WebDAV's `PROPFIND`, `REPORT`), with `body`.
    pub fn with_method(mut self, method: impl Into<String>, body: impl Into<String>) -> Self {
        self.method = Some(method.into());
        self.body = Some(body.into());
        self
    }

    /// Adds a request header (for example WebDAV's `Depth`, or `If-Match`).
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Adds a header carrying a secret (`Authorization`): it is sent to the requested
    /// URL's origin only, never to another origin a redirect leads to, and never appears
    /// in errors or logs.
    pub fn with_credential(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.credentials.push((name.into(), value.into()));
        self
    }

    /// Returns every final status as a response (its body read under the same cap)
    /// instead of failing on a non-success one: for protocols whose errors are answers
    /// (`207 Multi-Status`, `412 Precondition Failed`, `404`). Redirects are still
    /// followed and checked.
    pub fn with_any_status(mut self) -> Self {
        self.any_status = true;
        self
    }

    /// Lowers the body size cap for this fetch (the policy's cap still applies).
    pub fn with_max_bytes(mut self, bytes: u64) -> Self {
        self.max_bytes = Some(bytes);
        self
    }

    /// The URL as given.
    pub fn url(&self) -> &str {
        &self.url
    }
}

/// A successful fetch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchResponse {
    /// The URL asked for.
    pub requested_url: Url,
    /// The URL that answered, after redirects.
    pub final_url: Url,
    /// Every URL that redirected, in order.
    pub redirects: Vec<Url>,
    /// The HTTP status (a success, unless the request took any status).
    pub status: u16,
    /// The declared media type.
    pub media_type: MediaType,
    /// The `ETag` header, if any.
    pub etag: Option<String>,
    /// The body, at most the size cap.
    pub body: Bytes,
}

impl FetchResponse {
    /// The body decoded to text (see [`decode_text`]).
    pub fn text(&self) -> String {
        decode_text(&self.body, &self.media_type)
    }
}

/// Fetches URLs under one [`FetchPolicy`].
///
/// Holds one HTTP client (and its connection pool) whose resolver checks every address
/// it returns, with proxies off and automatic redirects off. Build one per policy and
/// share it behind an `Arc`.
pub struct Fetcher {
    /// Built on the first fetch: loading the TLS roots is the costly part of start-up.
    client: OnceLock<std::result::Result<Client, String>>,
    resolver: Arc<dyn Resolver>,
    policy: Arc<FetchPolicy>,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetcher")
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl Fetcher {
    /// A fetcher resolving names with the operating system's resolver.
    pub fn new(policy: FetchPolicy) -> Result<Self> {
        Self::with_resolver(policy, Arc::new(SystemResolver))
    }

    /// A fetcher resolving names with `resolver`.
    pub fn with_resolver(policy: FetchPolicy, resolver: Arc<dyn Resolver>) -> Result<Self> {
        Ok(Self {
            client: OnceLock::new(),
            resolver,
            policy: Arc::new(policy),
        })
    }

    /// The HTTP client, built on first use.
    fn client(&self) -> Result<&Client> {
        let built = self.client.get_or_init(|| {
            let guarded = GuardedResolver {
                resolver: Arc::clone(&self.resolver),
                policy: Arc::clone(&self.policy),
            };
            Client::builder()
                .no_proxy()
                .redirect(reqwest::redirect::Policy::none())
                .referer(false)
                .dns_resolver(guarded)
                .connect_timeout(self.policy.connect_timeout())
                .user_agent(self.policy.user_agent())
                .build()
                .map_err(|error| error_chain(&error))
        });
        built.as_ref().map_err(|message| FetchError::Client {
            message: message.clone(),
        })
    }

    /// The policy this fetcher enforces.
    pub fn policy(&self) -> &FetchPolicy {
        &self.policy
    }

    /// Sends the request (a GET unless it names another method), following up to the
    /// policy's number of redirects, each hop checked in full; fails on a non-success
    /// status without reading its body, unless the request takes any status.
    pub async fn fetch(&self, request: &FetchRequest) -> Result<FetchResponse> {
        let requested_url = parse_url(&request.url)?;
        let limit = self.policy.total_timeout();
        match tokio::time::timeout(limit, self.follow(requested_url.clone(), request)).await {
            Ok(result) => result,
            Err(_) => Err(FetchError::Timeout {
                url: redacted(&requested_url),
                after: limit,
            }),
        }
    }

    /// Sends `request` to `requested_url`, following redirects within the policy, and
    /// reads the final response.
    async fn follow(&self, requested_url: Url, request: &FetchRequest) -> Result<FetchResponse> {
        let mut url = requested_url.clone();
        let mut redirects = Vec::new();
        loop {
            check_url(&self.policy, &url).map_err(|rule| refusal(&url, rule))?;
            let builder = self.hop_request(&url, &requested_url, request)?;
            let response = builder
                .send()
                .await
                .map_err(|error| send_error(&url, &error, &self.policy))?;
            self.check_peer(&url, &response)?;
            let status = response.status();
            if is_followed_redirect(status) {
                if redirects.len() >= self.policy.max_redirects() {
                    return Err(refusal(
                        &url,
                        Rule::TooManyRedirects {
                            limit: self.policy.max_redirects(),
                        },
                    ));
                }
                let next = redirect_target(&url, &response)?;
                tracing::debug!(from = %redacted(&url), to = %redacted(&next), "following redirect");
                redirects.push(std::mem::replace(&mut url, next));
                continue;
            }
            return self
                .read_final(response, request, requested_url, url, redirects)
                .await;
        }
    }

    /// The request for one hop to `url`: method, accepted types, headers, body, and the
    /// credentials only when `url` is on the origin the caller named.
    fn hop_request(
        &self,
        url: &Url,
        requested_url: &Url,
        request: &FetchRequest,
    ) -> Result<reqwest::RequestBuilder> {
        let method = match request.method.as_deref() {
            Some(method) => {
                reqwest::Method::from_bytes(method.as_bytes()).map_err(|_| FetchError::Client {
                    message: format!("`{method}` is not an HTTP method"),
                })?
            }
            None => reqwest::Method::GET,
        };
        let mut builder = self
            .client()?
            .request(method, url.clone())
            .header(ACCEPT, request.accept.accept_header());
        for (name, value) in &request.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        // Secrets go to the origin the caller named, never where a redirect leads.
        if url.origin() == requested_url.origin() {
            for (name, value) in &request.credentials {
                let mut value = reqwest::header::HeaderValue::from_str(value).map_err(|_| {
                    FetchError::Client {
                        message: format!(
                            "the `{name}` header holds characters HTTP does not allow"
                        ),
                    }
                })?;
                value.set_sensitive(true);
                builder = builder.header(name.as_str(), value);
            }
        }
        if let Some(body) = &request.body {
            builder = builder.body(body.clone());
        }
        Ok(builder)
    }

    /// Defence in depth: refuses a response whose peer is an address the guard would not
    /// have accepted for `url`.
    fn check_peer(&self, url: &Url, response: &reqwest::Response) -> Result<()> {
        if let Some(peer) = response.remote_addr() {
            let name = match url.host() {
                Some(Host::Domain(name)) => Some(name),
                Some(Host::Ipv4(_) | Host::Ipv6(_)) | None => None,
            };
            check_address(&self.policy, peer.ip(), name).map_err(|rule| refusal(url, rule))?;
        }
        Ok(())
    }

    /// Checks the final (non-redirect) response's status and content type and reads its
    /// body within the size cap.
    async fn read_final(
        &self,
        response: reqwest::Response,
        request: &FetchRequest,
        requested_url: Url,
        url: Url,
        redirects: Vec<Url>,
    ) -> Result<FetchResponse> {
        let status = response.status();
        if !status.is_success() && !request.any_status {
            return Err(FetchError::Status {
                url: redacted(&url),
                status: status.as_u16(),
            });
        }
        let media_type = MediaType::parse(
            response
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|value| value.to_str().ok()),
        );
        if status.is_success() && !request.accept.accepts(&media_type.essence) {
            return Err(FetchError::UnsupportedContentType {
                url: redacted(&url),
                content_type: media_type.essence,
                accepted: request.accept.to_string(),
            });
        }
        let cap = request
            .max_bytes
            .map_or(self.policy.max_response_bytes(), |bytes| {
                bytes.min(self.policy.max_response_bytes())
            });
        let etag = response
            .headers()
            .get(ETAG)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let body = read_capped(response, &url, cap, &self.policy).await?;
        Ok(FetchResponse {
            requested_url,
            final_url: url,
            redirects,
            status: status.as_u16(),
            media_type,
            etag,
            body,
        })
    }
}

fn is_followed_redirect(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::MOVED_PERMANENTLY
            | StatusCode::FOUND
            | StatusCode::SEE_OTHER
            | StatusCode::TEMPORARY_REDIRECT
            | StatusCode::PERMANENT_REDIRECT
    )
}

fn redirect_target(url: &Url, response: &reqwest::Response) -> Result<Url> {
    let bad = || FetchError::BadRedirect { url: redacted(url) };
    let location = response
        .headers()
        .get(LOCATION)
        .ok_or_else(bad)?
        .to_str()
        .map_err(|_| bad())?;
    url.join(location).map_err(|_| bad())
}

async fn read_capped(
    mut response: reqwest::Response,
    url: &Url,
    cap: u64,
    policy: &FetchPolicy,
) -> Result<Bytes> {
    let too_large = || FetchError::TooLarge {
        url: redacted(url),
        limit: cap,
    };
    if response.content_length().is_some_and(|length| length > cap) {
        return Err(too_large());
    }
    let mut body = BytesMut::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| send_error(url, &error, policy))?
    {
        if body.len() as u64 + chunk.len() as u64 > cap {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

/// Turns a client error back into the guard's refusal, a lookup failure, a timeout or
/// a transport failure. Never includes a body: client errors carry none.
fn send_error(url: &Url, error: &reqwest::Error, policy: &FetchPolicy) -> FetchError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = error.source();
    while let Some(cause) = source {
        if let Some(GuardRefusal(rule)) = cause.downcast_ref::<GuardRefusal>() {
            return refusal(url, rule.clone());
        }
        if let Some(failure) = cause.downcast_ref::<LookupFailure>() {
            return FetchError::Resolve {
                host: failure.host.clone(),
                message: failure.message.clone(),
            };
        }
        source = cause.source();
    }
    if error.is_timeout() {
        // The client only has the connect timeout; the total one is ours.
        return FetchError::Timeout {
            url: redacted(url),
            after: policy.connect_timeout(),
        };
    }
    FetchError::Transport {
        url: redacted(url),
        message: error_chain(error),
    }
}

/// An error and its causes on one line, the URL left out (callers add it redacted).
fn error_chain(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    if let Some(url) = error.url() {
        let suffix = format!(" for url ({url})");
        if let Some(stripped) = text.strip_suffix(&suffix) {
            text = stripped.to_owned();
        }
    }
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
