//! What the command line does to text it did not write before showing it: messages
//! (errors, warnings, log lines) lose the credentials of the URLs they name, and
//! anything a terminal would act on is shown escaped (see [`hearth_core::escape_controls`]).
//! Hearth's own words and colours are added after, so they stay as they are.
//!
//! JSON output stays JSON: serde escapes ESC, BEL and the other C0 controls in strings
//! (`\u001b`); [`json`] escapes DEL, the C1 controls and the bidirectional overrides
//! too (`\u009b`, `\u202e`), which JSON allows raw but a terminal may act on. Parsed
//! back, the value is the same.
//!
//! Every `--json` output follows the protocol's convention: keys are camelCase
//! (`turnId`, `payloadHash`), whichever type the record was serialized from. Values
//! that are someone else's JSON (a tool's arguments, a proposal's canonical payload, an
//! audit entry's detail, a JSON Schema; see [`VERBATIM`]) are passed as they are, so
//! hashes over them still hold. Listings print records only: the cursor of a next page
//! goes to stderr ([`more`]).

use std::borrow::Cow;
use std::io::Write;

use hearth_core::{escape_controls, redact_userinfo};
use serde::Serialize;

/// A message for the terminal (an error or a warning, which may quote an agent, a server
/// or a URL): credentials redacted, controls escaped.
pub fn message(text: &str) -> Cow<'_, str> {
    match redact_userinfo(text) {
        Cow::Borrowed(text) => escape_controls(text),
        Cow::Owned(text) => Cow::Owned(escape_controls(&text).into_owned()),
    }
}

/// An error with its causes (`{error:#}`), as [`message`] shows it.
pub fn error(error: &anyhow::Error) -> String {
    message(&format!("{error:#}")).into_owned()
}

/// Writes JSON strings with DEL, C1 controls and bidirectional overrides escaped
/// (serde already escapes the C0 controls).
struct TerminalSafe;

impl serde_json::ser::Formatter for TerminalSafe {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut start = 0;
        for (index, c) in fragment.char_indices() {
            if matches!(
                c,
                '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
            ) {
                writer.write_all(&fragment.as_bytes()[start..index])?;
                write!(writer, "\\u{:04x}", u32::from(c))?;
                start = index + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }
}

/// Keys whose values are data Hearth passes on, not records it names: left as they are.
const VERBATIM: &[&str] = &[
    "arguments",
    "payload",
    "detail",
    "parameters",
    "schema",
    "inputSchema",
    "input_schema",
    "providerData",
    "provider_data",
    "rawInput",
    "raw_input",
    "rawOutput",
    "raw_output",
    "structured",
    "env",
    "headers",
    "_meta",
];

/// A key in camelCase: `turn_id` → `turnId`; one without `_` inside is left alone.
fn camel_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for (index, c) in key.char_indices() {
        if c == '_' && index > 0 {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `value` with every key Hearth names in camelCase (see the module's notes).
fn camel_keys(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(key, value)| {
                    let value = if VERBATIM.contains(&key.as_str()) {
                        value
                    } else {
                        camel_keys(value)
                    };
                    (camel_case(&key), value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(camel_keys).collect()),
        other => other,
    }
}

/// `value` as one line of JSON no terminal acts on, keys in camelCase (see the module's
/// notes).
pub fn json(value: &impl Serialize) -> serde_json::Result<String> {
    let value = camel_keys(serde_json::to_value(value)?);
    let mut bytes = Vec::new();
    value.serialize(&mut serde_json::Serializer::with_formatter(
        &mut bytes,
        TerminalSafe,
    ))?;
    // Only whole strings and ASCII escapes were written.
    String::from_utf8(bytes).map_err(|error| serde::ser::Error::custom(error.to_string()))
}

/// Says on stderr how to ask for the page after a `--json` listing's records:
/// `hearth: more: --cursor CURSOR`.
#[allow(clippy::print_stderr)] // the one line a paged listing adds beside its records
pub fn more(cursor: &str) {
    eprintln!("hearth: more: --cursor {cursor}");
}

/// Hearth's log on stderr, every line's URL credentials redacted. (The log formatter
/// already escapes ESC, BEL and C1 controls inside messages and keeps its own colours.)
#[derive(Clone, Copy, Debug, Default)]
pub struct LogWriter;

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogWriter {
    type Writer = LogLine;

    fn make_writer(&'a self) -> Self::Writer {
        LogLine
    }
}

/// One formatted log event, written whole (the formatter writes each event at once).
#[derive(Debug)]
pub struct LogLine;

impl Write for LogLine {
    fn write(&mut self, buffer: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buffer);
        std::io::stderr()
            .lock()
            .write_all(redact_userinfo(&text).as_bytes())?;
        Ok(buffer.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// A scope as the user reads it.
pub(crate) fn scope_name(scope: &hearth_core::Scope) -> String {
    match scope.project_id() {
        Some(id) => format!("project {id}"),
        None => "the global scope".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn json_stays_json_and_escapes_what_a_terminal_would_act_on() {
        let value = serde_json::json!({
            "text": "a\x1b[2J b\x07 c\u{9b}31m d\u{202e}e\x7f f\n é ✓",
            "nested": ["\u{2066}x\u{2069}"],
        });
        let line = json(&value).unwrap();
        assert_eq!(
            line,
            r#"{"text":"a\u001b[2J b\u0007 c\u009b31m d\u202ee\u007f f\n é ✓","nested":["\u2066x\u2069"]}"#
        );
        let parsed: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(parsed, value);
    }

    #[test]
    fn json_keys_are_camel_case_and_data_passed_on_is_left_as_it_is() {
        let value = serde_json::json!({
            "turn_id": "t1",
            "stop_reason": null,
            "parts": [{"type": "tool_call", "tool_call_id": "c1", "arguments": {"file_path": "a"}}],
            "payload": {"calendar_id": "home"},
            "payloadHash": "ab",
            "_meta": {"x_y": 1},
        });
        assert_eq!(
            json(&value).unwrap(),
            r#"{"turnId":"t1","stopReason":null,"parts":[{"type":"tool_call","toolCallId":"c1","arguments":{"file_path":"a"}}],"payload":{"calendar_id":"home"},"payloadHash":"ab","_meta":{"x_y":1}}"#
        );
    }

    #[test]
    fn a_message_loses_passwords_and_controls() {
        assert_eq!(
            message("GET http://alice:secretpw@host/ said \x1b]0;owned\x07 (no)"),
            "GET http://[redacted]@host/ said \\x1b]0;owned\\x07 (no)"
        );
        assert_eq!(message("plain"), "plain");
        let error = anyhow::anyhow!("inner \x1b[2J").context("outer http://u:p@h/");
        assert_eq!(
            super::error(&error),
            "outer http://[redacted]@h/: inner \\x1b[2J"
        );
    }
}
