//! `ReplayHarness` as a Hearth harness: the `Harness` trait over the chat table and the
//! player.

use std::borrow::Cow;

use futures::FutureExt;
use futures::future::BoxFuture;
use hearth_core::{
    ChatContext, ChatMetadata, ChatSeed, CreateChatRequest, CreatedChat, EventSink, Harness,
    HarnessData, HarnessDescriptor, HarnessError, HarnessErrorKind, HarnessResult, Signal, Turn,
    TurnId, TurnOutcome, UserMessage, now,
};
use hearth_harness::TableError;
use tokio_util::sync::CancellationToken;

use crate::agent::{ReplayHarness, Started, table_error};
use crate::conversation::Conversation;
use crate::play::{Ended, Player, Stage};
use crate::scenario::{Step, StepKind, Streaming};

/// Longest title derived from a first prompt.
const TITLE_LENGTH: usize = 60;

impl ReplayHarness {
    /// The steps that answer a prompt, or a note that the scenario has none for it.
    fn steps_for(&self, prompt: &str, turn_count: usize) -> Cow<'_, [Step]> {
        match self.scenario.select(prompt, turn_count) {
            Some(turn) => Cow::Borrowed(&turn.steps),
            None => Cow::Owned(vec![Step {
                delay_ms: 0,
                kind: StepKind::Text {
                    text: format!(
                        "The replay scenario `{}` has no turn for this prompt. Add a turn \
                         without `when` to answer any prompt.",
                        self.scenario.name
                    ),
                    stream: Streaming::Whole,
                },
            }]),
        }
    }

    fn conversation_for_seed(
        &self,
        context: &ChatContext,
        seed: &ChatSeed,
    ) -> HarnessResult<Conversation> {
        let fresh = |model: Option<String>| {
            Conversation::fresh(
                &self.scenario.name,
                context
                    .model
                    .clone()
                    .or(model)
                    .or_else(|| Some(self.scenario.name.clone())),
                None,
            )
        };
        let Some((source_chat, turn_id)) = seed.source() else {
            return Ok(fresh(None));
        };
        self.chats
            .with(source_chat, |source| {
                let through = source.conversation.history_through(source_chat, turn_id)?;
                let mut conversation = fresh(source.conversation.model.clone());
                conversation
                    .context
                    .clone_from(&source.conversation.context);
                if matches!(seed, ChatSeed::Fork { .. }) {
                    conversation.history = through.to_vec();
                } else {
                    conversation.context.extend(through.iter().cloned());
                }
                Ok(conversation)
            })
            .map_err(table_error)?
    }

    async fn create(
        &self,
        context: &ChatContext,
        request: CreateChatRequest,
    ) -> HarnessResult<CreatedChat> {
        let chat = &context.chat;
        let conversation = self.conversation_for_seed(context, &request.seed)?;
        let provider_data = conversation.encode(chat)?;
        let model = conversation.model.clone();
        self.chats
            .insert(chat, conversation)
            .map_err(|error| match error {
                TableError::Busy { chat, .. } => HarnessError::new(
                    HarnessErrorKind::Busy,
                    format!("chat `{chat}` exists and is running a turn; it cannot be re-created"),
                ),
                TableError::NotOpen { .. } => table_error(error),
            })?;
        Ok(CreatedChat {
            provider_data,
            conversation: None,
            model,
            agent: None,
        })
    }

    async fn materialize(
        &self,
        context: &ChatContext,
        provider_data: Option<HarnessData>,
    ) -> HarnessResult<Option<HarnessData>> {
        let chat = &context.chat;
        self.chats.materialize(
            chat,
            provider_data,
            |conversation| conversation.encode(chat),
            |data| {
                let conversation = Conversation::decode(chat, data)?;
                if conversation.scenario != self.scenario.name {
                    tracing::warn!(
                        %chat,
                        recorded = %conversation.scenario,
                        playing = %self.scenario.name,
                        "a replay chat recorded with another scenario continues with this one"
                    );
                }
                Ok(conversation)
            },
            || {
                HarnessError::not_found(format!(
                    "cannot restore replay chat `{chat}`: Hearth has no stored provider data for \
                     it, and the replay harness keeps chats only in that data"
                ))
            },
        )
    }

    async fn run_turn(
        &self,
        context: &ChatContext,
        turn_id: TurnId,
        message: UserMessage,
    ) -> HarnessResult<TurnOutcome> {
        let chat = &context.chat;
        let cancel = CancellationToken::new();
        let (run, started) = self
            .chats
            .start_run(chat, &turn_id, &cancel, |conversation| Started {
                turn_count: conversation.history.len(),
                model: conversation.model.clone(),
            })
            .map_err(table_error)?;
        let steps = self.steps_for(&message.text, started.turn_count);
        let player = Player {
            agent: self,
            sink: self.sink.get(),
            session: context.session.clone(),
            model: started.model,
        };
        let mut stage = Stage::new(chat.clone(), turn_id, message, cancel, self.output_limits);
        let ended = player.play(&mut stage, &steps).await;
        let stop_reason = stage.finish(&ended);
        let usage = stage.turn.usage.clone();
        if let Some(provider_data) = self.finish_run(chat, run, stage.turn) {
            player
                .sink
                .progress(chat, Signal::ProviderDataChanged { provider_data })
                .await;
        }
        match ended {
            Ended::Failed(message) => Err(HarnessError::new(HarnessErrorKind::Provider, message)),
            Ended::Done | Ended::Stopped(_) | Ended::Aborted => {
                Ok(TurnOutcome { stop_reason, usage })
            }
        }
    }
}

/// A title from the first line of the first prompt.
fn title_from(history: &[Turn]) -> Option<String> {
    let first = history.first()?;
    let line = first
        .user
        .text
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())?;
    if line.chars().count() <= TITLE_LENGTH {
        return Some(line.to_owned());
    }
    let mut title: String = line.chars().take(TITLE_LENGTH - 1).collect();
    title.push('…');
    Some(title)
}

impl Harness for ReplayHarness {
    fn descriptor(&self) -> HarnessDescriptor {
        self.descriptor.clone()
    }

    fn attach(&self, sink: EventSink) {
        self.sink.attach(sink);
    }

    fn create_chat<'a>(
        &'a self,
        context: &'a ChatContext,
        request: CreateChatRequest,
    ) -> BoxFuture<'a, HarnessResult<CreatedChat>> {
        self.create(context, request).boxed()
    }

    fn materialize_chat<'a>(
        &'a self,
        context: &'a ChatContext,
        provider_data: Option<HarnessData>,
    ) -> BoxFuture<'a, HarnessResult<Option<HarnessData>>> {
        self.materialize(context, provider_data).boxed()
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
        let result = self
            .chats
            .cancel_run(&context.chat)
            .map(|_ran| ())
            .map_err(table_error);
        async move { result }.boxed()
    }

    fn set_model<'a>(
        &'a self,
        context: &'a ChatContext,
        model: String,
    ) -> BoxFuture<'a, HarnessResult<()>> {
        let chat = &context.chat;
        let result = self.chats.with(chat, |entry| {
            entry.conversation.model = Some(model);
            entry.conversation.updated_at = now();
            entry.conversation.encode(chat)
        });
        async move {
            let provider_data = result.map_err(table_error)??;
            self.sink
                .get()
                .progress(chat, Signal::ProviderDataChanged { provider_data })
                .await;
            Ok(())
        }
        .boxed()
    }

    fn messages<'a>(&'a self, context: &'a ChatContext) -> BoxFuture<'a, HarnessResult<Vec<Turn>>> {
        let result = self
            .chats
            .with(&context.chat, |entry| entry.conversation.history.clone())
            .map_err(table_error);
        async move { result }.boxed()
    }

    fn metadata<'a>(
        &'a self,
        context: &'a ChatContext,
    ) -> BoxFuture<'a, HarnessResult<ChatMetadata>> {
        let result = self
            .chats
            .with(&context.chat, |entry| {
                let conversation = &entry.conversation;
                ChatMetadata {
                    title: conversation
                        .title
                        .clone()
                        .or_else(|| title_from(&conversation.history)),
                    model: conversation.model.clone(),
                    updated_at: Some(conversation.updated_at),
                    turn_count: conversation.history.len(),
                }
            })
            .map_err(table_error);
        async move { result }.boxed()
    }

    fn dispose_chat<'a>(&'a self, context: &'a ChatContext) -> BoxFuture<'a, HarnessResult<()>> {
        self.chats.forget(&context.chat);
        async { Ok(()) }.boxed()
    }

    fn release_chat<'a>(&'a self, context: &'a ChatContext) -> BoxFuture<'a, HarnessResult<()>> {
        self.chats.forget(&context.chat);
        async { Ok(()) }.boxed()
    }
}
