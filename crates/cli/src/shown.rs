//! What the command line does to text it did not write before showing it: messages
//! (errors, warnings, log lines) lose the credentials of the URLs they name, and
//! anything a terminal would act on is shown escaped (see [`hearth_core::escape_controls`]).
//! Hearth's own words and colours are added after, so they stay as they are.
//!
//! JSON output stays JSON: serde escapes ESC, BEL and the other C0 controls in strings
//! (`\u001b`); [`json`] escapes DEL, the C1 controls and the bidirectional overrides
//! too (`\u009b`, `\u202e`), which JSON allows raw but a terminal may act on. Parsed
//! back, the value is the same.

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

/// `value` as one line of JSON no terminal acts on (see the module's notes).
pub fn json(value: &impl Serialize) -> serde_json::Result<String> {
    let mut bytes = Vec::new();
    value.serialize(&mut serde_json::Serializer::with_formatter(
        &mut bytes,
        TerminalSafe,
    ))?;
    // Only whole strings and ASCII escapes were written.
    String::from_utf8(bytes).map_err(|error| serde::ser::Error::custom(error.to_string()))
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
