//! Repair of the JSON models write: Markdown fences and surrounding prose stripped, then
//! trailing commas, single quotes, unquoted keys, Python literals, comments and
//! truncated strings, arrays and objects fixed. Valid JSON is returned unchanged.

use std::panic::{AssertUnwindSafe, catch_unwind};

use serde_json::Value;

/// Inputs longer than this are not repaired (the repairer is not linear on all inputs).
const MAX_REPAIR_BYTES: usize = 1024 * 1024;
/// Deeper nesting is not repaired (the repairer recurses).
const MAX_DEPTH: usize = 100;

/// A parsed value and whether it needed repair.
#[derive(Clone, Debug, PartialEq)]
pub struct Repaired {
    /// The value.
    pub value: Value,
    /// Whether the text was not valid JSON as given.
    pub repaired: bool,
}

/// Parses `text` as JSON, repairing it when needed. `None` when no JSON can be made of it.
pub fn repair_json(text: &str) -> Option<Repaired> {
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        return Some(Repaired {
            value,
            repaired: false,
        });
    }
    let candidate = extract_json(text);
    if candidate.is_empty() {
        return None;
    }
    if let Ok(value) = serde_json::from_str::<Value>(candidate) {
        return Some(Repaired {
            value,
            repaired: true,
        });
    }
    if candidate.len() > MAX_REPAIR_BYTES || nesting_depth(candidate) > MAX_DEPTH {
        return None;
    }
    let options = llm_json::RepairOptions {
        ensure_ascii: false,
        ..llm_json::RepairOptions::default()
    };
    // The repairer is third-party code run on model output: a panic in it must not take
    // the agent down.
    let repaired = catch_unwind(AssertUnwindSafe(|| llm_json::loads(candidate, &options)));
    match repaired {
        Ok(Ok(value)) => Some(Repaired {
            value,
            repaired: true,
        }),
        Ok(Err(error)) => {
            tracing::debug!("JSON repair failed: {error}");
            None
        }
        Err(_) => {
            tracing::warn!(
                "the JSON repairer panicked on model output; treating it as unrepairable"
            );
            None
        }
    }
}

/// The JSON part of `text`: the inside of the first Markdown code fence if any, then
/// from the first `{` or `[` to where that value closes (or to the end when truncated).
pub fn extract_json(text: &str) -> &str {
    // A fence counts only when it opens before the JSON does (backticks inside a JSON
    // string are content).
    let fenced = match (text.find("```"), text.find(['{', '['])) {
        (Some(fence), Some(start)) => fence < start,
        (Some(_), None) => true,
        (None, _) => false,
    };
    let text = if fenced { strip_fence(text) } else { text }.trim();
    let Some(start) = text.find(['{', '[']) else {
        return text;
    };
    let body = &text[start..];
    match closing_position(body) {
        Some(end) => &body[..=end],
        None => body,
    }
}

fn strip_fence(text: &str) -> &str {
    let Some(open) = text.find("```") else {
        return text;
    };
    let after = &text[open + 3..];
    // Skip the info string (`json`, `JSON5`, ...) up to the end of the line.
    let content = match after.find('\n') {
        Some(newline)
            if after[..newline]
                .trim()
                .chars()
                .all(|c| c.is_ascii_alphanumeric()) =>
        {
            &after[newline + 1..]
        }
        _ => after,
    };
    match content.find("```") {
        Some(close) => &content[..close],
        None => content,
    }
}

/// Byte position of the bracket closing the value that opens at position 0.
fn closing_position(body: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<u8> = None;
    let mut escaped = false;
    for (position, byte) in body.bytes().enumerate() {
        if let Some(open) = quote {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == open {
                quote = None;
            }
            continue;
        }
        match byte {
            b'"' | b'\'' => quote = Some(byte),
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(position);
                }
            }
            _ => {}
        }
    }
    None
}

fn nesting_depth(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for byte in text.bytes() {
        match byte {
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;
    use serde_json::json;

    fn repaired(text: &str) -> Value {
        let result = repair_json(text).unwrap_or_else(|| panic!("not repaired: {text}"));
        assert!(result.repaired, "{text}");
        result.value
    }

    #[test]
    fn fences_and_prose_are_stripped() {
        assert_eq!(
            repaired(
                "Sure! Here are the arguments:\n```json\n{\"city\": \"Paris\"}\n```\nLet me know."
            ),
            json!({"city": "Paris"})
        );
        assert_eq!(repaired("```\n[1, 2]\n```"), json!([1, 2]));
        assert_eq!(
            repaired("The call is {\"a\": {\"b\": 1}} as requested."),
            json!({"a": {"b": 1}})
        );
    }

    #[test]
    fn backticks_inside_json_are_not_a_fence() {
        assert_eq!(
            repaired(r#"{"v": [{"```": null"#),
            json!({"v": [{"```": null}]})
        );
    }

    #[test]
    fn common_model_mistakes_are_repaired() {
        assert_eq!(
            repaired(r#"{"a": 1, "b": [1, 2,],}"#),
            json!({"a": 1, "b": [1, 2]})
        );
        assert_eq!(
            repaired("{'name': 'Ann', 'note': 'say \"hi\"'}"),
            json!({"name": "Ann", "note": "say \"hi\""})
        );
        assert_eq!(
            repaired("{name: \"Ann\", age: 3}"),
            json!({"name": "Ann", "age": 3})
        );
        assert_eq!(
            repaired("{\"a\": True, \"b\": False, \"c\": None}"),
            json!({"a": true, "b": false, "c": null})
        );
        assert_eq!(
            repaired("{\"a\": 1, // one\n \"b\": /* two */ 2}"),
            json!({"a": 1, "b": 2})
        );
        assert_eq!(repaired("{\"emoji\": '😀 é'}"), json!({"emoji": "😀 é"}));
    }

    #[test]
    fn truncated_values_are_closed() {
        assert_eq!(repaired(r#"{"city": "Par"#), json!({"city": "Par"}));
        assert_eq!(repaired(r#"{"days": [1, 2"#), json!({"days": [1, 2]}));
        assert_eq!(
            repaired(r#"{"event": {"title": "Lunch", "at": {"h": 12"#),
            json!({"event": {"title": "Lunch", "at": {"h": 12}}})
        );
    }

    #[test]
    fn hopeless_input_is_refused_without_panicking() {
        assert_eq!(repair_json(""), None);
        assert!(repair_json(&"[".repeat(10_000)).is_none());
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| json!(f)),
            ".*".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 64, 8, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
                proptest::collection::btree_map(".*", inner, 0..8)
                    .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    fn has_float(value: &Value) -> bool {
        match value {
            Value::Number(number) => number.is_f64(),
            Value::Array(items) => items.iter().any(has_float),
            Value::Object(map) => map.values().any(has_float),
            _ => false,
        }
    }

    proptest! {
        #[test]
        fn valid_json_passes_unchanged(value in json_value(), pretty in any::<bool>()) {
            let text = if pretty {
                serde_json::to_string_pretty(&value).unwrap()
            } else {
                serde_json::to_string(&value).unwrap()
            };
            // "Unchanged" is what a plain parse gives (serde_json may round a float's last
            // digit on its own; that is not the repairer's doing).
            let parsed: Value = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(repair_json(&text), Some(Repaired { value: parsed.clone(), repaired: false }));
            if !has_float(&value) {
                prop_assert_eq!(parsed, value);
            }
        }

        #[test]
        fn repair_never_panics(text in ".{0,300}") {
            repair_json(&text);
        }

        #[test]
        fn repair_never_panics_on_json_like_text(
            text in proptest::collection::vec(
                prop_oneof![
                    Just("{"), Just("}"), Just("["), Just("]"), Just("\""), Just("'"),
                    Just(":"), Just(","), Just("\\"), Just("//"), Just("/*"), Just("*/"),
                    Just("```json\n"), Just("```"), Just("True"), Just("None"), Just("key"),
                    Just(" "), Just("\n"), Just("1"), Just("-"), Just("."), Just("e"), Just("é😀"),
                ],
                0..60,
            ).prop_map(|parts| parts.concat())
        ) {
            repair_json(&text);
        }

        #[test]
        fn truncated_json_objects_repair_to_objects(value in json_value(), cut in 0.0f64..1.0) {
            let text = serde_json::to_string(&json!({"v": value})).unwrap();
            let mut end = ((text.len() as f64) * cut) as usize;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            if let Some(result) = repair_json(&text[..end.max(1)]) {
                prop_assert!(result.value.is_object(), "{}", &text[..end.max(1)]);
            }
        }
    }
}
