//! A tool result as the text the model reads: text as is, images and audio described,
//! resources shown (text) or described (binary), structured content as JSON.

use rmcp::model::CallToolResult;
use serde_json::Value;

/// The most characters of a result passed to the model.
const MAX_RESULT_CHARACTERS: usize = 100_000;

/// The text of a tool result, and whether the server flagged it as an error.
pub fn render_result(result: &CallToolResult) -> (String, bool) {
    let mut parts: Vec<String> = Vec::new();
    for block in &result.content {
        let value = serde_json::to_value(block).unwrap_or(Value::Null);
        parts.push(render_block(&value));
    }
    if let Some(structured) = &result.structured_content {
        let json = serde_json::to_string_pretty(structured).unwrap_or_default();
        // Servers often repeat the structured content as text (FastMCP wraps a plain
        // return value as `{"result": …}`); show it once.
        let joined = parts.join("\n");
        let repeated = parts.iter().any(|part| same_json(part, structured))
            || wrapped_text(structured) == Some(joined.as_str());
        if !repeated {
            parts.push(format!("Structured content:\n{json}"));
        }
    }
    let mut text = parts.join("\n");
    if text.is_empty() {
        text = "(the tool returned no content)".to_owned();
    }
    if text.chars().count() > MAX_RESULT_CHARACTERS {
        text = text.chars().take(MAX_RESULT_CHARACTERS).collect();
        text.push_str("\n[… the result was cut here]");
    }
    (text, result.is_error == Some(true))
}

/// The text of a structured result that only wraps it: `{"result": "<text>"}`.
fn wrapped_text(value: &Value) -> Option<&str> {
    let object = value.as_object()?;
    if object.len() != 1 {
        return None;
    }
    object.get("result")?.as_str()
}

fn same_json(text: &str, value: &Value) -> bool {
    serde_json::from_str::<Value>(text).is_ok_and(|parsed| &parsed == value)
}

fn field<'a>(value: &'a Value, name: &str) -> &'a str {
    value.get(name).and_then(Value::as_str).unwrap_or("")
}

fn approximate_bytes(base64: &str) -> usize {
    base64.len() / 4 * 3
}

fn render_block(block: &Value) -> String {
    match field(block, "type") {
        "text" => field(block, "text").to_owned(),
        "image" => format!(
            "[image: {}, about {} bytes]",
            field(block, "mimeType"),
            approximate_bytes(field(block, "data"))
        ),
        "audio" => format!(
            "[audio: {}, about {} bytes]",
            field(block, "mimeType"),
            approximate_bytes(field(block, "data"))
        ),
        "resource" => {
            let resource = block.get("resource").unwrap_or(&Value::Null);
            let uri = field(resource, "uri");
            match resource.get("text").and_then(Value::as_str) {
                Some(text) => format!("[resource {uri}]\n{text}"),
                None => format!(
                    "[resource {uri}: {}, about {} bytes of binary data]",
                    field(resource, "mimeType"),
                    approximate_bytes(field(resource, "blob"))
                ),
            }
        }
        "resource_link" => {
            let mut line = format!("[resource link {}", field(block, "uri"));
            for key in ["name", "description", "mimeType"] {
                let value = field(block, key);
                if !value.is_empty() {
                    line.push_str(&format!(", {key}: {value}"));
                }
            }
            line.push(']');
            line
        }
        other => format!("[content of type `{other}`: {block}]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn every_kind_of_content_becomes_text() {
        let result: CallToolResult = serde_json::from_value(json!({
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "mimeType": "image/png", "data": "AAAA"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "inside"}},
                {"type": "resource", "resource": {"uri": "file:///b.bin", "mimeType": "application/octet-stream", "blob": "AAAAAAAA"}},
                {"type": "resource_link", "uri": "file:///c", "name": "c"}
            ],
            "structuredContent": {"n": 1},
            "isError": true
        }))
        .unwrap();
        let (text, is_error) = render_result(&result);
        assert!(is_error);
        assert_eq!(
            text,
            "hello\n[image: image/png, about 3 bytes]\n[resource file:///a.txt]\ninside\n[resource file:///b.bin: application/octet-stream, about 6 bytes of binary data]\n[resource link file:///c, name: c]\nStructured content:\n{\n  \"n\": 1\n}"
        );
    }

    #[test]
    fn structured_content_repeated_as_text_is_shown_once() {
        let result: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "{\"n\": 1}"}],
            "structuredContent": {"n": 1}
        }))
        .unwrap();
        assert_eq!(render_result(&result), ("{\"n\": 1}".to_owned(), false));
        let wrapped: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "done"}],
            "structuredContent": {"result": "done"}
        }))
        .unwrap();
        assert_eq!(render_result(&wrapped), ("done".to_owned(), false));
        let different: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "done"}],
            "structuredContent": {"result": "other"}
        }))
        .unwrap();
        assert!(render_result(&different).0.contains("other"));
    }
}
