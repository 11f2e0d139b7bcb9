//! The ACP connection: one handler per method.
//!
//! Handlers run inside the SDK's dispatch loop and never wait for the client:
//! `session/prompt` starts a task (see [`crate::turn`]); the others answer from the host.
//! The `session/load` replay is queued before its answer, `config_option_update` after
//! `session/set_config_option`'s, and the SDK keeps that order.

use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    CancelNotification, ConfigOptionUpdate, InitializeRequest, InitializeResponse,
    ListSessionsRequest, ListSessionsResponse, LoadSessionRequest, LoadSessionResponse,
    NewSessionRequest, NewSessionResponse, PromptRequest, PromptResponse, ResumeSessionRequest,
    ResumeSessionResponse, SessionNotification, SessionUpdate, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse,
};
use agent_client_protocol::v1::{Builder, ConnectionTo, Responder};
use agent_client_protocol::{Agent, ByteStreams, Client, ConnectTo, Error, HandleDispatchFrom};
use hearth_core::HarnessId;
use hearth_mcp_client::SessionMcpServers;
use hearth_projects::ClientFiles;

use crate::agent::HearthAgent;
use crate::hearth::Hearth;
use crate::turn;

/// The agent's name in `agentInfo`.
pub const AGENT_NAME: &str = "hearth";

/// What the agent is served over: the Hearth it drives (this process's host, built with
/// source `acp`, or a running server), and the harness new sessions use.
#[derive(Clone)]
pub struct Services {
    /// Where sessions are kept and turns run: the same store as every other Hearth
    /// surface, or a server's.
    pub hearth: Arc<dyn Hearth>,
    /// The harness new sessions use (Hearth's native agent).
    pub provider: HarnessId,
    /// The models the model option offers when the harness does not list its own
    /// (the provider's configured models).
    pub models: Vec<String>,
    /// Where the MCP servers a client passes with a session are kept for the native
    /// agent's toolbox, which offers them in that session only. Emptied (and the servers
    /// stopped) when the client leaves. None when the turns run on a server.
    pub mcp: Option<SessionMcpServers>,
    /// Where the sessions of a client that declared `fs.readTextFile` get their reader
    /// for the native agent's `file_read`. Emptied when the client leaves. None when the
    /// turns run on a server.
    pub files: Option<ClientFiles>,
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Services")
            .field("provider", &self.provider)
            .finish_non_exhaustive()
    }
}

/// The process's stdin and stdout as an ACP transport (one JSON-RPC message per line).
pub fn stdio() -> impl ConnectTo<Agent> + 'static {
    use tokio_util::compat::{TokioAsyncReadCompatExt as _, TokioAsyncWriteCompatExt as _};
    ByteStreams::new(
        tokio::io::stdout().compat_write(),
        tokio::io::stdin().compat(),
    )
}

/// Serves Hearth's agent over `transport` until the client leaves.
pub async fn serve(
    services: Services,
    transport: impl ConnectTo<Agent> + 'static,
) -> Result<(), Error> {
    let agent = Arc::new(HearthAgent::new(
        services.hearth,
        services.provider,
        services.models,
        services.mcp.clone(),
        services.files.clone(),
    ));
    let served = methods(&agent).connect_to(transport).await;
    if let Some(mcp) = &services.mcp {
        mcp.shutdown().await;
    }
    if let Some(files) = &services.files {
        files.clear();
    }
    served
}

/// A handler that gives what the client sent, with the agent, to one of the functions
/// below.
macro_rules! handled_by {
    ($agent:expr, $request:ty => $handler:ident) => {{
        let agent = Arc::clone($agent);
        async move |request: $request, responder, connection| {
            $handler(&agent, request, responder, connection).await
        }
    }};
}

/// The methods the agent answers, each by the function of its name.
fn methods(agent: &Arc<HearthAgent>) -> Builder<Agent, impl HandleDispatchFrom<Client>> {
    Agent
        .v1()
        .name(AGENT_NAME)
        .on_receive_request(
            handled_by!(agent, InitializeRequest => initialize),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            handled_by!(agent, NewSessionRequest => new_session),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            handled_by!(agent, LoadSessionRequest => load_session),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            handled_by!(agent, ResumeSessionRequest => resume_session),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            handled_by!(agent, ListSessionsRequest => list_sessions),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            handled_by!(agent, SetSessionConfigOptionRequest => set_config_option),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            handled_by!(agent, PromptRequest => prompt),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            {
                let agent = Arc::clone(agent);
                async move |notification: CancelNotification, _connection| {
                    agent.cancel(&notification.session_id).await;
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_notification!(),
        )
}

/// `initialize`.
async fn initialize(
    agent: &HearthAgent,
    request: InitializeRequest,
    responder: Responder<InitializeResponse>,
    _connection: ConnectionTo<Client>,
) -> Result<(), Error> {
    responder.respond(agent.initialize(request))
}

/// `session/new`.
async fn new_session(
    agent: &HearthAgent,
    request: NewSessionRequest,
    responder: Responder<NewSessionResponse>,
    connection: ConnectionTo<Client>,
) -> Result<(), Error> {
    let answer = agent.new_session(request, &connection).await;
    responder.respond_with_result(answer.map_err(Error::from))
}

/// `session/load`: the history is sent before the answer.
async fn load_session(
    agent: &HearthAgent,
    request: LoadSessionRequest,
    responder: Responder<LoadSessionResponse>,
    connection: ConnectionTo<Client>,
) -> Result<(), Error> {
    match agent.load_session(&request, &connection).await {
        Ok((updates, response)) => {
            for update in updates {
                connection.send_notification(SessionNotification::new(
                    request.session_id.clone(),
                    update,
                ))?;
            }
            responder.respond(response)
        }
        Err(error) => responder.respond_with_error(error.into()),
    }
}

/// `session/resume`.
async fn resume_session(
    agent: &HearthAgent,
    request: ResumeSessionRequest,
    responder: Responder<ResumeSessionResponse>,
    connection: ConnectionTo<Client>,
) -> Result<(), Error> {
    let answer = agent.resume_session(&request, &connection).await;
    responder.respond_with_result(answer.map_err(Error::from))
}

/// `session/list`.
async fn list_sessions(
    agent: &HearthAgent,
    request: ListSessionsRequest,
    responder: Responder<ListSessionsResponse>,
    _connection: ConnectionTo<Client>,
) -> Result<(), Error> {
    let answer = agent.list_sessions(&request).await;
    responder.respond_with_result(answer.map_err(Error::from))
}

/// `session/set_config_option`: the options changed are also sent as an update, after
/// the answer.
async fn set_config_option(
    agent: &HearthAgent,
    request: SetSessionConfigOptionRequest,
    responder: Responder<SetSessionConfigOptionResponse>,
    connection: ConnectionTo<Client>,
) -> Result<(), Error> {
    match agent.set_config_option(&request).await {
        Ok(options) => {
            responder.respond(SetSessionConfigOptionResponse::new(options.clone()))?;
            connection.send_notification(SessionNotification::new(
                request.session_id.clone(),
                SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(options)),
            ))
        }
        Err(error) => responder.respond_with_error(error.into()),
    }
}

/// `session/prompt`: the turn runs in a task of its own (see [`crate::turn`]).
async fn prompt(
    agent: &Arc<HearthAgent>,
    request: PromptRequest,
    responder: Responder<PromptResponse>,
    connection: ConnectionTo<Client>,
) -> Result<(), Error> {
    turn::start(agent, request, responder, connection)
}
