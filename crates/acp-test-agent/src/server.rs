//! The ACP connection: one handler per method, each returning at once.
//!
//! Handlers run inside the SDK's dispatch loop, so none of them waits for the client:
//! `session/prompt` starts a task (see [`crate::turn`]), and everything else answers
//! from local state. Notifications that belong before an answer (the `session/load`
//! replay) are queued before it; those that belong after (`available_commands_update`,
//! `config_option_update`) are queued after it, and the SDK keeps that order.

use std::sync::Arc;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AuthenticateRequest, AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate,
    CancelNotification, CloseSessionRequest, ConfigOptionUpdate, CurrentModeUpdate,
    ForkSessionRequest, InitializeRequest, ListSessionsRequest, LoadSessionRequest, LogoutRequest,
    NewSessionRequest, PromptRequest, ResumeSessionRequest, SessionId, SessionNotification,
    SessionUpdate, SetSessionConfigOptionRequest, SetSessionConfigOptionResponse,
    SetSessionModeRequest, UnstructuredCommandInput,
};
use agent_client_protocol::{Agent, Client, ConnectTo, Error};

use crate::agent::{AGENT_NAME, TestAgent};
use crate::prompt::COMMANDS;
use crate::store::Exchange;
use crate::turn::{self, text_chunk};

/// The commands announced in `available_commands_update`.
const ANNOUNCED_COMMANDS: &[&str] = &["slow", "write", "read", "settings"];

/// Serves the agent over `transport` until the client leaves.
pub(crate) async fn serve(
    agent: Arc<TestAgent>,
    transport: impl ConnectTo<Agent> + 'static,
) -> Result<(), Error> {
    Agent
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
                async move |request: AuthenticateRequest, responder, _connection| {
                    responder.respond_with_result(agent.authenticate(&request))
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: LogoutRequest, responder, _connection| {
                    responder.respond_with_result(agent.logout(&request))
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: NewSessionRequest, responder, connection| match agent
                    .new_session(request)
                {
                    Ok(response) => {
                        let session = response.session_id.clone();
                        responder.respond(response)?;
                        announce_commands(&connection, session)
                    }
                    Err(error) => responder.respond_with_error(error),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: LoadSessionRequest, responder, connection| match agent
                    .load_session(&request)
                {
                    Ok((response, record)) => {
                        replay(&connection, &request.session_id, record.history)?;
                        responder.respond(response)
                    }
                    Err(error) => responder.respond_with_error(error),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: ListSessionsRequest, responder, _connection| {
                    responder.respond_with_result(agent.list_sessions(&request))
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: ResumeSessionRequest, responder, _connection| {
                    responder.respond_with_result(agent.resume_session(&request))
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: ForkSessionRequest, responder, _connection| {
                    responder.respond_with_result(agent.fork_session(request))
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: CloseSessionRequest, responder, _connection| {
                    responder.respond_with_result(agent.close_session(&request))
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: SetSessionConfigOptionRequest, responder, connection| {
                    match agent.set_config_option(&request) {
                        Ok(options) => {
                            responder
                                .respond(SetSessionConfigOptionResponse::new(options.clone()))?;
                            connection.send_notification(SessionNotification::new(
                                request.session_id.clone(),
                                SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(options)),
                            ))
                        }
                        Err(error) => responder.respond_with_error(error),
                    }
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = agent.clone();
                async move |request: SetSessionModeRequest, responder, connection| match agent
                    .set_mode(&request)
                {
                    Ok(answer) => {
                        responder.respond(answer)?;
                        connection.send_notification(SessionNotification::new(
                            request.session_id.clone(),
                            SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
                                request.mode_id.clone(),
                            )),
                        ))
                    }
                    Err(error) => responder.respond_with_error(error),
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
                    agent.cancel(&notification.session_id);
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(transport)
        .await
}

/// Replays a loaded session's history: per exchange, a `user_message_chunk` and an
/// `agent_message_chunk`. Empty texts (a turn cancelled before any output) are not
/// replayed as empty chunks.
fn replay(
    connection: &ConnectionTo<Client>,
    session: &SessionId,
    history: Vec<Exchange>,
) -> Result<(), Error> {
    for exchange in history {
        let updates = [
            (!exchange.user.is_empty())
                .then(|| SessionUpdate::UserMessageChunk(text_chunk(exchange.user))),
            (!exchange.agent.is_empty())
                .then(|| SessionUpdate::AgentMessageChunk(text_chunk(exchange.agent))),
        ];
        for update in updates.into_iter().flatten() {
            connection.send_notification(SessionNotification::new(session.clone(), update))?;
        }
    }
    Ok(())
}

/// Sends `available_commands_update` for a new session.
fn announce_commands(connection: &ConnectionTo<Client>, session: SessionId) -> Result<(), Error> {
    let commands = COMMANDS
        .iter()
        .filter(|spec| ANNOUNCED_COMMANDS.contains(&spec.name))
        .map(|spec| {
            let command = AvailableCommand::new(spec.name, spec.description);
            if spec.arguments.is_empty() {
                command
            } else {
                command.input(AvailableCommandInput::Unstructured(
                    UnstructuredCommandInput::new(spec.arguments),
                ))
            }
        })
        .collect();
    connection.send_notification(SessionNotification::new(
        session,
        SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands)),
    ))
}
