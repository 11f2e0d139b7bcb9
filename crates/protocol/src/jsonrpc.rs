//! JSON-RPC 2.0 framing: requests, notifications, responses, and the one parser both
//! sides use for what they receive.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::error::{ErrorKind, RpcError};

/// The `"jsonrpc": "2.0"` member.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Version;

impl Serialize for Version {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str("2.0")
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = Cow::<'de, str>::deserialize(deserializer)?;
        if text == "2.0" {
            Ok(Self)
        } else {
            Err(serde::de::Error::custom(format!(
                "unsupported JSON-RPC version `{text}`; expected \"2.0\""
            )))
        }
    }
}

impl JsonSchema for Version {
    fn schema_name() -> Cow<'static, str> {
        "JsonRpcVersion".into()
    }

    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "const": "2.0" })
    }
}

/// A request id: a number or a string, chosen by the client and echoed in the response.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum RequestId {
    /// A number.
    Number(i64),
    /// A string.
    String(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Number(number) => number.fmt(f),
            Self::String(text) => text.fmt(f),
        }
    }
}

/// A request: a method call that gets exactly one response with the same id.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request<P = Value> {
    /// Always `"2.0"`.
    pub jsonrpc: Version,
    /// Echoed in the response.
    pub id: RequestId,
    /// `<resource>/<method>`.
    pub method: String,
    /// The method's `*Params`.
    pub params: P,
}

/// A notification: a message that gets no response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Notification<P = Value> {
    /// Always `"2.0"`.
    pub jsonrpc: Version,
    /// `<resource>/<event>`.
    pub method: String,
    /// The notification's `*Notification` payload.
    pub params: P,
}

/// A successful response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Response<R = Value> {
    /// Always `"2.0"`.
    pub jsonrpc: Version,
    /// The request's id.
    pub id: RequestId,
    /// The method's `*Response`.
    pub result: R,
}

/// A failed response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorResponse {
    /// Always `"2.0"`.
    pub jsonrpc: Version,
    /// The request's id; `null` when the request could not be read.
    pub id: Option<RequestId>,
    /// What failed.
    pub error: RpcError,
}

/// Any JSON-RPC message, classified.
#[derive(Clone, Debug, PartialEq)]
pub enum Incoming {
    /// A request (has an id and a method).
    Request {
        /// Its id.
        id: RequestId,
        /// Its method.
        method: String,
        /// Its parameters; `null` when absent.
        params: Value,
    },
    /// A notification (a method without an id).
    Notification {
        /// Its method.
        method: String,
        /// Its parameters; `null` when absent.
        params: Value,
    },
    /// A successful response.
    Response {
        /// The request's id.
        id: RequestId,
        /// The result.
        result: Value,
    },
    /// A failed response.
    Error {
        /// The request's id, if the other side could read it.
        id: Option<RequestId>,
        /// The error.
        error: RpcError,
    },
}

#[derive(Deserialize)]
struct RawMessage {
    jsonrpc: Option<String>,
    #[serde(default)]
    id: Option<RequestId>,
    method: Option<String>,
    #[serde(default)]
    params: Value,
    result: Option<Value>,
    error: Option<RpcError>,
}

impl Incoming {
    /// Reads one message. A message that is not JSON, a batch (Hearth answers one
    /// request per message), not an object of JSON-RPC 2.0, or of no known shape is an
    /// error ready to be sent back.
    pub fn parse(text: &str) -> Result<Self, RpcError> {
        let value: Value = serde_json::from_str(text).map_err(|error| {
            let kind = if error.is_syntax() || error.is_eof() {
                ErrorKind::ParseError
            } else {
                ErrorKind::InvalidRequest
            };
            RpcError::new(kind, format!("cannot read the message: {error}"), false)
        })?;
        // Decided on the parsed value: serde would read an array as a struct's fields.
        match &value {
            Value::Object(_) => {}
            Value::Array(_) => {
                return Err(RpcError::new(
                    ErrorKind::InvalidRequest,
                    "batches are not supported: send one request per message",
                    false,
                ));
            }
            _ => {
                return Err(RpcError::new(
                    ErrorKind::InvalidRequest,
                    "the message is not a JSON object; send one JSON-RPC 2.0 request object per message",
                    false,
                ));
            }
        }
        let raw = RawMessage::deserialize(value).map_err(|error| {
            RpcError::new(
                ErrorKind::InvalidRequest,
                format!("cannot read the message: {error}"),
                false,
            )
        })?;
        if raw.jsonrpc.as_deref() != Some("2.0") {
            return Err(RpcError::new(
                ErrorKind::InvalidRequest,
                "the message is not JSON-RPC 2.0 (expected \"jsonrpc\": \"2.0\")",
                false,
            ));
        }
        match (raw.id, raw.method, raw.result, raw.error) {
            (Some(id), Some(method), None, None) => Ok(Self::Request {
                id,
                method,
                params: raw.params,
            }),
            (None, Some(method), None, None) => Ok(Self::Notification {
                method,
                params: raw.params,
            }),
            (Some(id), None, Some(result), None) => Ok(Self::Response { id, result }),
            (id, None, None, Some(error)) => Ok(Self::Error { id, error }),
            _ => Err(RpcError::new(
                ErrorKind::InvalidRequest,
                "the message is neither a request, a notification nor a response",
                false,
            )),
        }
    }
}

/// Serializes a request.
pub fn request_text<P: Serialize>(
    id: RequestId,
    method: &str,
    params: &P,
) -> serde_json::Result<String> {
    serde_json::to_string(&Request {
        jsonrpc: Version,
        id,
        method: method.to_owned(),
        params,
    })
}

/// Serializes a notification.
pub fn notification_text<P: Serialize>(method: &str, params: &P) -> serde_json::Result<String> {
    serde_json::to_string(&Notification {
        jsonrpc: Version,
        method: method.to_owned(),
        params,
    })
}

/// Serializes a successful response.
pub fn response_text<R: Serialize>(id: RequestId, result: &R) -> serde_json::Result<String> {
    serde_json::to_string(&Response {
        jsonrpc: Version,
        id,
        result,
    })
}

/// Serializes a failed response. Cannot fail: an error object is plain data.
pub fn error_text(id: Option<RequestId>, error: RpcError) -> String {
    let response = ErrorResponse {
        jsonrpc: Version,
        id,
        error,
    };
    serde_json::to_string(&response).unwrap_or_else(|_| {
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}"#
            .to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn messages_are_classified() {
        assert_eq!(
            Incoming::parse(r#"{"jsonrpc":"2.0","id":1,"method":"session/list"}"#).unwrap(),
            Incoming::Request {
                id: RequestId::Number(1),
                method: "session/list".into(),
                params: Value::Null
            }
        );
        assert_eq!(
            Incoming::parse(r#"{"jsonrpc":"2.0","method":"x","params":{"a":1}}"#).unwrap(),
            Incoming::Notification {
                method: "x".into(),
                params: serde_json::json!({"a": 1})
            }
        );
        assert_eq!(
            Incoming::parse(r#"{"jsonrpc":"2.0","id":"a","result":{}}"#).unwrap(),
            Incoming::Response {
                id: RequestId::String("a".into()),
                result: serde_json::json!({})
            }
        );
        let error = Incoming::parse("{not json").unwrap_err();
        assert_eq!(error.kind(), ErrorKind::ParseError);
        let error = Incoming::parse(r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidRequest);
        let error = Incoming::parse(r#"[1,2]"#).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidRequest);
        let error = Incoming::parse("42").unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidRequest);
    }

    #[test]
    fn a_batch_is_refused_as_one_invalid_request() {
        for batch in [
            r#"[{"jsonrpc":"2.0","id":1,"method":"session/list"}]"#,
            // Would read as a request if an array were taken for a struct's fields.
            r#"["2.0", 1, "session/list"]"#,
            "[]",
        ] {
            let error = Incoming::parse(batch).unwrap_err();
            assert_eq!(error.kind(), ErrorKind::InvalidRequest, "{batch}");
            assert_eq!(
                error.message, "batches are not supported: send one request per message",
                "{batch}"
            );
        }
    }

    #[test]
    fn responses_serialize_as_json_rpc() {
        let text = response_text(RequestId::Number(7), &serde_json::json!({"ok": true})).unwrap();
        assert_eq!(text, r#"{"jsonrpc":"2.0","id":7,"result":{"ok":true}}"#);
        let text = error_text(None, RpcError::new(ErrorKind::ParseError, "bad", false));
        assert!(text.starts_with(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700"#));
    }
}
