//! `hearth app-server --stdio`: the same protocol over stdin and stdout, one JSON
//! message per line, for editors that start Hearth as a child process. Whoever can
//! start the process can read the data directory, so no token is asked for; stdout
//! carries only protocol messages (logs go to stderr).

use axum::extract::ws::Utf8Bytes;
use hearth_process::{Line as CappedLine, LineReader};
use hearth_protocol::{ErrorKind, RpcError};
use tokio::io::{AsyncBufRead, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};

use crate::backend::{Backend, Shared};
use crate::connection::Connection;
use crate::error::{Result, ServerError};
use crate::options::{DEFAULT_MAX_REQUEST_BYTES, DEFAULT_QUEUE_CAPACITY};
use crate::writer::Outgoing;

/// One line read with a size limit.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    /// A whole line, without its end.
    Text(String),
    /// A line longer than the limit (the rest of it skipped), or not UTF-8.
    Refused(RefusedLine),
    /// The input ended.
    End,
}

#[derive(Debug, PartialEq, Eq)]
enum RefusedLine {
    TooLong,
    NotUtf8,
}

/// The next line, holding at most the reader's cap of it: a longer line is refused (and
/// the rest of it skipped by the next read), so one oversized message costs no more
/// memory than the limit.
async fn read_line<R: AsyncBufRead + Unpin>(reader: &mut LineReader<R>) -> std::io::Result<Line> {
    Ok(match reader.next_line().await? {
        Some(CappedLine::Whole(line)) => {
            String::from_utf8(line).map_or(Line::Refused(RefusedLine::NotUtf8), Line::Text)
        }
        Some(CappedLine::Overlong(_)) => Line::Refused(RefusedLine::TooLong),
        None => Line::End,
    })
}

fn refusal(refused: &RefusedLine, max: usize) -> RpcError {
    match refused {
        RefusedLine::TooLong => RpcError::new(
            ErrorKind::InvalidRequest,
            format!("message larger than {max} bytes; send smaller requests"),
            false,
        ),
        RefusedLine::NotUtf8 => RpcError::new(
            ErrorKind::ParseError,
            "message is not UTF-8 text; send one JSON-RPC message per line".to_owned(),
            false,
        ),
    }
}

struct LinesOut<W>(BufWriter<W>);

impl<W: AsyncWrite + Unpin + Send + 'static> Outgoing for LinesOut<W> {
    async fn feed(&mut self, text: Utf8Bytes) -> std::io::Result<()> {
        self.0.write_all(text.as_bytes()).await?;
        self.0.write_all(b"\n").await
    }

    async fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush().await
    }
}

/// Serves one connection over a reader and a writer of JSON Lines until the reader ends;
/// everything queued is written before it returns.
pub async fn serve_lines<R, W>(backend: Backend, reader: R, writer: W) -> Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let shared = Shared::new(backend, DEFAULT_QUEUE_CAPACITY);
    let (connection, written) = Connection::start(
        shared,
        crate::access::Principal::Operator,
        LinesOut(BufWriter::new(writer)),
    );
    let mut reader = LineReader::new(BufReader::new(reader), DEFAULT_MAX_REQUEST_BYTES);
    loop {
        match read_line(&mut reader).await {
            Ok(Line::Text(line)) if line.trim().is_empty() => {}
            Ok(Line::Text(line)) => connection.receive(&line).await,
            Ok(Line::Refused(refused)) => {
                connection
                    .receive_error(refusal(&refused, DEFAULT_MAX_REQUEST_BYTES))
                    .await;
            }
            Ok(Line::End) => break,
            Err(error) => {
                connection.close();
                return Err(ServerError::Serve(error));
            }
        }
    }
    connection.close();
    drop(connection);
    if let Err(error) = written.await {
        tracing::debug!(%error, "the stdout writer ended abnormally");
    }
    Ok(())
}

/// Serves the protocol on this process's stdin and stdout.
pub async fn serve_stdio(backend: Backend) -> Result<()> {
    serve_lines(backend, tokio::io::stdin(), tokio::io::stdout()).await
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], max: usize) -> Vec<Line> {
        let mut reader = LineReader::new(BufReader::with_capacity(4, input), max);
        let mut read = Vec::new();
        loop {
            let line = read_line(&mut reader).await.unwrap();
            let end = line == Line::End;
            read.push(line);
            if end {
                return read;
            }
        }
    }

    #[tokio::test]
    async fn lines_longer_than_the_limit_are_refused_and_the_next_one_is_read() {
        let read = lines(b"short\r\n0123456789abc\nok\n\xff\xfe\nlast", 10).await;
        assert_eq!(
            read,
            [
                Line::Text("short".into()),
                Line::Refused(RefusedLine::TooLong),
                Line::Text("ok".into()),
                Line::Refused(RefusedLine::NotUtf8),
                Line::Text("last".into()),
                Line::End,
            ]
        );
    }

    #[tokio::test]
    async fn a_line_of_exactly_the_limit_is_kept() {
        let read = lines(b"0123456789\n", 10).await;
        assert_eq!(read, [Line::Text("0123456789".into()), Line::End]);
    }
}
