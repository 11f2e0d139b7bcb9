//! `NativeHarness` as a Hearth harness: the `Harness` trait over the chat table and the loop.

use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use hearth_core::{
    ChatContext, ChatMetadata, ChatSeed, CreateChatRequest, CreatedChat, EventSink, Harness,
    HarnessData, HarnessDescriptor, HarnessError, HarnessResult, PermissionAnswer, Signal,
    StopReason, Turn, TurnId, TurnOutcome, UserMessage,
};
use hearth_harness::TableError;
use tokio_util::sync::CancellationToken;

use crate::agent::{Inner, NativeHarness};
use crate::backing::{Backing, Role, TurnRecord};
use crate::context::{DynamicContext, system_prompt};
use crate::error::{Error, Result};
use crate::title::spawn_title;
use crate::turn::{Ended, TurnLoop};

impl Inner {
    /// The backing a new chat starts with.
    fn backing_for_seed(&self, context: &ChatContext, seed: &ChatSeed) -> Result<Backing> {
        let fresh = |model: Option<String>, role: Role| {
            Backing::fresh(
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
        let (source_chat, turn_id) = match seed {
            ChatSeed::Fresh => return Ok(fresh(None, Role::Main)),
            ChatSeed::Fork {
                source_chat,
                turn_id,
            }
            | ChatSeed::SideChat {
                source_chat,
                turn_id,
            } => (source_chat, turn_id),
        };
        self.chats.with(source_chat, |source| {
            let through = source.backing.turns_through(source_chat, turn_id)?;
            Ok(match seed {
                ChatSeed::Fork { .. } => {
                    let mut backing = fresh(source.backing.model.clone(), source.backing.role);
                    backing.context.clone_from(&source.backing.context);
                    backing.turns = through.to_vec();
                    backing
                }
                ChatSeed::Fresh | ChatSeed::SideChat { .. } => {
                    let mut backing = fresh(source.backing.model.clone(), Role::Side);
                    backing.context.clone_from(&source.backing.context);
                    for turn in through {
                        backing.context.extend(turn.messages.iter().cloned());
                    }
                    backing
                }
            })
        })?
    }

    fn create(&self, context: &ChatContext, request: &CreateChatRequest) -> Result<CreatedChat> {
        let chat = &context.chat;
        let backing = self.backing_for_seed(context, &request.seed)?;
        let provider_data = backing.encode(chat)?;
        let model = backing.model.clone();
        self.chats.insert(chat, backing)?;
        Ok(CreatedChat {
            provider_data,
            backing: None,
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
        let Some(data) = provider_data else {
            // Nothing stored: a chat this agent still holds gives its blob back.
            return match self.chats.with(chat, |entry| entry.backing.encode(chat)) {
                Ok(encoded) => encoded.map(Some),
                Err(TableError::NotOpen { .. }) => Err(Error::NoBacking { chat: chat.clone() }),
                Err(error) => Err(error.into()),
            };
        };
        let backing = Backing::decode(chat, &data)?;
        if backing.provider != self.provider() {
            tracing::info!(
                %chat,
                recorded = %backing.provider,
                "a chat recorded by another provider continues here"
            );
        }
        self.chats.restore(chat, backing);
        Ok(None)
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
        let ended = turn_loop.run(&started.prior, &mut record).await;
        let stop_reason = ended.stop_reason();
        let usage = ended.usage();
        record.finish(stop_reason.clone(), usage);
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
                .update_backing(&context.chat, |backing| backing.model = Some(model))
                .await
                .map_err(HarnessError::from)
        }
        .boxed()
    }

    fn messages<'a>(&'a self, context: &'a ChatContext) -> BoxFuture<'a, HarnessResult<Vec<Turn>>> {
        let turns = self.inner.chats.with(&context.chat, |entry| {
            entry
                .backing
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
            let backing = &entry.backing;
            ChatMetadata {
                title: backing.title.clone(),
                model: backing.model.clone(),
                updated_at: Some(backing.updated_at),
                turn_count: backing.turns.len(),
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
