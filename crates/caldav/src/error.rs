//! The crate's one error type.

use hearth_core::redact_userinfo;
use thiserror::Error;

/// Result of a CalDAV operation.
pub type Result<T, E = CalDavError> = std::result::Result<T, E>;

/// What a CalDAV operation could not do. Messages say what failed, on what, and what to
/// do, with credentials in URLs redacted.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum CalDavError {
    /// The server could not be reached, refused a request, or answered wrongly.
    #[error(
        "CalDAV calendar `{}` ({}): {}",
        redact_userinfo(id),
        redact_userinfo(url),
        redact_userinfo(message)
    )]
    Server {
        /// The calendar (or the URL being discovered).
        id: String,
        /// Its URL (shown with its credentials redacted).
        url: String,
        /// What failed and what to do.
        message: String,
    },
    /// A URL or href is not one; the message names it (credentials redacted).
    #[error("{0}")]
    InvalidUrl(String),
}
