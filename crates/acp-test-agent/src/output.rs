//! Standard output and input as the protocol's line transport.
//!
//! One thread owns stdout. The SDK hands it each outgoing JSON-RPC line through the
//! [`Lines`] sink; the misbehaviour commands (`/junk`, `/crash`, `/flood`) push raw bytes
//! into the same queue, so nothing ever interleaves inside a line. Lines queued
//! together are written with one flush, which keeps fast streams (`/chunks`) cheap.
//! `/timed` lines are made by the writer itself, stamped with the monotonic clock just
//! before they are written, so a reader can measure what happens after the write.

use std::io::{self, BufWriter, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use agent_client_protocol::Lines;
use agent_client_protocol::v1::schema::{CLIENT_METHOD_NAMES, SessionNotification};
use futures::{AsyncBufReadExt, Sink, Stream};
use tokio::sync::oneshot;
use tokio_util::compat::TokioAsyncReadCompatExt;

/// What the writer thread is asked to do, in order.
enum Item {
    /// One JSON-RPC message; the writer adds the newline.
    Frame(String),
    /// Bytes written as they are.
    Raw(Vec<u8>),
    /// Flush, then signal that everything queued before has been written.
    Barrier(oneshot::Sender<()>),
    /// Write `x` forever, with no newline, until stdout fails.
    Flood,
    /// Take the monotonic clock, write the line `line` makes of it, flush, and hand
    /// the time back.
    Stamped {
        line: StampedLine,
        written: oneshot::Sender<u64>,
    },
}

/// Makes a line (with its newline) from a CLOCK_MONOTONIC time in nanoseconds.
type StampedLine = Box<dyn FnOnce(u64) -> io::Result<Vec<u8>> + Send>;

/// A handle on the stdout writer thread.
#[derive(Clone)]
pub(crate) struct Output {
    queue: mpsc::Sender<Item>,
    /// Set once `/flood` starts: nothing queued afterwards will be written.
    flooding: Arc<AtomicBool>,
}

impl Output {
    /// Starts the writer thread.
    pub(crate) fn start() -> anyhow::Result<Self> {
        let (queue, items) = mpsc::channel();
        std::thread::Builder::new()
            .name("stdout".to_owned())
            .spawn(move || write_loop(&items))?;
        Ok(Self {
            queue,
            flooding: Arc::new(AtomicBool::new(false)),
        })
    }

    /// The protocol transport: outgoing lines go to this writer, incoming lines come
    /// from stdin until end of file.
    pub(crate) fn transport(
        &self,
    ) -> Lines<
        impl Sink<String, Error = io::Error> + Send + 'static,
        impl Stream<Item = io::Result<String>> + Send + 'static,
    > {
        let outgoing = Box::pin(futures::sink::unfold(
            self.queue.clone(),
            |queue, line: String| async move {
                queue.send(Item::Frame(line)).map_err(|_| stopped())?;
                Ok::<_, io::Error>(queue)
            },
        ));
        let incoming = Box::pin(futures::io::BufReader::new(tokio::io::stdin().compat()).lines());
        Lines::new(outgoing, incoming)
    }

    /// Writes `bytes` as they are, after everything queued so far.
    pub(crate) fn raw(&self, bytes: impl Into<Vec<u8>>) -> io::Result<()> {
        self.queue
            .send(Item::Raw(bytes.into()))
            .map_err(|_| stopped())
    }

    /// Writes a `session/update` notification directly, bypassing the SDK's queue, so
    /// that its place among raw writes is exact.
    pub(crate) fn notification(&self, notification: &SessionNotification) -> io::Result<()> {
        self.raw(notification_line(notification)?)
    }

    /// Writes the line `line` makes of the CLOCK_MONOTONIC time (in nanoseconds) taken
    /// by the writer just before it writes it, after everything queued so far; waits
    /// until it is flushed and returns that time.
    pub(crate) async fn stamped(
        &self,
        line: impl FnOnce(u64) -> io::Result<Vec<u8>> + Send + 'static,
    ) -> io::Result<u64> {
        let (written, time) = oneshot::channel();
        self.queue
            .send(Item::Stamped {
                line: Box::new(line),
                written,
            })
            .map_err(|_| stopped())?;
        time.await.map_err(|_| stopped())
    }

    /// Starts writing `x` forever; nothing queued afterwards is ever written.
    pub(crate) fn flood(&self) -> io::Result<()> {
        self.flooding.store(true, Ordering::Release);
        self.queue.send(Item::Flood).map_err(|_| stopped())
    }

    /// Waits until everything queued so far has been written and flushed, for at most
    /// `limit`. Returns whether it was (never, once flooding).
    pub(crate) async fn flushed(&self, limit: Duration) -> bool {
        if self.flooding.load(Ordering::Acquire) {
            return false;
        }
        let (done, written) = oneshot::channel();
        if self.queue.send(Item::Barrier(done)).is_err() {
            return false;
        }
        matches!(tokio::time::timeout(limit, written).await, Ok(Ok(())))
    }
}

/// A `session/update` notification as one JSON-RPC line, with its newline.
pub(crate) fn notification_line(notification: &SessionNotification) -> io::Result<Vec<u8>> {
    let message = serde_json::json!({
        "jsonrpc": "2.0",
        "method": CLIENT_METHOD_NAMES.session_update,
        "params": notification,
    });
    let mut line = serde_json::to_vec(&message).map_err(io::Error::other)?;
    line.push(b'\n');
    Ok(line)
}

/// Now on CLOCK_MONOTONIC, in nanoseconds: the clock every process of the machine
/// shares, so a reader in another process can compare its own readings with it.
pub(crate) fn monotonic_nanos() -> u64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    let seconds = u64::try_from(now.tv_sec).unwrap_or_default();
    let nanos = u64::try_from(now.tv_nsec).unwrap_or_default();
    seconds * 1_000_000_000 + nanos
}

fn stopped() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the stdout writer has stopped")
}

/// The writer thread: drains the queue, flushing whenever it runs empty.
fn write_loop(items: &mpsc::Receiver<Item>) {
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(64 * 1024, stdout.lock());
    while let Ok(first) = items.recv() {
        let mut next = Some(first);
        while let Some(item) = next {
            if let Err(error) = write_item(&mut out, item) {
                tracing::warn!(%error, "writing to stdout failed; the writer stops");
                return;
            }
            next = items.try_recv().ok();
        }
        if let Err(error) = out.flush() {
            tracing::warn!(%error, "flushing stdout failed; the writer stops");
            return;
        }
    }
}

fn write_item(out: &mut impl Write, item: Item) -> io::Result<()> {
    match item {
        Item::Frame(line) => {
            out.write_all(line.as_bytes())?;
            out.write_all(b"\n")
        }
        Item::Raw(bytes) => out.write_all(&bytes),
        Item::Barrier(done) => {
            out.flush()?;
            // The waiter may have given up; that is not the writer's concern.
            done.send(()).ok();
            Ok(())
        }
        Item::Stamped { line, written } => {
            let now = monotonic_nanos();
            out.write_all(&line(now)?)?;
            out.flush()?;
            // The waiter may have given up; that is not the writer's concern.
            written.send(now).ok();
            Ok(())
        }
        Item::Flood => {
            let block = [b'x'; 16 * 1024];
            loop {
                out.write_all(&block)?;
                out.flush()?;
            }
        }
    }
}
