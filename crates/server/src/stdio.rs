//! `hearth app-server --stdio`: the same protocol over stdin and stdout, one JSON
//! message per line, for editors that start Hearth as a child process. Whoever can
//! start the process can read the data directory, so no token is asked for; stdout
//! carries only protocol messages (logs go to stderr).

use axum::extract::ws::Utf8Bytes;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};

use crate::backend::{Backend, Shared};
use crate::connection::Connection;
use crate::error::{Result, ServerError};
use crate::options::DEFAULT_QUEUE_CAPACITY;
use crate::writer::Outgoing;

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
    let mut lines = BufReader::new(reader).lines();
    loop {
        match lines.next_line().await {
            Ok(Some(line)) if line.trim().is_empty() => {}
            Ok(Some(line)) => connection.receive(&line).await,
            Ok(None) => break,
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
