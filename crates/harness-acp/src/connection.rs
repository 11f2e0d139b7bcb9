//! One connection to a running agent: its process, the ACP client over the process's
//! stdio with Hearth's handlers, the handshake (`initialize`, then `authenticate` when
//! the user chose a method), and requests that fail with the agent's exit status and
//! last words when the agent dies while Hearth waits.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{
    Client, ConnectTo, ErrorCode, HandleDispatchFrom, JsonRpcNotification, JsonRpcRequest, Lines,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::{oneshot, watch};

use crate::error::{Error, Result};
use crate::handlers::Handlers;
use crate::lines::{self, Gate};
use crate::process::{AgentProcess, Launch};
use crate::shared::Shared;

/// What the agent said about itself in `initialize`.
#[derive(Clone, Debug)]
pub(crate) struct AgentInfo {
    /// What it can do.
    pub capabilities: acp::AgentCapabilities,
    /// How a user can sign in to it.
    pub auth_methods: Vec<acp::AuthMethod>,
    /// Its name and version, as it reports them.
    pub implementation: Option<acp::Implementation>,
}

impl AgentInfo {
    /// The sign-in methods as `id (name: description)`, for messages.
    pub fn methods_text(&self) -> String {
        if self.auth_methods.is_empty() {
            return "no sign-in method".to_owned();
        }
        self.auth_methods
            .iter()
            .map(|method| {
                let value = serde_json::to_value(method).unwrap_or(Value::Null);
                let text = |key: &str| {
                    value
                        .get(key)
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned()
                };
                let description = text("description");
                if description.is_empty() {
                    format!("`{}` ({})", text("id"), text("name"))
                } else {
                    format!("`{}` ({}: {description})", text("id"), text("name"))
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A live connection to an agent process.
pub(crate) struct Connection {
    agent: String,
    /// Which connection of the harness this is (sessions are reopened on a new one).
    pub generation: u64,
    cx: ConnectionTo<agent_client_protocol::Agent>,
    /// What the agent can do.
    pub info: AgentInfo,
    /// Its process.
    pub process: AgentProcess,
    /// Set (with the reason) once the connection ended.
    ended: watch::Receiver<Option<String>>,
    /// Why the agent's output was refused, if it was.
    violation: Arc<Mutex<Option<String>>>,
    stop: Mutex<Option<oneshot::Sender<()>>>,
}

/// How Hearth starts an agent: its command, with a minimal environment and the variables
/// its configuration passes or sets, in the directory Hearth runs agents in.
pub(crate) fn launch_of(shared: &Shared) -> Launch {
    let spec = &shared.spec;
    Launch {
        command: spec.command.clone(),
        args: spec.args.clone(),
        env: hearth_process::ChildEnv::minimal()
            .pass(spec.pass_env.iter().cloned())
            .set(spec.env.iter().cloned()),
        supervisor: shared.options.supervisor.clone(),
        directory: shared
            .options
            .process_directory
            .clone()
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| "/".into()),
    }
}

/// A handler that hands a request, with its message's place at the gate, to the method
/// of [`Handlers`] that answers it.
macro_rules! answered_by {
    ($handlers:expr, $request:ty => $method:ident) => {{
        let handlers = $handlers.clone();
        async move |request: $request, responder, _cx| {
            handlers
                .$method(request, responder, handlers.gate.admit())
                .await;
            Ok(())
        }
    }};
}

/// The connection's task, as its owner holds it.
struct Running {
    /// The connection, once it is up.
    connected: oneshot::Receiver<ConnectionTo<agent_client_protocol::Agent>>,
    /// Ends the connection.
    stop: oneshot::Sender<()>,
    /// Set (with the reason) once the connection ended.
    ended: watch::Receiver<Option<String>>,
}

/// Hearth's side of the protocol: every request and notification the agent sends goes
/// to a handler; what Hearth does not offer is refused or ignored.
fn client(
    handlers: Handlers,
) -> agent_client_protocol::v1::Builder<Client, impl HandleDispatchFrom<agent_client_protocol::Agent>>
{
    Client
        .v1()
        .on_receive_notification(
            {
                let handlers = handlers.clone();
                async move |notification: acp::SessionNotification, _cx| {
                    handlers.update(notification, handlers.gate.admit()).await;
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            answered_by!(handlers, acp::RequestPermissionRequest => permission),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            answered_by!(handlers, acp::CreateElicitationRequest => elicitation),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            answered_by!(handlers, acp::ReadTextFileRequest => read_file),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            answered_by!(handlers, acp::WriteTextFileRequest => write_file),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            answered_by!(handlers, acp::CreateTerminalRequest => terminal_create),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            answered_by!(handlers, acp::TerminalOutputRequest => terminal_output),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            answered_by!(handlers, acp::WaitForTerminalExitRequest => terminal_wait),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            answered_by!(handlers, acp::KillTerminalRequest => terminal_kill),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            answered_by!(handlers, acp::ReleaseTerminalRequest => terminal_release),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let handlers = handlers.clone();
                async move |request: agent_client_protocol::UntypedMessage,
                            responder: agent_client_protocol::v1::Responder<Value>,
                            _cx| {
                    let _admission = handlers.gate.admit();
                    responder.respond_with_error(agent_client_protocol::Error::new(
                        ErrorCode::METHOD_NOT_FOUND,
                        format!("Hearth does not offer `{}`", request.method),
                    ))
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: agent_client_protocol::UntypedMessage, _cx| {
                tracing::debug!(method = %notification.method, "ignoring a notification Hearth does not know");
                let _admission = handlers.gate.admit();
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
}

/// Connects Hearth's handlers to the agent over `transport`, in a task that runs until
/// the connection ends or is stopped.
fn run(agent: String, handlers: Handlers, transport: impl ConnectTo<Client>) -> Running {
    let (connected_sender, connected) = oneshot::channel();
    let (stop, stopped) = oneshot::channel::<()>();
    let (ended_sender, ended) = watch::channel(None);
    let gate = handlers.gate.clone();
    let client = client(handlers);
    tokio::spawn(async move {
        let result = client
            .connect_with(transport, async move |cx| {
                if connected_sender.send(cx).is_err() {
                    return Ok(());
                }
                if stopped.await.is_err() {
                    tracing::trace!("the connection's owner went away");
                }
                Ok(())
            })
            .await;
        let reason = match result {
            Ok(()) => "the connection was closed".to_owned(),
            Err(error) => error.to_string(),
        };
        tracing::debug!(%agent, %reason, "agent connection ended");
        gate.close();
        ended_sender.send_replace(Some(reason));
    });
    Running {
        connected,
        stop,
        ended,
    }
}

impl Connection {
    /// Starts the agent, connects to it and shakes hands.
    pub async fn open(shared: &Arc<Shared>, generation: u64) -> Result<Self> {
        let agent = shared.agent().to_owned();
        let (process, pipes) = AgentProcess::spawn(&agent, &launch_of(shared))?;
        let gate = Gate::new();
        let violation = Arc::new(Mutex::new(None));
        let transport = Lines::new(
            lines::outgoing(pipes.stdin),
            lines::incoming(&agent, pipes.stdout, gate.clone(), Arc::clone(&violation)),
        );
        let running = run(
            agent.clone(),
            Handlers::new(Arc::clone(shared), gate),
            transport,
        );
        let cx = match tokio::time::timeout(shared.options.timeouts.start, running.connected).await
        {
            Ok(Ok(cx)) => cx,
            _ => return Err(process.stopped_error()),
        };
        let mut opened = Self {
            agent,
            generation,
            cx,
            info: AgentInfo {
                capabilities: acp::AgentCapabilities::default(),
                auth_methods: Vec::new(),
                implementation: None,
            },
            process,
            ended: running.ended,
            violation,
            stop: Mutex::new(Some(running.stop)),
        };
        opened.handshake(shared).await?;
        Ok(opened)
    }

    async fn handshake(&mut self, shared: &Shared) -> Result<()> {
        let request = acp::InitializeRequest::new(ProtocolVersion::V1)
            .client_capabilities(
                acp::ClientCapabilities::new()
                    .fs(acp::FileSystemCapabilities::new()
                        .read_text_file(true)
                        .write_text_file(true))
                    .terminal(true)
                    // The agent's own compactions are shown in the chat (`compaction`).
                    .session(
                        acp::ClientSessionCapabilities::new()
                            .compaction(acp::CompactionCapabilities::new()),
                    )
                    // The agent's questions are put to the user (see `elicitation`).
                    .elicitation(
                        acp::ElicitationCapabilities::new()
                            .form(acp::ElicitationFormCapabilities::new()),
                    )
                    // `hearth agents login` runs terminal sign-ins, in both forms.
                    .auth(acp::AuthCapabilities::new().terminal(true))
                    .meta(
                        serde_json::json!({ crate::sign_in::TERMINAL_AUTH_META: true })
                            .as_object()
                            .cloned(),
                    ),
            )
            .client_info(acp::Implementation::new(
                "hearth",
                env!("CARGO_PKG_VERSION"),
            ));
        let answer = self
            .request("initialize", request, Some(shared.options.timeouts.start))
            .await?;
        if answer.protocol_version != ProtocolVersion::V1 {
            return Err(Error::Protocol {
                agent: self.agent.clone(),
                what: format!(
                    "speaks version {} of the Agent Client Protocol; Hearth speaks version 1",
                    serde_json::to_string(&answer.protocol_version).unwrap_or_default()
                ),
                stderr: String::new(),
            });
        }
        self.info = AgentInfo {
            capabilities: answer.agent_capabilities,
            auth_methods: answer.auth_methods,
            implementation: answer.agent_info,
        };
        if let Some(method) = &shared.spec.auth_method {
            let offered = self.info.auth_methods.iter().any(|offered| {
                serde_json::to_value(offered)
                    .ok()
                    .and_then(|value| value.get("id").and_then(Value::as_str).map(str::to_owned))
                    .as_deref()
                    == Some(method.as_str())
            });
            if !offered {
                return Err(Error::Invalid(format!(
                    "agent `{}` does not offer the sign-in method `{method}` set in config.toml; it offers: {}",
                    self.agent,
                    self.info.methods_text()
                )));
            }
            self.request(
                "authenticate",
                acp::AuthenticateRequest::new(method.clone()),
                Some(shared.options.timeouts.request),
            )
            .await?;
        }
        Ok(())
    }

    /// Whether the connection still works.
    pub fn is_alive(&self) -> bool {
        self.ended.borrow().is_none() && self.process.exit_report().is_none()
    }

    /// Sends a request and waits for its answer, at most `timeout` when one is given.
    pub async fn request<Request: JsonRpcRequest>(
        &self,
        what: &str,
        request: Request,
        timeout: Option<Duration>,
    ) -> Result<Request::Response> {
        let sent = self.cx.send_request(request).block_task();
        let mut ended = self.ended.clone();
        tokio::select! {
            answer = sent => match answer {
                Ok(answer) => Ok(answer),
                Err(error) => Err(self.failure(what, error).await),
            },
            () = async { if ended.wait_for(Option::is_some).await.is_err() { std::future::pending::<()>().await } } => {
                Err(self.stopped().await)
            }
            () = async {
                match timeout {
                    Some(timeout) => tokio::time::sleep(timeout).await,
                    None => std::future::pending().await,
                }
            } => Err(Error::Timeout {
                agent: self.agent.clone(),
                what: if what == "initialize" {
                    format!(
                        "initialize (raise the limit with start_timeout_seconds under [agents.{}] in config.toml)",
                        self.agent
                    )
                } else {
                    what.to_owned()
                },
                seconds: timeout.map_or(0, |timeout| timeout.as_secs()),
                stderr: self.process.stderr(),
            }),
        }
    }

    /// Sends a request given as a method name and JSON params, and returns the answer as
    /// JSON (for answers with fields Hearth reads that the typed answer drops).
    pub async fn request_json<Params: Serialize, Answer: DeserializeOwned>(
        &self,
        method: &str,
        params: Params,
        timeout: Duration,
    ) -> Result<(Answer, Value)> {
        let message = agent_client_protocol::UntypedMessage::new(method, params)
            .map_err(|error| Error::Invalid(format!("{method}: {error}")))?;
        let value = self.request(method, message, Some(timeout)).await?;
        let typed = serde_json::from_value(value.clone()).map_err(|error| Error::Protocol {
            agent: self.agent.clone(),
            what: format!("answered {method} with something Hearth cannot read ({error})"),
            stderr: String::new(),
        })?;
        Ok((typed, value))
    }

    /// Sends a notification.
    pub fn notify<Notification: JsonRpcNotification>(&self, notification: Notification) {
        if let Err(error) = self.cx.send_notification(notification) {
            tracing::debug!(agent = %self.agent, %error, "could not send a notification");
        }
    }

    /// The error for a request the agent failed or could not answer.
    async fn failure(&self, what: &str, error: agent_client_protocol::Error) -> Error {
        if !self.is_alive()
            || agent_client_protocol::is_connection_terminated(&error)
            || agent_client_protocol::is_incoming_transport_closed(&error)
        {
            return self.stopped().await;
        }
        // A failed sign-in is told in the agent's own words, not as a request to sign in.
        if error.code == ErrorCode::AUTH_REQUIRED && what != "authenticate" {
            return Error::AuthRequired {
                agent: self.agent.clone(),
                methods: self.info.methods_text(),
            };
        }
        let mut message = error.message.clone();
        if let Some(data) = &error.data
            && !data.is_null()
        {
            let data = match data {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            message.push_str(&format!(" ({})", hearth_process::cut(&data, 500)));
        }
        Error::Refused {
            agent: self.agent.clone(),
            what: what.to_owned(),
            message,
        }
    }

    /// The error for a connection that ended: a refused output, or the process's exit.
    async fn stopped(&self) -> Error {
        let violation = self
            .violation
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(what) = violation {
            self.process.kill();
            return Error::Protocol {
                agent: self.agent.clone(),
                what,
                stderr: self.process.stderr(),
            };
        }
        // The process's exit is seen a moment after its output closes.
        if tokio::time::timeout(Duration::from_secs(2), self.process.exited())
            .await
            .is_err()
        {
            self.process.kill();
        }
        self.process.stopped_error()
    }

    /// Ends the connection and stops the process gracefully (see
    /// [`AgentProcess::stop`]).
    pub async fn stop(&self) {
        self.end();
        self.process.stop().await;
    }

    /// Ends the connection.
    fn end(&self) {
        if let Some(stop) = self
            .stop
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            && stop.send(()).is_err()
        {
            tracing::trace!("the connection had ended already");
        }
    }

    /// Ends the connection and kills the process.
    pub fn close(&self) {
        self.end();
        self.process.kill();
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.close();
    }
}
