//! Tool arguments as models send them, made usable: repaired, checked against the tool's
//! JSON Schema, and when that fails, an error message the model can act on.

use serde_json::{Map, Value};

use crate::diagnostics::truncate;
use crate::error::ToolArgumentsError;
use crate::repair::repair_json;
use crate::request::ToolSpec;
use hearth_schema::validate;

/// Longest schema quoted back to the model in an error.
const MAX_QUOTED_SCHEMA: usize = 4000;

/// Arguments ready for the tool.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolArguments {
    /// The arguments object.
    pub value: Value,
    /// Whether the text needed repair (worth a debug log, not an error).
    pub repaired: bool,
}

/// Reads the raw arguments of a call to `tool`: empty text is `{}`; a JSON object
/// encoded as a string is unwrapped; anything else is repaired if needed and checked
/// against the tool's schema.
pub fn parse_tool_arguments(
    tool: &ToolSpec,
    raw: &str,
) -> Result<ToolArguments, ToolArgumentsError> {
    if raw.trim().is_empty() {
        return checked(tool, Value::Object(Map::new()), false);
    }
    let Some(parsed) = repair_json(raw) else {
        return Err(error(
            tool,
            vec![format!(
                "the arguments are not JSON and could not be repaired: `{}`",
                truncate(raw.trim(), 300)
            )],
        ));
    };
    let mut repaired = parsed.repaired;
    let value = match parsed.value {
        Value::Null => Value::Object(Map::new()),
        Value::String(inner) => match repair_json(&inner) {
            Some(inner) if inner.value.is_object() => {
                repaired = true;
                inner.value
            }
            _ => Value::String(inner),
        },
        other => other,
    };
    // Prose before the object can hold brackets of its own ("call [1/2]: {…}"): an
    // object further on is what was meant.
    let value = match raw.find('{') {
        Some(at) if !value.is_object() && at > 0 && parsed.repaired => {
            match repair_json(&raw[at..]) {
                Some(object) if object.value.is_object() => {
                    repaired = true;
                    object.value
                }
                _ => value,
            }
        }
        _ => value,
    };
    if !value.is_object() {
        return Err(error(
            tool,
            vec![format!(
                "the arguments must be one JSON object with named parameters, got `{}`",
                truncate(&value.to_string(), 300)
            )],
        ));
    }
    checked(tool, value, repaired)
}

fn checked(
    tool: &ToolSpec,
    value: Value,
    repaired: bool,
) -> Result<ToolArguments, ToolArgumentsError> {
    let violations = validate(&tool.parameters, &value);
    if violations.is_empty() {
        return Ok(ToolArguments { value, repaired });
    }
    Err(error(
        tool,
        violations.iter().map(ToString::to_string).collect(),
    ))
}

fn error(tool: &ToolSpec, problems: Vec<String>) -> ToolArgumentsError {
    let mut message = format!("The arguments for tool `{}` are invalid:\n", tool.name);
    for problem in &problems {
        message.push_str("- ");
        message.push_str(problem);
        message.push('\n');
    }
    message.push_str(&format!(
        "Call `{}` again with one JSON object that fixes these problems.",
        tool.name
    ));
    let schema = tool.parameters.to_string();
    if !tool.parameters.is_null() && schema.len() <= MAX_QUOTED_SCHEMA {
        message.push_str(&format!(" Its parameters schema is: {schema}"));
    }
    ToolArgumentsError {
        tool: tool.name.clone(),
        problems,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn weather() -> ToolSpec {
        ToolSpec::new(
            "weather",
            "Weather for a city",
            json!({
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
                "additionalProperties": false,
            }),
        )
    }

    #[test]
    fn valid_arguments_pass_unchanged() {
        assert_eq!(
            parse_tool_arguments(&weather(), r#"{"city": "Oslo", "days": 2}"#).unwrap(),
            ToolArguments {
                value: json!({"city": "Oslo", "days": 2}),
                repaired: false,
            }
        );
    }

    #[test]
    fn truncated_fenced_and_double_encoded_arguments_are_repaired() {
        for raw in [
            r#"{"city": "Oslo"#,
            "```json\n{'city': 'Oslo',}\n```",
            r#""{\"city\": \"Oslo\"}""#,
            r#"call [1/1]: {"city": "Oslo"}"#,
            r#"Here you go (see [docs]): {"city": "Oslo"} — done"#,
        ] {
            assert_eq!(
                parse_tool_arguments(&weather(), raw).unwrap(),
                ToolArguments {
                    value: json!({"city": "Oslo"}),
                    repaired: true,
                },
                "{raw}"
            );
        }
    }

    #[test]
    fn empty_arguments_are_an_empty_object() {
        let no_parameters = ToolSpec::new("now", "The time", json!({"type": "object"}));
        assert_eq!(
            parse_tool_arguments(&no_parameters, "  ").unwrap().value,
            json!({})
        );
    }

    #[test]
    fn schema_violations_give_the_model_a_way_forward() {
        let error = parse_tool_arguments(&weather(), r#"{"town": "Oslo"}"#).unwrap_err();
        assert_eq!(
            error.problems,
            vec![
                "arguments: missing required property `city`".to_owned(),
                "arguments: unknown property `town` (allowed: `city`, `days`)".to_owned(),
            ]
        );
        assert_eq!(
            error.message,
            "The arguments for tool `weather` are invalid:\n\
             - arguments: missing required property `city`\n\
             - arguments: unknown property `town` (allowed: `city`, `days`)\n\
             Call `weather` again with one JSON object that fixes these problems. Its parameters schema is: \
             {\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"},\"days\":{\"type\":\"integer\"}},\"required\":[\"city\"],\"additionalProperties\":false}"
        );
    }

    #[test]
    fn non_objects_are_refused() {
        // Valid JSON that is not an object is refused as it is, never mined for an object.
        let nested = parse_tool_arguments(&weather(), r#"[1, {"city": "Oslo"}]"#).unwrap_err();
        assert!(
            nested.problems[0].contains("must be one JSON object"),
            "{nested:?}"
        );
        let error = parse_tool_arguments(&weather(), "[1, 2]").unwrap_err();
        assert_eq!(
            error.problems,
            vec![
                "the arguments must be one JSON object with named parameters, got `[1,2]`"
                    .to_owned()
            ]
        );
    }
}
