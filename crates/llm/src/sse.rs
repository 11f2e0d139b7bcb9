//! A push-based Server-Sent Events parser (the WHATWG event-stream format).
//!
//! Bytes go in as they arrive; each complete event is handed to a callback with its
//! type and data borrowed from internal buffers, so parsing allocates nothing per event.
//! Line endings may be LF, CRLF or CR; a leading BOM is skipped; comment lines and
//! unknown fields are ignored; invalid UTF-8 is replaced, never fatal.

use std::borrow::Cow;

/// Longest line or event Hearth buffers before giving up on a stream.
const MAX_BUFFERED: usize = 16 * 1024 * 1024;

/// One dispatched event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// The `event:` field, or `message` when absent.
    pub event: &'a str,
    /// The `data:` lines joined by `\n`.
    pub data: &'a str,
}

/// The stream exceeded the buffering limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseOverflow;

/// Incremental SSE parser.
#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes of an unfinished line.
    partial: Vec<u8>,
    /// The previous chunk ended with CR: a LF at the start of the next one belongs to it.
    after_cr: bool,
    started: bool,
    event: String,
    data: String,
    has_data: bool,
}

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; calls `on_event` for every event completed by them. Stops early
    /// and returns the callback's error if it fails.
    pub fn feed<E>(
        &mut self,
        mut chunk: &[u8],
        on_event: &mut impl FnMut(SseEvent<'_>) -> Result<(), E>,
    ) -> Result<(), FeedError<E>> {
        if !self.started && !chunk.is_empty() {
            if self.partial.len() + chunk.len() < 3 {
                let mut probe = self.partial.clone();
                probe.extend_from_slice(chunk);
                if b"\xEF\xBB\xBF".starts_with(&probe) {
                    self.partial = probe;
                    return Ok(());
                }
            }
            self.started = true;
            if !self.partial.is_empty() {
                let mut joined = std::mem::take(&mut self.partial);
                joined.extend_from_slice(chunk);
                let start = if joined.starts_with(b"\xEF\xBB\xBF") {
                    3
                } else {
                    0
                };
                return self.feed_started(&joined[start..], on_event);
            }
            if chunk.starts_with(b"\xEF\xBB\xBF") {
                chunk = &chunk[3..];
            }
        }
        self.feed_started(chunk, on_event)
    }

    fn feed_started<E>(
        &mut self,
        mut chunk: &[u8],
        on_event: &mut impl FnMut(SseEvent<'_>) -> Result<(), E>,
    ) -> Result<(), FeedError<E>> {
        if self.after_cr && !chunk.is_empty() {
            self.after_cr = false;
            if let Some(rest) = chunk.strip_prefix(b"\n") {
                chunk = rest;
            }
        }
        while !chunk.is_empty() {
            let Some(end) = memchr::memchr2(b'\n', b'\r', chunk) else {
                if self.partial.len() + chunk.len() > MAX_BUFFERED {
                    return Err(FeedError::Overflow(SseOverflow));
                }
                self.partial.extend_from_slice(chunk);
                return Ok(());
            };
            let mut rest = &chunk[end + 1..];
            if chunk[end] == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            if self.partial.is_empty() {
                let line = &chunk[..end];
                // Fast path for the usual `data: ...` line followed by the blank line:
                // dispatched straight from the chunk, without copying.
                if !self.has_data
                    && let Some(value) = line.strip_prefix(b"data:")
                    && let Some((after, lone_cr)) = blank_line(rest)
                {
                    let value = value.strip_prefix(b" ").unwrap_or(value);
                    let data = utf8(value);
                    let event = if self.event.is_empty() {
                        "message"
                    } else {
                        &self.event
                    };
                    let result = on_event(SseEvent { event, data: &data });
                    self.event.clear();
                    result.map_err(FeedError::Callback)?;
                    self.after_cr = lone_cr;
                    chunk = after;
                    continue;
                }
                self.line(line, on_event)?;
            } else {
                let mut line = std::mem::take(&mut self.partial);
                line.extend_from_slice(&chunk[..end]);
                let result = self.line(&line, on_event);
                line.clear();
                self.partial = line;
                result?;
            }
            chunk = rest;
        }
        Ok(())
    }

    /// The stream ended. Dispatches a last event whose lines were complete but which
    /// lacked the closing blank line (lenient: some servers close right after it).
    pub fn finish<E>(
        &mut self,
        on_event: &mut impl FnMut(SseEvent<'_>) -> Result<(), E>,
    ) -> Result<(), FeedError<E>> {
        self.partial.clear();
        self.dispatch(on_event)
    }

    fn line<E>(
        &mut self,
        line: &[u8],
        on_event: &mut impl FnMut(SseEvent<'_>) -> Result<(), E>,
    ) -> Result<(), FeedError<E>> {
        if line.is_empty() {
            return self.dispatch(on_event);
        }
        if line[0] == b':' {
            return Ok(());
        }
        let (name, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match name {
            b"data" => {
                if self.data.len() + value.len() > MAX_BUFFERED {
                    return Err(FeedError::Overflow(SseOverflow));
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.has_data = true;
                self.data.push_str(&utf8(value));
            }
            b"event" => {
                self.event.clear();
                self.event.push_str(&utf8(value));
            }
            _ => {}
        }
        Ok(())
    }

    fn dispatch<E>(
        &mut self,
        on_event: &mut impl FnMut(SseEvent<'_>) -> Result<(), E>,
    ) -> Result<(), FeedError<E>> {
        let result = if self.has_data {
            let event = if self.event.is_empty() {
                "message"
            } else {
                &self.event
            };
            on_event(SseEvent {
                event,
                data: &self.data,
            })
        } else {
            Ok(())
        };
        self.event.clear();
        self.data.clear();
        self.has_data = false;
        result.map_err(FeedError::Callback)
    }
}

/// Why feeding stopped.
#[derive(Debug, PartialEq, Eq)]
pub enum FeedError<E> {
    /// A line or event grew past the buffering limit.
    Overflow(SseOverflow),
    /// The callback failed.
    Callback(E),
}

/// After a line: when a blank line follows, the bytes after it and whether it ended in
/// a CR that a LF in the next chunk may still belong to.
fn blank_line(rest: &[u8]) -> Option<(&[u8], bool)> {
    match rest {
        [b'\n', after @ ..] | [b'\r', b'\n', after @ ..] => Some((after, false)),
        [b'\r'] => Some((&[], true)),
        [b'\r', after @ ..] => Some((after, false)),
        _ => None,
    }
}

fn utf8(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    fn parse_chunks(chunks: &[&[u8]], finish: bool) -> Vec<(String, String)> {
        let mut parser = SseParser::new();
        let mut events = Vec::new();
        let mut collect = |event: SseEvent<'_>| -> Result<(), ()> {
            events.push((event.event.to_owned(), event.data.to_owned()));
            Ok(())
        };
        for chunk in chunks {
            parser.feed(chunk, &mut collect).unwrap();
        }
        if finish {
            parser.finish(&mut collect).unwrap();
        }
        events
    }

    #[test]
    fn parses_fields_comments_and_line_endings() {
        let stream = b"\xEF\xBB\xBF: comment\nevent: ping\ndata: {}\n\ndata:a\r\ndata: b\r\n\r\nnonsense line\rdata: c\r\r";
        assert_eq!(
            parse_chunks(&[stream], false),
            vec![
                ("ping".to_owned(), "{}".to_owned()),
                ("message".to_owned(), "a\nb".to_owned()),
                ("message".to_owned(), "c".to_owned()),
            ]
        );
    }

    #[test]
    fn single_line_events_keep_their_type_and_line_endings() {
        assert_eq!(
            parse_chunks(
                &[
                    b"event: a\ndata: 1\n\ndata: 2\r\n\r\ndata: 3\r\r",
                    b"\ndata: 4\n\n"
                ],
                true
            ),
            vec![
                ("a".to_owned(), "1".to_owned()),
                ("message".to_owned(), "2".to_owned()),
                ("message".to_owned(), "3".to_owned()),
                ("message".to_owned(), "4".to_owned()),
            ]
        );
    }

    #[test]
    fn an_empty_chunk_between_cr_and_lf_keeps_them_one_line_ending() {
        assert_eq!(
            parse_chunks(&[b"event: a\r", b"", b"\ndata: 1\n\n"], true),
            vec![("a".to_owned(), "1".to_owned())]
        );
    }

    #[test]
    fn events_without_data_are_not_dispatched() {
        assert_eq!(parse_chunks(&[b"event: x\n\n: hi\n\n"], false), vec![]);
    }

    #[test]
    fn a_last_event_without_blank_line_is_dispatched_at_the_end() {
        assert_eq!(
            parse_chunks(&[b"data: [DONE]\n"], true),
            vec![("message".to_owned(), "[DONE]".to_owned())]
        );
        assert_eq!(parse_chunks(&[b"data: [DO"], true), vec![]);
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        assert_eq!(
            parse_chunks(&[b"data: a\xFFb\n\n"], false),
            vec![("message".to_owned(), "a\u{FFFD}b".to_owned())]
        );
    }

    proptest! {
        #[test]
        fn any_split_yields_the_same_events(
            cut_points in proptest::collection::vec(0usize..200, 0..8),
        ) {
            let stream: &[u8] = b"\xEF\xBB\xBFevent: a\r\ndata: 1\r\n\r\ndata: {\"x\": \"\xC3\xA9\"}\n\n:c\rdata: 2\r\rdata: 3\n\n";
            let whole = parse_chunks(&[stream], true);
            let mut cuts: Vec<usize> = cut_points.into_iter().map(|c| c % (stream.len() + 1)).collect();
            cuts.sort_unstable();
            let mut chunks = Vec::new();
            let mut last = 0;
            for cut in cuts {
                chunks.push(&stream[last..cut]);
                last = cut;
            }
            chunks.push(&stream[last..]);
            prop_assert_eq!(parse_chunks(&chunks, true), whole);
        }

        #[test]
        fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            parse_chunks(&[&bytes], true);
        }
    }
}
