//! One JSON convention: every `--json` output of the command line has camelCase keys, as
//! the protocol has, and paged listings print records only (the next page's cursor goes
//! to stderr).

use serde_json::Value;

use super::support::Hearth;
use super::tool_support::{stage_event, with_calendar};

/// Keys whose values are data Hearth passes on as they are (a tool's arguments, a
/// proposal's canonical payload, an audit entry's detail, a JSON Schema).
const VERBATIM: &[&str] = &[
    "arguments",
    "payload",
    "detail",
    "parameters",
    "schema",
    "inputSchema",
    "providerData",
    "rawInput",
    "rawOutput",
    "structured",
    "env",
    "headers",
    "_meta",
];

/// Every snake_case key in `value`, with where it is.
fn snake_keys(value: &Value, at: &str, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                let here = format!("{at}.{key}");
                if key.trim_start_matches('_').contains('_') {
                    found.push(here.clone());
                }
                if !VERBATIM.contains(&key.as_str()) {
                    snake_keys(value, &here, found);
                }
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                snake_keys(item, &format!("{at}[{index}]"), found);
            }
        }
        _ => {}
    }
}

/// The JSON values a command printed: one per line, or one pretty-printed document.
fn values(text: &str) -> Vec<Value> {
    match serde_json::from_str::<Value>(text) {
        Ok(value) => vec![value],
        Err(_) => text
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| {
                serde_json::from_str(line).unwrap_or_else(|error| panic!("{error}: {line}"))
            })
            .collect(),
    }
}

#[test]
fn every_json_output_has_camel_case_keys() {
    let (hearth, _calendar) = with_calendar();
    let proposal = stage_event(&hearth, "Dentist", "2030-03-04T09:00");
    let run = hearth.ok(&["run", "--json", "hello"]);
    let session = hearth.session_uris().remove(0);
    let default_chat = format!(
        "hearth-chat:{}/default",
        session.strip_prefix("hearth-session:").unwrap()
    );
    let folder = tempfile::tempdir().unwrap();
    hearth.ok(&[
        "projects",
        "new",
        "walnut",
        "--folder",
        folder.path().to_str().unwrap(),
    ]);
    let arguments = r#"{"title":"Gym","start":"2030-03-05T18:00"}"#;
    let commands: Vec<Vec<&str>> = vec![
        vec!["sessions", "list", "--json"],
        vec!["sessions", "show", &session, "--json"],
        vec!["chats", "list", &session, "--json"],
        vec!["chats", "show", &default_chat, "--json"],
        vec!["proposals", "list", "--json"],
        vec!["proposals", "show", &proposal, "--json"],
        vec!["tools", "list", "--json"],
        vec!["tools", "call", "event_create", arguments, "--json"],
        vec!["tools", "call", "events_list", "{}", "--json"],
        vec!["audit", "list", "--json"],
        vec!["audit", "verify", "--json"],
        vec!["calendar", "list", "--json"],
        vec!["calendar", "events", "--json"],
        vec!["providers", "list", "--json"],
        vec!["agents", "list", "--no-start", "--json"],
        vec!["projects", "list", "--json"],
        vec!["projects", "show", "walnut", "--json"],
    ];
    let mut outputs = vec![("run --json hello".to_owned(), run)];
    for args in &commands {
        outputs.push((args.join(" "), hearth.ok(args)));
    }
    let mut found = Vec::new();
    for (command, output) in &outputs {
        let printed = values(output);
        for value in &printed {
            snake_keys(value, command, &mut found);
        }
        // A listing prints records only: no trailer among them.
        assert!(
            printed
                .iter()
                .all(|value| value.get("nextCursor").is_none()),
            "{command}: {output}"
        );
    }
    // The test sees what it looks for: keys that were snake_case before are there.
    let all: String = outputs.iter().map(|(_, output)| output.as_str()).collect();
    for key in ["\"payloadHash\"", "\"stopReason\"", "\"isError\""] {
        assert!(all.contains(key), "{key} not printed by any command");
    }
    assert!(found.is_empty(), "snake_case keys:\n{}", found.join("\n"));
}

#[test]
fn paged_listings_print_the_next_cursor_on_stderr() {
    let hearth = Hearth::new();
    hearth.ok(&["run", "first walnut"]);
    hearth.ok(&["run", "second chestnut"]);
    let output = hearth.run(&["sessions", "list", "--json", "--limit", "1"]);
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    let records = values(&stdout);
    assert_eq!(records.len(), 1, "{stdout}");
    assert!(records[0]["uri"].is_string(), "{stdout}");
    let cursor = stderr
        .lines()
        .find_map(|line| line.strip_prefix("hearth: more: --cursor "))
        .unwrap_or_else(|| panic!("no cursor in {stderr}"));
    let next = hearth.ok(&[
        "sessions", "list", "--json", "--limit", "1", "--cursor", cursor,
    ]);
    let next = values(&next);
    assert_eq!(next.len(), 1);
    assert_ne!(next[0]["uri"], records[0]["uri"]);

    let (hearth, _calendar) = with_calendar();
    stage_event(&hearth, "Dentist", "2030-03-04T09:00");
    stage_event(&hearth, "Gym", "2030-03-05T18:00");
    let output = hearth.run(&["proposals", "list", "--json", "--limit", "1"]);
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(values(&stdout).len(), 1, "{stdout}");
    assert!(stderr.contains("hearth: more: --cursor "), "{stderr}");
}
