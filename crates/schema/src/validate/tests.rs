use super::*;
use pretty_assertions::assert_eq;
use serde_json::json;

fn messages(schema: Value, value: Value) -> Vec<String> {
    validate(&schema, &value)
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn event_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "title": {"type": "string", "minLength": 1},
            "start": {"type": "string", "format": "date-time"},
            "day": {"type": "string", "format": "date"},
            "kind": {"enum": ["single", "recurring"]},
            "reminders": {"type": "array", "items": {"type": "integer", "minimum": 0}, "maxItems": 2},
            "place": {"$ref": "#/$defs/Place"},
            "note": {"type": ["string", "null"]},
        },
        "required": ["title", "start"],
        "additionalProperties": false,
        "$defs": {
            "Place": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            }
        }
    })
}

#[test]
fn a_conforming_value_has_no_violations() {
    assert_eq!(
        messages(
            event_schema(),
            json!({
                "title": "Lunch",
                "start": "2025-01-31T12:00:00+01:00",
                "day": "2025-01-31",
                "kind": "single",
                "reminders": [10, 0],
                "place": {"name": "Café"},
                "note": null,
            })
        ),
        Vec::<String>::new()
    );
}

#[test]
fn every_violation_is_named_with_its_path() {
    assert_eq!(
        messages(
            event_schema(),
            json!({
                "title": "",
                "day": "31/01/2025",
                "kind": "weekly",
                "reminders": [5, -1, 2.5],
                "place": {},
                "note": 3,
                "colour": "red",
            })
        ),
        vec![
            "arguments: missing required property `start`",
            "arguments.title: must be at least 1 character(s) long",
            "arguments.day: must be a date such as 2025-01-31, got \"31/01/2025\"",
            "arguments.kind: must be one of \"single\", \"recurring\", got the string \"weekly\"",
            "arguments.reminders: allows at most 2 item(s), got 3",
            "arguments.reminders[1]: must be at least 0, got -1",
            "arguments.reminders[2]: expected an integer, got the number 2.5",
            "arguments.place: missing required property `name`",
            "arguments.note: expected a string or a null, got the number 3",
            "arguments: unknown property `colour` (allowed: `title`, `start`, `day`, `kind`, `reminders`, `place`, `note`)",
        ]
    );
}

#[test]
fn date_times_must_be_rfc3339() {
    assert_eq!(
        messages(
            event_schema(),
            json!({"title": "x", "start": "tomorrow at 9"})
        ),
        vec![
            "arguments.start: must be an RFC 3339 date-time such as 2025-01-31T09:00:00+01:00, got \"tomorrow at 9\""
        ]
    );
}

#[test]
fn alternatives_report_the_closest_form() {
    let schema = json!({
        "anyOf": [
            {"type": "string"},
            {"type": "object", "required": ["id"]},
        ]
    });
    assert_eq!(messages(schema.clone(), json!("abc")), Vec::<String>::new());
    assert_eq!(
        messages(schema, json!({"name": "x"})),
        vec![
            "arguments: matches none of the 2 allowed forms (closest: arguments: missing required property `id`)"
        ]
    );
    let one_of = json!({"oneOf": [{"type": "number"}, {"type": "integer"}]});
    assert_eq!(
        messages(one_of, json!(3)),
        vec!["arguments: matches more than one of the allowed forms; make it unambiguous"]
    );
}

#[test]
fn boolean_and_unknown_schemas_and_recursive_refs_are_safe() {
    assert_eq!(messages(json!(true), json!(1)), Vec::<String>::new());
    assert_eq!(
        messages(json!(false), json!(1)),
        vec!["arguments: no value is allowed here"]
    );
    assert_eq!(
        messages(json!({"x-custom": 1, "pattern": "^a"}), json!("b")),
        Vec::<String>::new()
    );
    let recursive = json!({"$ref": "#"});
    assert_eq!(messages(recursive, json!({"a": 1})), Vec::<String>::new());
}

#[test]
fn integers_accept_whole_floats_and_bounds_are_checked() {
    let schema = json!({"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10});
    assert_eq!(messages(schema.clone(), json!(3.0)), Vec::<String>::new());
    assert_eq!(
        messages(schema, json!(10)),
        vec!["arguments: must be less than 10, got 10"]
    );
}
