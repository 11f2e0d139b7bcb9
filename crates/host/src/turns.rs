//! Turns: send and abort, permission answers, streaming checkpoints, completion and
//! titles.

use std::sync::Arc;

use hearth_core::{
    Action, Backoff, ChatContext, ChatUri, Harness, ResourceUri, ResponsePart, Scope, Scopes,
    StopReason, Turn, TurnId, Usage, UserMessage, now,
};

use crate::chats::publish_chat_summary;
use crate::durability::{Persistence, with_retries};
use crate::error::{HostError, HostResult};
use crate::events::HostEvent;
use crate::host::{Host, Subscription};
use crate::state::{HostState, RunningTurn};
use crate::writer::{Save, WriteJob};

const TITLE_LENGTH: usize = 60;
/// Pauses after which an abort is repeated while its turn still runs: 50 ms, 250 ms.
const ABORT_RETRIES: Backoff = Backoff::doubling(
    std::time::Duration::from_millis(50),
    std::time::Duration::from_millis(250),
)
.with_factor(5)
.with_retries(2);

/// A title from the first line of a prompt.
fn title_from(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|line| !line.is_empty())?;
    if line.chars().count() <= TITLE_LENGTH {
        return Some(line.to_owned());
    }
    let mut title: String = line.chars().take(TITLE_LENGTH - 1).collect();
    title.push('…');
    Some(title)
}

impl Host {
    /// Starts a turn: the user's message is durably stored before this returns, then the
    /// harness runs it in the background. Progress arrives as envelopes on the chat.
    ///
    /// The turn holds the chat's lease until it ends: while another process answers in
    /// the chat this fails with [`StoreError::Leased`](hearth_store::StoreError::Leased)
    /// naming it, and a chat another process wrote since it was read here is read again
    /// first, so the turn builds on all of it.
    pub async fn send(&self, chat: &ChatUri, message: UserMessage) -> HostResult<TurnId> {
        self.inner.check_running()?;
        self.inner.config.limits.check(&message)?;
        self.resolve_chat(chat).await?;
        let scope = self.inner.scope_of(chat)?;
        let scopes = self.inner.config.scopes.0.clone();
        let scope_turn = match &scopes {
            Some(scopes) => Some(scopes.prepare_turn(&scope).await?),
            None => None,
        };
        let turn = Turn::started(TurnId::generate(), message.clone(), now());
        let turn_id = turn.id.clone();
        let first = self.mark_running(chat, &turn_id, message.text.len())?;
        // What the store refused of this chat before goes first.
        if self.inner.ledger.holds(chat) {
            self.inner.queue(WriteJob::RetryUnsaved);
        }
        if let Err(error) = self.take_chat_lease(chat).await {
            self.abandon_send(chat);
            return Err(error);
        }
        let (mut context, agent) = match self.store_prompt(chat, &turn).await {
            Ok(prepared) => prepared,
            Err(error) => {
                self.abandon_send(chat);
                return Err(error);
            }
        };
        self.publish_turn_started(chat, turn);
        if let Some(scope_turn) = scope_turn {
            context.customizations = scope_turn.customizations;
        }
        let first_context = scopes.filter(|_| first).map(|scopes| (scopes, scope));
        self.spawn_send(
            chat.clone(),
            turn_id.clone(),
            agent,
            context,
            message,
            first_context,
        );
        Ok(turn_id)
    }

    /// Marks the chat as running the turn `turn_id`, unless it runs one already; returns
    /// whether this is the first turn of a new conversation (not a copy of one), which
    /// starts with its scope's context.
    fn mark_running(
        &self,
        chat: &ChatUri,
        turn_id: &TurnId,
        prompt_bytes: usize,
    ) -> HostResult<bool> {
        let mut state = self.inner.lock();
        let entry = state.chat_mut(chat)?;
        if entry.running.is_some() {
            return Err(HostError::Busy(chat.to_string()));
        }
        let first = entry.state.turns.is_empty()
            && matches!(entry.state.summary.origin, hearth_core::ChatOrigin::User);
        entry.running = Some(RunningTurn::new(
            turn_id.clone(),
            self.inner.config.output_limits,
            prompt_bytes,
        ));
        Ok(first)
    }

    /// Stores the new turn's prompt; then what the harness needs to run it.
    async fn store_prompt(
        &self,
        chat: &ChatUri,
        turn: &Turn,
    ) -> HostResult<(ChatContext, Arc<dyn Harness>)> {
        let store = &self.inner.store;
        with_retries(Persistence::Routine, "a prompt", || {
            store.insert_turn(chat, turn)
        })
        .await?;
        Ok((
            self.inner.context_for(chat)?,
            self.inner.agent_for(chat.session_ref())?,
        ))
    }

    /// Shows the started turn in its chat and the chat as running in its session.
    fn publish_turn_started(&self, chat: &ChatUri, turn: Turn) {
        let mut state = self.inner.lock();
        state.publish(
            ResourceUri::Chat(chat.clone()),
            Action::TurnStarted { turn },
        );
        state.publish(
            ResourceUri::Session(chat.session()),
            Action::ChatActivity {
                chat: chat.clone(),
                running: true,
            },
        );
        state.touch(chat.session_ref());
    }

    /// Runs the turn in the harness, in the background; its end arrives as a
    /// [`HostEvent::SendFinished`]. The first turn of a conversation gets its scope's
    /// context before the prompt (`first_context`).
    fn spawn_send(
        &self,
        chat: ChatUri,
        turn_id: TurnId,
        agent: Arc<dyn Harness>,
        context: ChatContext,
        mut message: UserMessage,
        first_context: Option<(Arc<dyn Scopes>, Scope)>,
    ) {
        let events = self.inner.events.clone();
        tokio::spawn(async move {
            // The prompt is stored as the user wrote it; the harness gets the scope's
            // context before it (prepared here, after the prompt is safe).
            if let Some((scopes, scope)) = first_context
                && let Some(block) = scopes.first_prompt_context(&scope).await
            {
                message.text = format!("{}\n\n{}", block.trim_end(), message.text);
            }
            let result = agent.send(&context, turn_id.clone(), message).await;
            if events
                .send(HostEvent::SendFinished {
                    chat,
                    turn_id,
                    result,
                })
                .await
                .is_err()
            {
                tracing::debug!("host stopped before a turn finished");
            }
        });
    }

    /// Undoes a send that failed before its turn started: the chat is idle again and its
    /// lease released.
    fn abandon_send(&self, chat: &ChatUri) {
        let mut state = self.inner.lock();
        if let Some(entry) = state.chats.get_mut(chat) {
            entry.running = None;
        }
        self.release_chat_lease(&mut state, chat);
    }

    /// Subscribes to a chat and sends a message, so no envelope of the turn is missed.
    pub async fn send_streaming(
        &self,
        chat: &ChatUri,
        message: UserMessage,
    ) -> HostResult<(TurnId, Subscription)> {
        let subscription = self.subscribe(&ResourceUri::Chat(chat.clone())).await?;
        let turn_id = self.send(chat, message).await?;
        Ok((turn_id, subscription))
    }

    /// Aborts a chat's running turn; what streamed is kept. Returns whether a turn ran.
    /// A harness that does not stop within the grace period has its turn ended for it.
    /// A turn another node answers is asked to stop there.
    pub async fn abort(&self, chat: &ChatUri) -> HostResult<bool> {
        let running = self
            .inner
            .lock()
            .chats
            .get(chat)
            .and_then(|entry| entry.running.as_ref().map(|r| r.turn_id.clone()));
        let Some(turn_id) = running else {
            return self
                .ask_answering_host(hearth_store::HolderAsk::Abort { chat: chat.clone() })
                .await;
        };
        let context = self.inner.context_for(chat)?;
        let agent = self.inner.agent_for(chat.session_ref())?;
        if let Err(error) = agent.abort(&context).await {
            tracing::warn!(%chat, %error, "the harness failed to abort; ending the turn anyway");
        }
        let events = self.inner.events.clone();
        let grace = self.inner.config.abort_grace;
        let chat = chat.clone();
        let inner = std::sync::Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            // An abort that reached the harness before it started the turn finds nothing
            // to stop: ask again once it has had time to start.
            let mut waited = std::time::Duration::ZERO;
            for pause in ABORT_RETRIES.pauses() {
                if waited + pause >= grace {
                    break;
                }
                tokio::time::sleep(pause).await;
                waited += pause;
                let Some(host) = crate::host::upgrade(&inner) else {
                    return;
                };
                if !host.runs(&chat, &turn_id) {
                    return;
                }
                if let Err(error) = agent.abort(&context).await {
                    tracing::debug!(%chat, %error, "the harness failed to abort again");
                }
            }
            tokio::time::sleep(grace.saturating_sub(waited)).await;
            if events
                .send(HostEvent::AbortExpired { chat, turn_id })
                .await
                .is_err()
            {
                tracing::trace!("host stopped");
            }
        });
        Ok(true)
    }

    /// Whether `turn_id` is the running turn of `chat`.
    fn runs(&self, chat: &ChatUri, turn_id: &TurnId) -> bool {
        self.inner
            .lock()
            .chats
            .get(chat)
            .and_then(|entry| entry.running.as_ref())
            .is_some_and(|running| &running.turn_id == turn_id)
    }

    pub(crate) fn start_harness_turn(&self, chat: &ChatUri, turn_id: TurnId, user: UserMessage) {
        let turn = Turn::started(turn_id.clone(), user, now());
        let mut state = self.inner.lock();
        let Some(entry) = state.chats.get_mut(chat) else {
            return;
        };
        if entry.running.is_some() {
            tracing::warn!(%chat, "the harness started a turn while another runs; ignoring it");
            return;
        }
        entry.running = Some(RunningTurn::new(
            turn_id,
            self.inner.config.output_limits,
            turn.user.text.len(),
        ));
        self.inner.queue(WriteJob::InsertTurn {
            chat: chat.clone(),
            turn: turn.clone(),
        });
        state.publish(
            ResourceUri::Chat(chat.clone()),
            Action::TurnStarted { turn },
        );
        state.publish(
            ResourceUri::Session(chat.session()),
            Action::ChatActivity {
                chat: chat.clone(),
                running: true,
            },
        );
    }

    /// Saves a running turn early when much arrived since its last checkpoint. The
    /// threshold grows with the turn (half its size), so each save, which costs the whole
    /// turn, follows at least as many new bytes: saving stays linear in what streamed.
    pub(crate) fn checkpoint_if_large(&self, state: &mut HostState, chat: &ChatUri) {
        let threshold = self.inner.config.checkpoint_bytes;
        let Some(entry) = state.chats.get_mut(chat) else {
            return;
        };
        let Some(running) = entry.running.as_ref() else {
            return;
        };
        if running.bytes_since_save < threshold.max(running.size / 2) {
            return;
        }
        if let Some(turn) = entry.checkpoint() {
            self.inner.queue(WriteJob::SaveTurn {
                chat: chat.clone(),
                turn,
                save: Save::Checkpoint,
            });
        }
    }

    /// Saves every running turn that changed and was not saved for a checkpoint
    /// interval: one interval per MiB the turn holds, so that a large turn, whose every
    /// save costs all of it, is not saved over and over while little changes.
    pub(crate) fn checkpoint_due(&self) {
        let interval = self.inner.config.checkpoint_interval;
        let mut state = self.inner.lock();
        for (chat, entry) in &mut state.chats {
            let Some(running) = entry.running.as_ref() else {
                continue;
            };
            let mebibytes = u32::try_from(running.size >> 20).unwrap_or(u32::MAX).max(1);
            if !running.dirty || running.last_save.elapsed() < interval.saturating_mul(mebibytes) {
                continue;
            }
            if let Some(turn) = entry.checkpoint() {
                self.inner.queue(WriteJob::SaveTurn {
                    chat: chat.clone(),
                    turn,
                    save: Save::Checkpoint,
                });
            }
        }
    }

    pub(crate) fn complete_turn(
        &self,
        chat: &ChatUri,
        turn_id: &TurnId,
        stop_reason: StopReason,
        usage: Option<Usage>,
        error: Option<String>,
    ) {
        // The next queued message goes once the turn ended by itself; after a stop, a
        // failure or a crash the queue waits for the user.
        let ended_well = !matches!(
            stop_reason,
            StopReason::Aborted | StopReason::Error | StopReason::Incomplete
        );
        let mut state = self.inner.lock();
        let Some(ending) = take_running(&mut state, chat, turn_id) else {
            return;
        };
        publish_last_parts(&mut state, chat, turn_id, error, ending.closing_note);
        // Everything about the turn is settled before its completion is announced.
        match ending.prompt_title {
            Some(title) => self.retitle(&mut state, chat, title),
            None => self.touch_session_summary(&mut state, chat, None),
        }
        state.publish(
            ResourceUri::Chat(chat.clone()),
            Action::TurnCompleted {
                turn_id: turn_id.clone(),
                stop_reason,
                usage,
                completed_at: now(),
            },
        );
        state.publish(
            ResourceUri::Session(chat.session()),
            Action::ChatActivity {
                chat: chat.clone(),
                running: false,
            },
        );
        let saved = state
            .chats
            .get(chat)
            .and_then(|entry| {
                entry
                    .state
                    .turns
                    .iter()
                    .rev()
                    .find(|turn| &turn.id == turn_id)
            })
            .cloned();
        if let Some(turn) = saved {
            self.inner.queue(WriteJob::SaveTurn {
                chat: chat.clone(),
                turn,
                save: Save::Final,
            });
        }
        // After the turn's writes, which the queue stores first.
        self.release_chat_lease(&mut state, chat);
        let waiting = state
            .chats
            .get(chat)
            .is_some_and(|entry| !entry.state.queued.is_empty());
        drop(state);
        if waiting
            && ended_well
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let host = self.clone();
            let chat = chat.clone();
            runtime.spawn(async move { host.drain_queue(&chat).await });
        }
    }

    /// Gives a chat a title; the default chat's title is the session's too.
    pub(crate) fn retitle(&self, state: &mut HostState, chat: &ChatUri, title: String) {
        let Some(entry) = state.chats.get(chat) else {
            return;
        };
        let mut summary = entry.state.summary.clone();
        summary.title = Some(title.clone());
        summary.updated_at = now();
        publish_chat_summary(state, &summary);
        self.inner.queue(WriteJob::UpdateChat(summary));
        self.touch_session_summary(state, chat, chat.is_default().then_some(title));
    }

    /// Moves a session to the top of the list, optionally renaming it.
    pub(crate) fn touch_session_summary(
        &self,
        state: &mut HostState,
        chat: &ChatUri,
        title: Option<String>,
    ) {
        let Some(session) = state.sessions.get(chat.session_ref()) else {
            return;
        };
        let mut summary = session.state.summary.clone();
        summary.updated_at = now();
        if let Some(title) = title
            && summary.title.is_none()
        {
            summary.title = Some(title);
        }
        state.publish_summary(summary.clone());
        self.inner.queue(WriteJob::UpdateSession(summary));
    }
}

/// What the end of a running turn settles before its completion is announced.
struct Ending {
    /// What the turn dropped past its output limits.
    closing_note: Option<String>,
    /// A title for an untitled chat, from the turn's prompt.
    prompt_title: Option<String>,
}

/// Ends the chat's running turn when it is `turn_id`; `None` when the chat runs no turn
/// or another one.
fn take_running(state: &mut HostState, chat: &ChatUri, turn_id: &TurnId) -> Option<Ending> {
    let entry = state.chats.get_mut(chat)?;
    if entry
        .running
        .as_ref()
        .is_none_or(|running| &running.turn_id != turn_id)
    {
        return None;
    }
    let closing_note = entry
        .running
        .take()
        .and_then(|running| running.budget.closing_note());
    let prompt_title = entry
        .state
        .summary
        .title
        .is_none()
        .then(|| {
            entry
                .state
                .turns
                .iter()
                .rev()
                .find(|turn| &turn.id == turn_id)
        })
        .flatten()
        .and_then(|turn| title_from(&turn.user.text));
    Some(Ending {
        closing_note,
        prompt_title,
    })
}

/// The parts that close a turn: its error, then the note of what it dropped past its
/// output limits.
fn publish_last_parts(
    state: &mut HostState,
    chat: &ChatUri,
    turn_id: &TurnId,
    error: Option<String>,
    closing_note: Option<String>,
) {
    let resource = ResourceUri::Chat(chat.clone());
    if let Some(message) = error {
        state.publish(
            resource.clone(),
            Action::PartAdded {
                turn_id: turn_id.clone(),
                part: ResponsePart::Error { message },
            },
        );
    }
    if let Some(note) = closing_note {
        state.publish(
            resource,
            Action::TextDelta {
                turn_id: turn_id.clone(),
                text: note,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_come_from_the_first_line() {
        assert_eq!(
            title_from("\n  plan my week \nplease"),
            Some("plan my week".into())
        );
        assert_eq!(title_from("   "), None);
        let long = "x".repeat(100);
        let title = title_from(&long).unwrap();
        assert_eq!(title.chars().count(), TITLE_LENGTH);
        assert!(title.ends_with('…'));
    }
}
