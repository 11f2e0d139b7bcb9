//! The client seam: [`ModelClient`] and the settings every client is built from.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;
use url::Url;

use crate::error::{LlmError, Result};
use crate::event::{EventStream, ModelResponse, collect_response};
use crate::request::ModelRequest;
use crate::retry::RetryPolicy;
use crate::secret::ApiKey;
use crate::window::ListedModel;

/// A model provider Hearth can stream from. Implemented by the OpenAI-compatible and the
/// Anthropic clients; used as `Arc<dyn ModelClient>` by the agent loop.
pub trait ModelClient: Send + Sync {
    /// The provider id used in messages (`openai`, `anthropic`, a config id).
    fn provider(&self) -> &str;

    /// The wire protocol spoken.
    fn protocol(&self) -> Protocol;

    /// Starts a model call. Nothing is sent until the stream is first polled. The stream
    /// yields events until [`crate::StreamEvent::Finished`] or an error; cancelling
    /// `cancel` or dropping the stream aborts the HTTP request at once.
    fn stream(&self, request: ModelRequest, cancel: CancellationToken) -> EventStream;

    /// The models the provider offers (ids), as its model listing reports them.
    fn list_models(&self, cancel: CancellationToken) -> BoxFuture<'_, Result<Vec<String>>>;

    /// The models the provider offers, with their context windows where its listing
    /// says; by default the ids of [`list_models`](Self::list_models) with none.
    fn list_models_detailed(
        &self,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<Vec<ListedModel>>> {
        Box::pin(async move {
            Ok(self
                .list_models(cancel)
                .await?
                .into_iter()
                .map(|id| ListedModel {
                    id,
                    context_window: None,
                })
                .collect())
        })
    }

    /// Runs a model call to its end and returns the whole response.
    fn complete(
        &self,
        request: ModelRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<ModelResponse>> {
        Box::pin(collect_response(self.stream(request, cancel)))
    }
}

/// Which API a provider speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// OpenAI-compatible Chat Completions (`/chat/completions`).
    OpenAiChat,
    /// Anthropic Messages (`/v1/messages`).
    AnthropicMessages,
}

impl Protocol {
    /// The standard environment variable holding this protocol's API key.
    pub fn api_key_variable(self) -> &'static str {
        match self {
            Self::OpenAiChat => "OPENAI_API_KEY",
            Self::AnthropicMessages => "ANTHROPIC_API_KEY",
        }
    }

    /// The standard environment variable holding this protocol's base URL (OpenAI's and
    /// Anthropic's own SDKs read it as the default endpoint).
    pub fn base_url_variable(self) -> &'static str {
        match self {
            Self::OpenAiChat => "OPENAI_BASE_URL",
            Self::AnthropicMessages => "ANTHROPIC_BASE_URL",
        }
    }

    /// The official base URL.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Self::OpenAiChat => "https://api.openai.com/v1",
            Self::AnthropicMessages => "https://api.anthropic.com",
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::OpenAiChat => "openai",
            Self::AnthropicMessages => "anthropic",
        })
    }
}

/// Settings of one client.
#[derive(Clone)]
pub struct ClientOptions {
    /// Provider id used in messages.
    pub provider: String,
    /// API base URL (`https://api.openai.com/v1`, `https://api.anthropic.com`).
    pub base_url: Url,
    /// The API key; `None` for servers that need none (local models).
    pub api_key: Option<ApiKey>,
    /// Extra headers sent with every request.
    pub headers: BTreeMap<String, String>,
    /// Retry settings.
    pub retry: RetryPolicy,
    /// Limit for establishing a connection (default 10 s).
    pub connect_timeout: Duration,
    /// Limit for a streamed response to begin and between two streamed chunks
    /// (default 300 s).
    pub idle_timeout: Duration,
    /// Limit for a non-streamed response (default 600 s).
    pub request_timeout: Duration,
    /// Output token limit when a request sets none (Anthropic requires one; 4096 there).
    pub max_tokens: Option<u32>,
    /// Resolves the base URL's host name on every connection instead of the system's
    /// resolver (a team server checks the addresses a user's provider resolves to, so a
    /// name cannot be pointed at its own network after the check).
    pub resolver: Option<std::sync::Arc<dyn reqwest::dns::Resolve>>,
}

impl ClientOptions {
    /// Options with defaults for `provider` at `base_url`.
    pub fn new(provider: impl Into<String>, base_url: &str) -> Result<Self> {
        let provider = provider.into();
        let base_url = parse_base_url(&provider, base_url)?;
        Ok(Self {
            provider,
            base_url,
            api_key: None,
            headers: BTreeMap::new(),
            retry: RetryPolicy::default(),
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(300),
            request_timeout: Duration::from_secs(600),
            max_tokens: None,
            resolver: None,
        })
    }

    /// Sets the API key.
    pub fn with_api_key(mut self, api_key: Option<ApiKey>) -> Self {
        self.api_key = api_key;
        self
    }

    /// Sets the retry policy.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Sets the idle-stream timeout.
    pub fn with_idle_timeout(mut self, idle_timeout: Duration) -> Self {
        self.idle_timeout = idle_timeout;
        self
    }

    /// Sets the connect timeout.
    pub fn with_connect_timeout(mut self, connect_timeout: Duration) -> Self {
        self.connect_timeout = connect_timeout;
        self
    }

    /// Adds a header sent with every request.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.insert(name.into(), value.into());
        self
    }
}

impl fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientOptions")
            .field("provider", &self.provider)
            .field("base_url", &self.base_url.as_str())
            .field("api_key", &self.api_key)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("retry", &self.retry)
            .field("connect_timeout", &self.connect_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("max_tokens", &self.max_tokens)
            .field("resolver", &self.resolver.as_ref().map(|_| "own"))
            .finish()
    }
}

/// Parses a base URL: http or https, no credentials, no query.
pub(crate) fn parse_base_url(provider: &str, text: &str) -> Result<Url> {
    let invalid = |why: &str| {
        LlmError::InvalidRequest(format!(
            "base URL `{}` of provider {provider} is not usable: {why}",
            hearth_core::redact_userinfo(text)
        ))
    };
    let url = Url::parse(text.trim()).map_err(|error| invalid(&error.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid("it must start with http:// or https://"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid(
            "it must not contain credentials; put the key in an environment variable",
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(invalid("it must not have a query or fragment"));
    }
    Ok(url)
}

/// `base` joined with a relative `path`, keeping the base's own path.
pub(crate) fn endpoint(base: &Url, path: &str) -> Url {
    let mut url = base.clone();
    let joined = format!(
        "{}/{}",
        base.path().trim_end_matches('/'),
        path.trim_start_matches('/')
    );
    url.set_path(&joined);
    url
}

/// Whether a URL points at this machine.
pub(crate) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(domain)) => domain.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(address)) => address.is_loopback(),
        Some(url::Host::Ipv6(address)) => address.is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn endpoints_keep_the_base_path() {
        let base = parse_base_url("x", "http://127.0.0.1:11434/v1/").unwrap();
        assert_eq!(
            endpoint(&base, "chat/completions").as_str(),
            "http://127.0.0.1:11434/v1/chat/completions"
        );
        let base = parse_base_url("x", "https://api.anthropic.com").unwrap();
        assert_eq!(
            endpoint(&base, "/v1/messages").as_str(),
            "https://api.anthropic.com/v1/messages"
        );
    }

    #[test]
    fn base_urls_without_scheme_or_with_credentials_are_refused() {
        assert!(parse_base_url("x", "localhost:11434").is_err());
        let error = parse_base_url("x", "https://user:secretpw@example.com").unwrap_err();
        assert_eq!(
            error.to_string(),
            "base URL `https://[redacted]@example.com` of provider x is not usable: it must not contain credentials; put the key in an environment variable"
        );
        assert!(parse_base_url("x", "ftp://example.com").is_err());
    }

    #[test]
    fn debug_hides_key_and_header_values() {
        let options = ClientOptions::new("openai", "https://api.openai.com/v1")
            .unwrap()
            .with_api_key(ApiKey::new("sk-secret"))
            .with_header("x-custom-auth", "hidden-value");
        let debug = format!("{options:?}");
        assert!(!debug.contains("sk-secret"), "{debug}");
        assert!(!debug.contains("hidden-value"), "{debug}");
        assert!(debug.contains("x-custom-auth"), "{debug}");
    }
}
