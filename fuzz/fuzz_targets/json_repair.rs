//! JSON repair: the tool arguments models write, repaired and checked against a tool's
//! schema.
//!
//! Input: the raw arguments text. Checks that valid JSON passes through unchanged and
//! that extraction, repair and validation never panic.

#![no_main]

use std::sync::LazyLock;

use hearth_llm::{ToolSpec, extract_json, parse_tool_arguments, repair_json};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

/// A tool whose schema uses the keywords Hearth's tools use.
static TOOL: LazyLock<ToolSpec> = LazyLock::new(|| {
    ToolSpec::new(
        "event_create",
        "Creates an event.",
        json!({
            "type": "object",
            "properties": {
                "title": {"type": "string", "minLength": 1},
                "start": {"type": "string"},
                "all_day": {"type": "boolean"},
                "attendees": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
                "priority": {"type": "integer", "minimum": 0, "maximum": 9},
                "kind": {"enum": ["single", "recurring"]},
                "details": {
                    "type": "object",
                    "properties": {"note": {"type": ["string", "null"]}},
                    "additionalProperties": false
                }
            },
            "required": ["title", "start"],
            "additionalProperties": false
        }),
    )
});

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    std::hint::black_box(extract_json(text));
    let repaired = repair_json(text);
    if let Ok(valid) = serde_json::from_str::<Value>(text) {
        let repaired = repaired.expect("valid JSON was refused");
        assert!(!repaired.repaired, "valid JSON was reported as repaired");
        assert_eq!(repaired.value, valid, "valid JSON was changed");
    }
    match parse_tool_arguments(&TOOL, text) {
        Ok(arguments) => assert!(
            arguments.value.is_object(),
            "arguments that are not an object"
        ),
        Err(error) => {
            std::hint::black_box(error.to_string());
        }
    }
});
