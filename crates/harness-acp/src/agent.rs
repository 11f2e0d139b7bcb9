//! `AcpHarness` as a Hearth harness: the `Harness` trait over the chat table, the agent's
//! sessions and its turns.

use agent_client_protocol::v1::schema as acp;
use futures::FutureExt;
use futures::future::BoxFuture;
use hearth_core::{
    ChatContext, ChatMetadata, ChatSeed, ChatUri, ConversationId, CreateChatRequest, CreatedChat,
    EventSink, Harness, HarnessData, HarnessDescriptor, HarnessError, HarnessResult,
    PermissionAnswer, PermissionGrant, Signal, StopReason, Turn, TurnId, TurnOutcome, UserMessage,
    now,
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::connection::Connection;
use crate::conversation::{AcpConversation, TurnRecord};
use crate::error::{Error, Result};
use crate::harness::{AcpHarness, Inner};
use crate::prompt::{self, Accepts};
use crate::shared::{Answer, TurnState};

impl Inner {
    async fn create(
        &self,
        context: &ChatContext,
        request: CreateChatRequest,
    ) -> Result<CreatedChat> {
        let connection = self.connection().await?;
        let (mut conversation, opened) = match request.seed.source() {
            None => {
                let opened = self.new_session(&connection, context).await?;
                (self.conversation_for(context, &opened), opened)
            }
            Some((source_chat, turn_id)) => {
                let fork = matches!(request.seed, ChatSeed::Fork { .. });
                self.open_peer(&connection, context, source_chat, turn_id, fork)
                    .await?
            }
        };
        conversation.attached = Some(connection.generation);
        let chat = &context.chat;
        self.shared.chats.insert(chat, conversation)?;
        self.touched(chat);
        if !matches!(request.seed, ChatSeed::Fresh) {
            self.restore_settings(&connection, context, &opened.session_id)
                .await;
        }
        let (provider_data, model) = self.shared.chats.with(chat, |entry| {
            (
                hearth_harness::encode(chat, &entry.conversation),
                entry.conversation.model.clone(),
            )
        })?;
        let provider_data = provider_data?;
        let agent = self
            .shared
            .routes()
            .get(&opened.session_id)
            .map(|route| route.agent_state.clone());
        Ok(CreatedChat {
            provider_data,
            conversation: ConversationId::parse(&opened.session_id).ok(),
            model,
            agent,
        })
    }

    fn materialize(&self, context: &ChatContext, provider_data: Option<HarnessData>) -> Result<()> {
        let chat = &context.chat;
        let Some(data) = provider_data else {
            return if self.shared.chats.with(chat, |_| ()).is_ok() {
                Ok(())
            } else {
                Err(Error::Conversation(format!(
                    "chat `{chat}` has no stored conversation, so agent `{}` cannot reopen it",
                    self.shared.agent()
                )))
            };
        };
        let conversation: AcpConversation = hearth_harness::decode(chat, &data)?;
        if let Some(session_id) = &conversation.session_id {
            let route = self.route(context);
            let mut routes = self.shared.routes();
            routes.retain(|_, existing| &existing.chat != chat);
            routes.insert(session_id.clone(), route);
        }
        self.shared.chats.restore(chat, conversation);
        Ok(())
    }

    /// Runs one turn: opens the chat's session on the running agent (starting or
    /// restarting it if needed), sends the prompt, streams the answer, and records it.
    async fn run_turn(
        &self,
        context: &ChatContext,
        turn_id: TurnId,
        message: UserMessage,
    ) -> Result<TurnOutcome> {
        let chat = &context.chat;
        let cancel = CancellationToken::new();
        let (run, ()) = self
            .shared
            .chats
            .start_run(chat, &turn_id, &cancel, |_| ())?;
        let started_at = now();
        self.make_room(Some(chat)).await;
        self.settled_releases().await;
        let result = self.prompt(context, &turn_id, &message, &cancel).await;
        // Whatever is still waiting for the user will not be answered any more.
        for request_id in self.shared.cancel_waiting(chat, &turn_id) {
            self.shared
                .signal(
                    chat,
                    vec![Signal::PermissionResolved {
                        turn_id: turn_id.clone(),
                        request_id,
                        outcome: hearth_core::PERMISSION_CANCELLED.to_owned(),
                    }],
                )
                .await;
        }
        self.shared.terminals.release_chat(chat);
        // What the turn did is on record before it ends.
        self.shared.flush_audit().await;
        let answer = {
            let mut routes = self.shared.routes();
            routes
                .values_mut()
                .find(|route| &route.chat == chat)
                .and_then(|route| route.turn.take())
                .map(|turn| turn.answer)
                .unwrap_or_default()
        };
        let (stop_reason, accepted) = match &result {
            Ok((outcome, _)) => (outcome.stop_reason.clone(), true),
            Err(PromptFailure { accepted, .. }) => (StopReason::Error, *accepted),
        };
        let record = TurnRecord {
            id: turn_id,
            user: message,
            answer,
            stop_reason: Some(stop_reason),
            started_at,
            completed_at: Some(now()),
        };
        let provider_data = self.shared.chats.finish_run(chat, run, |conversation| {
            conversation.turns.push(record);
            if accepted {
                conversation.pending_context = None;
            }
            conversation.updated_at = now();
            hearth_harness::encode(chat, conversation)
        });
        self.touched(chat);
        self.enforce_limit().await;
        match provider_data {
            Some(Ok(data)) => self.publish_conversation(chat, data).await,
            Some(Err(error)) => {
                tracing::error!(%chat, %error, "could not record a chat's conversation")
            }
            None => tracing::debug!(%chat, "the chat went away while its turn ran"),
        }
        result
            .map(|(outcome, _)| outcome)
            .map_err(|failure| failure.error)
    }

    /// The scope's instructions, given with the first prompt of a conversation to an
    /// agent that does not find them in an `AGENTS.md` by itself.
    fn instructions_preface(
        &self,
        context: &ChatContext,
        conversation: &AcpConversation,
        session: AgentSession,
    ) -> Option<String> {
        if session == AgentSession::Continued || conversation.external {
            return None;
        }
        let customizations = context.customizations.as_ref()?;
        let instructions = customizations.instructions.as_deref()?.trim();
        if instructions.is_empty()
            || (self.shared.spec.reads_agents_file && customizations.agents_file.is_some())
        {
            return None;
        }
        Some(format!(
            "<project_instructions>\n{instructions}\n</project_instructions>\n"
        ))
    }

    async fn prompt(
        &self,
        context: &ChatContext,
        turn_id: &TurnId,
        message: &UserMessage,
        cancel: &CancellationToken,
    ) -> std::result::Result<(TurnOutcome, ()), PromptFailure> {
        let chat = &context.chat;
        let not_sent = |error: Error| PromptFailure {
            error,
            accepted: false,
        };
        let connection = tokio::select! {
            connection = self.connection() => connection.map_err(not_sent)?,
            () = cancel.cancelled() => return Ok((aborted(), ())),
        };
        let (session_id, _) = self.attach(&connection, context).await.map_err(not_sent)?;
        // Attaching may have put the chat in a new session that still has to get the
        // chat's transcript: the preface is made from the conversation as it is now.
        let (conversation, notice) = self
            .shared
            .chats
            .with(chat, |entry| {
                let notice = entry.conversation.notice.take();
                (entry.conversation.clone(), notice)
            })
            .map_err(|error| not_sent(error.into()))?;
        self.begin_turn(chat, &session_id, turn_id).await;
        let session = match notice {
            Some(message) => {
                self.shared.notice(chat, turn_id, message).await;
                AgentSession::New
            }
            None if conversation.turns.is_empty() => AgentSession::New,
            None => AgentSession::Continued,
        };
        let prompt_capabilities = &connection.info.capabilities.prompt_capabilities;
        let accepts = Accepts {
            image: prompt_capabilities.image,
            embedded: prompt_capabilities.embedded_context,
        };
        let preface = self.preface(context, &conversation, session);
        let blocks = prompt::prompt(message, preface.as_deref(), accepts);
        if cancel.is_cancelled() {
            return Ok((aborted(), ()));
        }
        let request = acp::PromptRequest::new(session_id, blocks);
        let Some(answer) = self
            .send_prompt(&connection, chat, turn_id, request, cancel)
            .await
        else {
            return Ok((aborted(), ()));
        };
        let answer = answer.map_err(|error| PromptFailure {
            error,
            accepted: true,
        })?;
        let mut stop_reason = crate::mapping::stop_reason(&answer.stop_reason);
        if cancel.is_cancelled() && stop_reason == StopReason::EndTurn {
            stop_reason = StopReason::Aborted;
        }
        Ok((
            TurnOutcome {
                stop_reason,
                usage: self.turn_usage(chat, &answer),
            },
            (),
        ))
    }

    /// Marks the user's turn as running in the session: a turn the agent had started on
    /// its own ends, and the turn starts with what the agent offers in the chat.
    async fn begin_turn(&self, chat: &ChatUri, session_id: &str, turn_id: &TurnId) {
        let (ambient, agent_state) = {
            let mut routes = self.shared.routes();
            match routes.get_mut(session_id) {
                Some(route) => {
                    route.turn = Some(TurnState::new(turn_id.clone()));
                    (route.ambient.take(), route.agent_state.clone())
                }
                None => (None, hearth_core::AgentChatState::default()),
            }
        };
        if let Some(ambient) = ambient {
            crate::handlers::end_ambient(&self.shared, chat, ambient).await;
        }
        self.shared
            .signal(chat, vec![Signal::AgentStateChanged { state: agent_state }])
            .await;
    }

    /// What goes before the user's message: the scope's instructions (first prompt
    /// only) and the context the chat still has to hand over.
    fn preface(
        &self,
        context: &ChatContext,
        conversation: &AcpConversation,
        session: AgentSession,
    ) -> Option<String> {
        let instructions = self.instructions_preface(context, conversation, session);
        match (instructions, conversation.pending_context.as_deref()) {
            (Some(instructions), Some(pending)) => Some(format!("{instructions}\n{pending}")),
            (Some(instructions), None) => Some(instructions),
            (None, pending) => pending.map(str::to_owned),
        }
    }

    /// Sends the prompt and waits for its answer. On cancellation the agent is told and
    /// the turn's waiting questions are cancelled, and the answer is waited for a grace
    /// more; `None` when it did not come by then.
    async fn send_prompt(
        &self,
        connection: &Connection,
        chat: &ChatUri,
        turn_id: &TurnId,
        request: acp::PromptRequest,
        cancel: &CancellationToken,
    ) -> Option<Result<acp::PromptResponse>> {
        let session_id = request.session_id.clone();
        let sent = connection.request("session/prompt", request, None);
        tokio::pin!(sent);
        tokio::select! {
            // The prompt is polled first, so it is sent before any cancellation.
            biased;
            answer = &mut sent => Some(answer),
            () = cancel.cancelled() => {
                connection.notify(acp::CancelNotification::new(session_id));
                self.shared.cancel_waiting(chat, turn_id);
                tokio::time::timeout(self.shared.options.timeouts.cancel_grace, &mut sent)
                    .await
                    .ok()
            }
        }
    }

    async fn set_model(&self, context: &ChatContext, model: String) -> Result<()> {
        let model = model.trim().to_owned();
        if model.is_empty() {
            return Err(Error::Invalid("the model name is empty".to_owned()));
        }
        let connection = self.connection().await?;
        let (session_id, _) = self.attach(&connection, context).await?;
        let (option, choices) = {
            let routes = self.shared.routes();
            let route = routes.get(&session_id);
            (
                route.and_then(|route| route.model_option.clone()),
                route.and_then(|route| route.agent_state.models.clone()),
            )
        };
        if let Some(choices) = &choices
            && !choices.choices.iter().any(|choice| choice.id == model)
        {
            let known: Vec<&str> = choices
                .choices
                .iter()
                .map(|choice| choice.id.as_str())
                .collect();
            return Err(Error::Invalid(format!(
                "agent `{}` has no model `{model}`; it offers: {}",
                self.shared.agent(),
                known.join(", ")
            )));
        }
        match option {
            Some(config_id) => {
                self.set_config_option(&connection, &session_id, config_id, &model)
                    .await?;
            }
            None if choices.is_some() => {
                self.set_session_model(&connection, &session_id, &model)
                    .await?;
            }
            None => {
                return Err(Error::Unsupported {
                    agent: self.shared.agent().to_owned(),
                    what: "choosing a model (it offers no model setting)".to_owned(),
                });
            }
        }
        self.model_chosen(&context.chat, &session_id, model).await
    }

    /// Chooses the model through `session/set_model`, for an agent that lists models
    /// without a configuration option.
    pub(crate) async fn set_session_model(
        &self,
        connection: &Connection,
        session_id: &str,
        model: &str,
    ) -> Result<()> {
        connection
            .request_json::<_, serde_json::Value>(
                "session/set_model",
                json!({"sessionId": session_id, "modelId": model}),
                self.shared.options.timeouts.request,
            )
            .await?;
        let mut routes = self.shared.routes();
        if let Some(models) = routes
            .get_mut(session_id)
            .and_then(|route| route.agent_state.models.as_mut())
        {
            models.current = model.to_owned();
        }
        Ok(())
    }

    /// Records the model the agent took for the chat, and shows what it offers now.
    async fn model_chosen(&self, chat: &ChatUri, session_id: &str, model: String) -> Result<()> {
        let data = self.shared.chats.with(chat, |entry| {
            entry.conversation.model = Some(model);
            entry.conversation.updated_at = now();
            hearth_harness::encode(chat, &entry.conversation)
        })??;
        self.publish_conversation(chat, data).await;
        self.show_agent_state(chat, session_id).await;
        Ok(())
    }

    /// The chat's history: the harness's record, or — for a conversation the agent had
    /// before Hearth knew it — what the agent replays when it reopens it.
    async fn messages(&self, context: &ChatContext) -> Result<Vec<Turn>> {
        let chat = &context.chat;
        let conversation = self
            .shared
            .chats
            .with(chat, |entry| entry.conversation.clone())?;
        if !(conversation.external && conversation.turns.is_empty()) {
            return Ok(conversation.turns.iter().map(TurnRecord::to_turn).collect());
        }
        let connection = self.connection().await?;
        let (_, replayed) = self.attach(&connection, context).await?;
        let records: Vec<TurnRecord> = replayed
            .unwrap_or_default()
            .into_iter()
            .map(|exchange| TurnRecord {
                id: TurnId::generate(),
                user: UserMessage::text(exchange.user),
                answer: exchange.agent,
                stop_reason: Some(StopReason::EndTurn),
                started_at: conversation.updated_at,
                completed_at: Some(conversation.updated_at),
            })
            .collect();
        let data = self.shared.chats.with(chat, |entry| {
            entry.conversation.turns.clone_from(&records);
            hearth_harness::encode(chat, &entry.conversation)
        })??;
        self.publish_conversation(chat, data).await;
        Ok(records.iter().map(TurnRecord::to_turn).collect())
    }

    fn respond_permission(
        &self,
        context: &ChatContext,
        request_id: &str,
        answer: &PermissionAnswer,
    ) -> Result<()> {
        let delivered = self.shared.answer(
            &context.chat,
            request_id,
            Answer::Selected {
                option_id: answer.option_id.clone(),
                via: answer.via.clone(),
            },
        );
        if delivered {
            Ok(())
        } else {
            Err(Error::Invalid(format!(
                "no permission request `{request_id}` of chat `{}` is waiting (it was answered, or its turn ended)",
                context.chat
            )))
        }
    }
}

/// Whether the agent's session has had the chat's earlier prompts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AgentSession {
    /// A session that has had none of them: the chat's first prompt, or a new session
    /// that took over a chat whose session could not be reopened.
    New,
    /// The session the chat's earlier prompts went to.
    Continued,
}

/// A failed prompt, and whether the agent had it (then the history handed over with it
/// reached the agent).
struct PromptFailure {
    error: Error,
    accepted: bool,
}

fn aborted() -> TurnOutcome {
    TurnOutcome {
        stop_reason: StopReason::Aborted,
        usage: None,
    }
}

fn ready<'a, T: Send + 'a>(result: Result<T>) -> BoxFuture<'a, HarnessResult<T>> {
    let result = result.map_err(HarnessError::from);
    async move { result }.boxed()
}

impl Harness for AcpHarness {
    fn descriptor(&self) -> HarnessDescriptor {
        self.inner.descriptor()
    }

    fn attach(&self, sink: EventSink) {
        self.inner.shared.sink.attach(sink);
    }

    fn start(&self) -> BoxFuture<'_, HarnessResult<()>> {
        async move {
            let connection = self.inner.connection().await?;
            self.inner.discover(&connection).await?;
            Ok(())
        }
        .map(|result: Result<()>| result.map_err(HarnessError::from))
        .boxed()
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        async move {
            for chat in self.inner.shared.chats.chats() {
                if let Err(error) = self.inner.shared.chats.cancel_run(&chat) {
                    tracing::debug!(%chat, %error, "no turn to cancel at shutdown");
                }
            }
            self.inner.shared.terminals.release_all();
            self.inner.stop().await;
            self.inner.shared.flush_audit().await;
        }
        .boxed()
    }

    fn create_chat<'a>(
        &'a self,
        context: &'a ChatContext,
        request: CreateChatRequest,
    ) -> BoxFuture<'a, HarnessResult<CreatedChat>> {
        async move {
            self.inner.make_room(None).await;
            let created = self
                .inner
                .create(context, request)
                .await
                .map_err(HarnessError::from)?;
            self.inner.enforce_limit().await;
            Ok(created)
        }
        .boxed()
    }

    fn materialize_chat<'a>(
        &'a self,
        context: &'a ChatContext,
        provider_data: Option<HarnessData>,
    ) -> BoxFuture<'a, HarnessResult<Option<HarnessData>>> {
        ready(
            self.inner
                .materialize(context, provider_data)
                .map(|()| None),
        )
    }

    fn send<'a>(
        &'a self,
        context: &'a ChatContext,
        turn_id: TurnId,
        message: UserMessage,
    ) -> BoxFuture<'a, HarnessResult<TurnOutcome>> {
        async move {
            self.inner
                .run_turn(context, turn_id, message)
                .await
                .map_err(HarnessError::from)
        }
        .boxed()
    }

    fn abort<'a>(&'a self, context: &'a ChatContext) -> BoxFuture<'a, HarnessResult<()>> {
        ready(
            self.inner
                .shared
                .chats
                .cancel_run(&context.chat)
                .map(drop)
                .map_err(Error::from),
        )
    }

    fn set_model<'a>(
        &'a self,
        context: &'a ChatContext,
        model: String,
    ) -> BoxFuture<'a, HarnessResult<()>> {
        async move {
            self.inner
                .set_model(context, model)
                .await
                .map_err(HarnessError::from)
        }
        .boxed()
    }

    fn set_mode<'a>(
        &'a self,
        context: &'a ChatContext,
        mode: String,
    ) -> BoxFuture<'a, HarnessResult<()>> {
        async move {
            self.inner
                .set_mode(context, mode)
                .await
                .map_err(HarnessError::from)
        }
        .boxed()
    }

    fn messages<'a>(&'a self, context: &'a ChatContext) -> BoxFuture<'a, HarnessResult<Vec<Turn>>> {
        async move {
            self.inner
                .messages(context)
                .await
                .map_err(HarnessError::from)
        }
        .boxed()
    }

    fn metadata<'a>(
        &'a self,
        context: &'a ChatContext,
    ) -> BoxFuture<'a, HarnessResult<ChatMetadata>> {
        ready(
            self.inner
                .shared
                .chats
                .with(&context.chat, |entry| ChatMetadata {
                    title: entry.conversation.title.clone(),
                    model: entry.conversation.model.clone(),
                    updated_at: Some(entry.conversation.updated_at),
                    turn_count: entry.conversation.turns.len(),
                })
                .map_err(Error::from),
        )
    }

    fn dispose_chat<'a>(&'a self, context: &'a ChatContext) -> BoxFuture<'a, HarnessResult<()>> {
        async move {
            self.inner.shared.chats.forget(&context.chat);
            self.inner.untouched(&context.chat);
            if let Some(endpoint) = &self.inner.shared.options.lent_http {
                endpoint.revoke(&context.chat);
            }
            self.inner.shared.terminals.release_chat(&context.chat);
            self.inner.close_session(&context.chat, true).await;
            Ok(())
        }
        .boxed()
    }

    fn release_chat<'a>(&'a self, context: &'a ChatContext) -> BoxFuture<'a, HarnessResult<()>> {
        async move {
            self.inner.shared.chats.forget(&context.chat);
            self.inner.untouched(&context.chat);
            if let Some(endpoint) = &self.inner.shared.options.lent_http {
                endpoint.revoke(&context.chat);
            }
            self.inner.shared.terminals.release_chat(&context.chat);
            self.inner.close_session(&context.chat, false).await;
            Ok(())
        }
        .boxed()
    }

    fn respond_permission<'a>(
        &'a self,
        context: &'a ChatContext,
        request_id: &'a str,
        answer: &'a PermissionAnswer,
    ) -> BoxFuture<'a, HarnessResult<()>> {
        ready(self.inner.respond_permission(context, request_id, answer))
    }

    fn permission_grants(&self) -> Vec<PermissionGrant> {
        self.inner
            .shared
            .routes()
            .values()
            .flat_map(|route| {
                route.grants.iter().map(|grant| PermissionGrant {
                    id: grant.id.clone(),
                    chat: route.chat.clone(),
                    scope: grant.scope.describe(),
                    allowed: grant.allowed,
                })
            })
            .collect()
    }

    fn revoke_permission_grant(&self, grant: &str) -> bool {
        let mut revoked = false;
        for route in self.inner.shared.routes().values_mut() {
            let before = route.grants.len();
            route.grants.retain(|held| held.id != grant);
            revoked |= route.grants.len() != before;
        }
        if revoked {
            self.inner.shared.audit(
                hearth_tools::AuditEntry::new(
                    hearth_tools::Actor::User(hearth_tools::UserActor::new("server")),
                    hearth_tools::AuditKind::Permission,
                    hearth_tools::Decision::Answered,
                    hearth_tools::AuditOutcome::ok_with(format!("revoked grant {grant}")),
                )
                .detail(json!({"agent": self.inner.shared.agent(), "grant": grant})),
            );
        }
        revoked
    }
}
