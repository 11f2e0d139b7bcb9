//! The JSON Schema of the protocol, generated from the Rust types. The committed copy is
//! `schema/hearth-protocol.json` at the workspace root; a test fails when it drifts.

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::PROTOCOL_VERSION;
use crate::error::{ErrorKind, RpcError};
use crate::methods::{ClientMethod, notification_schemas};

/// The file name of the committed schema, inside the workspace's `schema/` folder.
pub const SCHEMA_FILE: &str = "hearth-protocol.json";

/// The command that regenerates the committed schema.
pub const REGENERATE_COMMAND: &str =
    "HEARTH_UPDATE_SCHEMA=1 cargo test -p hearth-protocol --test all schema";

const ERROR_KINDS: &[ErrorKind] = &[
    ErrorKind::ParseError,
    ErrorKind::InvalidRequest,
    ErrorKind::MethodNotFound,
    ErrorKind::InvalidParams,
    ErrorKind::NotInitialized,
    ErrorKind::NotFound,
    ErrorKind::Gone,
    ErrorKind::Unsupported,
    ErrorKind::Busy,
    ErrorKind::Conflict,
    ErrorKind::Provider,
    ErrorKind::Unavailable,
    ErrorKind::ShuttingDown,
    ErrorKind::Forbidden,
    ErrorKind::Internal,
];

/// The protocol's schema: methods with their params and result, notifications, error
/// codes, and every type under `$defs`.
pub fn schema() -> Value {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    let mut methods = Map::new();
    for method in ClientMethod::ALL {
        let (params, result) = method.schemas(&mut generator);
        methods.insert(
            method.name().to_owned(),
            json!({ "params": params, "result": result }),
        );
    }
    let mut notifications = Map::new();
    for (name, params) in notification_schemas(&mut generator) {
        notifications.insert(name.to_owned(), json!({ "params": params }));
    }
    let error = generator.subschema_for::<RpcError>();
    let mut codes = Map::new();
    for kind in ERROR_KINDS {
        if let Value::String(name) = json!(kind) {
            codes.insert(name, json!(kind.code()));
        }
    }
    let definitions = generator.take_definitions(true);
    sorted(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Hearth protocol",
        "description": "JSON-RPC 2.0 over WebSocket (/rpc) and stdio (JSON Lines). Generated from hearth-protocol; do not edit.",
        "protocolVersion": PROTOCOL_VERSION,
        "methods": methods,
        "notifications": notifications,
        "errors": { "error": error, "codes": codes },
        "$defs": definitions,
    }))
}

/// The schema as the committed file holds it: pretty-printed, keys sorted, one final
/// newline.
pub fn schema_text() -> String {
    let mut text =
        serde_json::to_string_pretty(&schema()).unwrap_or_else(|error| format!("{error}"));
    text.push('\n');
    text
}

/// Rebuilds objects with their keys in order, so the text does not depend on how
/// `serde_json` keeps maps in this build.
fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(key, value)| (key, sorted(value)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}
