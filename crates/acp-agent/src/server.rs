//! The ACP connection: one handler per method.
//!
//! Handlers run inside the SDK's dispatch loop and never wait for the client:
//! `session/prompt` starts a task (see [`crate::turn`]); the others answer from the host.
//! The `session/load` replay is queued before its answer, `config_option_update` after
//! `session/set_config_option`'s, and the SDK keeps that order.

use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    CancelNotification, ConfigOptionUpdate, InitializeRequest, ListSessionsRequest,
    LoadSessionRequest, NewSessionRequest, PromptRequest, ResumeSessionRequest,
    SessionNotification, SessionUpdate, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse,
};
use agent_client_protocol::{Agent, ByteStreams, ConnectTo, Error};
use hearth_core::ProviderId;
use hearth_host::Host;
use hearth_mcp_client::SessionMcpServers;
use hearth_projects::ClientFiles;
use hearth_tools::ApprovalGate;

use crate::agent::HearthAgent;
use crate::turn;

/// The agent's name in `agentInfo`.
pub const AGENT_NAME: &str = "hearth";

/// What the agent is served over: the host (built with source `acp`), the user's side
/// of proposals, and the provider new sessions use.
#[derive(Clone)]
pub struct Services {
    /// The orchestrator, over the same store as every other Hearth surface.
    pub host: Host,
    /// Decides proposals when the editor's user answers.
    pub gate: ApprovalGate,
    /// The harness new sessions use (Hearth's native agent).
    pub provider: ProviderId,
    /// The models the model option offers when the harness does not list its own
    /// (the provider's configured models).
    pub models: Vec<String>,
    /// Where the MCP servers a client passes with a session are kept for the native
    /// agent's toolbox, which offers them in that session only. Emptied (and the servers
    /// stopped) when the client leaves.
    pub mcp: SessionMcpServers,
    /// Where the sessions of a client that declared `fs.readTextFile` get their reader
    /// for the native agent's `file_read`. Emptied when the client leaves.
    pub files: ClientFiles,
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
        services.host,
        services.gate,
        services.provider,
        services.models,
        services.mcp.clone(),
        services.files.clone(),
    ));
    let served = Agent
        .v1()
        .name(AGENT_NAME)
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: InitializeRequest, responder, _connection| {
                    responder.respond(agent.initialize(request))
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: NewSessionRequest, responder, connection| {
                    responder.respond_with_result(
                        agent
                            .new_session(request, &connection)
                            .await
                            .map_err(Error::from),
                    )
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: LoadSessionRequest, responder, connection| match agent
                    .load_session(&request, &connection)
                    .await
                {
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
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: ResumeSessionRequest, responder, connection| {
                    responder.respond_with_result(
                        agent
                            .resume_session(&request, &connection)
                            .await
                            .map_err(Error::from),
                    )
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: ListSessionsRequest, responder, _connection| {
                    responder.respond_with_result(
                        agent.list_sessions(&request).await.map_err(Error::from),
                    )
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: SetSessionConfigOptionRequest, responder, connection| {
                    match agent.set_config_option(&request).await {
                        Ok(options) => {
                            responder
                                .respond(SetSessionConfigOptionResponse::new(options.clone()))?;
                            connection.send_notification(SessionNotification::new(
                                request.session_id.clone(),
                                SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(options)),
                            ))
                        }
                        Err(error) => responder.respond_with_error(error.into()),
                    }
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: PromptRequest, responder, connection| {
                    turn::start(&agent, request, responder, connection)
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            {
                let agent = agent.clone();
                async move |notification: CancelNotification, _connection| {
                    agent.cancel(&notification.session_id).await;
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(transport)
        .await;
    services.mcp.shutdown().await;
    services.files.clear();
    served
}
