//! How Hearth's log reads on a terminal without `-v`: like its other notes,
//! `hearth: warning: …`, with no timestamp or level column (`-v` and `HEARTH_LOG` keep
//! the full format, with times).

use std::fmt;

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// `hearth: <level>: <message> <fields>`, the level coloured when `colour`.
pub(crate) struct Short {
    pub colour: bool,
}

/// The word a level is shown as.
fn level_word(level: Level) -> (&'static str, crate::style::Paint) {
    use crate::style::Paint;
    match level {
        Level::ERROR => ("error", Paint::BOLD_RED),
        Level::WARN => ("warning", Paint::YELLOW),
        Level::INFO => ("info", Paint::CYAN),
        Level::DEBUG => ("debug", Paint::DIM),
        Level::TRACE => ("trace", Paint::DIM),
    }
}

impl<S, N> FormatEvent<S, N> for Short
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        context: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let (word, paint) = level_word(*event.metadata().level());
        write!(writer, "hearth: {}: ", paint.paint_if(self.colour, word))?;
        context
            .field_format()
            .format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buffer: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buffer);
            Ok(buffer.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_warning_reads_like_hearths_other_notes() {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .event_format(Short { colour: false })
            .with_writer(move || writer.clone())
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(session = "s1", "could not remove the agent's files");
            tracing::error!("broken \x1b[2J");
        });
        let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            text,
            "hearth: warning: could not remove the agent's files session=\"s1\"\nhearth: error: broken \\x1b[2J\n"
        );
    }
}
