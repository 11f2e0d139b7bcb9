//! Agent Home's wire types (`web/protocol.d.ts`) are generated from the committed JSON
//! Schema, so the web UI's type check (`.ci/web`) sees exactly what the server sends.
//! `HEARTH_UPDATE_SCHEMA=1` rewrites the file along with the schema.

use std::fmt::Write as _;
use std::path::PathBuf;

use hearth_protocol::{REGENERATE_COMMAND, schema};
use serde_json::Value;

fn committed_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../web/protocol.d.ts")
}

#[test]
fn web_types_match_the_schema() {
    let path = committed_path();
    let generated = typescript(&schema());
    if std::env::var_os("HEARTH_UPDATE_SCHEMA").is_some_and(|value| !value.is_empty()) {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is out of date with the protocol types; regenerate it with:\n\n    {REGENERATE_COMMAND}\n",
        path.display()
    );
}

#[test]
fn the_generated_types_name_every_method_and_definition() {
    let schema = schema();
    let text = typescript(&schema);
    for name in schema["$defs"].as_object().unwrap().keys() {
        assert!(
            text.contains(&format!("export type {name} =")),
            "{name} is missing"
        );
    }
    for method in schema["methods"].as_object().unwrap().keys() {
        assert!(text.contains(&format!("'{method}': {{")), "{method}");
    }
    assert!(
        text.contains("type: 'sessionAdded'"),
        "tagged unions keep their tags"
    );
}

fn typescript(schema: &Value) -> String {
    let mut out = String::from(
        "// Hearth's wire types for Agent Home, generated from schema/hearth-protocol.json.\n\
         // Do not edit: regenerate with the schema.\n\n",
    );
    for (name, definition) in schema["$defs"].as_object().unwrap() {
        comment(&mut out, definition, "");
        writeln!(out, "export type {name} = {};\n", render(definition, "")).unwrap();
    }
    out.push_str("/** Every request: its params and result. */\nexport interface Methods {\n");
    for (method, entry) in schema["methods"].as_object().unwrap() {
        writeln!(
            out,
            "  '{method}': {{ params: {}; result: {} }};",
            render(&entry["params"], "  "),
            render(&entry["result"], "  ")
        )
        .unwrap();
    }
    out.push_str("}\n\n/** Every notification the server sends: its params. */\nexport interface Notifications {\n");
    for (name, entry) in schema["notifications"].as_object().unwrap() {
        writeln!(out, "  '{name}': {};", render(&entry["params"], "  ")).unwrap();
    }
    out.push_str("}\n");
    out
}

fn comment(out: &mut String, schema: &Value, indent: &str) {
    if let Some(text) = schema.get("description").and_then(Value::as_str) {
        let text = text.replace("*/", "*\\/");
        writeln!(
            out,
            "{indent}/** {} */",
            text.replace('\n', &format!("\n{indent} * "))
        )
        .unwrap();
    }
}

fn render(schema: &Value, indent: &str) -> String {
    let Some(object) = schema.as_object() else {
        return "unknown".to_owned();
    };
    if let Some(constant) = object.get("const") {
        return literal(constant);
    }
    if let Some(values) = object.get("enum").and_then(Value::as_array) {
        return values.iter().map(literal).collect::<Vec<_>>().join(" | ");
    }
    // A schema may combine a reference, `allOf`, a union and its own properties (a
    // tagged variant wrapping a struct): the type is all of them at once.
    let mut pieces = Vec::new();
    if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
        pieces.push(reference.trim_start_matches("#/$defs/").to_owned());
    }
    if let Some(parts) = object.get("allOf").and_then(Value::as_array) {
        pieces.extend(parts.iter().map(|part| render(part, indent)));
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(variants) = object.get(key).and_then(Value::as_array) {
            let inner = format!("{indent}  ");
            let parts: Vec<_> = variants
                .iter()
                .map(|variant| render(variant, &inner))
                .collect();
            pieces.push(format!("({})", parts.join(" | ")));
        }
    }
    if object.contains_key("properties") {
        pieces.push(render_object(object, indent));
    } else if pieces.is_empty() {
        pieces.push(render_type(object, indent));
    }
    if pieces.len() == 1 {
        pieces.remove(0)
    } else {
        format!("({})", pieces.join(" & "))
    }
}

fn render_type(object: &serde_json::Map<String, Value>, indent: &str) -> String {
    match object.get("type") {
        Some(Value::Array(types)) => {
            let parts: Vec<_> = types
                .iter()
                .map(|kind| {
                    let mut single = object.clone();
                    single.insert("type".to_owned(), kind.clone());
                    render(&Value::Object(single), indent)
                })
                .collect();
            parts.join(" | ")
        }
        Some(Value::String(kind)) => match kind.as_str() {
            "string" => "string".to_owned(),
            "integer" | "number" => "number".to_owned(),
            "boolean" => "boolean".to_owned(),
            "null" => "null".to_owned(),
            "array" => match object.get("items") {
                Some(items) => format!("Array<{}>", render(items, indent)),
                None => "unknown[]".to_owned(),
            },
            "object" => render_object(object, indent),
            _ => "unknown".to_owned(),
        },
        _ => "unknown".to_owned(),
    }
}

fn render_object(object: &serde_json::Map<String, Value>, indent: &str) -> String {
    let properties = object.get("properties").and_then(Value::as_object);
    let Some(properties) = properties.filter(|properties| !properties.is_empty()) else {
        return match object.get("additionalProperties") {
            Some(Value::Object(values)) => {
                format!(
                    "{{ [key: string]: {} }}",
                    render(&Value::Object(values.clone()), indent)
                )
            }
            _ => "{ [key: string]: unknown }".to_owned(),
        };
    };
    let required: Vec<&str> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let inner = format!("{indent}  ");
    let mut text = String::from("{\n");
    for (name, property) in properties {
        comment(&mut text, property, &inner);
        let optional = if required.contains(&name.as_str()) {
            ""
        } else {
            "?"
        };
        let key = if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            name.clone()
        } else {
            format!("'{name}'")
        };
        writeln!(
            text,
            "{inner}{key}{optional}: {};",
            render(property, &inner)
        )
        .unwrap();
    }
    text.push_str(indent);
    text.push('}');
    text
}

fn literal(value: &Value) -> String {
    match value {
        Value::String(text) => format!("'{}'", text.replace('\\', "\\\\").replace('\'', "\\'")),
        other => other.to_string(),
    }
}
