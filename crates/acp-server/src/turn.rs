//! One `session/prompt`: a Hearth turn whose action envelopes stream as session updates.
//!
//! The turn runs in a task of its own, outside the SDK's dispatch loop, so that
//! `session/cancel` and the editor's permission answers are read while it runs. Each
//! proposal the turn stages is asked about at once, beside the stream; the prompt is
//! answered after the turn ended and every question was settled, so the editor sees the
//! whole turn before its stop reason.

use std::sync::Arc;

use agent_client_protocol::v1::schema::{PromptRequest, PromptResponse, SessionNotification};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error, ErrorCode};
use hearth_core::{Action, ChatUri, ResponsePart, StopReason, Usage, UserMessage};
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;
use tokio::task::JoinSet;

use crate::agent::{HearthAgent, session_uri};
use crate::mapping;
use crate::permissions;
use crate::proposals;

/// Starts the turn for `request` in a task of its own; the task answers `responder`.
pub(crate) fn start(
    agent: &Arc<HearthAgent>,
    request: PromptRequest,
    responder: Responder<PromptResponse>,
    connection: ConnectionTo<Client>,
) -> Result<(), Error> {
    let agent = agent.clone();
    let task_connection = connection.clone();
    connection.spawn(async move {
        let answer = run(agent, task_connection, request).await;
        if let Err(error) = responder.respond_with_result(answer) {
            tracing::debug!(%error, "answering session/prompt failed");
        }
        // A failed turn must not stop the connection: it was answered with an error.
        Ok(())
    })
}

async fn run(
    agent: Arc<HearthAgent>,
    connection: ConnectionTo<Client>,
    request: PromptRequest,
) -> Result<PromptResponse, Error> {
    let session = session_uri(&request.session_id)?;
    let chat = ChatUri::default_for(&session);
    let text = mapping::prompt_text(&request.prompt);
    let (turn_id, mut subscription) = agent
        .host
        .send_streaming(&chat, UserMessage::text(text))
        .await
        .map_err(crate::AcpAgentError::from)?;
    let mut questions = JoinSet::new();
    let mut permission_questions = JoinSet::new();
    let mut failure = None;
    let (stop, usage) = loop {
        let envelope = match subscription.receiver.recv().await {
            Ok(envelope) => envelope,
            Err(RecvError::Lagged(missed)) => {
                tracing::warn!(missed, %chat, "the editor's stream fell behind; updates were lost");
                continue;
            }
            Err(RecvError::Closed) => break (StopReason::Incomplete, None),
        };
        if let Some(update) = mapping::update_for(&envelope.action, &turn_id) {
            connection
                .send_notification(SessionNotification::new(request.session_id.clone(), update))?;
        }
        match envelope.action {
            Action::PartAdded {
                turn_id: id,
                part: ResponsePart::Proposal { proposal_id, .. },
            } if id == turn_id => {
                questions.spawn(proposals::ask(
                    agent.clone(),
                    connection.clone(),
                    request.session_id.clone(),
                    proposal_id,
                ));
            }
            Action::PartAdded {
                turn_id: id,
                part:
                    ResponsePart::PermissionRequest {
                        request_id,
                        title,
                        options,
                        tool_call_id,
                        outcome: None,
                    },
            } if id == turn_id => {
                let question = permissions::Question {
                    chat: chat.clone(),
                    request_id,
                    title,
                    options,
                    tool_call_id,
                };
                permission_questions.spawn(permissions::ask(
                    agent.clone(),
                    connection.clone(),
                    request.session_id.clone(),
                    question,
                ));
            }
            Action::PartAdded {
                turn_id: id,
                part: ResponsePart::Error { message },
            } if id == turn_id => failure = Some(message),
            Action::TurnCompleted {
                turn_id: id,
                stop_reason,
                usage,
                ..
            } if id == turn_id => break (stop_reason, usage),
            _ => {}
        }
    };
    while let Some(settled) = questions.join_next().await {
        match settled {
            Ok(Ok(asked)) => tracing::debug!(?asked, "proposal asked about"),
            Ok(Err(error)) => {
                tracing::warn!(%error, "asking about a proposal failed; it stays pending")
            }
            Err(error) => {
                tracing::warn!(%error, "asking about a proposal stopped; it stays pending")
            }
        }
    }
    while let Some(settled) = permission_questions.join_next().await {
        match settled {
            Ok(Ok(option)) => tracing::debug!(option, "permission answered"),
            Ok(Err(error)) => tracing::warn!(%error, "answering a permission request failed"),
            Err(error) => tracing::warn!(%error, "asking for permission stopped"),
        }
    }
    match mapping::stop_reason(&stop) {
        Some(reason) => Ok(PromptResponse::new(reason).meta(usage_meta(usage.as_ref()))),
        None => Err(Error::new(
            ErrorCode::INTERNAL_ERROR,
            match (stop, failure) {
                (_, Some(message)) => format!("the turn failed: {message}"),
                (StopReason::Incomplete, None) => {
                    "the turn ended unfinished: Hearth is stopping".to_owned()
                }
                (_, None) => "the turn failed".to_owned(),
            },
        )),
    }
}

/// The turn's token usage under `_meta.hearth.usage` (ACP's own usage fields are
/// unstable, and its `usage_update` wants a context window size Hearth does not know).
fn usage_meta(usage: Option<&Usage>) -> Option<serde_json::Map<String, serde_json::Value>> {
    let usage = usage?;
    let mut meta = serde_json::Map::new();
    meta.insert(
        "hearth".to_owned(),
        json!({ "usage": {
            "inputTokens": usage.input_tokens,
            "outputTokens": usage.output_tokens,
            "cachedInputTokens": usage.cached_input_tokens,
            "reasoningTokens": usage.reasoning_tokens,
        }}),
    );
    Some(meta)
}
