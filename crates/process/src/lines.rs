//! Lines read from a child (or a peer) with a cap on their size, so whatever it writes —
//! gigabytes without a newline included — costs no more memory than the cap.
//!
//! A line ends at `\n`; a `\r` just before its end is not part of it. A line longer
//! than the cap is handed out as [`Line::Overlong`] with its first bytes as soon as it
//! crosses the cap, and the next read skips the rest of it: a caller that stops at an
//! overlong line reads no more, one that goes on gets the line after it.

use std::io;

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// One line read by a [`LineReader`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line {
    /// A whole line, without its end.
    Whole(Vec<u8>),
    /// A line longer than the cap: its first `cap` bytes. The rest is skipped by the
    /// next read.
    Overlong(Vec<u8>),
}

/// Reads lines of at most `cap` bytes (without their end) from a buffered input.
///
/// A read is not cancel-safe: a read dropped half-way loses the part of the line it
/// had taken.
#[derive(Debug)]
pub struct LineReader<R> {
    input: R,
    cap: usize,
    /// Set when an overlong line was handed out before its end was read.
    skipping: bool,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    /// Reads `input` in lines of at most `cap` bytes.
    pub fn new(input: R, cap: usize) -> Self {
        Self {
            input,
            cap,
            skipping: false,
        }
    }

    /// The longest line handed out whole, in bytes.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// The next line; `None` at the end of the input. The last line needs no `\n`.
    pub async fn next_line(&mut self) -> io::Result<Option<Line>> {
        if self.skipping {
            self.skipping = false;
            if !self.skip_line().await? {
                return Ok(None);
            }
        }
        // The bytes held: the cap, and one more for a `\r` that may precede the end.
        let limit = self.cap.saturating_add(1);
        let mut line = Vec::new();
        loop {
            let available = self.input.fill_buf().await?;
            if available.is_empty() {
                return Ok((!line.is_empty()).then(|| self.finish(line)));
            }
            let (chunk, ended) = match memchr::memchr(b'\n', available) {
                Some(end) => (&available[..end], true),
                None => (available, false),
            };
            let room = limit - line.len();
            let taken = chunk.len();
            if taken > room {
                line.extend_from_slice(&chunk[..room]);
                line.truncate(self.cap);
                self.input.consume(taken + usize::from(ended));
                self.skipping = !ended;
                return Ok(Some(Line::Overlong(line)));
            }
            line.extend_from_slice(chunk);
            self.input.consume(taken + usize::from(ended));
            if ended {
                return Ok(Some(self.finish(line)));
            }
        }
    }

    /// A line read to its end (at most `cap + 1` bytes), without a last `\r`.
    fn finish(&self, mut line: Vec<u8>) -> Line {
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if line.len() > self.cap {
            line.truncate(self.cap);
            Line::Overlong(line)
        } else {
            Line::Whole(line)
        }
    }

    /// Reads past the end of the current line; `false` when the input ended first.
    async fn skip_line(&mut self) -> io::Result<bool> {
        loop {
            let available = self.input.fill_buf().await?;
            if available.is_empty() {
                return Ok(false);
            }
            match memchr::memchr(b'\n', available) {
                Some(end) => {
                    self.input.consume(end + 1);
                    return Ok(true);
                }
                None => {
                    let taken = available.len();
                    self.input.consume(taken);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use tokio::io::BufReader;

    fn whole(text: &str) -> Line {
        Line::Whole(text.as_bytes().to_vec())
    }

    fn overlong(text: &str) -> Line {
        Line::Overlong(text.as_bytes().to_vec())
    }

    /// Every line of `input` read with `cap`, through a buffer of `buffer` bytes (small
    /// buffers put line ends and the cap across reads).
    async fn read_all(input: &[u8], cap: usize, buffer: usize) -> Vec<Line> {
        let mut reader = LineReader::new(BufReader::with_capacity(buffer, input), cap);
        let mut lines = Vec::new();
        while let Some(line) = reader.next_line().await.unwrap() {
            lines.push(line);
        }
        lines
    }

    /// The same input read through buffers of every size from 1 byte to past the input.
    async fn read_all_buffers(input: &[u8], cap: usize) -> Vec<Line> {
        let first = read_all(input, cap, 1).await;
        for buffer in 2..=input.len() + 1 {
            assert_eq!(
                read_all(input, cap, buffer).await,
                first,
                "with a {buffer}-byte buffer"
            );
        }
        first
    }

    #[tokio::test]
    async fn lines_end_at_a_newline_with_or_without_a_carriage_return() {
        assert_eq!(
            read_all_buffers(b"one\ntwo\r\n\nthree\r\n", 10).await,
            [whole("one"), whole("two"), whole(""), whole("three")]
        );
    }

    #[tokio::test]
    async fn the_last_line_needs_no_newline() {
        assert_eq!(
            read_all_buffers(b"one\nlast", 10).await,
            [whole("one"), whole("last")]
        );
        assert_eq!(read_all_buffers(b"", 10).await, []);
    }

    #[tokio::test]
    async fn an_overlong_line_is_cut_skipped_to_its_end_and_the_next_line_read() {
        assert_eq!(
            read_all_buffers(b"short\n0123456789abcdef\nok\n", 10).await,
            [whole("short"), overlong("0123456789"), whole("ok")]
        );
        // An overlong last line, and one of exactly one byte over the cap.
        assert_eq!(
            read_all_buffers(b"0123456789a\n0123456789abc", 10).await,
            [overlong("0123456789"), overlong("0123456789")]
        );
    }

    #[tokio::test]
    async fn a_line_of_exactly_the_cap_is_whole_and_its_line_end_does_not_count() {
        assert_eq!(
            read_all_buffers(b"0123456789\n0123456789\r\n0123456789", 10).await,
            [
                whole("0123456789"),
                whole("0123456789"),
                whole("0123456789")
            ]
        );
        // A `\r` that is not before the end counts.
        assert_eq!(
            read_all_buffers(b"012345678\rx\n", 10).await,
            [overlong("012345678\r")]
        );
    }

    #[tokio::test]
    async fn an_overlong_line_is_handed_out_before_its_end_is_read() {
        // The rest of the line never comes: a caller that stops reads no more.
        let (mut writer, input) = tokio::io::duplex(64);
        let mut reader = LineReader::new(BufReader::new(input), 10);
        tokio::io::AsyncWriteExt::write_all(&mut writer, b"0123456789abc")
            .await
            .unwrap();
        assert_eq!(
            reader.next_line().await.unwrap(),
            Some(overlong("0123456789"))
        );
        tokio::io::AsyncWriteExt::write_all(&mut writer, b"def\nnext\n")
            .await
            .unwrap();
        drop(writer);
        assert_eq!(reader.next_line().await.unwrap(), Some(whole("next")));
        assert_eq!(reader.next_line().await.unwrap(), None);
    }

    #[tokio::test]
    async fn a_reader_holds_no_more_than_the_cap_of_a_huge_line() {
        // 64 MiB without a newline, read through the default buffer.
        let mut input = vec![b'x'; 64 * 1024 * 1024];
        input.extend_from_slice(b"\nafter\n");
        let mut reader = LineReader::new(BufReader::new(input.as_slice()), 1024);
        let Some(Line::Overlong(prefix)) = reader.next_line().await.unwrap() else {
            panic!("the huge line was not refused");
        };
        assert_eq!(prefix.len(), 1024);
        assert!(prefix.capacity() <= 4 * 1024, "{}", prefix.capacity());
        assert_eq!(reader.next_line().await.unwrap(), Some(whole("after")));
        assert_eq!(reader.cap(), 1024);
    }
}
