//! A validator for the JSON Schema subset tool parameters use: `type` (one or several),
//! `enum`, `const`, `properties`, `required`, `additionalProperties`, `items`,
//! `prefixItems`, `minItems`/`maxItems`, `uniqueItems`, `minLength`/`maxLength`,
//! `minimum`/`maximum` and their exclusive forms, `anyOf`/`oneOf`/`allOf`/`not`, local
//! `$ref` (`#/$defs/...`, `#/definitions/...`), `nullable`, and the `date-time` and
//! `date` formats. Other keywords are ignored, so an unknown schema never rejects.

use std::fmt;

use serde_json::{Map, Value};

/// Nesting of `$ref`s and sub-schemas followed before giving up (recursive schemas).
const MAX_DEPTH: usize = 64;

/// One way a value fails its schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaViolation {
    /// Where, as `arguments.event.attendees[0]`.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SchemaViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Checks `value` against `schema`; empty when it conforms.
pub fn validate(schema: &Value, value: &Value) -> Vec<SchemaViolation> {
    let mut violations = Vec::new();
    Validator { root: schema }.check(schema, value, "arguments", 0, &mut violations);
    violations
}

struct Validator<'a> {
    root: &'a Value,
}

impl<'a> Validator<'a> {
    fn check(
        &self,
        schema: &'a Value,
        value: &Value,
        path: &str,
        depth: usize,
        out: &mut Vec<SchemaViolation>,
    ) {
        if depth > MAX_DEPTH {
            return;
        }
        let schema = match schema {
            Value::Bool(true) => return,
            Value::Bool(false) => {
                out.push(violation(path, "no value is allowed here"));
                return;
            }
            Value::Object(schema) => schema,
            _ => return,
        };
        if let Some(target) = schema.get("$ref").and_then(Value::as_str)
            && let Some(resolved) = self.resolve(target)
        {
            self.check(resolved, value, path, depth + 1, out);
        }
        if value.is_null() && schema.get("nullable") == Some(&Value::Bool(true)) {
            return;
        }
        if let Some(expected) = schema.get("type")
            && !type_matches(expected, value)
        {
            out.push(violation(
                path,
                &format!("expected {}, got {}", type_words(expected), describe(value)),
            ));
            return;
        }
        if let Some(Value::Array(allowed)) = schema.get("enum")
            && !allowed.contains(value)
        {
            let choices: Vec<String> = allowed.iter().map(Value::to_string).collect();
            out.push(violation(
                path,
                &format!(
                    "must be one of {}, got {}",
                    choices.join(", "),
                    describe(value)
                ),
            ));
        }
        if let Some(constant) = schema.get("const")
            && constant != value
        {
            out.push(violation(
                path,
                &format!("must be {constant}, got {}", describe(value)),
            ));
        }
        match value {
            Value::String(text) => check_string(schema, text, path, out),
            Value::Number(_) => check_number(schema, value, path, out),
            Value::Array(items) => self.check_array(schema, items, path, depth, out),
            Value::Object(map) => self.check_object(schema, map, path, depth, out),
            Value::Null | Value::Bool(_) => {}
        }
        self.check_combinators(schema, value, path, depth, out);
    }

    fn resolve(&self, target: &str) -> Option<&'a Value> {
        let pointer = target.strip_prefix('#')?;
        self.root.pointer(pointer)
    }

    fn check_array(
        &self,
        schema: &'a Map<String, Value>,
        items: &[Value],
        path: &str,
        depth: usize,
        out: &mut Vec<SchemaViolation>,
    ) {
        if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
            && (items.len() as u64) < min
        {
            out.push(violation(
                path,
                &format!("needs at least {min} item(s), got {}", items.len()),
            ));
        }
        if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
            && (items.len() as u64) > max
        {
            out.push(violation(
                path,
                &format!("allows at most {max} item(s), got {}", items.len()),
            ));
        }
        if schema.get("uniqueItems") == Some(&Value::Bool(true)) {
            let duplicate = items
                .iter()
                .enumerate()
                .any(|(i, item)| items[..i].contains(item));
            if duplicate {
                out.push(violation(path, "items must be unique"));
            }
        }
        let prefix = schema.get("prefixItems").and_then(Value::as_array);
        let prefix_len = prefix.map_or(0, Vec::len);
        for (index, item) in items.iter().enumerate() {
            let item_path = format!("{path}[{index}]");
            let item_schema = match prefix.and_then(|prefix| prefix.get(index)) {
                Some(schema) => Some(schema),
                None if index >= prefix_len => {
                    schema.get("items").filter(|items| !items.is_array())
                }
                None => None,
            };
            if let Some(item_schema) = item_schema {
                self.check(item_schema, item, &item_path, depth + 1, out);
            }
        }
    }

    fn check_object(
        &self,
        schema: &'a Map<String, Value>,
        map: &Map<String, Value>,
        path: &str,
        depth: usize,
        out: &mut Vec<SchemaViolation>,
    ) {
        let properties = schema.get("properties").and_then(Value::as_object);
        if let Some(required) = schema.get("required").and_then(Value::as_array) {
            for name in required.iter().filter_map(Value::as_str) {
                if !map.contains_key(name) {
                    out.push(violation(
                        path,
                        &format!("missing required property `{name}`"),
                    ));
                }
            }
        }
        for (name, item) in map {
            let item_path = format!("{path}.{name}");
            match properties.and_then(|properties| properties.get(name)) {
                Some(property) => self.check(property, item, &item_path, depth + 1, out),
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => {
                        let known: Vec<String> = properties
                            .map(|properties| {
                                properties.keys().map(|key| format!("`{key}`")).collect()
                            })
                            .unwrap_or_default();
                        let hint = if known.is_empty() {
                            "no properties are allowed".to_owned()
                        } else {
                            format!("allowed: {}", known.join(", "))
                        };
                        out.push(violation(
                            path,
                            &format!("unknown property `{name}` ({hint})"),
                        ));
                    }
                    Some(extra @ Value::Object(_)) => {
                        self.check(extra, item, &item_path, depth + 1, out)
                    }
                    _ => {}
                },
            }
        }
    }

    fn check_combinators(
        &self,
        schema: &'a Map<String, Value>,
        value: &Value,
        path: &str,
        depth: usize,
        out: &mut Vec<SchemaViolation>,
    ) {
        if let Some(Value::Array(all)) = schema.get("allOf") {
            for sub in all {
                self.check(sub, value, path, depth + 1, out);
            }
        }
        for (keyword, exactly_one) in [("anyOf", false), ("oneOf", true)] {
            let Some(Value::Array(alternatives)) = schema.get(keyword) else {
                continue;
            };
            if alternatives.is_empty() {
                continue;
            }
            let results: Vec<Vec<SchemaViolation>> = alternatives
                .iter()
                .map(|sub| {
                    let mut found = Vec::new();
                    self.check(sub, value, path, depth + 1, &mut found);
                    found
                })
                .collect();
            let matching = results.iter().filter(|found| found.is_empty()).count();
            if matching == 0 {
                // The closest form is one whose type matched, then the one with fewest problems.
                let closest = results
                    .into_iter()
                    .min_by_key(|found| {
                        let wrong_type = found
                            .iter()
                            .any(|v| v.path == path && v.message.starts_with("expected "));
                        (wrong_type, found.len())
                    })
                    .unwrap_or_default();
                let details: Vec<String> = closest.iter().map(ToString::to_string).collect();
                out.push(violation(
                    path,
                    &format!(
                        "matches none of the {} allowed forms (closest: {})",
                        alternatives.len(),
                        details.join("; ")
                    ),
                ));
            } else if exactly_one && matching > 1 {
                out.push(violation(
                    path,
                    "matches more than one of the allowed forms; make it unambiguous",
                ));
            }
        }
        if let Some(not) = schema.get("not") {
            let mut found = Vec::new();
            self.check(not, value, path, depth + 1, &mut found);
            if found.is_empty() {
                out.push(violation(path, &format!("must not match {not}")));
            }
        }
    }
}

fn check_string(
    schema: &Map<String, Value>,
    text: &str,
    path: &str,
    out: &mut Vec<SchemaViolation>,
) {
    let length = text.chars().count() as u64;
    if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
        && length < min
    {
        out.push(violation(
            path,
            &format!("must be at least {min} character(s) long"),
        ));
    }
    if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
        && length > max
    {
        out.push(violation(
            path,
            &format!("must be at most {max} character(s) long, got {length}"),
        ));
    }
    match schema.get("format").and_then(Value::as_str) {
        Some("date-time") if chrono::DateTime::parse_from_rfc3339(text).is_err() => out.push(violation(
            path,
            &format!("must be an RFC 3339 date-time such as 2025-01-31T09:00:00+01:00, got \"{text}\""),
        )),
        Some("date") if chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_err() => out.push(
            violation(path, &format!("must be a date such as 2025-01-31, got \"{text}\"")),
        ),
        _ => {}
    }
}

fn check_number(
    schema: &Map<String, Value>,
    value: &Value,
    path: &str,
    out: &mut Vec<SchemaViolation>,
) {
    let Some(number) = value.as_f64() else {
        return;
    };
    let bound = |name: &str| schema.get(name).and_then(Value::as_f64);
    if let Some(min) = bound("minimum")
        && number < min
    {
        out.push(violation(
            path,
            &format!("must be at least {min}, got {value}"),
        ));
    }
    if let Some(max) = bound("maximum")
        && number > max
    {
        out.push(violation(
            path,
            &format!("must be at most {max}, got {value}"),
        ));
    }
    if let Some(min) = bound("exclusiveMinimum")
        && number <= min
    {
        out.push(violation(
            path,
            &format!("must be greater than {min}, got {value}"),
        ));
    }
    if let Some(max) = bound("exclusiveMaximum")
        && number >= max
    {
        out.push(violation(
            path,
            &format!("must be less than {max}, got {value}"),
        ));
    }
}

fn type_matches(expected: &Value, value: &Value) -> bool {
    match expected {
        Value::String(name) => single_type_matches(name, value),
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .any(|name| single_type_matches(name, value)),
        _ => true,
    }
}

fn single_type_matches(name: &str, value: &Value) -> bool {
    match name {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "number" => value.is_number(),
        "integer" => match value {
            Value::Number(number) => {
                number.is_i64()
                    || number.is_u64()
                    || number.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        _ => true,
    }
}

fn type_words(expected: &Value) -> String {
    let word = |name: &str| match name {
        "object" => "an object".to_owned(),
        "array" => "an array".to_owned(),
        "integer" => "an integer".to_owned(),
        other => format!("a {other}"),
    };
    match expected {
        Value::String(name) => word(name),
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .map(word)
            .collect::<Vec<_>>()
            .join(" or "),
        other => other.to_string(),
    }
}

/// `the number 5`, `the string "abc"`, `an object`, ...
fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(flag) => format!("the boolean {flag}"),
        Value::Number(number) => format!("the number {number}"),
        Value::String(text) => {
            let shown: String = text.chars().take(60).collect();
            let ellipsis = if shown.len() < text.len() { "…" } else { "" };
            format!("the string \"{shown}{ellipsis}\"")
        }
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

fn violation(path: &str, message: &str) -> SchemaViolation {
    SchemaViolation {
        path: path.to_owned(),
        message: message.to_owned(),
    }
}

#[cfg(test)]
mod tests;
