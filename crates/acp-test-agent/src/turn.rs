//! One `session/prompt` turn: where its output goes and how it ends.
//!
//! A turn runs in a task of its own, outside the SDK's dispatch loop, so it may wait
//! for the client's answers (permission, files, terminals) and for `session/cancel`.
//! Everything it streams goes out before the prompt's answer. When the turn ends with
//! a stop reason, the exchange (prompt text and streamed text) joins the history.

use std::future::Future;
use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, PromptRequest, PromptResponse, SessionId, SessionNotification,
    SessionUpdate, TextContent, Usage,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error, JsonRpcRequest, RequestCancellation};
use tokio_util::sync::CancellationToken;

use crate::agent::{TestAgent, internal};
use crate::commands;
use crate::content::PromptInput;
use crate::prompt::Command;
use crate::sessions::{Busy, LiveSession, TurnTicket};
use crate::store::Exchange;

/// The longest automatic title, in characters.
const TITLE_LIMIT: usize = 60;

/// A running turn.
pub(crate) struct Turn {
    /// The agent.
    pub(crate) agent: Arc<TestAgent>,
    /// The session the turn runs in.
    pub(crate) session: Arc<LiveSession>,
    /// Cancelled by `session/cancel` or `$/cancel_request` on the prompt.
    pub(crate) cancel: CancellationToken,
    connection: ConnectionTo<Client>,
    reply: String,
    /// The token counts the answer carries, when the command reports them.
    pub(crate) usage: Option<Usage>,
}

impl Turn {
    /// The session id, for requests to the client.
    pub(crate) fn session_id(&self) -> SessionId {
        self.session.id().clone()
    }

    /// Sends a session update for this session.
    pub(crate) fn update(&self, update: SessionUpdate) -> Result<(), Error> {
        self.connection
            .send_notification(SessionNotification::new(self.session_id(), update))
    }

    /// Sends one `agent_message_chunk` after `delay`, outside this turn (which has
    /// ended by then); it joins no reply.
    pub(crate) fn say_later(&self, delay: std::time::Duration, text: String) {
        let connection = self.connection.clone();
        let session = self.session_id();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let chunk = SessionUpdate::AgentMessageChunk(
                agent_client_protocol::v1::schema::ContentChunk::new(
                    agent_client_protocol::v1::schema::ContentBlock::Text(
                        agent_client_protocol::v1::schema::TextContent::new(text),
                    ),
                ),
            );
            if connection
                .send_notification(SessionNotification::new(session, chunk))
                .is_err()
            {
                tracing::debug!("the connection ended before a later message");
            }
        });
    }

    /// Streams one `agent_message_chunk`, which also joins the turn's reply.
    pub(crate) fn say(&mut self, text: impl Into<String>) -> Result<(), Error> {
        let text = text.into();
        self.reply.push_str(&text);
        self.update(SessionUpdate::AgentMessageChunk(text_chunk(text)))
    }

    /// Adds `text` to the turn's reply (its record in the history) without sending it.
    pub(crate) fn note(&mut self, text: impl Into<String>) {
        self.reply.push_str(&text.into());
    }

    /// Streams one `agent_thought_chunk`.
    pub(crate) fn think(&self, text: impl Into<String>) -> Result<(), Error> {
        self.update(SessionUpdate::AgentThoughtChunk(text_chunk(text.into())))
    }

    /// Writes one `agent_message_chunk` straight to stdout (see
    /// [`crate::output::Output::notification`]); it joins the reply too.
    pub(crate) fn say_raw(&mut self, text: &str) -> std::io::Result<()> {
        self.reply.push_str(text);
        self.agent.output.notification(&SessionNotification::new(
            self.session_id(),
            SessionUpdate::AgentMessageChunk(text_chunk(text.to_owned())),
        ))
    }

    /// Streams one `agent_message_chunk` whose text `text` makes of the monotonic
    /// time (nanoseconds) taken just before it is written to stdout (see
    /// [`crate::output::Output::stamped`]); waits until it is written. It joins the
    /// reply too.
    pub(crate) async fn say_stamped(
        &mut self,
        text: impl Fn(u64) -> String + Clone + Send + 'static,
    ) -> std::io::Result<()> {
        let session = self.session_id();
        let line = {
            let text = text.clone();
            move |nanos| {
                crate::output::notification_line(&SessionNotification::new(
                    session,
                    SessionUpdate::AgentMessageChunk(text_chunk(text(nanos))),
                ))
            }
        };
        let nanos = self.agent.output.stamped(line).await?;
        self.reply.push_str(&text(nanos));
        Ok(())
    }

    /// Sends a request to the client and waits for its answer.
    pub(crate) async fn request<R: JsonRpcRequest>(
        &self,
        request: R,
    ) -> Result<R::Response, Error> {
        self.connection.send_request(request).block_task().await
    }

    /// Runs `work` unless the turn is cancelled first (`None` then).
    pub(crate) async fn unless_cancelled<F: Future>(&self, work: F) -> Option<F::Output> {
        tokio::select! {
            output = work => Some(output),
            () = self.cancel.cancelled() => None,
        }
    }
}

/// A text content chunk.
pub(crate) fn text_chunk(text: String) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(TextContent::new(text)))
}

/// Starts a turn for `request` in a task of its own; the task answers `responder`.
pub(crate) fn start(
    agent: &Arc<TestAgent>,
    request: PromptRequest,
    responder: Responder<PromptResponse>,
    connection: ConnectionTo<Client>,
) -> Result<(), Error> {
    let session = match agent.live(&request.session_id) {
        Ok(session) => session,
        Err(error) => return responder.respond_with_error(error),
    };
    let ticket = match session.begin_turn() {
        Ok(ticket) => ticket,
        Err(Busy::TurnRunning) => {
            return responder.respond_with_error(Error::new(
                agent_client_protocol::ErrorCode::INVALID_REQUEST,
                format!(
                    "session {} already has a turn running; cancel it or wait for its answer",
                    request.session_id
                ),
            ));
        }
    };
    let agent = agent.clone();
    let task_connection = connection.clone();
    connection.spawn(async move {
        let answer = run(
            agent,
            session,
            task_connection,
            request,
            ticket,
            responder.cancellation(),
        )
        .await;
        if let Err(error) = responder.respond_with_result(answer) {
            tracing::warn!(%error, "answering session/prompt failed");
        }
        // A failed turn must not stop the connection: it was answered with an error.
        Ok(())
    })
}

async fn run(
    agent: Arc<TestAgent>,
    session: Arc<LiveSession>,
    connection: ConnectionTo<Client>,
    request: PromptRequest,
    ticket: TurnTicket,
    request_cancellation: RequestCancellation,
) -> Result<PromptResponse, Error> {
    let input = PromptInput::from_blocks(&request.prompt);
    let command = Command::parse(&input.text);
    tracing::debug!(session = %session.id(), ?command, "turn");
    // `$/cancel_request` on the prompt cancels the turn like `session/cancel`.
    let watcher = tokio::spawn({
        let cancel = ticket.cancel.clone();
        async move {
            request_cancellation.cancelled().await;
            cancel.cancel();
        }
    });
    let mut turn = Turn {
        agent,
        session,
        cancel: ticket.cancel.clone(),
        connection,
        reply: String::new(),
        usage: None,
    };
    let outcome = commands::run(&mut turn, &input, command).await;
    watcher.abort();
    turn.session.end_turn(&ticket);
    let stop = outcome?;
    let Turn {
        agent,
        session,
        reply,
        usage,
        ..
    } = turn;
    session
        .update(&agent.store, |record| {
            if record.title.is_none() {
                record.title = automatic_title(&input.text);
            }
            record.history.push(Exchange {
                user: input.text.clone(),
                agent: reply,
            });
            record.updated_at = chrono::Utc::now();
        })
        .map_err(|error| internal(&error))?;
    Ok(PromptResponse::new(stop).usage(usage))
}

/// The title a session gets from its first prompt: the first non-blank line, cut to
/// [`TITLE_LIMIT`] characters.
fn automatic_title(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|line| !line.is_empty())?;
    Some(line.chars().take(TITLE_LIMIT).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_automatic_title_is_the_first_line_cut_short() {
        assert_eq!(
            automatic_title("\n  hello there \nmore"),
            Some("hello there".into())
        );
        assert_eq!(automatic_title(" \n "), None);
        assert_eq!(
            automatic_title(&"x".repeat(100)).map(|t| t.len()),
            Some(TITLE_LIMIT)
        );
    }
}
