//! A client of the protocol over the WebSocket at `/rpc`: typed calls, and the
//! server's notifications as a stream. The CLI uses it to talk to a running server;
//! tests and benchmarks use it too.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use futures::stream::SplitSink;
use futures::{SinkExt, StreamExt};
use hearth_protocol::{
    self as wire, ClientInfo, EnvelopeNotified, Incoming, Initialize, InitializeParams,
    InitializeResponse, Method, NotificationMethod, PROTOCOL_VERSION, RequestId,
    ResyncNotification, Resynced, RpcError, SubscriptionEnded, SubscriptionEndedNotification,
    request_text,
};
use serde_json::Value;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::{Message, WebSocketConfig};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::error::{Result, ServerError};
use crate::token::Secret;

/// The largest message the client accepts (a snapshot of a very long chat).
const MAX_MESSAGE_BYTES: usize = 256 * 1024 * 1024;

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;
type Pending = Arc<Mutex<HashMap<i64, oneshot::Sender<std::result::Result<Value, RpcError>>>>>;

/// A notification from the server.
#[derive(Clone, Debug, PartialEq)]
pub enum Notified {
    /// `subscription/envelope`.
    Envelope(wire::Envelope),
    /// `subscription/resync`.
    Resync(ResyncNotification),
    /// `subscription/ended`.
    Ended(SubscriptionEndedNotification),
    /// A notification this client does not know.
    Other {
        /// Its method.
        method: String,
        /// Its params.
        params: Value,
    },
}

/// The server's notifications, in the order it sent them. Ends when the connection
/// closes.
pub type Notifications = mpsc::UnboundedReceiver<Notified>;

/// A connection to a running server.
pub struct Client {
    sink: tokio::sync::Mutex<SplitSink<Socket, Message>>,
    pending: Pending,
    next_id: AtomicI64,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The WebSocket URL of a server's base URL (`http://127.0.0.1:8421` →
/// `ws://127.0.0.1:8421/rpc`).
pub fn rpc_url(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    let base = base
        .strip_prefix("http://")
        .map(|rest| format!("ws://{rest}"))
        .or_else(|| {
            base.strip_prefix("https://")
                .map(|rest| format!("wss://{rest}"))
        })
        .unwrap_or_else(|| base.to_owned());
    format!("{base}/rpc")
}

impl Client {
    /// Connects to a server's `/rpc` with the token. Call [`Client::initialize`] next.
    pub async fn connect(base_url: &str, token: &Secret) -> Result<(Self, Notifications)> {
        let credential = format!("Bearer {}", token.expose());
        Self::connect_with(base_url, "authorization", &credential, TOKEN_REFUSED).await
    }

    /// Connects to a server's `/rpc` as a browser session (the credential `POST
    /// /auth/session` answered, sent as [`crate::SESSION_HEADER`]), so a program acts as
    /// the person logged in there. Call [`Client::initialize`] next.
    pub async fn connect_with_session(
        base_url: &str,
        session: &str,
    ) -> Result<(Self, Notifications)> {
        Self::connect_with(base_url, crate::SESSION_HEADER, session, SESSION_REFUSED).await
    }

    /// Connects to a server's `/rpc`, authenticated by the header `name: value`;
    /// `refused` says what to do when the server refuses it.
    async fn connect_with(
        base_url: &str,
        name: &'static str,
        value: &str,
        refused: &str,
    ) -> Result<(Self, Notifications)> {
        let url = rpc_url(base_url);
        let connect_error = |message: String| ServerError::Connect {
            url: url.clone(),
            message,
        };
        let mut request = url
            .as_str()
            .into_client_request()
            .map_err(|error| connect_error(error.to_string()))?;
        let credential =
            HeaderValue::from_str(value).map_err(|error| connect_error(error.to_string()))?;
        request.headers_mut().insert(name, credential);
        // Snapshots of long chats are large; the server bounds what it sends.
        let config = WebSocketConfig::default()
            .max_message_size(Some(MAX_MESSAGE_BYTES))
            .max_frame_size(Some(MAX_MESSAGE_BYTES));
        let (socket, _response) =
            tokio_tungstenite::connect_async_with_config(request, Some(config), true)
                .await
                .map_err(|error| connect_error(refusal_text(&error, refused)))?;
        let (sink, stream) = socket.split();
        let pending: Pending = Arc::default();
        let (notify, notifications) = mpsc::unbounded_channel();
        tokio::spawn(read_messages(stream, Arc::clone(&pending), notify));
        Ok((
            Self {
                sink: tokio::sync::Mutex::new(sink),
                pending,
                next_id: AtomicI64::new(1),
            },
            notifications,
        ))
    }

    /// The `initialize` handshake.
    pub async fn initialize(&self, client_name: &str) -> Result<InitializeResponse> {
        self.call::<Initialize>(&InitializeParams {
            client_info: ClientInfo {
                name: client_name.to_owned(),
                version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            },
            protocol_version: Some(PROTOCOL_VERSION.to_owned()),
        })
        .await
    }

    /// Calls a method and waits for its response.
    pub async fn call<M: Method>(&self, params: &M::Params) -> Result<M::Response> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let text = request_text(RequestId::Number(id), M::NAME, params)
            .map_err(|error| ServerError::Protocol(error.into()))?;
        let (done, answer) = oneshot::channel();
        lock(&self.pending).insert(id, done);
        let sent = self.sink.lock().await.send(Message::text(text)).await;
        if sent.is_err() {
            lock(&self.pending).remove(&id);
            return Err(ServerError::Closed);
        }
        let result = answer.await.map_err(|_| ServerError::Closed)??;
        serde_json::from_value(result).map_err(|error| ServerError::Protocol(error.into()))
    }

    /// Closes the connection.
    pub async fn close(&self) {
        if let Err(error) = self.sink.lock().await.close().await {
            tracing::debug!(%error, "closing the connection failed");
        }
    }
}

/// What a refused token's connection says.
const TOKEN_REFUSED: &str = "the server refused this token (401): a team server's user sets HEARTH_TOKEN to a token `hearth users token` printed (revoked ones stop working); otherwise the token is read from the data directory";

/// What a refused browser session's connection says.
const SESSION_REFUSED: &str = "the server refused this browser session (401): it expired, was logged out, or was made by a server with another token or login key; log in again";

/// What a failed connection says, with what to do when the server refused the
/// credential (`refused`).
fn refusal_text(error: &tokio_tungstenite::tungstenite::Error, refused: &str) -> String {
    match error {
        tokio_tungstenite::tungstenite::Error::Http(response)
            if response.status() == axum::http::StatusCode::UNAUTHORIZED =>
        {
            refused.to_owned()
        }
        other => other.to_string(),
    }
}

async fn read_messages(
    mut stream: futures::stream::SplitStream<Socket>,
    pending: Pending,
    notify: mpsc::UnboundedSender<Notified>,
) {
    while let Some(message) = stream.next().await {
        let text = match message {
            Ok(Message::Text(text)) => text,
            Ok(Message::Close(_)) | Err(_) => break,
            Ok(_) => continue,
        };
        match Incoming::parse(text.as_str()) {
            Ok(Incoming::Response {
                id: RequestId::Number(id),
                result,
            }) => {
                if let Some(done) = lock(&pending).remove(&id)
                    && done.send(Ok(result)).is_err()
                {
                    tracing::trace!("a caller stopped waiting for its response");
                }
            }
            Ok(Incoming::Error {
                id: Some(RequestId::Number(id)),
                error,
            }) => {
                if let Some(done) = lock(&pending).remove(&id)
                    && done.send(Err(error)).is_err()
                {
                    tracing::trace!("a caller stopped waiting for its response");
                }
            }
            Ok(Incoming::Notification { method, params }) => {
                if notify.send(notification(method, params)).is_err() {
                    tracing::trace!("nobody reads the notifications");
                }
            }
            Ok(other) => tracing::debug!(?other, "unexpected message from the server"),
            Err(error) => tracing::debug!(%error, "unreadable message from the server"),
        }
    }
    lock(&pending).clear();
}

fn notification(method: String, params: Value) -> Notified {
    let parsed = match method.as_str() {
        EnvelopeNotified::NAME => serde_json::from_value(params.clone()).map(Notified::Envelope),
        Resynced::NAME => serde_json::from_value(params.clone()).map(Notified::Resync),
        SubscriptionEnded::NAME => serde_json::from_value(params.clone()).map(Notified::Ended),
        _ => return Notified::Other { method, params },
    };
    parsed.unwrap_or(Notified::Other { method, params })
}

/// Asks a running server (at its base URL, `http://127.0.0.1:8421`) for a one-time login
/// link for Agent Home, authenticated with the token.
pub async fn login_link(base_url: &str, token: &Secret) -> Result<String> {
    let value = post_with_token(base_url, token, "/auth/code", "a login link").await?;
    value["url"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| ServerError::Login(format!("{base_url} answered without a link")))
}

/// Asks a running server to end every browser session at once (it replaces the login
/// key), authenticated with the token.
pub async fn revoke_browser_sessions(base_url: &str, token: &Secret) -> Result<()> {
    let value = post_with_token(
        base_url,
        token,
        "/auth/revoke",
        "to end the browser sessions",
    )
    .await?;
    if value["revoked"] == Value::Bool(true) {
        Ok(())
    } else {
        Err(ServerError::Login(format!(
            "{base_url} answered oddly to ending the browser sessions: {value}"
        )))
    }
}

/// `POST`s `{}` to `path` with the token and reads the JSON answer (plain HTTP/1.1: the
/// server is on this machine).
async fn post_with_token(base_url: &str, token: &Secret, path: &str, what: &str) -> Result<Value> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let authority = base_url
        .trim_end_matches('/')
        .strip_prefix("http://")
        .ok_or_else(|| ServerError::Login(format!("`{base_url}` is not an http:// server URL")))?
        .to_owned();
    let mut stream = TcpStream::connect(&authority)
        .await
        .map_err(|error| ServerError::Login(format!("cannot reach {base_url}: {error}")))?;
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}",
        token.expose()
    );
    let mut answer = Vec::new();
    let exchange = async {
        stream.write_all(request.as_bytes()).await?;
        stream.read_to_end(&mut answer).await
    };
    tokio::time::timeout(std::time::Duration::from_secs(10), exchange)
        .await
        .map_err(|_| ServerError::Login(format!("{base_url} did not answer in time")))?
        .map_err(|error| ServerError::Login(format!("asking {base_url}: {error}")))?;
    let answer = String::from_utf8_lossy(&answer);
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    if !head.starts_with("HTTP/1.1 200") {
        let status = head.lines().next().unwrap_or_default();
        return Err(ServerError::Login(format!(
            "{base_url} refused {what} ({status}): {}",
            body.trim()
        )));
    }
    serde_json::from_str(body.trim())
        .map_err(|error| ServerError::Login(format!("{base_url} answered oddly: {error}")))
}
