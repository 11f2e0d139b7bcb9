//! A mock model server on 127.0.0.1 that speaks genuine OpenAI and Anthropic HTTP and
//! SSE, plays scripted responses in order, injects faults, and records every request.
//!
//! It is a small HTTP/1.1 server of its own rather than a general mock library because
//! the faults it must produce happen below the level such libraries work at: a
//! connection reset in the middle of a chunked stream, pauses between two SSE events,
//! a response that never comes. Responses are served first-in first-out; when the queue
//! is empty, the fallback response (if set) is served, else a 500 naming the request.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use hearth_test_support::{MockModelServer, OpenAiStream};
//! let server = MockModelServer::start().await?;
//! server.enqueue(OpenAiStream::new("gpt-test").role().text("Hello").finish("stop").done());
//! // ... point a client at server.url_with("/v1") ...
//! let requests = server.requests();
//! # Ok(()) }
//! ```

mod anthropic;
mod http;
mod openai;

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio::task::{JoinHandle, JoinSet};

pub use anthropic::{AnthropicStream, anthropic_error_body, anthropic_message};
pub use openai::{OpenAiStream, openai_completion, openai_error_body};

/// One step of a streamed (chunked) response body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Send these bytes as one chunk, at once.
    Send(Vec<u8>),
    /// Wait before the next step (noticing a client that goes away meanwhile).
    Pause(Duration),
    /// Reset the connection (TCP RST) here.
    Reset,
}

#[derive(Clone, Debug)]
enum Body {
    Full(Vec<u8>),
    Steps(Vec<Step>),
    Reset,
    Close,
    Hang,
}

/// A scripted response.
#[derive(Clone, Debug)]
pub struct MockResponse {
    status: u16,
    headers: Vec<(String, String)>,
    body: Body,
}

impl MockResponse {
    /// A JSON response.
    pub fn json(status: u16, value: &Value) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: Body::Full(value.to_string().into_bytes()),
        }
    }

    /// A response with any body and content type.
    pub fn text(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), content_type.into())],
            body: Body::Full(body.into()),
        }
    }

    /// A 200 `text/event-stream` response played step by step.
    pub fn sse(steps: Vec<Step>) -> Self {
        Self {
            status: 200,
            headers: vec![
                (
                    "content-type".into(),
                    "text/event-stream; charset=utf-8".into(),
                ),
                ("cache-control".into(), "no-cache".into()),
            ],
            body: Body::Steps(steps),
        }
    }

    /// An OpenAI-style error: `{"error": {"message", "type", "code"}}`.
    pub fn openai_error(status: u16, message: &str, error_type: &str) -> Self {
        Self::json(status, &openai_error_body(message, error_type, None))
    }

    /// An Anthropic-style error: `{"type": "error", "error": {"type", "message"}}`.
    pub fn anthropic_error(status: u16, error_type: &str, message: &str) -> Self {
        Self::json(status, &anthropic_error_body(error_type, message))
    }

    /// Reads the request, then resets the connection without answering.
    pub fn reset() -> Self {
        Self {
            status: 0,
            headers: Vec::new(),
            body: Body::Reset,
        }
    }

    /// Reads the request, then closes the connection without answering.
    pub fn close() -> Self {
        Self {
            status: 0,
            headers: Vec::new(),
            body: Body::Close,
        }
    }

    /// Reads the request and never answers.
    pub fn hang() -> Self {
        Self {
            status: 0,
            headers: Vec::new(),
            body: Body::Hang,
        }
    }

    /// Adds a response header.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers
            .push((name.to_ascii_lowercase(), value.to_owned()));
        self
    }

    /// Replaces the status.
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }
}

/// A request the server received.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedRequest {
    /// `GET`, `POST`, ...
    pub method: String,
    /// Path and query.
    pub path: String,
    /// Headers in order, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
    /// Which connection carried it (1, 2, ... in accept order).
    pub connection: u64,
    /// When it was read completely.
    pub received_at: Instant,
}

impl RecordedRequest {
    /// The first value of a header.
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value.as_str())
    }

    /// The body as JSON (`Value::Null` when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

/// How the server's side of an exchange ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The whole response was sent.
    Completed,
    /// The client closed the connection before the response was complete.
    ClientGone,
    /// The server reset the connection as scripted.
    Reset,
    /// The server closed the connection without answering, as scripted.
    Closed,
}

/// When the parts of a response were written (taken just before each write).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Timing {
    /// The status line and headers.
    pub head_sent_at: Option<Instant>,
    /// Each body chunk of a streamed response.
    pub chunks_sent_at: Vec<Instant>,
}

struct Exchange {
    request: RecordedRequest,
    outcome: Option<Outcome>,
    timing: Timing,
}

#[derive(Default)]
struct State {
    queue: VecDeque<MockResponse>,
    fallback: Option<MockResponse>,
    exchanges: Vec<Exchange>,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    changed: Notify,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn record(&self, request: RecordedRequest) -> (usize, MockResponse) {
        let mut state = self.lock();
        let response = state
            .queue
            .pop_front()
            .or_else(|| state.fallback.clone())
            .unwrap_or_else(|| {
                MockResponse::openai_error(
                    500,
                    &format!(
                        "mock model server: no response scripted for {} {}",
                        request.method, request.path
                    ),
                    "mock_unscripted",
                )
                .with_header("x-should-retry", "false")
            });
        state.exchanges.push(Exchange {
            request,
            outcome: None,
            timing: Timing::default(),
        });
        let index = state.exchanges.len() - 1;
        drop(state);
        self.changed.notify_waiters();
        (index, response)
    }

    fn mark_head_sent(&self, index: usize, at: Instant) {
        if let Some(exchange) = self.lock().exchanges.get_mut(index) {
            exchange.timing.head_sent_at = Some(at);
        }
    }

    fn mark_chunk_sent(&self, index: usize, at: Instant) {
        if let Some(exchange) = self.lock().exchanges.get_mut(index) {
            exchange.timing.chunks_sent_at.push(at);
        }
    }

    fn finish(&self, index: usize, outcome: Outcome) {
        if let Some(exchange) = self.lock().exchanges.get_mut(index) {
            exchange.outcome = Some(outcome);
        }
        self.changed.notify_waiters();
    }
}

/// The mock model server. Stops (closing every connection) when dropped.
pub struct MockModelServer {
    address: SocketAddr,
    shared: Arc<Shared>,
    accept: JoinHandle<()>,
}

impl MockModelServer {
    /// Starts a server on 127.0.0.1 at a free port.
    pub async fn start() -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let address = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
        let accept_shared = Arc::clone(&shared);
        let accept = tokio::spawn(async move {
            let mut connections = JoinSet::new();
            let mut count = 0u64;
            loop {
                tokio::select! {
                    accepted = listener.accept() => {
                        let Ok((stream, _)) = accepted else { continue };
                        count += 1;
                        connections.spawn(http::serve_connection(stream, Arc::clone(&accept_shared), count));
                    }
                    Some(_) = connections.join_next(), if !connections.is_empty() => {}
                }
            }
        });
        Ok(Self {
            address,
            shared,
            accept,
        })
    }

    /// The socket address.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// `http://127.0.0.1:<port><path>`, e.g. `url_with("/v1")` for OpenAI clients.
    pub fn url_with(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    /// Queues a response.
    pub fn enqueue(&self, response: impl Into<MockResponse>) -> &Self {
        self.shared.lock().queue.push_back(response.into());
        self
    }

    /// The response served whenever the queue is empty.
    pub fn set_fallback(&self, response: impl Into<MockResponse>) {
        self.shared.lock().fallback = Some(response.into());
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared
            .lock()
            .exchanges
            .iter()
            .map(|exchange| exchange.request.clone())
            .collect()
    }

    /// How the response to request `index` ended, if it has.
    pub fn outcome(&self, index: usize) -> Option<Outcome> {
        self.shared
            .lock()
            .exchanges
            .get(index)
            .and_then(|exchange| exchange.outcome)
    }

    /// When the parts of the response to request `index` were written.
    pub fn timing(&self, index: usize) -> Option<Timing> {
        self.shared
            .lock()
            .exchanges
            .get(index)
            .map(|exchange| exchange.timing.clone())
    }

    /// Waits (at most `timeout`) until the response to request `index` has ended.
    pub async fn wait_for_outcome(&self, index: usize, timeout: Duration) -> Option<Outcome> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let changed = self.shared.changed.notified();
            if let Some(outcome) = self.outcome(index) {
                return Some(outcome);
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                return self.outcome(index);
            }
        }
    }

    /// Responses still queued.
    pub fn pending(&self) -> usize {
        self.shared.lock().queue.len()
    }
}

impl Drop for MockModelServer {
    fn drop(&mut self) {
        self.accept.abort();
    }
}
