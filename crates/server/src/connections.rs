//! Accepting and serving HTTP connections, with bounds on what a connection that sends
//! nothing useful can hold:
//!
//! - A new connection has [`Limits::header_read_timeout`] to send its first request's
//!   head, and a kept-alive one [`Limits::idle_timeout`] to start its next request;
//!   then it is closed. A connection with a request in flight (its response not yet sent
//!   whole, such as an MCP event stream) has no deadline.
//! - At most [`Limits::max_connections`] are held (lowered to what the open-file limit
//!   allows, which the server raises to its hard limit at start). At the cap a new
//!   connection closes the oldest one that has not sent a whole request yet, else the
//!   oldest idle one, so a client that sends requests is served while others only
//!   connect; only when every connection is busy is the new one refused.
//! - A failed `accept` (out of file descriptors) makes room the same way and waits a
//!   moment, instead of spinning.
//!
//! Upgraded connections (WebSockets) leave this bookkeeping once upgraded; they are
//! authenticated, and end with their session or their client.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// Open files kept for everything but HTTP connections (the database, WebSockets,
/// agents' pipes, MCP servers).
const FILE_RESERVE: u64 = 512;
/// The fewest connections the open-file limit lowers the cap to.
const MIN_CONNECTIONS: usize = 16;
/// How long the accept loop waits after a failed `accept`.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);
/// How long the accept loop waits for a connection it closed to make room to be gone.
const EVICTION_WAIT: Duration = Duration::from_secs(1);
/// How long a stopping server waits for requests in flight.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
/// The largest request head buffered (hyper's smallest allowed is 8 KiB).
const MAX_HEAD_BUFFER: usize = 64 * 1024;
/// How often the same warning about connections may be logged.
const WARN_EVERY: Duration = Duration::from_secs(60);

/// Timeouts and the cap.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub header_read_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_connections: usize,
}

/// Raises this process's soft limit on open files to its hard limit (the server does at
/// start); returns the soft limit now (`None`: unlimited).
pub fn raise_open_file_limit() -> Option<u64> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let current = limit.current?;
    // An unlimited hard limit is not a number the kernel accepts for the soft one.
    let wanted = limit.maximum.unwrap_or(1 << 20).min(1 << 20);
    if current >= wanted {
        return Some(current);
    }
    match setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(wanted),
            maximum: limit.maximum,
        },
    ) {
        Ok(()) => {
            tracing::debug!(from = current, to = wanted, "raised the open-file limit");
            Some(wanted)
        }
        Err(error) => {
            tracing::debug!(%error, current, wanted, "cannot raise the open-file limit");
            Some(current)
        }
    }
}

/// The cap on connections: what was asked for, within the open-file limit.
pub(crate) fn connection_cap(wanted: usize, open_files: Option<u64>) -> usize {
    let allowed = open_files.map_or(usize::MAX, |open_files| {
        usize::try_from(open_files.saturating_sub(FILE_RESERVE)).unwrap_or(usize::MAX)
    });
    wanted.min(allowed.max(MIN_CONNECTIONS)).max(1)
}

/// Where a connection is in its life.
#[derive(Clone, Copy, Debug)]
enum Phase {
    /// Accepted at `since`; no whole request head yet.
    Opening { since: Instant },
    /// Requests in flight (their responses not yet sent whole).
    Busy { requests: usize },
    /// Kept alive between requests since `since`.
    Idle { since: Instant },
}

/// What the accept loop and a connection's task share about it.
struct Tracked {
    phase: Mutex<Phase>,
    changed: Notify,
    evicted: CancellationToken,
    /// Cancelled once the connection's socket is closed.
    gone: CancellationToken,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Tracked {
    fn phase(&self) -> Phase {
        *lock(&self.phase)
    }

    /// When the connection is closed unless a request arrives (none while busy).
    fn deadline(&self, limits: &Limits) -> Option<Instant> {
        match self.phase() {
            Phase::Opening { since } => Some(since + limits.header_read_timeout),
            Phase::Busy { .. } => None,
            Phase::Idle { since } => Some(since + limits.idle_timeout),
        }
    }

    /// A request's head arrived: busy until the returned guard is dropped (its response
    /// sent whole, or abandoned).
    fn begin(self: &Arc<Self>) -> InFlight {
        {
            let mut phase = lock(&self.phase);
            *phase = match *phase {
                Phase::Busy { requests } => Phase::Busy {
                    requests: requests + 1,
                },
                Phase::Opening { .. } | Phase::Idle { .. } => Phase::Busy { requests: 1 },
            };
        }
        self.changed.notify_one();
        InFlight(Arc::clone(self))
    }
}

/// A request in flight on a connection.
struct InFlight(Arc<Tracked>);

impl Drop for InFlight {
    fn drop(&mut self) {
        {
            let mut phase = lock(&self.0.phase);
            *phase = match *phase {
                Phase::Busy { requests } if requests > 1 => Phase::Busy {
                    requests: requests - 1,
                },
                _ => Phase::Idle {
                    since: Instant::now(),
                },
            };
        }
        self.0.changed.notify_one();
    }
}

/// A response body that keeps its request in flight until it is sent whole.
struct Tracking {
    body: Body,
    _in_flight: InFlight,
}

impl HttpBody for Tracking {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// The connections being served, oldest first.
#[derive(Default)]
struct Registry {
    connections: Mutex<Connections>,
}

#[derive(Default)]
struct Connections {
    next: u64,
    open: BTreeMap<u64, Arc<Tracked>>,
}

impl Registry {
    fn admit(&self) -> (u64, Arc<Tracked>) {
        let tracked = Arc::new(Tracked {
            phase: Mutex::new(Phase::Opening {
                since: Instant::now(),
            }),
            changed: Notify::new(),
            evicted: CancellationToken::new(),
            gone: CancellationToken::new(),
        });
        let mut connections = lock(&self.connections);
        let id = connections.next;
        connections.next += 1;
        connections.open.insert(id, Arc::clone(&tracked));
        (id, tracked)
    }

    fn remove(&self, id: u64) {
        lock(&self.connections).open.remove(&id);
    }

    fn len(&self) -> usize {
        lock(&self.connections).open.len()
    }

    /// Closes the oldest connection that has not sent a whole request, else the oldest
    /// idle one, and returns it (its `gone` says when its socket is closed); `None` when
    /// every connection is busy.
    fn evict_one(&self) -> Option<Arc<Tracked>> {
        let mut connections = lock(&self.connections);
        let oldest = |wanted: fn(Phase) -> bool| {
            connections
                .open
                .iter()
                .find(|(_, tracked)| wanted(tracked.phase()))
                .map(|(id, _)| *id)
        };
        let chosen = oldest(|phase| matches!(phase, Phase::Opening { .. }))
            .or_else(|| oldest(|phase| matches!(phase, Phase::Idle { .. })));
        let tracked = chosen.and_then(|id| connections.open.remove(&id))?;
        tracked.evicted.cancel();
        Some(tracked)
    }

    fn evict_all(&self) {
        for (_, tracked) in std::mem::take(&mut lock(&self.connections).open) {
            tracked.evicted.cancel();
        }
    }
}

/// Logs a warning at most once a [`WARN_EVERY`].
struct Warner(Option<Instant>);

impl Warner {
    fn warn(&mut self, message: &str, detail: &dyn std::fmt::Display) {
        if self.0.is_some_and(|last| last.elapsed() < WARN_EVERY) {
            tracing::debug!(%detail, "{message}");
            return;
        }
        self.0 = Some(Instant::now());
        tracing::warn!(%detail, "{message}");
    }
}

fn is_connection_error(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// Serves `router` on `listener` until `shutdown` completes; then `stop` is cancelled,
/// idle connections close, and requests in flight get [`SHUTDOWN_GRACE`] to finish.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send,
    stop: CancellationToken,
) {
    let registry = Arc::new(Registry::default());
    // Every connection's task holds a receiver; the sender sees when all are gone.
    let (open_tx, open_rx) = watch::channel(());
    let mut warner = Warner(None);
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        match accepted {
            Ok((stream, _)) => {
                if registry.len() >= limits.max_connections {
                    let Some(evicted) = registry.evict_one() else {
                        warner.warn(
                            "every connection is busy at the cap: refused a new one",
                            &limits.max_connections,
                        );
                        continue;
                    };
                    // Its socket closes before another opens, so the open files stay
                    // within the cap however fast connections arrive.
                    let gone = tokio::time::timeout(EVICTION_WAIT, evicted.gone.cancelled());
                    if gone.await.is_err() {
                        tracing::debug!("a connection closed to make room is slow to go");
                    }
                }
                spawn_connection(
                    stream,
                    router.clone(),
                    Arc::clone(&registry),
                    limits,
                    stop.clone(),
                    open_rx.clone(),
                );
            }
            Err(error) if is_connection_error(&error) => {}
            Err(error) => {
                // Out of file descriptors, most likely: make room, and wait a moment
                // rather than retry at once.
                warner.warn("cannot accept a connection", &error);
                let evicted = registry.evict_one();
                let made_room = async {
                    match evicted {
                        Some(evicted) => evicted.gone.cancelled().await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    () = made_room => {}
                    () = tokio::time::sleep(ACCEPT_BACKOFF) => {}
                    () = &mut shutdown => break,
                }
            }
        }
    }
    drop(listener);
    stop.cancel();
    drop(open_rx);
    if tokio::time::timeout(SHUTDOWN_GRACE, open_tx.closed())
        .await
        .is_err()
    {
        tracing::warn!(
            open = registry.len(),
            "requests still running after {SHUTDOWN_GRACE:?}; closing their connections"
        );
        registry.evict_all();
    }
}

/// Resolves at `deadline`, or never.
async fn until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

fn spawn_connection(
    stream: TcpStream,
    router: Router,
    registry: Arc<Registry>,
    limits: Limits,
    stop: CancellationToken,
    open: watch::Receiver<()>,
) {
    // Envelopes are small and latency matters: no Nagle delay.
    if let Err(error) = stream.set_nodelay(true) {
        tracing::debug!(%error, "cannot turn off Nagle's algorithm");
    }
    let (id, tracked) = registry.admit();
    tokio::spawn(async move {
        let service = {
            let tracked = Arc::clone(&tracked);
            hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
                let in_flight = tracked.begin();
                let router = router.clone();
                async move {
                    let response = router
                        .oneshot(request)
                        .await
                        .unwrap_or_else(|never: Infallible| match never {});
                    Ok::<_, Infallible>(response.map(|body| Tracking {
                        body,
                        _in_flight: in_flight,
                    }))
                }
            })
        };
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder.max_buf_size(MAX_HEAD_BUFFER);
        let mut connection = Box::pin(
            builder
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades(),
        );
        let mut stopping = false;
        loop {
            let deadline = tracked.deadline(&limits);
            let changed = tracked.changed.notified();
            tokio::select! {
                served = connection.as_mut() => {
                    if let Err(error) = served {
                        tracing::trace!(%error, "a connection ended with an error");
                    }
                    break;
                }
                () = tracked.evicted.cancelled() => {
                    tracing::debug!("closed a connection to make room for a new one");
                    break;
                }
                () = stop.cancelled(), if !stopping => {
                    stopping = true;
                    if !matches!(tracked.phase(), Phase::Busy { .. }) {
                        break;
                    }
                    connection.as_mut().graceful_shutdown();
                }
                () = changed => {}
                () = until(deadline) => {
                    if tracked.deadline(&limits).is_some_and(|due| due <= Instant::now()) {
                        tracing::debug!("closed a connection that sent no request in time");
                        break;
                    }
                }
            }
        }
        drop(connection);
        registry.remove(id);
        tracked.gone.cancel();
        drop(open);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_stays_within_the_open_file_limit() {
        assert_eq!(connection_cap(4096, Some(20_000)), 4096);
        assert_eq!(connection_cap(4096, Some(1024)), 512);
        assert_eq!(connection_cap(4096, Some(100)), MIN_CONNECTIONS);
        assert_eq!(connection_cap(4, Some(100)), 4);
        assert_eq!(connection_cap(0, None), 1);
        assert_eq!(connection_cap(4096, None), 4096);
    }

    #[tokio::test]
    async fn eviction_takes_the_oldest_opening_connection_then_the_oldest_idle_one() {
        let registry = Registry::default();
        let (_, busy) = registry.admit();
        let held = busy.begin();
        let (_, idle) = registry.admit();
        drop(idle.begin());
        let (_, first) = registry.admit();
        let (_, second) = registry.admit();
        assert!(registry.evict_one().is_some());
        assert!(first.evicted.is_cancelled());
        assert!(!second.evicted.is_cancelled());
        assert!(registry.evict_one().is_some());
        assert!(second.evicted.is_cancelled());
        assert!(registry.evict_one().is_some());
        assert!(idle.evicted.is_cancelled());
        assert!(
            registry.evict_one().is_none(),
            "a busy connection is never evicted"
        );
        assert!(!busy.evicted.is_cancelled());
        assert_eq!(registry.len(), 1);
        drop(held);
        assert!(matches!(busy.phase(), Phase::Idle { .. }));
    }

    #[tokio::test]
    async fn a_connection_is_busy_until_its_last_response_is_sent() {
        let registry = Registry::default();
        let (_, tracked) = registry.admit();
        let limits = Limits {
            header_read_timeout: Duration::from_secs(1),
            idle_timeout: Duration::from_secs(5),
            max_connections: 1,
        };
        let Phase::Opening { since } = tracked.phase() else {
            panic!("a new connection is opening");
        };
        assert_eq!(
            tracked.deadline(&limits),
            Some(since + limits.header_read_timeout)
        );
        let first = tracked.begin();
        let second = tracked.begin();
        assert_eq!(tracked.deadline(&limits), None);
        drop(first);
        assert_eq!(tracked.deadline(&limits), None, "one is still in flight");
        drop(second);
        let Phase::Idle { since } = tracked.phase() else {
            panic!("idle once every response is sent");
        };
        assert_eq!(tracked.deadline(&limits), Some(since + limits.idle_timeout));
    }
}
