//! One `session/prompt`: a Hearth turn whose action envelopes stream as session updates.
//!
//! The turn runs in a task of its own, outside the SDK's dispatch loop, so that
//! `session/cancel` and the editor's permission answers are read while it runs. Each
//! proposal the turn stages is asked about at once, beside the stream; the prompt is
//! answered after the turn ended and every question was settled, so the editor sees the
//! whole turn before its stop reason.

use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    PromptRequest, PromptResponse, SessionId, SessionNotification,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error, ErrorCode};
use hearth_core::{Action, ChatUri, ResponsePart, StopReason, TurnId, Usage, UserMessage};
use serde_json::json;
use tokio::task::JoinSet;

use crate::agent::{HearthAgent, session_uri};
use crate::hearth::{Fed, TurnFeed};
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

/// Runs one prompt: sends it to the host, streams the turn to the editor, waits for
/// every question it raised and answers with the turn's stop reason.
async fn run(
    agent: Arc<HearthAgent>,
    connection: ConnectionTo<Client>,
    request: PromptRequest,
) -> Result<PromptResponse, Error> {
    let session = session_uri(&request.session_id)?;
    let chat = ChatUri::default_for(&session);
    let text = mapping::prompt_text(&request.prompt);
    let (turn_id, mut feed) = agent.hearth.send(&chat, UserMessage::text(text)).await?;
    let mut turn = Turn {
        agent,
        connection,
        session_id: request.session_id,
        chat,
        turn_id,
        questions: JoinSet::new(),
        permission_questions: JoinSet::new(),
        failure: None,
    };
    let (stop, usage) = turn.stream(&mut feed).await?;
    turn.settle_questions().await;
    answer(stop, usage, turn.failure)
}

/// One running turn as the editor sees it: where its updates go and the questions it
/// has asked so far.
struct Turn {
    agent: Arc<HearthAgent>,
    connection: ConnectionTo<Client>,
    session_id: SessionId,
    chat: ChatUri,
    turn_id: TurnId,
    questions: JoinSet<crate::Result<proposals::Asked>>,
    permission_questions: JoinSet<crate::Result<String>>,
    /// The turn's error message, if it reported one.
    failure: Option<String>,
}

impl Turn {
    /// Forwards the chat's actions to the editor until the turn completes (or its feed
    /// ends), returning the stop reason and usage.
    async fn stream(&mut self, feed: &mut TurnFeed) -> Result<(StopReason, Option<Usage>), Error> {
        loop {
            let action = match feed.next().await {
                Fed::Action(action) => *action,
                Fed::Ended(stop) => return Ok((stop, None)),
                Fed::Lost(why) => {
                    self.failure = Some(why);
                    return Ok((StopReason::Error, None));
                }
            };
            if let Some(update) = mapping::update_for(&action, &self.turn_id) {
                self.connection
                    .send_notification(SessionNotification::new(self.session_id.clone(), update))?;
            }
            if let Some(ended) = self.observe(action) {
                return Ok(ended);
            }
        }
    }

    /// Acts on one action of this turn: asks about proposals and permission requests,
    /// remembers an error, and returns the stop reason and usage once the turn completed.
    fn observe(&mut self, action: Action) -> Option<(StopReason, Option<Usage>)> {
        match action {
            Action::PartAdded {
                turn_id: id,
                part: ResponsePart::Proposal { proposal_id, .. },
            } if id == self.turn_id => {
                self.questions.spawn(proposals::ask(
                    self.agent.clone(),
                    self.connection.clone(),
                    (self.session_id.clone(), self.chat.clone()),
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
            } if id == self.turn_id => {
                let question = permissions::Question {
                    chat: self.chat.clone(),
                    request_id,
                    title,
                    options,
                    tool_call_id,
                };
                self.permission_questions.spawn(permissions::ask(
                    self.agent.clone(),
                    self.connection.clone(),
                    self.session_id.clone(),
                    question,
                ));
            }
            Action::PartAdded {
                turn_id: id,
                part: ResponsePart::Error { message },
            } if id == self.turn_id => self.failure = Some(message),
            Action::TurnCompleted {
                turn_id: id,
                stop_reason,
                usage,
                ..
            } if id == self.turn_id => return Some((stop_reason, usage)),
            _ => {}
        }
        None
    }

    /// Waits until every proposal and permission question the turn asked is settled,
    /// logging the ones that failed.
    async fn settle_questions(&mut self) {
        while let Some(settled) = self.questions.join_next().await {
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
        while let Some(settled) = self.permission_questions.join_next().await {
            match settled {
                Ok(Ok(option)) => tracing::debug!(option, "permission answered"),
                Ok(Err(error)) => tracing::warn!(%error, "answering a permission request failed"),
                Err(error) => tracing::warn!(%error, "asking for permission stopped"),
            }
        }
    }
}

/// The answer to `session/prompt` for a turn that ended with `stop`: its ACP stop reason
/// and usage, or an error saying why the turn failed.
fn answer(
    stop: StopReason,
    usage: Option<Usage>,
    failure: Option<String>,
) -> Result<PromptResponse, Error> {
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
