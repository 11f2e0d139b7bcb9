//! `ReplayAgent` as a Hearth harness: the `Agent` trait over the chat table and the
//! player.

use std::borrow::Cow;

use futures::FutureExt;
use futures::future::BoxFuture;
use hearth_core::{
    Agent, AgentDescriptor, AgentError, AgentErrorKind, AgentResult, ChatBacking, ChatContext,
    ChatMetadata, ChatSeed, ChatUri, CreateChatRequest, EventSink, ProviderData, Signal, Turn,
    TurnId, TurnOutcome, UserMessage, now,
};
use tokio_util::sync::CancellationToken;

use crate::agent::{ChatEntry, ReplayAgent, not_open};
use crate::backing::Backing;
use crate::play::{Ended, Player, Stage};
use crate::scenario::{Step, StepKind, Streaming};

/// Longest title derived from a first prompt.
const TITLE_LENGTH: usize = 60;

impl ReplayAgent {
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

    fn backing_for_seed(&self, context: &ChatContext, seed: &ChatSeed) -> AgentResult<Backing> {
        let fresh = |model: Option<String>| {
            Backing::fresh(
                &self.scenario.name,
                context
                    .model
                    .clone()
                    .or(model)
                    .or_else(|| Some(self.scenario.name.clone())),
                None,
            )
        };
        let (source_chat, turn_id) = match seed {
            ChatSeed::Fresh => return Ok(fresh(None)),
            ChatSeed::Fork {
                source_chat,
                turn_id,
            }
            | ChatSeed::SideChat {
                source_chat,
                turn_id,
            } => (source_chat, turn_id),
        };
        let chats = self.lock();
        let source = chats
            .get(source_chat)
            .ok_or_else(|| not_open(source_chat))?;
        let through = source.backing.history_through(source_chat, turn_id)?;
        let mut backing = fresh(source.backing.model.clone());
        backing.context.clone_from(&source.backing.context);
        if matches!(seed, ChatSeed::Fork { .. }) {
            backing.history = through.to_vec();
        } else {
            backing.context.extend(through.iter().cloned());
        }
        Ok(backing)
    }

    async fn create(
        &self,
        context: &ChatContext,
        request: CreateChatRequest,
    ) -> AgentResult<ChatBacking> {
        let chat = &context.chat;
        let backing = self.backing_for_seed(context, &request.seed)?;
        let provider_data = backing.encode(chat)?;
        let model = backing.model.clone();
        let mut chats = self.lock();
        if let Some(existing) = chats.get(chat) {
            if existing.run.is_some() {
                return Err(AgentError::new(
                    AgentErrorKind::Busy,
                    format!("chat `{chat}` exists and is running a turn; it cannot be re-created"),
                ));
            }
            tracing::debug!(%chat, "re-creating a replay chat");
        }
        chats.insert(chat.clone(), ChatEntry { backing, run: None });
        Ok(ChatBacking {
            provider_data,
            backing: None,
            model,
        })
    }

    async fn materialize(
        &self,
        context: &ChatContext,
        provider_data: Option<ProviderData>,
    ) -> AgentResult<Option<ProviderData>> {
        let chat = &context.chat;
        let Some(data) = provider_data else {
            // Nothing stored: a chat this harness still holds gives its blob back.
            return match self.lock().get(chat) {
                Some(entry) => entry.backing.encode(chat).map(Some),
                None => Err(AgentError::not_found(format!(
                    "cannot restore replay chat `{chat}`: Hearth has no stored provider data for \
                     it, and the replay harness keeps chats only in that data"
                ))),
            };
        };
        let backing = Backing::decode(chat, &data)?;
        if backing.scenario != self.scenario.name {
            tracing::warn!(
                %chat,
                recorded = %backing.scenario,
                playing = %self.scenario.name,
                "a replay chat recorded with another scenario continues with this one"
            );
        }
        let mut chats = self.lock();
        if chats.get(chat).is_some_and(|entry| entry.run.is_some()) {
            tracing::debug!(%chat, "keeping a running replay chat's live state");
            return Ok(None);
        }
        chats.insert(chat.clone(), ChatEntry { backing, run: None });
        Ok(None)
    }

    async fn run_turn(
        &self,
        context: &ChatContext,
        turn_id: TurnId,
        message: UserMessage,
    ) -> AgentResult<TurnOutcome> {
        let chat = &context.chat;
        let cancel = CancellationToken::new();
        let started = self.start_run(chat, &turn_id, &cancel)?;
        let steps = self.steps_for(&message.text, started.turn_count);
        let player = Player {
            agent: self,
            sink: self.sink(),
            session: context.session.clone(),
            model: started.model,
        };
        let mut stage = Stage::new(chat.clone(), turn_id, message, cancel);
        let ended = player.play(&mut stage, &steps).await;
        let stop_reason = stage.finish(&ended);
        let usage = stage.turn.usage;
        if let Some(provider_data) = self.finish_run(chat, started.run, stage.turn) {
            player
                .sink
                .progress(chat, Signal::ProviderDataChanged { provider_data })
                .await;
        }
        match ended {
            Ended::Failed(message) => Err(AgentError::new(AgentErrorKind::Provider, message)),
            Ended::Done | Ended::Stopped(_) | Ended::Aborted => {
                Ok(TurnOutcome { stop_reason, usage })
            }
        }
    }

    fn with_entry<T>(
        &self,
        chat: &ChatUri,
        read: impl FnOnce(&mut ChatEntry) -> AgentResult<T>,
    ) -> AgentResult<T> {
        let mut chats = self.lock();
        let entry = chats.get_mut(chat).ok_or_else(|| not_open(chat))?;
        read(entry)
    }

    /// Forgets a chat's live state, stopping its turn.
    fn forget(&self, chat: &ChatUri) {
        if let Some(entry) = self.lock().remove(chat)
            && let Some(run) = entry.run
        {
            run.cancel.cancel();
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

impl Agent for ReplayAgent {
    fn descriptor(&self) -> AgentDescriptor {
        self.descriptor.clone()
    }

    fn attach(&self, sink: EventSink) {
        *self
            .sink
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = sink;
    }

    fn create_chat<'a>(
        &'a self,
        context: &'a ChatContext,
        request: CreateChatRequest,
    ) -> BoxFuture<'a, AgentResult<ChatBacking>> {
        self.create(context, request).boxed()
    }

    fn materialize_chat<'a>(
        &'a self,
        context: &'a ChatContext,
        provider_data: Option<ProviderData>,
    ) -> BoxFuture<'a, AgentResult<Option<ProviderData>>> {
        self.materialize(context, provider_data).boxed()
    }

    fn send<'a>(
        &'a self,
        context: &'a ChatContext,
        turn_id: TurnId,
        message: UserMessage,
    ) -> BoxFuture<'a, AgentResult<TurnOutcome>> {
        self.run_turn(context, turn_id, message).boxed()
    }

    fn abort<'a>(&'a self, context: &'a ChatContext) -> BoxFuture<'a, AgentResult<()>> {
        let result = self.with_entry(&context.chat, |entry| {
            if let Some(run) = &entry.run {
                run.cancel.cancel();
            }
            Ok(())
        });
        async move { result }.boxed()
    }

    fn set_model<'a>(
        &'a self,
        context: &'a ChatContext,
        model: String,
    ) -> BoxFuture<'a, AgentResult<()>> {
        let chat = &context.chat;
        let result = self.with_entry(chat, |entry| {
            entry.backing.model = Some(model);
            entry.backing.updated_at = now();
            entry.backing.encode(chat)
        });
        async move {
            let provider_data = result?;
            self.sink()
                .progress(chat, Signal::ProviderDataChanged { provider_data })
                .await;
            Ok(())
        }
        .boxed()
    }

    fn messages<'a>(&'a self, context: &'a ChatContext) -> BoxFuture<'a, AgentResult<Vec<Turn>>> {
        let result = self.with_entry(&context.chat, |entry| Ok(entry.backing.history.clone()));
        async move { result }.boxed()
    }

    fn metadata<'a>(
        &'a self,
        context: &'a ChatContext,
    ) -> BoxFuture<'a, AgentResult<ChatMetadata>> {
        let result = self.with_entry(&context.chat, |entry| {
            let backing = &entry.backing;
            Ok(ChatMetadata {
                title: backing
                    .title
                    .clone()
                    .or_else(|| title_from(&backing.history)),
                model: backing.model.clone(),
                updated_at: Some(backing.updated_at),
                turn_count: backing.history.len(),
            })
        });
        async move { result }.boxed()
    }

    fn dispose_chat<'a>(&'a self, context: &'a ChatContext) -> BoxFuture<'a, AgentResult<()>> {
        self.forget(&context.chat);
        async { Ok(()) }.boxed()
    }

    fn release_chat<'a>(&'a self, context: &'a ChatContext) -> BoxFuture<'a, AgentResult<()>> {
        self.forget(&context.chat);
        async { Ok(()) }.boxed()
    }
}
