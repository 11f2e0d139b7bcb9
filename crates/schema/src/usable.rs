//! Whether a tool's input schema is one Hearth can check arguments against.

use serde_json::Value;

const TYPES: [&str; 7] = [
    "object", "array", "string", "number", "integer", "boolean", "null",
];

/// What is wrong with an input schema, or `None` when it is usable: an object schema
/// whose keywords have the shapes JSON Schema gives them (`type` a known type or a list
/// of them, `properties` an object of schemas, `required` a list of names, `items` a
/// schema, `enum` a list, the combinators lists of schemas).
pub fn schema_problem(schema: &Value) -> Option<String> {
    let Some(object) = schema.as_object() else {
        return Some("the input schema is not a JSON object".to_owned());
    };
    match object.get("type") {
        None => {}
        Some(Value::String(kind)) if kind == "object" => {}
        Some(other) => {
            return Some(format!(
                "the input schema's `type` is {other}, but tool arguments are an object"
            ));
        }
    }
    check(schema, "the input schema")
}

fn check(schema: &Value, at: &str) -> Option<String> {
    let object = match schema {
        Value::Bool(_) => return None,
        Value::Object(object) => object,
        other => return Some(format!("{at} is {other}, not a schema")),
    };
    if let Some(kind) = object.get("type") {
        let known = |value: &Value| value.as_str().is_some_and(|name| TYPES.contains(&name));
        let ok = match kind {
            Value::Array(kinds) => !kinds.is_empty() && kinds.iter().all(known),
            single => known(single),
        };
        if !ok {
            return Some(format!(
                "{at} has `type` {kind}, which is not a JSON Schema type"
            ));
        }
    }
    if let Some(properties) = object.get("properties") {
        let Some(properties) = properties.as_object() else {
            return Some(format!("{at} has `properties` that is not an object"));
        };
        for (name, property) in properties {
            if let Some(problem) = check(property, &format!("property `{name}`")) {
                return Some(problem);
            }
        }
    }
    if let Some(required) = object.get("required") {
        let names = required
            .as_array()
            .is_some_and(|names| names.iter().all(Value::is_string));
        if !names {
            return Some(format!("{at} has `required` that is not a list of names"));
        }
    }
    if let Some(values) = object.get("enum")
        && !values.is_array()
    {
        return Some(format!("{at} has `enum` that is not a list"));
    }
    if let Some(items) = object.get("items")
        && let Some(problem) = check(items, &format!("the items of {at}"))
    {
        return Some(problem);
    }
    for combinator in ["anyOf", "oneOf", "allOf"] {
        if let Some(list) = object.get(combinator) {
            let Some(list) = list.as_array() else {
                return Some(format!("{at} has `{combinator}` that is not a list"));
            };
            for (index, member) in list.iter().enumerate() {
                if let Some(problem) = check(member, &format!("{combinator}[{index}] of {at}")) {
                    return Some(problem);
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn usable_and_unusable_schemas() {
        let good = json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}, "b": {"type": "array", "items": {"type": "integer"}}}, "required": ["a"]});
        assert_eq!(schema_problem(&good), None);
        assert_eq!(schema_problem(&json!({})), None);
        let cases = [
            json!("object"),
            json!({"type": "string"}),
            json!({"type": "object", "properties": {"a": {"type": "strin"}}}),
            json!({"type": "object", "properties": []}),
            json!({"type": "object", "required": "a"}),
            json!({"type": "object", "properties": {"a": 3}}),
        ];
        for schema in cases {
            assert!(schema_problem(&schema).is_some(), "{schema}");
        }
    }
}
