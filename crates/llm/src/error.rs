//! The crate's one error type.

use std::fmt;
use std::time::Duration;

use hearth_core::{HarnessError, HarnessErrorKind, ToolError};
use thiserror::Error;

/// An error answer from a provider, in the provider's own words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    /// The provider id (`openai`, `anthropic`, a config id).
    pub provider: String,
    /// The HTTP status; `None` for an error event inside a stream that began with 200.
    pub status: Option<u16>,
    /// The provider's error type (`invalid_request_error`, `overloaded_error`, ...).
    pub error_type: Option<String>,
    /// The provider's error code, when it sends one (`model_not_found`, ...).
    pub code: Option<String>,
    /// The provider's message.
    pub message: String,
    /// The request id the provider assigned (`x-request-id` / `request-id`).
    pub request_id: Option<String>,
}

impl ApiError {
    /// Whether the provider's error type says the failure is transient.
    fn transient_type(&self) -> bool {
        matches!(
            self.error_type.as_deref(),
            Some(
                "overloaded_error"
                    | "rate_limit_error"
                    | "api_error"
                    | "timeout_error"
                    | "server_error"
                    | "rate_limit_exceeded"
            )
        )
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.status {
            Some(status) => write!(f, "{} answered HTTP {status}", self.provider)?,
            None => write!(f, "{} reported an error during the response", self.provider)?,
        }
        if let Some(error_type) = &self.error_type {
            write!(f, " ({error_type})")?;
        }
        write!(f, ": {}", self.message)?;
        if let Some(code) = &self.code
            && self.error_type.as_deref() != Some(code.as_str())
        {
            write!(f, " [code {code}]")?;
        }
        if let Some(request_id) = &self.request_id {
            write!(f, " [request id {request_id}]")?;
        }
        Ok(())
    }
}

/// Which wait ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutPhase {
    /// Establishing the connection.
    Connect,
    /// Waiting for the response to begin.
    Response,
    /// Waiting for the next streamed byte.
    Idle,
}

impl fmt::Display for TimeoutPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Connect => "connecting",
            Self::Response => "waiting for the response",
            Self::Idle => "waiting for the next streamed data",
        })
    }
}

/// Tool arguments that could not be repaired or do not match the tool's schema. The
/// message is written for the model: it says what is wrong and how to call again.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{message}")]
pub struct ToolArgumentsError {
    /// The tool called.
    pub tool: String,
    /// Each problem found, one line each (`/start: expected a string, got 5`).
    pub problems: Vec<String>,
    /// The whole message for the model.
    pub message: String,
}

/// Everything that can go wrong in Hearth's model clients.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum LlmError {
    /// The provider answered with an error.
    #[error("{0}")]
    Api(Box<ApiError>),
    /// The provider asks to wait longer than Hearth's cap before retrying.
    #[error("{}; retry after {} ({error})", rate_limit_label(error.status), format_duration(*retry_after))]
    RateLimited {
        /// The provider's answer.
        error: Box<ApiError>,
        /// How long the provider asks to wait.
        retry_after: Duration,
    },
    /// The connection could not be made or broke before any response byte.
    #[error("cannot reach {provider} at {url}: {message}")]
    Connect {
        /// The provider id.
        provider: String,
        /// The URL requested.
        url: String,
        /// What the network layer said.
        message: String,
    },
    /// A wait ran out.
    #[error("{provider} did not answer within {} while {phase}", format_duration(*after))]
    Timeout {
        /// The provider id.
        provider: String,
        /// Which wait.
        phase: TimeoutPhase,
        /// Its length.
        after: Duration,
    },
    /// The connection broke after the response began; what streamed so far was delivered.
    #[error("the connection to {provider} broke during the response: {message}")]
    Disconnected {
        /// The provider id.
        provider: String,
        /// What the network layer said.
        message: String,
    },
    /// The response ended before the provider said it was complete.
    #[error("{provider} ended the response before it was complete")]
    Incomplete {
        /// The provider id.
        provider: String,
    },
    /// The provider sent something that is not its API's format.
    #[error("{provider} sent a response Hearth cannot read: {message}")]
    Decode {
        /// The provider id.
        provider: String,
        /// What was wrong, with a short excerpt.
        message: String,
    },
    /// The provider redirected the request; Hearth does not follow redirects of API calls.
    #[error(
        "{provider} redirected the request to {}; set base_url to the final address",
        hearth_core::redact_userinfo(location)
    )]
    Redirect {
        /// The provider id.
        provider: String,
        /// The `location` header.
        location: String,
    },
    /// No API key was found for a provider that needs one.
    #[error("no API key for {provider}: set {variable} or `api_key_env` in config.toml")]
    MissingApiKey {
        /// The provider id.
        provider: String,
        /// The environment variable expected.
        variable: String,
    },
    /// The request or the provider settings are unusable.
    #[error("{0}")]
    InvalidRequest(String),
    /// The request was cancelled by the caller.
    #[error("the model request was cancelled")]
    Cancelled,
    /// Tool arguments could not be used.
    #[error("{0}")]
    ToolArguments(ToolArgumentsError),
}

/// Result of this crate's operations.
pub type Result<T, E = LlmError> = std::result::Result<T, E>;

fn rate_limit_label(status: Option<u16>) -> String {
    match status {
        Some(429) | None => "rate limited".to_owned(),
        Some(status) => format!("HTTP {status}"),
    }
}

/// `1.5s`, `999s`, `16m 39s`, `250ms`.
pub(crate) fn format_duration(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis < 1000 {
        return format!("{millis}ms");
    }
    let seconds = duration.as_secs();
    if seconds < 60 {
        if duration.subsec_millis() == 0 {
            return format!("{seconds}s");
        }
        return format!("{:.1}s", duration.as_secs_f64());
    }
    let (hours, minutes, seconds) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    if hours > 0 {
        format!("{hours}h {minutes}m {seconds}s")
    } else {
        format!("{minutes}m {seconds}s")
    }
}

/// Whether a status is one the official SDKs retry.
pub(crate) fn retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429) || status >= 500
}

impl LlmError {
    /// The error with every provider-supplied message passed through `clean` (which
    /// removes the API key and bounds the length).
    pub(crate) fn cleaned(self, clean: impl Fn(&str) -> String) -> Self {
        match self {
            Self::Api(mut error) => {
                error.message = clean(&error.message);
                Self::Api(error)
            }
            Self::RateLimited {
                mut error,
                retry_after,
            } => {
                error.message = clean(&error.message);
                Self::RateLimited { error, retry_after }
            }
            Self::Decode { provider, message } => Self::Decode {
                provider,
                message: clean(&message),
            },
            Self::Disconnected { provider, message } => Self::Disconnected {
                provider,
                message: clean(&message),
            },
            other => other,
        }
    }

    /// Whether the same request may succeed when sent again later.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Api(error) => match error.status {
                Some(status) => retryable_status(status),
                None => error.transient_type(),
            },
            Self::RateLimited { .. }
            | Self::Connect { .. }
            | Self::Timeout { .. }
            | Self::Disconnected { .. }
            | Self::Incomplete { .. } => true,
            Self::Decode { .. }
            | Self::Redirect { .. }
            | Self::MissingApiKey { .. }
            | Self::InvalidRequest(_)
            | Self::Cancelled
            | Self::ToolArguments(_) => false,
        }
    }

    /// The provider's answer, when the provider answered with an error.
    pub fn api_error(&self) -> Option<&ApiError> {
        match self {
            Self::Api(error) | Self::RateLimited { error, .. } => Some(error.as_ref()),
            _ => None,
        }
    }

    /// The HTTP status of the provider's error answer, if any.
    pub fn status(&self) -> Option<u16> {
        self.api_error().and_then(|error| error.status)
    }
}

impl From<LlmError> for HarnessError {
    fn from(error: LlmError) -> Self {
        let kind = match &error {
            _ if error.is_retryable() => HarnessErrorKind::Transient,
            LlmError::InvalidRequest(_) | LlmError::MissingApiKey { .. } => {
                HarnessErrorKind::InvalidInput
            }
            LlmError::Api(api) if matches!(api.status, Some(400 | 404 | 413 | 422)) => {
                HarnessErrorKind::InvalidInput
            }
            _ => HarnessErrorKind::Provider,
        };
        HarnessError::new(kind, error.to_string())
    }
}

impl From<ToolArgumentsError> for ToolError {
    fn from(error: ToolArgumentsError) -> Self {
        ToolError::InvalidArguments(error.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn api(status: Option<u16>, error_type: Option<&str>) -> Box<ApiError> {
        Box::new(ApiError {
            provider: "openai".into(),
            status,
            error_type: error_type.map(str::to_owned),
            code: None,
            message: "slow down".into(),
            request_id: Some("req_1".into()),
        })
    }

    #[test]
    fn messages_carry_status_type_and_request_id() {
        assert_eq!(
            LlmError::Api(api(Some(400), Some("invalid_request_error"))).to_string(),
            "openai answered HTTP 400 (invalid_request_error): slow down [request id req_1]"
        );
        assert_eq!(
            LlmError::RateLimited {
                error: api(Some(429), None),
                retry_after: Duration::from_secs(999)
            }
            .to_string(),
            "rate limited; retry after 16m 39s (openai answered HTTP 429: slow down [request id req_1])"
        );
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(format_duration(Duration::from_millis(250)), "250ms");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(format_duration(Duration::from_secs(61)), "1m 1s");
        assert_eq!(format_duration(Duration::from_secs(3661)), "1h 1m 1s");
    }

    #[test]
    fn retryability_follows_status_and_type() {
        assert!(LlmError::Api(api(Some(529), None)).is_retryable());
        assert!(LlmError::Api(api(Some(408), None)).is_retryable());
        assert!(!LlmError::Api(api(Some(401), None)).is_retryable());
        assert!(LlmError::Api(api(None, Some("overloaded_error"))).is_retryable());
        assert!(!LlmError::Api(api(None, Some("invalid_request_error"))).is_retryable());
        assert!(!LlmError::Cancelled.is_retryable());
    }

    #[test]
    fn agent_errors_keep_the_message() {
        let error = HarnessError::from(LlmError::Api(api(Some(404), None)));
        assert_eq!(error.kind, HarnessErrorKind::InvalidInput);
        assert!(error.message.contains("HTTP 404"));
    }
}
