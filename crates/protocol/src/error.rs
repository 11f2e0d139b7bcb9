//! Protocol errors: wire values that do not make domain values, and the error object of
//! a JSON-RPC response with its structured data.

use hearth_core::UriError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// A wire value that cannot become a domain value.
#[derive(Debug, Error)]
pub enum ProtocolError {
    /// A URI or id field does not parse.
    #[error("`{field}`: {source}")]
    Uri {
        /// The field (camelCase, as on the wire).
        field: &'static str,
        /// Why it does not parse.
        source: UriError,
    },
    /// A field has a value of the right type but the wrong shape.
    #[error("`{field}`: {message}")]
    Invalid {
        /// The field (camelCase, as on the wire).
        field: &'static str,
        /// What is wrong and what is expected.
        message: String,
    },
    /// A message is not JSON of the expected shape.
    #[error("malformed message: {0}")]
    Json(#[from] serde_json::Error),
}

/// Result of a protocol conversion.
pub type Result<T> = std::result::Result<T, ProtocolError>;

/// What kind of failure an error response reports. Clients branch on this, never on the
/// message text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ErrorKind {
    /// The message is not JSON.
    ParseError,
    /// The message is JSON but not a JSON-RPC 2.0 request.
    InvalidRequest,
    /// No such method.
    MethodNotFound,
    /// The parameters do not fit the method (shape, URIs, ids, values).
    InvalidParams,
    /// `initialize` must be the first request of a connection.
    NotInitialized,
    /// The session, chat, turn, proposal or resource does not exist.
    NotFound,
    /// The session was deleted.
    Gone,
    /// The harness or server does not offer the operation.
    Unsupported,
    /// The chat already runs a turn.
    Busy,
    /// The state changed since the client looked (e.g. a proposal was decided already).
    Conflict,
    /// The model provider or external agent failed.
    Provider,
    /// A part of Hearth the method needs is not available in this server.
    Unavailable,
    /// The server is shutting down.
    ShuttingDown,
    /// On a team server: the caller may not do this (only the operator may, or it needs
    /// a role the caller lacks).
    Forbidden,
    /// Anything else: a bug or a failure of the machine (disk, database).
    Internal,
}

impl ErrorKind {
    /// The JSON-RPC error code of this kind: the reserved codes for the JSON-RPC
    /// failures, `-32000` and below for Hearth's own.
    pub fn code(self) -> i64 {
        match self {
            Self::ParseError => -32700,
            Self::InvalidRequest => -32600,
            Self::MethodNotFound => -32601,
            Self::InvalidParams => -32602,
            Self::Internal => -32603,
            Self::NotInitialized => -32002,
            Self::NotFound => -32004,
            Self::Unsupported => -32005,
            Self::Conflict => -32008,
            Self::Busy => -32009,
            Self::Gone => -32010,
            Self::Provider => -32011,
            Self::Unavailable => -32012,
            Self::ShuttingDown => -32013,
            Self::Forbidden => -32014,
        }
    }
}

/// The structured part of an error response.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorData {
    /// The class of failure.
    pub kind: ErrorKind,
    /// What failed, on what, and what to do (the same text as the error's message).
    pub message: String,
    /// Whether sending the same request again may succeed.
    pub retryable: bool,
}

/// The `error` member of a JSON-RPC response.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Error)]
#[serde(rename_all = "camelCase")]
#[error("{message}")]
pub struct RpcError {
    /// JSON-RPC error code (see [`ErrorKind::code`]).
    pub code: i64,
    /// What failed, on what, and what to do.
    pub message: String,
    /// Structured details. Always present in errors from Hearth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<ErrorData>,
}

impl RpcError {
    /// An error of a kind, with its code and data.
    pub fn new(kind: ErrorKind, message: impl Into<String>, retryable: bool) -> Self {
        let message = message.into();
        Self {
            code: kind.code(),
            data: Some(ErrorData {
                kind,
                message: message.clone(),
                retryable,
            }),
            message,
        }
    }

    /// The kind, from the data or, failing that, from the code.
    pub fn kind(&self) -> ErrorKind {
        if let Some(data) = &self.data {
            return data.kind;
        }
        match self.code {
            -32700 => ErrorKind::ParseError,
            -32600 => ErrorKind::InvalidRequest,
            -32601 => ErrorKind::MethodNotFound,
            -32602 => ErrorKind::InvalidParams,
            _ => ErrorKind::Internal,
        }
    }

    /// Whether sending the same request again may succeed.
    pub fn is_retryable(&self) -> bool {
        self.data.as_ref().is_some_and(|data| data.retryable)
    }
}

impl From<&ProtocolError> for RpcError {
    fn from(error: &ProtocolError) -> Self {
        Self::new(ErrorKind::InvalidParams, error.to_string(), false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn errors_carry_kind_message_and_retryability() {
        let error = RpcError::new(ErrorKind::Busy, "chat is busy", true);
        assert_eq!(
            serde_json::to_value(&error).unwrap(),
            serde_json::json!({
                "code": -32009,
                "message": "chat is busy",
                "data": {"kind": "busy", "message": "chat is busy", "retryable": true}
            })
        );
        assert_eq!(error.kind(), ErrorKind::Busy);
        assert!(error.is_retryable());
    }
}
