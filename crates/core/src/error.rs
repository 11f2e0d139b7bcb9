//! Errors of the domain: malformed identities, harness failures and tool failures.

use thiserror::Error;

/// A session or chat URI (or an id inside one) that could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum UriError {
    /// The text is not of the expected shape.
    #[error(
        "`{value}` is not a valid {expected} URI (expected {})",
        if *expected == "session" { "hearth-session:<provider>/<id>" } else { "hearth-chat:<provider>/<session-id>/<chat-id>" }
    )]
    Malformed {
        /// `"session"` or `"chat"`.
        expected: &'static str,
        /// The text given.
        value: String,
    },
    /// A chat URI was given where a session URI is expected.
    #[error(
        "`{value}` is a chat URI, but a session URI (hearth-session:<provider>/<id>) is expected here"
    )]
    ChatWhereSessionExpected {
        /// The text given.
        value: String,
    },
    /// A session URI was given where a chat URI is expected.
    #[error(
        "`{value}` is a session URI, but a chat URI (hearth-chat:<provider>/<session-id>/<chat-id>) is expected here"
    )]
    SessionWhereChatExpected {
        /// The text given.
        value: String,
    },
    /// An id with characters outside the allowed set, empty, or too long.
    #[error(
        "`{value}` is not a valid {what} (letters, digits, `-`, `_` and `.`, starting with a letter or digit, at most 128 characters)"
    )]
    InvalidId {
        /// Which kind of id.
        what: &'static str,
        /// The text given.
        value: String,
    },
}

/// What kind of failure a harness reports; the host and the protocol classify by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HarnessErrorKind {
    /// The chat or turn is not known to the harness.
    NotFound,
    /// The harness does not offer this operation (see its capabilities).
    Unsupported,
    /// The request itself is wrong (bad turn id, bad scenario, bad model name).
    InvalidInput,
    /// The chat already runs a turn.
    Busy,
    /// The model provider or external agent failed; may be worth retrying.
    Provider,
    /// A transient failure (timeouts, rate limits) that a retry may fix.
    Transient,
    /// The harness itself failed.
    Internal,
}

/// A harness failure: a kind the host can act on and a message for the user.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{message}")]
pub struct HarnessError {
    /// The class of failure.
    pub kind: HarnessErrorKind,
    /// What failed, on what, and what to do.
    pub message: String,
}

impl HarnessError {
    /// An error of the given kind.
    pub fn new(kind: HarnessErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// The chat is not known to the harness.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(HarnessErrorKind::NotFound, message)
    }

    /// The harness does not offer the operation.
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(HarnessErrorKind::Unsupported, message)
    }

    /// The request is invalid.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(HarnessErrorKind::InvalidInput, message)
    }

    /// The harness itself failed.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(HarnessErrorKind::Internal, message)
    }

    /// Whether retrying the same operation may succeed.
    pub fn is_retryable(&self) -> bool {
        match self.kind {
            HarnessErrorKind::Transient | HarnessErrorKind::Busy => true,
            HarnessErrorKind::NotFound
            | HarnessErrorKind::Unsupported
            | HarnessErrorKind::InvalidInput
            | HarnessErrorKind::Provider
            | HarnessErrorKind::Internal => false,
        }
    }
}

/// Result of a harness operation.
pub type HarnessResult<T> = Result<T, HarnessError>;

/// A tool failure, worded so a model can act on it.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ToolError {
    /// The arguments do not match the tool's schema or make no sense.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// The tool ran and failed.
    #[error("{0}")]
    Failed(String),
    /// The tool refused (policy, sandbox, SSRF guard).
    #[error("refused: {0}")]
    Refused(String),
    /// A staged change no longer applies (the target changed since staging).
    #[error("conflict: {0}")]
    Conflict(String),
    /// The tool has no such operation (e.g. `apply` on a read-only tool).
    #[error("unsupported: {0}")]
    Unsupported(String),
}
