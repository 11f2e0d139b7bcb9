//! Reading the JSON Lines files and the times of the stores.

use std::path::{Path, PathBuf};

use hearth_core::Timestamp;
use serde_json::Value;

/// Longest summary of a tool call's arguments kept.
const TOOL_SUMMARY: usize = 160;

/// The JSON values of a JSON Lines file, in order. A last line without its newline is
/// one the agent is still writing: it is left for the next import. Any other line that
/// is not JSON is an error naming it.
pub(crate) fn read_lines(file: &Path) -> Result<Vec<Value>, String> {
    let text = std::fs::read_to_string(file).map_err(|error| format!("cannot read it: {error}"))?;
    let complete = match text.rfind('\n') {
        Some(end) => &text[..=end],
        None => "",
    };
    complete
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| {
            serde_json::from_str(line)
                .map_err(|error| format!("line {} is not JSON ({error})", index + 1))
        })
        .collect()
}

/// An RFC 3339 time.
pub(crate) fn time(value: &Value) -> Option<Timestamp> {
    let text = value.as_str()?;
    chrono::DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|time| time.with_timezone(&chrono::Utc))
}

/// Milliseconds since the Unix epoch.
pub(crate) fn millis(value: i64) -> Option<Timestamp> {
    chrono::DateTime::from_timestamp_millis(value)
}

/// The files under `root` whose names satisfy `wanted`, `depth` folders down (1: the
/// files of `root` itself), sorted.
pub(crate) fn files_under(
    root: &Path,
    depth: usize,
    wanted: &dyn Fn(&str) -> bool,
) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(root) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() && depth > 1 {
            found.extend(files_under(&path, depth - 1, wanted));
        } else if kind.is_file() && depth == 1 && wanted(&entry.file_name().to_string_lossy()) {
            found.push(path);
        }
    }
    found.sort();
    found
}

/// A tool call on one line: its name and the start of its arguments.
pub(crate) fn tool_summary(name: &str, arguments: &Value) -> String {
    let arguments = match arguments {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let arguments: String = arguments.replace(['\n', '\r'], " ");
    if arguments.is_empty() {
        return name.to_owned();
    }
    let mut cut: String = arguments.chars().take(TOOL_SUMMARY).collect();
    if cut.len() < arguments.len() {
        cut.push('…');
    }
    format!("{name}: {cut}")
}

/// The text of a message content: a string, or the `text` of its text blocks.
pub(crate) fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|block| {
                block["type"].as_str().is_none_or(|kind| {
                    kind == "text" || kind == "input_text" || kind == "output_text"
                })
            })
            .filter_map(|block| block["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_still_being_written_is_left_and_a_broken_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.jsonl");
        std::fs::write(&file, "{\"a\":1}\n{\"b\":").unwrap();
        assert_eq!(
            read_lines(&file).unwrap(),
            vec![serde_json::json!({"a": 1})]
        );
        std::fs::write(&file, "{\"a\":1}\nnot json\n").unwrap();
        assert!(
            read_lines(&file)
                .unwrap_err()
                .starts_with("line 2 is not JSON")
        );
    }

    #[test]
    fn long_tool_arguments_are_cut() {
        let summary = tool_summary("bash", &Value::String("x".repeat(500)));
        assert_eq!(summary.chars().count(), "bash: ".len() + TOOL_SUMMARY + 1);
        assert_eq!(tool_summary("view", &Value::Null), "view");
    }
}
