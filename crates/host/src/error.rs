//! Host errors.

use std::sync::Arc;

use hearth_core::{HarnessError, HarnessId, UriError};
use hearth_store::StoreError;
use thiserror::Error;

/// A host failure.
#[derive(Debug, Error)]
pub enum HostError {
    /// No session, chat or turn with that identity.
    #[error("{what} `{key}` does not exist")]
    NotFound {
        /// The kind of thing.
        what: &'static str,
        /// Its identity.
        key: String,
    },
    /// The session was deleted.
    #[error("session `{0}` was deleted")]
    Deleted(String),
    /// No harness is registered for the provider.
    #[error(
        "no harness for provider `{provider}` is available (available: {available}); configure it in config.toml or pick another with --provider"
    )]
    UnknownProvider {
        /// The provider asked for.
        provider: HarnessId,
        /// The registered ones.
        available: String,
    },
    /// The harness does not offer the operation.
    #[error("`{provider}` does not support {what}")]
    Unsupported {
        /// The harness.
        provider: HarnessId,
        /// The operation.
        what: &'static str,
    },
    /// The chat already runs a turn.
    #[error("chat `{0}` is already answering; wait for it or abort the turn first")]
    Busy(String),
    /// The request makes no sense.
    #[error("{0}")]
    InvalidInput(String),
    /// A malformed URI or id.
    #[error(transparent)]
    Uri(#[from] UriError),
    /// The harness failed.
    #[error("{provider}: {source}")]
    Harness {
        /// The harness.
        provider: HarnessId,
        /// Its error.
        source: HarnessError,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The session's scope takes no new sessions or turns (its project is gone).
    #[error(transparent)]
    ScopeUnavailable(#[from] hearth_core::ScopeUnavailable),
    /// The host is shutting down.
    #[error("Hearth is shutting down")]
    ShuttingDown,
    /// A failure shared by several waiters (e.g. of one coalesced restore).
    #[error(transparent)]
    Shared(Arc<HostError>),
}

impl HostError {
    /// Whether retrying may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Busy(_) => true,
            Self::Harness { source, .. } => source.is_retryable(),
            Self::Store(error) => error.is_retryable(),
            Self::Shared(error) => error.is_retryable(),
            Self::NotFound { .. }
            | Self::Deleted(_)
            | Self::UnknownProvider { .. }
            | Self::Unsupported { .. }
            | Self::InvalidInput(_)
            | Self::Uri(_)
            | Self::ScopeUnavailable(_)
            | Self::ShuttingDown => false,
        }
    }
}

/// Result of a host operation.
pub type HostResult<T> = Result<T, HostError>;
