//! `NativeHarness` as a Hearth harness: the `Harness` trait over the chat table and the loop.

use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use hearth_core::{
    ChatContext, ChatMetadata, ChatSeed, Compacted, CreateChatRequest, CreatedChat, EventSink,
    Harness, HarnessData, HarnessDescriptor, HarnessError, HarnessResult, PermissionAnswer, Signal,
    StopReason, Turn, TurnId, TurnOutcome, UserMessage,
};
use tokio_util::sync::CancellationToken;

use crate::agent::{Inner, NativeHarness};
use crate::context::{DynamicContext, system_prompt};
use crate::conversation::{Conversation, Role, TurnRecord};
use crate::error::{Error, Result};
use crate::title::spawn_title;
use crate::turn::{Ended, TurnLoop};

impl Inner {
    /// The conversation a new chat starts with.
    fn conversation_for_seed(
        &self,
        context: &ChatContext,
        seed: &ChatSeed,
    ) -> Result<Conversation> {
        let fresh = |model: Option<String>, role: Role| {
            Conversation::fresh(
                self.provider(),
                context
                    .model
                    .clone()
                    .or(model)
                    .or(self.default_model.clone()),
                None,
                role,
            )
        };
        let Some((source_chat, turn_id)) = seed.source() else {
            return Ok(fresh(None, Role::Main));
        };
        self.chats.with(source_chat, |source| {
            let through = source.conversation.turns_through(source_chat, turn_id)?;
            Ok(match seed {
                ChatSeed::Fork { .. } => {
                    let mut conversation =
                        fresh(source.conversation.model.clone(), source.conversation.role);
                    conversation
                        .context
                        .clone_from(&source.conversation.context);
                    conversation.turns = through.to_vec();
                    conversation
                }
                ChatSeed::Fresh | ChatSeed::SideChat { .. } => {
                    let mut conversation = fresh(source.conversation.model.clone(), Role::Side);
                    conversation
                        .context
                        .clone_from(&source.conversation.context);
                    for turn in through {
                        conversation.context.extend(turn.messages.iter().cloned());
                    }
                    conversation
                }
            })
        })?
    }

    fn create(&self, context: &ChatContext, request: &CreateChatRequest) -> Result<CreatedChat> {
        let chat = &context.chat;
        let mut conversation = self.conversation_for_seed(context, &request.seed)?;
        if let Some(title) = &request.title {
            // Titled by the host: no title is generated for it.
            conversation.title = Some(title.clone());
        }
        let provider_data = conversation.encode(chat)?;
        let model = conversation.model.clone();
        self.chats.insert(chat, conversation)?;
        Ok(CreatedChat {
            provider_data,
            conversation: None,
            model,
            agent: None,
        })
    }

    fn materialize(
        &self,
        context: &ChatContext,
        provider_data: Option<HarnessData>,
    ) -> Result<Option<HarnessData>> {
        let chat = &context.chat;
        self.chats.materialize(
            chat,
            provider_data,
            |conversation| conversation.encode(chat),
            |data| {
                let conversation = Conversation::decode(chat, data)?;
                if conversation.provider != self.provider() {
                    tracing::info!(
                        %chat,
                        recorded = %conversation.provider,
                        "a chat recorded by another provider continues here"
                    );
                }
                Ok(conversation)
            },
            || Error::NoConversation { chat: chat.clone() },
        )
    }
}

impl NativeHarness {
    async fn run_turn(
        &self,
        context: &ChatContext,
        turn_id: TurnId,
        message: UserMessage,
    ) -> HarnessResult<TurnOutcome> {
        let inner: &Inner = &self.inner;
        let chat = &context.chat;
        let cancel = CancellationToken::new();
        inner.discover_model(context).await?;
        let (run, started) = inner.start_run(context, &turn_id, &cancel)?;
        let tools = inner.offered_tools(context, started.role.depth());
        let system = system_prompt(&DynamicContext {
            settings: &inner.settings,
            project: context.scope.project_id(),
            instructions: context
                .customizations
                .as_ref()
                .and_then(|customizations| customizations.instructions.as_deref()),
            tools: &tools.listed,
            role: started.role,
        });
        let sink = inner.sink.get();
        let turn_loop = TurnLoop {
            inner,
            sink: sink.clone(),
            session: context.session.clone(),
            chat: chat.clone(),
            chat_context: context.clone(),
            turn_id: turn_id.clone(),
            model: started.model.clone(),
            system,
            tools: tools.specs,
            role: started.role,
            cancel,
        };
        let mut record = TurnRecord::new(turn_id, message);
        let mut prior = started.prior;
        let ended = turn_loop.run(&mut prior, &mut record).await;
        let stop_reason = ended.stop_reason();
        let usage = ended.usage();
        record.finish(stop_reason.clone(), usage.clone());
        let first_exchange = (inner.settings.generate_titles
            && !started.titled
            && started.turn_count == 0
            && stop_reason == StopReason::EndTurn
            && !matches!(started.role, Role::Subagent { .. }))
        .then(|| (record.user.text.clone(), record.final_text()));
        if let Some(provider_data) = inner.finish_run(chat, run, record) {
            sink.progress(chat, Signal::ProviderDataChanged { provider_data })
                .await;
        }
        if let Some((prompt, answer)) = first_exchange {
            let background = inner
                .chats
                .with(chat, |entry| entry.background.child_token());
            if let Ok(background) = background {
                spawn_title(
                    Arc::clone(&self.inner),
                    chat.clone(),
                    started.model,
                    prompt,
                    answer,
                    background,
                );
            }
        }
        match ended {
            Ended::Failed(error, _) => Err(error),
            Ended::Stopped(..) | Ended::Aborted(_) => Ok(TurnOutcome { stop_reason, usage }),
        }
    }
}

fn ready<'a, T: Send + 'a>(result: Result<T>) -> BoxFuture<'a, HarnessResult<T>> {
    let result = result.map_err(HarnessError::from);
    async move { result }.boxed()
}

impl Harness for NativeHarness {
    fn descriptor(&self) -> HarnessDescriptor {
        self.inner.descriptor.clone()
    }

    fn attach(&self, sink: EventSink) {
        self.inner.sink.attach(sink);
    }

    fn create_chat<'a>(
        &'a self,
        context: &'a ChatContext,
        request: CreateChatRequest,
    ) -> BoxFuture<'a, HarnessResult<CreatedChat>> {
        ready(self.inner.create(context, &request))
    }

    fn materialize_chat<'a>(
        &'a self,
        context: &'a ChatContext,
        provider_data: Option<HarnessData>,
    ) -> BoxFuture<'a, HarnessResult<Option<HarnessData>>> {
        ready(self.inner.materialize(context, provider_data))
    }

    fn send<'a>(
        &'a self,
        context: &'a ChatContext,
        turn_id: TurnId,
        message: UserMessage,
    ) -> BoxFuture<'a, HarnessResult<TurnOutcome>> {
        self.run_turn(context, turn_id, message).boxed()
    }

    fn abort<'a>(&'a self, context: &'a ChatContext) -> BoxFuture<'a, HarnessResult<()>> {
        let cancelled = self.inner.chats.cancel_run(&context.chat);
        ready(cancelled.map(|_ran| ()).map_err(Error::from))
    }

    fn set_model<'a>(
        &'a self,
        context: &'a ChatContext,
        model: String,
    ) -> BoxFuture<'a, HarnessResult<()>> {
        let model = model.trim().to_owned();
        if model.is_empty() {
            return ready(Err(Error::InvalidModel { model }));
        }
        async move {
            self.inner
                .update_conversation(&context.chat, |conversation| {
                    conversation.model = Some(model)
                })
                .await
                .map_err(HarnessError::from)
        }
        .boxed()
    }

    fn messages<'a>(&'a self, context: &'a ChatContext) -> BoxFuture<'a, HarnessResult<Vec<Turn>>> {
        let turns = self.inner.chats.with(&context.chat, |entry| {
            entry
                .conversation
                .turns
                .iter()
                .map(TurnRecord::to_turn)
                .collect()
        });
        ready(turns.map_err(Error::from))
    }

    fn metadata<'a>(
        &'a self,
        context: &'a ChatContext,
    ) -> BoxFuture<'a, HarnessResult<ChatMetadata>> {
        let metadata = self.inner.chats.with(&context.chat, |entry| {
            let conversation = &entry.conversation;
            ChatMetadata {
                title: conversation.title.clone(),
                model: conversation.model.clone(),
                updated_at: Some(conversation.updated_at),
                turn_count: conversation.turns.len(),
            }
        });
        ready(metadata.map_err(Error::from))
    }

    fn dispose_chat<'a>(&'a self, context: &'a ChatContext) -> BoxFuture<'a, HarnessResult<()>> {
        self.inner.chats.forget(&context.chat);
        ready(Ok(()))
    }

    fn release_chat<'a>(&'a self, context: &'a ChatContext) -> BoxFuture<'a, HarnessResult<()>> {
        self.inner.chats.forget(&context.chat);
        ready(Ok(()))
    }

    fn compact<'a>(&'a self, context: &'a ChatContext) -> BoxFuture<'a, HarnessResult<Compacted>> {
        self.compact_now(context).boxed()
    }

    fn respond_permission<'a>(
        &'a self,
        context: &'a ChatContext,
        request_id: &'a str,
        answer: &'a PermissionAnswer,
    ) -> BoxFuture<'a, HarnessResult<()>> {
        let delivered = self
            .inner
            .permissions
            .answer(&context.chat, request_id, answer);
        let result = if delivered {
            Ok(())
        } else {
            Err(HarnessError::not_found(format!(
                "no permission request `{request_id}` with option `{}` is pending in {}",
                answer.option_id, context.chat
            )))
        };
        async move { result }.boxed()
    }
}
