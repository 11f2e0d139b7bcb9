//! How failures are worded: provider error bodies of every common shape, error chains,
//! and short quotes of provider output.

use std::error::Error as _;

use serde_json::Value;

/// (message, type, code) from an error body: `{"error": {...}}`, `{"error": "..."}`,
/// `{"message": ...}`, `{"detail": ...}`.
pub(crate) fn describe_error_value(value: &Value) -> (String, Option<String>, Option<String>) {
    let text = |value: Option<&Value>| match value {
        Some(Value::String(text)) => Some(text.clone()),
        Some(Value::Number(number)) => Some(number.to_string()),
        _ => None,
    };
    let inner = match value.get("error") {
        Some(inner @ Value::Object(_)) => inner,
        Some(Value::String(message)) => {
            return (
                message.clone(),
                text(value.get("type")),
                text(value.get("code")),
            );
        }
        _ => value,
    };
    let message = text(inner.get("message"))
        .or_else(|| text(inner.get("detail")))
        .or_else(|| inner.get("detail").map(Value::to_string))
        .unwrap_or_else(|| value.to_string());
    (message, text(inner.get("type")), text(inner.get("code")))
}

/// An error and its sources, joined: `error sending request: connection refused`.
pub(crate) fn error_chain(error: &reqwest::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}

pub(crate) fn truncate(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// A short quote of provider output for error messages.
pub(crate) fn excerpt(text: &str) -> String {
    format!("`{}`", truncate(text.trim(), 200))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn error_bodies_of_every_common_shape() {
        let describe = |value: Value| describe_error_value(&value);
        assert_eq!(
            describe(
                json!({"error": {"message": "bad key", "type": "invalid_request_error", "code": "invalid_api_key"}})
            ),
            (
                "bad key".into(),
                Some("invalid_request_error".into()),
                Some("invalid_api_key".into())
            )
        );
        assert_eq!(
            describe(
                json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
            ),
            ("Overloaded".into(), Some("overloaded_error".into()), None)
        );
        assert_eq!(
            describe(json!({"error": "model 'x' not found"})),
            ("model 'x' not found".into(), None, None)
        );
        assert_eq!(
            describe(json!({"detail": "Not Found"})),
            ("Not Found".into(), None, None)
        );
        assert_eq!(
            describe(json!({"detail": [{"msg": "field required"}]})),
            (r#"[{"msg":"field required"}]"#.into(), None, None)
        );
        assert_eq!(
            describe(json!({"error": {"message": "x", "code": 429}})),
            ("x".into(), None, Some("429".into()))
        );
    }

    #[test]
    fn truncation_respects_char_boundaries() {
        assert_eq!(truncate("héllo", 2), "hé…");
        assert_eq!(truncate("hi", 2), "hi");
    }
}
