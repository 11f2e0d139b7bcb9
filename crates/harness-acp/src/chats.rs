//! Opening the agent's sessions for chats: a new one for a fresh chat, a fork (the
//! agent's own fork when it offers one at the last turn, else a new session that gets
//! the copied history with its first prompt), and reopening a chat's session on a newly
//! started agent (`session/load`, replaying history, or `session/resume`). When the
//! agent refuses to reopen a session, or offers neither, the chat goes on in a new
//! session seeded with its transcript.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use agent_client_protocol::v1::schema as acp;
use hearth_core::{ChatContext, ChatUri, TurnId};
use serde_json::Value;

use crate::connection::Connection;
use crate::conversation::{AcpConversation, Transcript, transcript};
use crate::error::{Error, Result};
use crate::harness::Inner;
use crate::options::StartPhase;
use crate::reopen::{Reopen, ReopenMethod, ReopenOutcome, refusal_reason};
use crate::shared::Replayed;

/// Quiet time after the answer to `session/load` after which the agent's replay of the
/// session counts as over. Some agents answer before their replay has ended (Gemini CLI
/// streams it without waiting), and what they replay after the answer must not land in
/// the turn that follows.
const REPLAY_QUIET: Duration = Duration::from_millis(250);
/// The longest Hearth waits for the rest of a replay after the answer.
const REPLAY_TAIL: Duration = Duration::from_secs(5);

/// An agent session opened for a chat, with what the agent said about its settings.
pub(crate) struct Opened {
    /// The agent's session id.
    pub session_id: String,
    /// The chat's current model, when the agent says.
    pub model: Option<String>,
}

impl Inner {
    /// The working directory and the additional ones the agent accepts.
    fn directories(
        &self,
        connection: &Connection,
        context: &ChatContext,
    ) -> Result<(PathBuf, Vec<PathBuf>)> {
        let mut directories = context.working_directories.iter().cloned();
        let cwd = directories.next().ok_or_else(|| {
            Error::Invalid(format!("chat `{}` has no working directory", context.chat))
        })?;
        let additional: Vec<_> = directories.collect();
        if !additional.is_empty()
            && connection
                .info
                .capabilities
                .session_capabilities
                .additional_directories
                .is_none()
        {
            tracing::info!(
                agent = %self.shared.agent(),
                "the agent takes no additional directories; only {} is its working directory",
                cwd.display()
            );
            return Ok((cwd, Vec::new()));
        }
        Ok((cwd, additional))
    }

    /// Registers the route of a new or reopened session and takes its settings.
    fn register(
        &self,
        context: &ChatContext,
        session_id: &str,
        modes: Option<&acp::SessionModeState>,
        options: Option<&[acp::SessionConfigOption]>,
        raw: &Value,
    ) -> Option<String> {
        let mut route = self.route(context);
        let model = Self::take_settings(&mut route, modes, options, raw);
        for update in self.shared.take_orphans(session_id) {
            crate::handlers::apply_agent_state(&mut route, &update);
        }
        let mut routes = self.shared.routes();
        routes.retain(|_, existing| existing.chat != context.chat);
        routes.insert(session_id.to_owned(), route);
        model
    }

    /// Sends a request that opens a session (new, fork, load, resume), registers the
    /// session's route with the settings the answer gives, and returns the session id and
    /// the chat's model. `known` is the id of a session being reopened.
    async fn open<Answer: SessionAnswer>(
        &self,
        connection: &Connection,
        context: &ChatContext,
        method: &str,
        request: impl serde::Serialize,
        known: Option<&str>,
    ) -> Result<Opened> {
        self.shared.progress(StartPhase::OpeningSession);
        let answered = connection
            .request_json(method, request, self.shared.options.timeouts.request)
            .await;
        self.shared.progress(if answered.is_ok() {
            StartPhase::SessionOpen
        } else {
            StartPhase::Failed
        });
        let (answer, raw): (Answer, Value) = answered?;
        let session_id = match (answer.created_session(), known) {
            (Some(id), _) => id,
            (None, Some(id)) => id.to_owned(),
            (None, None) => {
                return Err(Error::Protocol {
                    agent: self.shared.agent().to_owned(),
                    what: format!("answered {method} without a session id"),
                    stderr: String::new(),
                });
            }
        };
        let model = self.register(
            context,
            &session_id,
            answer.settled_modes(),
            answer.settled_options(),
            &raw,
        );
        Ok(Opened { session_id, model })
    }

    /// A new session for a chat.
    pub async fn new_session(
        &self,
        connection: &Connection,
        context: &ChatContext,
    ) -> Result<Opened> {
        let (cwd, additional) = self.directories(connection, context)?;
        let request = acp::NewSessionRequest::new(cwd)
            .additional_directories(additional)
            .mcp_servers(self.lent_servers(connection, &context.chat));
        self.open::<acp::NewSessionResponse>(connection, context, "session/new", request, None)
            .await
    }

    /// The agent's own fork of a session, when it offers one.
    pub async fn fork_session(
        &self,
        connection: &Connection,
        context: &ChatContext,
        source_session: &str,
    ) -> Result<Opened> {
        let (cwd, additional) = self.directories(connection, context)?;
        let request = acp::ForkSessionRequest::new(source_session.to_owned(), cwd)
            .additional_directories(additional)
            .mcp_servers(self.lent_servers(connection, &context.chat));
        self.open::<acp::ForkSessionResponse>(connection, context, "session/fork", request, None)
            .await
    }

    /// Opens the session of a fork or side chat of `source_chat` at `turn_id`: the
    /// agent's own fork when it offers one at the last turn, else a new session that
    /// gets the history with its first prompt; it goes on with its source's model and
    /// mode.
    pub async fn open_peer(
        &self,
        connection: &Connection,
        context: &ChatContext,
        source_chat: &ChatUri,
        turn_id: &TurnId,
        fork: bool,
    ) -> Result<(AcpConversation, Opened)> {
        let source = self
            .shared
            .chats
            .with(source_chat, |entry| entry.conversation.clone())?;
        let through = source.turns_through(turn_id).ok_or_else(|| {
            Error::Invalid(format!("turn `{turn_id}` is not in chat `{source_chat}`"))
        })?;
        let at_last_turn = through.len() == source.turns.len();
        let native = fork
            && at_last_turn
            && source.attached == Some(connection.generation)
            && connection
                .info
                .capabilities
                .session_capabilities
                .fork
                .is_some();
        let opened = match (&source.session_id, native) {
            (Some(source_session), true) => {
                self.fork_session(connection, context, source_session)
                    .await?
            }
            _ => self.new_session(connection, context).await?,
        };
        let mut conversation = self.conversation_for(context, &opened);
        // A fork or side chat goes on with the model and mode its source chose.
        conversation.model = source.model.clone().or(conversation.model);
        conversation.mode = source.mode.clone().or(conversation.mode);
        if fork {
            conversation.turns = through.to_vec();
            if !native {
                conversation.pending_context = Some(transcript(through, Transcript::Continue));
            }
        } else {
            conversation.pending_context = Some(transcript(through, Transcript::Aside));
        }
        Ok((conversation, opened))
    }

    /// Makes sure a chat's session is open on the running agent: reopens it after the
    /// agent (re)started. Returns the session id and, when reopening replayed it, the
    /// history the agent holds.
    ///
    /// A chat never dies with its agent session: when the agent refuses to reopen it
    /// (an empty session it never saved, a fork it never used, a session it lost) or
    /// cannot reopen sessions at all, the chat goes on in a fresh session that gets the
    /// chat's transcript, from Hearth's own record, with its next prompt (see
    /// [`Self::revive`]).
    pub async fn attach(
        &self,
        connection: &Connection,
        context: &ChatContext,
    ) -> Result<(String, Option<Vec<Replayed>>)> {
        let chat = &context.chat;
        let conversation = self
            .shared
            .chats
            .with(chat, |entry| entry.conversation.clone())?;
        let Some(session_id) = conversation.session_id.clone() else {
            let opened = self.new_session(connection, context).await?;
            self.shared.chats.with(chat, |entry| {
                entry.conversation.session_id = Some(opened.session_id.clone());
                entry.conversation.attached = Some(connection.generation);
            })?;
            self.publish_session(chat, &opened.session_id).await;
            return Ok((opened.session_id, None));
        };
        if conversation.attached == Some(connection.generation) {
            return Ok((session_id, None));
        }
        // A conversation the agent had before Hearth knew it, of which Hearth holds no
        // turn, has nothing to go on from but the agent's own session.
        let revivable = !(conversation.external && conversation.turns.is_empty());
        let reopened = match self
            .reopen(connection, context, &session_id)
            .await
            .map_err(|failure| (failure, revivable))
        {
            Ok(replayed) => replayed,
            Err((Reopen::Refused(error), true)) => {
                return self.revive(connection, context, &error).await;
            }
            Err((Reopen::Refused(error) | Reopen::Failed(error), _)) => return Err(error),
        };
        self.shared.chats.with(chat, |entry| {
            entry.conversation.attached = Some(connection.generation);
        })?;
        self.restore_settings(connection, context, &session_id)
            .await;
        Ok((session_id, reopened))
    }

    /// Reopens a session on a newly started agent, the way it offers (`session/load`,
    /// else `session/resume`), and records what happened for `agents list`.
    async fn reopen(
        &self,
        connection: &Connection,
        context: &ChatContext,
        session_id: &str,
    ) -> std::result::Result<Option<Vec<Replayed>>, Reopen> {
        let capabilities = &connection.info.capabilities;
        let (cwd, additional) = self
            .directories(connection, context)
            .map_err(Reopen::Failed)?;
        let (method, result) = if capabilities.load_session {
            let loaded = self
                .load_session(connection, context, session_id, cwd, additional)
                .await;
            (ReopenMethod::Load, loaded)
        } else if capabilities.session_capabilities.resume.is_some() {
            let request = acp::ResumeSessionRequest::new(session_id.to_owned(), cwd)
                .additional_directories(additional)
                .mcp_servers(self.lent_servers(connection, &context.chat));
            let resumed = self
                .open::<acp::ResumeSessionResponse>(
                    connection,
                    context,
                    "session/resume",
                    request,
                    Some(session_id),
                )
                .await
                .map(|_| None);
            (ReopenMethod::Resume, resumed)
        } else {
            return Err(Reopen::Refused(Error::ReadOnly(format!(
                "agent `{}` cannot reopen its conversations (it offers neither session/load nor session/resume), so a conversation it had before Hearth knew it cannot be shown or continued here",
                self.shared.agent()
            ))));
        };
        match result {
            Ok(replayed) => {
                self.remember_reopen(method, ReopenOutcome::Reopened);
                Ok(replayed)
            }
            // The agent answered: it will not reopen this session.
            Err(error @ Error::Refused { .. }) => {
                self.remember_reopen(
                    method,
                    ReopenOutcome::Refused {
                        message: error.to_string(),
                    },
                );
                Err(Reopen::Refused(error))
            }
            // It stopped, broke the protocol or did not answer: the restart logic
            // handles that on the next try.
            Err(error) => Err(Reopen::Failed(error)),
        }
    }

    /// Goes on with a chat whose agent session could not be reopened: a fresh session
    /// becomes the chat's conversation (published, so it outlives a restart), the chat's
    /// transcript waits to go with its next prompt, and a notice tells the user.
    async fn revive(
        &self,
        connection: &Connection,
        context: &ChatContext,
        refusal: &Error,
    ) -> Result<(String, Option<Vec<Replayed>>)> {
        let chat = &context.chat;
        let opened = self.new_session(connection, context).await?;
        tracing::info!(
            agent = %self.shared.agent(),
            %chat,
            session = %opened.session_id,
            reason = %refusal,
            "the chat goes on in a new session of the agent"
        );
        let agent = self.shared.agent();
        let data = self.shared.chats.with(chat, |entry| {
            let conversation = &mut entry.conversation;
            let handed_over = if conversation.pending_context.is_some() {
                // What the agent still lacks (a fork's history, a side chat's source)
                // is handed over already with the next prompt.
                true
            } else if conversation.turns.is_empty() {
                false
            } else {
                conversation.pending_context =
                    Some(transcript(&conversation.turns, Transcript::Continue));
                true
            };
            conversation.notice = Some(if handed_over {
                format!(
                    "{agent} could not reopen this chat's session ({}); it goes on in a new session, which gets this chat's history with your message",
                    refusal_reason(refusal)
                )
            } else {
                format!(
                    "{agent} could not reopen this chat's session ({}); it goes on in a new session",
                    refusal_reason(refusal)
                )
            });
            conversation.session_id = Some(opened.session_id.clone());
            conversation.attached = Some(connection.generation);
            conversation.updated_at = hearth_core::now();
            hearth_harness::encode(chat, conversation)
        })??;
        self.publish_conversation(chat, data).await;
        self.publish_session(chat, &opened.session_id).await;
        // The new session starts on the agent's defaults: the chat's choices again.
        self.restore_settings(connection, context, &opened.session_id)
            .await;
        Ok((opened.session_id, None))
    }

    /// Reopens a session with `session/load`; returns the history the agent replayed.
    /// The replay is captured until it is over; the route registered with the answer's
    /// settings takes over after that.
    async fn load_session(
        &self,
        connection: &Connection,
        context: &ChatContext,
        session_id: &str,
        cwd: PathBuf,
        additional: Vec<PathBuf>,
    ) -> Result<Option<Vec<Replayed>>> {
        self.register(context, session_id, None, None, &Value::Null);
        if let Some(route) = self.shared.routes().get_mut(session_id) {
            route.capture = Some(Vec::new());
        }
        let request = acp::LoadSessionRequest::new(session_id.to_owned(), cwd)
            .additional_directories(additional)
            .mcp_servers(self.lent_servers(connection, &context.chat));
        let loaded = connection
            .request_json::<_, acp::LoadSessionResponse>(
                "session/load",
                &request,
                self.shared.options.timeouts.request,
            )
            .await;
        if loaded.is_ok() {
            self.replay_over(session_id).await;
        }
        let captured = self
            .shared
            .routes()
            .get_mut(session_id)
            .and_then(|route| route.capture.take());
        let (answer, raw) = loaded?;
        self.register(
            context,
            session_id,
            answer.settled_modes(),
            answer.settled_options(),
            &raw,
        );
        Ok(captured)
    }

    /// Waits until the replay of a session being reopened has been quiet for
    /// [`REPLAY_QUIET`] since the agent answered (at most [`REPLAY_TAIL`]).
    async fn replay_over(&self, session_id: &str) {
        let answered = Instant::now();
        let deadline = answered + REPLAY_TAIL;
        loop {
            let last = self
                .shared
                .routes()
                .get(session_id)
                .and_then(|route| route.replayed_at)
                .map_or(answered, |at| at.max(answered));
            let quiet = (last + REPLAY_QUIET).min(deadline);
            if Instant::now() >= quiet {
                if quiet == deadline {
                    tracing::info!(agent = %self.shared.agent(), session = %session_id, "the agent still replays the session; going on without the rest");
                }
                return;
            }
            tokio::time::sleep_until(tokio::time::Instant::from_std(quiet)).await;
        }
    }

    /// Closes (or, for a disposed chat, deletes) a chat's session, if the agent offers it.
    pub async fn close_session(&self, chat: &ChatUri, delete: bool) {
        let Some(session_id) = self.shared.session_of(chat) else {
            return;
        };
        self.shared.routes().remove(&session_id);
        let connection = {
            match self.current().await {
                Some(connection) => connection,
                None => return,
            }
        };
        self.end_session(&connection, &session_id, delete).await;
    }

    /// Ends a session on the agent: deleted (with `delete`, where the agent offers it),
    /// else closed where it offers that; a failure is logged, not returned.
    pub async fn end_session(&self, connection: &Connection, session_id: &str, delete: bool) {
        let capabilities = &connection.info.capabilities.session_capabilities;
        let timeout = self.shared.options.timeouts.request;
        let result = if delete && capabilities.delete.is_some() {
            connection
                .request(
                    "session/delete",
                    acp::DeleteSessionRequest::new(session_id.to_owned()),
                    Some(timeout),
                )
                .await
                .map(drop)
        } else if capabilities.close.is_some() {
            connection
                .request(
                    "session/close",
                    acp::CloseSessionRequest::new(session_id.to_owned()),
                    Some(timeout),
                )
                .await
                .map(drop)
        } else {
            Ok(())
        };
        if let Err(error) = result {
            tracing::debug!(agent = %self.shared.agent(), session = %session_id, %error, "could not end a session");
        }
    }

    /// The conversation of a new chat.
    pub fn conversation_for(&self, context: &ChatContext, opened: &Opened) -> AcpConversation {
        let mut conversation =
            AcpConversation::new(self.shared.agent(), context.working_directories.clone());
        conversation.session_id = Some(opened.session_id.clone());
        conversation.model = opened.model.clone();
        conversation
    }
}

/// What an answer that opens a session says about it.
trait SessionAnswer: serde::de::DeserializeOwned {
    /// The id of a session it created.
    fn created_session(&self) -> Option<String>;
    /// Its modes.
    fn settled_modes(&self) -> Option<&acp::SessionModeState>;
    /// Its settings.
    fn settled_options(&self) -> Option<&[acp::SessionConfigOption]>;
}

macro_rules! session_answer {
    ($answer:ty, $created:expr) => {
        impl SessionAnswer for $answer {
            fn created_session(&self) -> Option<String> {
                #[allow(clippy::redundant_closure_call)]
                ($created)(self)
            }
            fn settled_modes(&self) -> Option<&acp::SessionModeState> {
                self.modes.as_ref()
            }
            fn settled_options(&self) -> Option<&[acp::SessionConfigOption]> {
                self.config_options.as_deref()
            }
        }
    };
}

session_answer!(
    acp::NewSessionResponse,
    |answer: &acp::NewSessionResponse| Some(answer.session_id.to_string())
);
session_answer!(
    acp::ForkSessionResponse,
    |answer: &acp::ForkSessionResponse| Some(answer.session_id.to_string())
);
session_answer!(acp::LoadSessionResponse, |_: &acp::LoadSessionResponse| {
    None
});
session_answer!(
    acp::ResumeSessionResponse,
    |_: &acp::ResumeSessionResponse| None
);
