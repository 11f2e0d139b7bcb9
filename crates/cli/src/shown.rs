//! What the command line does to text it did not write before showing it: messages
//! (errors, warnings, log lines) lose the credentials of the URLs they name, and
//! anything a terminal would act on is shown escaped (see [`hearth_core::escape_controls`]).
//! Hearth's own words and colours are added after, so they stay as they are.

use std::borrow::Cow;
use std::io::Write;

use hearth_core::{escape_controls, redact_userinfo};

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
