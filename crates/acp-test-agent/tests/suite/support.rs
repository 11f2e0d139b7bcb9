//! Starts the real binary and drives it with the SDK's client side.

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AuthCapabilities, ClientCapabilities, ContentBlock, CreateTerminalRequest,
    CreateTerminalResponse, FileSystemCapabilities, InitializeRequest, InitializeResponse,
    NewSessionRequest, PromptRequest, PromptResponse, ReadTextFileRequest, ReadTextFileResponse,
    ReleaseTerminalRequest, ReleaseTerminalResponse, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SelectedPermissionOutcome, SessionId,
    SessionNotification, SessionUpdate, TerminalExitStatus, TerminalOutputRequest,
    TerminalOutputResponse, TextContent, WaitForTerminalExitRequest, WaitForTerminalExitResponse,
    WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::{Agent, ByteStreams, Client, Error, ErrorCode};
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::mpsc;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

/// The bound on every wait: generous, so that a machine busy with other builds never
/// fails a test that waits on an event.
pub const WAIT: Duration = Duration::from_secs(30);

/// Awaits `future`, failing the test after [`WAIT`].
pub async fn within<F: Future>(future: F) -> F::Output {
    tokio::time::timeout(WAIT, future)
        .await
        .expect("timed out waiting")
}

/// A running agent process.
pub struct AgentProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
    stderr: tokio::task::JoinHandle<String>,
}

/// How the process ended.
pub struct Finished {
    pub status: std::process::ExitStatus,
    /// Everything written to stderr.
    pub stderr: String,
}

impl AgentProcess {
    /// Starts the agent with `env` added to this process's environment.
    pub fn start(env: &[(&str, &str)]) -> Self {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_hearth-acp-test-agent"));
        command
            .env_remove("HEARTH_TEST_AGENT_CAPS")
            .env_remove("HEARTH_TEST_AGENT_AUTH")
            .env_remove("HEARTH_TEST_AGENT_TOKEN")
            .env_remove("HEARTH_TEST_AGENT_STATE")
            .env_remove("HEARTH_TEST_AGENT_TERMINAL_AUTH")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().expect("the agent starts");
        let mut pipe = child.stderr.take().expect("stderr is piped");
        let stderr = tokio::spawn(async move {
            let mut text = Vec::new();
            pipe.read_to_end(&mut text).await.ok();
            String::from_utf8_lossy(&text).into_owned()
        });
        Self {
            stdin: child.stdin.take(),
            stdout: child.stdout.take(),
            child,
            stderr,
        }
    }

    /// Closes stdin (if the client has not), waits for the exit, and collects stderr.
    pub async fn finish(mut self) -> Finished {
        drop(self.stdin.take());
        drop(self.stdout.take());
        let status = within(self.child.wait()).await.unwrap();
        let stderr = within(self.stderr).await.unwrap();
        Finished { status, stderr }
    }

    /// Drives the agent with a client set up by `setup`, running `body` as the
    /// client's main task.
    pub async fn client<R>(
        &mut self,
        setup: ClientSetup,
        body: impl AsyncFnOnce(Harness) -> R,
    ) -> R {
        let stdin = self.stdin.take().expect("stdin is still open");
        let stdout = self.stdout.take().expect("stdout is still open");
        let (updates_tx, updates) = mpsc::unbounded_channel();
        let log = Arc::new(ClientLog::default());
        let setup = Arc::new(setup);
        let connection = Client
            .v1()
            .on_receive_notification(
                async move |notification: SessionNotification, _cx| {
                    updates_tx.send(notification).ok();
                    Ok(())
                },
                agent_client_protocol::on_receive_notification!(),
            )
            .on_receive_request(
                {
                    let log = log.clone();
                    let setup = setup.clone();
                    async move |request: RequestPermissionRequest, responder, _cx| {
                        log.permissions.lock().unwrap().push(request);
                        let outcome = match setup.permission {
                            Some(option) => RequestPermissionOutcome::Selected(
                                SelectedPermissionOutcome::new(option),
                            ),
                            None => RequestPermissionOutcome::Cancelled,
                        };
                        responder.respond(RequestPermissionResponse::new(outcome))
                    }
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                {
                    let log = log.clone();
                    async move |request: WriteTextFileRequest, responder, _cx| {
                        log.writes.lock().unwrap().push(request);
                        responder.respond(WriteTextFileResponse::new())
                    }
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                {
                    let setup = setup.clone();
                    async move |request: ReadTextFileRequest, responder, _cx| match setup
                        .files
                        .get(&request.path)
                    {
                        Some(content) => {
                            responder.respond(ReadTextFileResponse::new(content.clone()))
                        }
                        None => responder.respond_with_error(Error::new(
                            ErrorCode::RESOURCE_NOT_FOUND,
                            format!("no file {}", request.path.display()),
                        )),
                    }
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                {
                    let log = log.clone();
                    async move |request: CreateTerminalRequest, responder, _cx| {
                        log.terminal.lock().unwrap().push(format!(
                            "create {} {:?} cwd={:?} limit={:?}",
                            request.command, request.args, request.cwd, request.output_byte_limit
                        ));
                        responder.respond(CreateTerminalResponse::new("term-1"))
                    }
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                {
                    let log = log.clone();
                    async move |request: WaitForTerminalExitRequest, responder, _cx| {
                        log.terminal
                            .lock()
                            .unwrap()
                            .push(format!("wait {}", request.terminal_id));
                        responder.respond(WaitForTerminalExitResponse::new(
                            TerminalExitStatus::new().exit_code(7),
                        ))
                    }
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                {
                    let log = log.clone();
                    async move |request: TerminalOutputRequest, responder, _cx| {
                        log.terminal
                            .lock()
                            .unwrap()
                            .push(format!("output {}", request.terminal_id));
                        responder.respond(TerminalOutputResponse::new("hello\n", false))
                    }
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                {
                    let log = log.clone();
                    async move |request: ReleaseTerminalRequest, responder, _cx| {
                        log.terminal
                            .lock()
                            .unwrap()
                            .push(format!("release {}", request.terminal_id));
                        responder.respond(ReleaseTerminalResponse::new())
                    }
                },
                agent_client_protocol::on_receive_request!(),
            )
            .connect_with(
                ByteStreams::new(stdin.compat_write(), stdout.compat()),
                async move |connection: ConnectionTo<Agent>| {
                    Ok(body(Harness {
                        connection,
                        updates,
                        log,
                        setup,
                    })
                    .await)
                },
            );
        within(connection).await.expect("the client connection ran")
    }
}

/// How the test client answers the agent's requests.
#[derive(Default)]
pub struct ClientSetup {
    /// The option id chosen for permission requests; `None` answers `cancelled`.
    pub permission: Option<&'static str>,
    /// Files `fs/read_text_file` can read.
    pub files: HashMap<PathBuf, String>,
    /// Whether `initialize` declares terminal support.
    pub terminal: bool,
    /// Whether `initialize` declares terminal sign-in (`auth.terminal` and
    /// `_meta."terminal-auth"`).
    pub terminal_auth: bool,
}

/// What the agent asked the test client.
#[derive(Default)]
pub struct ClientLog {
    pub permissions: Mutex<Vec<RequestPermissionRequest>>,
    pub writes: Mutex<Vec<WriteTextFileRequest>>,
    /// The terminal requests, one line each.
    pub terminal: Mutex<Vec<String>>,
}

/// The client's side of a running connection.
pub struct Harness {
    pub connection: ConnectionTo<Agent>,
    pub updates: mpsc::UnboundedReceiver<SessionNotification>,
    pub log: Arc<ClientLog>,
    setup: Arc<ClientSetup>,
}

impl Harness {
    /// `initialize`, declaring file system support (and terminals if set up).
    pub async fn initialize(&self) -> InitializeResponse {
        let capabilities = ClientCapabilities::new()
            .fs(FileSystemCapabilities::new()
                .read_text_file(true)
                .write_text_file(true))
            .terminal(self.setup.terminal)
            .auth(AuthCapabilities::new().terminal(self.setup.terminal_auth))
            .meta(
                serde_json::json!({"terminal-auth": self.setup.terminal_auth})
                    .as_object()
                    .cloned(),
            );
        within(
            self.connection
                .send_request(
                    InitializeRequest::new(ProtocolVersion::V1).client_capabilities(capabilities),
                )
                .block_task(),
        )
        .await
        .unwrap()
    }

    /// `session/new` in `cwd`; returns the id.
    pub async fn new_session(&self, cwd: &Path) -> SessionId {
        within(
            self.connection
                .send_request(NewSessionRequest::new(cwd))
                .block_task(),
        )
        .await
        .unwrap()
        .session_id
    }

    /// Sends a text prompt and waits for its answer.
    pub async fn prompt(&self, session: &SessionId, text: &str) -> PromptResponse {
        within(
            self.connection
                .send_request(text_prompt(session, text))
                .block_task(),
        )
        .await
        .unwrap()
    }

    /// The next update, waiting for it.
    pub async fn next_update(&mut self) -> SessionUpdate {
        within(self.updates.recv())
            .await
            .expect("the update stream is open")
            .update
    }

    /// Every update already received.
    pub fn received(&mut self) -> Vec<SessionUpdate> {
        let mut updates = Vec::new();
        while let Ok(notification) = self.updates.try_recv() {
            updates.push(notification.update);
        }
        updates
    }
}

/// A prompt of one text block.
pub fn text_prompt(session: &SessionId, text: &str) -> PromptRequest {
    PromptRequest::new(
        session.clone(),
        vec![ContentBlock::Text(TextContent::new(text))],
    )
}

/// The text of a message or thought chunk, or `None` for other updates.
pub fn chunk_text(update: &SessionUpdate) -> Option<(&'static str, String)> {
    let (kind, chunk) = match update {
        SessionUpdate::UserMessageChunk(chunk) => ("user", chunk),
        SessionUpdate::AgentMessageChunk(chunk) => ("agent", chunk),
        SessionUpdate::AgentThoughtChunk(chunk) => ("thought", chunk),
        _ => return None,
    };
    match &chunk.content {
        ContentBlock::Text(text) => Some((kind, text.text.clone())),
        _ => None,
    }
}

/// The text chunks among `updates`, as `(kind, text)`.
pub fn chunks(updates: &[SessionUpdate]) -> Vec<(&'static str, String)> {
    updates.iter().filter_map(chunk_text).collect()
}
