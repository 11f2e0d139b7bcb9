//! A mock model server on 127.0.0.1 that speaks genuine OpenAI and Anthropic HTTP and
//! SSE, plays scripted responses in order, injects faults, and records every request.
//!
//! It is a small HTTP/1.1 server of its own rather than a general mock library because
//! the faults it must produce happen below the level such libraries work at: a
//! connection reset in the middle of a chunked stream, pauses between two SSE events,
//! a response that never comes.
//!
//! Each request is answered by the first of these that has an answer, in this order:
//! 1. the responder (`set_responder`), a function that may answer any request from its
//!    contents — how a real agent's incidental requests (token counts, titles, model
//!    lists), whose order is not fixed, are served;
//! 2. the queue of the longest path prefix that matches the request (`enqueue_for`);
//! 3. the main queue (`enqueue`), first-in first-out;
//! 4. the fallback response (`set_fallback`);
//! 5. a 500 naming the request.
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
mod gemini;
mod http;
mod openai;
mod responses;
pub mod windowed;

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::{Notify, watch};
use tokio::task::{JoinHandle, JoinSet};

pub use anthropic::{
    AnthropicStream, anthropic_count_tokens, anthropic_error_body, anthropic_message,
};
pub use gemini::{GeminiStream, gemini_count_tokens, gemini_error_body, gemini_response};
pub use openai::{OpenAiStream, openai_completion, openai_error_body};
pub use responses::{ResponsesStream, responses_response};
pub use windowed::WindowedModel;

/// Answers a request from its contents, or passes (`None`) to the queues.
pub type Responder = Arc<dyn Fn(&RecordedRequest) -> Option<MockResponse> + Send + Sync>;

/// One step of a streamed (chunked) response body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Send these bytes as one chunk, at once.
    Send(Vec<u8>),
    /// Wait before the next step (noticing a client that goes away meanwhile).
    Pause(Duration),
    /// Wait until the test opens the gate (noticing a client that goes away meanwhile).
    Hold(Gate),
    /// Reset the connection (TCP RST) here.
    Reset,
}

/// A point in a streamed response where the server stops until the test opens it: a
/// model whose next chunk comes exactly when the test says, however busy the machine
/// is. Clones open together; once open, a gate stays open.
#[derive(Clone, Debug)]
pub struct Gate {
    open: Arc<watch::Sender<bool>>,
}

impl Gate {
    /// A closed gate.
    pub fn new() -> Self {
        Self {
            open: Arc::new(watch::Sender::new(false)),
        }
    }

    /// Opens the gate: the response goes on past it.
    pub fn open(&self) {
        self.open.send_replace(true);
    }

    /// Waits until the gate is open.
    async fn opened(&self) {
        let mut open = self.open.subscribe();
        // The sender lives as long as `self`, so the wait ends only when it opens.
        open.wait_for(|open| *open).await.ok();
    }
}

impl Default for Gate {
    fn default() -> Self {
        Self::new()
    }
}

impl PartialEq for Gate {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.open, &other.open)
    }
}

impl Eq for Gate {}

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

    /// The same response with a pause of `pause` before every chunk after the first: a
    /// slow model. A response that is not streamed is unchanged.
    pub fn paced(mut self, pause: Duration) -> Self {
        if let Body::Steps(steps) = &mut self.body {
            let mut paced = Vec::with_capacity(steps.len() * 2);
            for step in steps.drain(..) {
                if matches!(step, Step::Send(_)) && !paced.is_empty() {
                    paced.push(Step::Pause(pause));
                }
                paced.push(step);
            }
            *steps = paced;
        }
        self
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

/// Responses queued for the requests whose path (with its query) starts with `prefix`.
struct Route {
    prefix: String,
    queue: VecDeque<MockResponse>,
}

#[derive(Default)]
struct State {
    responder: Option<Responder>,
    routes: Vec<Route>,
    queue: VecDeque<MockResponse>,
    fallback: Option<MockResponse>,
    exchanges: Vec<Exchange>,
}

impl State {
    /// The next response queued for the longest prefix of `path` that has one.
    fn take_routed(&mut self, path: &str) -> Option<MockResponse> {
        self.routes
            .iter_mut()
            .filter(|route| path.starts_with(&route.prefix) && !route.queue.is_empty())
            .max_by_key(|route| route.prefix.len())
            .and_then(|route| route.queue.pop_front())
    }
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
        // The responder runs without the lock: it may take its time, or ask the server
        // what it has recorded so far.
        let responder = self.lock().responder.clone();
        let answered = responder.and_then(|respond| respond(&request));
        let mut state = self.lock();
        let response = answered
            .or_else(|| state.take_routed(&request.path))
            .or_else(|| state.queue.pop_front())
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

    /// Queues a response for the requests whose path (query included) starts with
    /// `path_prefix`, e.g. `"/v1/messages/count_tokens"`. A request matching several
    /// prefixes takes from the longest one that has a response left; one matching none
    /// (or only empty ones) takes from the main queue.
    pub fn enqueue_for(&self, path_prefix: &str, response: impl Into<MockResponse>) -> &Self {
        let mut state = self.shared.lock();
        let response = response.into();
        match state
            .routes
            .iter_mut()
            .find(|route| route.prefix == path_prefix)
        {
            Some(route) => route.queue.push_back(response),
            None => state.routes.push(Route {
                prefix: path_prefix.to_owned(),
                queue: VecDeque::from([response]),
            }),
        }
        self
    }

    /// Consults `responder` first for every request from now on (replacing any earlier
    /// one); when it returns `None`, the queues answer as before.
    pub fn set_responder(&self, responder: Responder) {
        self.shared.lock().responder = Some(responder);
    }

    /// Removes the responder.
    pub fn clear_responder(&self) {
        self.shared.lock().responder = None;
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

    /// Waits (at most `timeout`) for a request that satisfies `matches`, received
    /// before or during the wait; returns the first such one.
    pub async fn wait_for_request(
        &self,
        timeout: Duration,
        matches: impl Fn(&RecordedRequest) -> bool,
    ) -> Option<RecordedRequest> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let changed = self.shared.changed.notified();
            let found = self
                .shared
                .lock()
                .exchanges
                .iter()
                .map(|exchange| &exchange.request)
                .find(|request| matches(request))
                .cloned();
            if found.is_some() {
                return found;
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                return None;
            }
        }
    }

    /// Responses still queued, in the main queue and the path queues.
    pub fn pending(&self) -> usize {
        let state = self.shared.lock();
        state.queue.len()
            + state
                .routes
                .iter()
                .map(|route| route.queue.len())
                .sum::<usize>()
    }
}

impl Drop for MockModelServer {
    fn drop(&mut self) {
        self.accept.abort();
    }
}
