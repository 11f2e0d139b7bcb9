//! The server edge: host and server failures become JSON-RPC errors with structured
//! data (kind, message, retryable). This is the only place that maps them.

use hearth_core::HarnessErrorKind;
use hearth_host::HostError;
use hearth_protocol::{ErrorKind, ProtocolError, RpcError};

/// The error response for a host failure.
pub(crate) fn host_error(error: &HostError) -> RpcError {
    RpcError::new(kind_of(error), error.to_string(), error.is_retryable())
}

fn kind_of(error: &HostError) -> ErrorKind {
    match error {
        HostError::NotFound { .. } => ErrorKind::NotFound,
        HostError::Deleted(_) | HostError::ScopeUnavailable(_) => ErrorKind::Gone,
        HostError::UnknownProvider { .. } | HostError::InvalidInput(_) | HostError::Uri(_) => {
            ErrorKind::InvalidParams
        }
        HostError::Unsupported { .. } => ErrorKind::Unsupported,
        HostError::Busy(_) => ErrorKind::Busy,
        HostError::Harness { source, .. } => match source.kind {
            HarnessErrorKind::NotFound => ErrorKind::NotFound,
            HarnessErrorKind::Unsupported => ErrorKind::Unsupported,
            HarnessErrorKind::InvalidInput => ErrorKind::InvalidParams,
            HarnessErrorKind::Busy => ErrorKind::Busy,
            HarnessErrorKind::Provider | HarnessErrorKind::Transient => ErrorKind::Provider,
            HarnessErrorKind::Internal => ErrorKind::Internal,
        },
        // Another Hearth process is answering in the chat.
        HostError::Store(hearth_store::StoreError::Leased { .. }) => ErrorKind::Busy,
        HostError::Store(_) => ErrorKind::Internal,
        HostError::ShuttingDown => ErrorKind::ShuttingDown,
        HostError::Shared(inner) => kind_of(inner),
    }
}

/// The error response for parameters that do not make domain values.
pub(crate) fn invalid_params(error: &ProtocolError) -> RpcError {
    RpcError::from(error)
}

/// The error response for a request before `initialize`.
pub(crate) fn not_initialized() -> RpcError {
    RpcError::new(
        ErrorKind::NotInitialized,
        "send `initialize` first: it must be the first request of a connection",
        false,
    )
}

/// The error response for a part of Hearth this server does not run.
pub(crate) fn unavailable(what: &str) -> RpcError {
    RpcError::new(ErrorKind::Unavailable, what.to_owned(), false)
}

/// The error response for a failure that is Hearth's own fault.
pub(crate) fn internal(message: impl std::fmt::Display) -> RpcError {
    RpcError::new(
        ErrorKind::Internal,
        format!("internal error: {message}"),
        false,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_core::HarnessError;

    #[test]
    fn host_errors_map_to_kinds_and_codes() {
        let busy = host_error(&HostError::Busy("hearth-chat:a/b/c".into()));
        assert_eq!(busy.kind(), ErrorKind::Busy);
        assert_eq!(busy.code, -32009);
        assert!(busy.is_retryable());
        let missing = host_error(&HostError::NotFound {
            what: "chat",
            key: "x".into(),
        });
        assert_eq!(missing.kind(), ErrorKind::NotFound);
        assert!(!missing.is_retryable());
        let transient = host_error(&HostError::Harness {
            provider: hearth_core::HarnessId::parse("openai").unwrap(),
            source: HarnessError::new(HarnessErrorKind::Transient, "rate limited"),
        });
        assert_eq!(transient.kind(), ErrorKind::Provider);
        assert!(transient.is_retryable());
    }
}
