//! `hearth app-server --stdio`: the same protocol over stdin and stdout, one JSON
//! message per line, for editors that start Hearth as a child process. Whoever can
//! start the process can read the data directory, so no token is asked for; stdout
//! carries only protocol messages (logs go to stderr).

use axum::extract::ws::Utf8Bytes;
use hearth_protocol::{ErrorKind, RpcError};
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter,
};

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
    /// A line longer than the limit (read to its end and dropped), or not UTF-8.
    Refused(RefusedLine),
    /// The input ended.
    End,
}

#[derive(Debug, PartialEq, Eq)]
enum RefusedLine {
    TooLong,
    NotUtf8,
}

/// Reads up to the next `\n`, holding at most `max` bytes of it: a longer line is
/// consumed and refused, so one oversized message costs no more memory than the limit.
async fn read_line<R: AsyncBufRead + Unpin>(reader: &mut R, max: usize) -> std::io::Result<Line> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            if line.is_empty() && !too_long {
                return Ok(Line::End);
            }
            break;
        }
        let (chunk, ended) = match memchr_newline(available) {
            Some(at) => (&available[..at], Some(at + 1)),
            None => (available, None),
        };
        if !too_long {
            if line.len() + chunk.len() > max {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let consumed = ended.unwrap_or(available.len());
        reader.consume(consumed);
        if ended.is_some() {
            break;
        }
    }
    if too_long {
        return Ok(Line::Refused(RefusedLine::TooLong));
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(String::from_utf8(line).map_or(Line::Refused(RefusedLine::NotUtf8), Line::Text))
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&byte| byte == b'\n')
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
    let (connection, written) = Connection::start(shared, LinesOut(BufWriter::new(writer)));
    let mut reader = BufReader::new(reader);
    loop {
        match read_line(&mut reader, DEFAULT_MAX_REQUEST_BYTES).await {
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
        let mut reader = BufReader::with_capacity(4, input);
        let mut read = Vec::new();
        loop {
            let line = read_line(&mut reader, max).await.unwrap();
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
