//! Failures of the ACP agent, and how they reach the client as JSON-RPC errors.

use agent_client_protocol::{Error, ErrorCode};
use hearth_host::HostError;
use serde_json::json;

/// What can fail while serving a request.
#[derive(Debug, thiserror::Error)]
pub enum AcpServerError {
    /// The session id is not a Hearth session URI, or no such session exists.
    #[error("session {id} not found: {reason}")]
    SessionNotFound {
        /// The id the client sent.
        id: String,
        /// Why it was not found.
        reason: String,
    },
    /// The request is well-formed but cannot be served as asked.
    #[error("{0}")]
    Invalid(String),
    /// The host refused or failed.
    #[error(transparent)]
    Host(#[from] HostError),
    /// The approval gate refused or failed.
    #[error(transparent)]
    Tools(#[from] hearth_tools::ToolsError),
    /// The Hearth server the agent speaks to refused or failed.
    #[error("{message}")]
    Server {
        /// How the editor is to take it.
        refusal: Refusal,
        /// What failed, as the server said it.
        message: String,
    },
}

/// How an editor is to take what a Hearth server refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No such session, chat or proposal (or not one the caller may see).
    NotFound,
    /// Not allowed or not possible as asked.
    Invalid,
    /// The chat already runs a turn.
    Busy,
    /// The server or the connection to it failed.
    Failed,
}

/// The crate's result type.
pub type Result<T> = std::result::Result<T, AcpServerError>;

impl AcpServerError {
    /// The JSON-RPC error the client receives.
    pub fn to_rpc(&self) -> Error {
        match self {
            Self::SessionNotFound { id, .. } => {
                Error::new(ErrorCode::RESOURCE_NOT_FOUND, self.to_string())
                    .data(json!({ "sessionId": id }))
            }
            Self::Invalid(_) => Error::new(ErrorCode::INVALID_PARAMS, self.to_string()),
            Self::Host(error) => match error {
                HostError::NotFound { .. } | HostError::Deleted(_) => {
                    Error::new(ErrorCode::RESOURCE_NOT_FOUND, self.to_string())
                }
                HostError::Busy(_) => Error::new(ErrorCode::INVALID_REQUEST, self.to_string()),
                HostError::InvalidInput(_) | HostError::Uri(_) => {
                    Error::new(ErrorCode::INVALID_PARAMS, self.to_string())
                }
                _ => Error::new(ErrorCode::INTERNAL_ERROR, self.to_string()),
            },
            Self::Tools(_) => Error::new(ErrorCode::INTERNAL_ERROR, self.to_string()),
            Self::Server { refusal, .. } => Error::new(
                match refusal {
                    Refusal::NotFound => ErrorCode::RESOURCE_NOT_FOUND,
                    Refusal::Invalid => ErrorCode::INVALID_PARAMS,
                    Refusal::Busy => ErrorCode::INVALID_REQUEST,
                    Refusal::Failed => ErrorCode::INTERNAL_ERROR,
                },
                self.to_string(),
            ),
        }
    }
}

impl From<AcpServerError> for Error {
    fn from(error: AcpServerError) -> Self {
        error.to_rpc()
    }
}
