//! Chats: create (fresh, fork, side chat), the single catalog path, dispose, lazy
//! resolve, model and draft.

use std::sync::Arc;

use futures::FutureExt;
use hearth_core::{
    Action, Capabilities, ChatContext, ChatId, ChatOrigin, ChatSeed, ChatState, ChatSummary,
    ChatUri, CreateChatRequest, ResourceUri, SessionSummary, SessionUri, Turn, TurnId, UserMessage,
    now,
};
use hearth_store::ChatRecord;

use crate::error::{HostError, HostResult};
use crate::host::{Host, Inner};
use crate::sessions::{chat_entry, make_context, settle_stale_turns, turns_through};
use crate::state::{HostState, Resolution};
use crate::writer::WriteJob;

/// Turns a new chat starts with.
pub(crate) enum InitialTurns {
    /// None.
    Empty,
    /// A fork's copy of its source's turns through a turn.
    Copy {
        /// The source chat.
        source: ChatUri,
        /// The last turn copied.
        through: TurnId,
        /// The copied turns, as the source holds them.
        turns: Vec<Turn>,
    },
}

/// Whether resolving a chat has the harness attach its conversation first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Attach {
    /// Not attached yet.
    Materialize,
    /// Attached when its session was restored.
    Already,
}

/// Publishes a chat's new summary to its session's catalog and to the chat itself.
pub(crate) fn publish_chat_summary(state: &mut HostState, summary: &ChatSummary) {
    state.publish(
        ResourceUri::Session(summary.uri.session()),
        Action::ChatUpdated {
            chat: summary.clone(),
        },
    );
    state.publish(
        ResourceUri::Chat(summary.uri.clone()),
        Action::ChatUpdated {
            chat: summary.clone(),
        },
    );
}

/// The origin a seed gives a new chat, the ability it needs (for the refusal), and
/// whether the harness has it.
fn seed_origin(seed: &ChatSeed, capabilities: &Capabilities) -> (ChatOrigin, &'static str, bool) {
    match seed {
        ChatSeed::Fresh => (
            ChatOrigin::User,
            "peer chats",
            capabilities.supports_peer_chats(),
        ),
        ChatSeed::Fork {
            source_chat,
            turn_id,
        } => (
            ChatOrigin::Fork {
                source_chat: source_chat.clone(),
                turn_id: turn_id.clone(),
            },
            "forking",
            capabilities.supports_fork(),
        ),
        ChatSeed::SideChat {
            source_chat,
            turn_id,
        } => (
            ChatOrigin::SideChat {
                source_chat: source_chat.clone(),
                turn_id: turn_id.clone(),
            },
            "side chats",
            capabilities.supports_side_chat(),
        ),
    }
}

impl Host {
    /// Adds a peer chat to a session: fresh, a fork of one of its chats at a turn (user
    /// or assistant side), or a side chat. Gated by the harness's capabilities.
    pub async fn create_chat(&self, session: &SessionUri, seed: ChatSeed) -> HostResult<ChatUri> {
        self.inner.check_running()?;
        self.ensure_session(session).await?;
        let agent = self.inner.agent_for(session)?;
        let provider = session.harness().clone();
        let (origin, what, supported) = seed_origin(&seed, &agent.descriptor().capabilities);
        if !supported {
            return Err(HostError::Unsupported { provider, what });
        }
        let initial = self.initial_turns(session, &seed).await?;
        let uri = ChatUri::peer(session, ChatId::generate());
        let at = now();
        let session_summary = self.session_summary(session)?;
        let mut summary = ChatSummary {
            model: session_summary.model.clone(),
            ..ChatSummary::new(uri.clone(), origin, at)
        };
        let context = make_context(&self.inner.config, &session_summary, &summary);
        let _creating = self.creating_chat(&provider);
        let created = agent
            .create_chat(&context, CreateChatRequest { seed, title: None })
            .await
            .map_err(|error| Inner::agent_error(&provider, error))?;
        if created.model.is_some() {
            summary.model.clone_from(&created.model);
        }
        let agent_state = created.agent.clone();
        let record = ChatRecord {
            summary,
            provider_data: Some(created.provider_data),
            conversation: created.conversation,
            draft: None,
            queued: Vec::new(),
        };
        if let Err(error) = self.add_chat(record, initial).await {
            if let Err(dispose) = agent.dispose_chat(&context).await {
                tracing::warn!(%dispose, "could not dispose the conversation of a chat that failed to register");
            }
            return Err(error);
        }
        if agent_state.is_some()
            && let Some(entry) = self.inner.lock().chats.get_mut(&uri)
        {
            entry.state.agent = agent_state;
        }
        Ok(uri)
    }

    /// The turns a new chat starts with: a fork's copy of its source's turns through the
    /// chosen turn; none for a fresh or side chat. The source must be in `session`.
    async fn initial_turns(
        &self,
        session: &SessionUri,
        seed: &ChatSeed,
    ) -> HostResult<InitialTurns> {
        let (ChatSeed::Fork {
            source_chat,
            turn_id,
        }
        | ChatSeed::SideChat {
            source_chat,
            turn_id,
        }) = seed
        else {
            return Ok(InitialTurns::Empty);
        };
        if source_chat.session_ref() != session {
            return Err(HostError::InvalidInput(format!(
                "chat `{source_chat}` is not in session `{session}`"
            )));
        }
        self.resolve_chat(source_chat).await?;
        let turns = turns_through(&self.inner.lock().chats, source_chat, turn_id)?;
        Ok(match seed {
            ChatSeed::Fork { .. } => InitialTurns::Copy {
                source: source_chat.clone(),
                through: turn_id.clone(),
                turns,
            },
            ChatSeed::Fresh | ChatSeed::SideChat { .. } => InitialTurns::Empty,
        })
    }

    /// The summary of a session the host holds.
    fn session_summary(&self, session: &SessionUri) -> HostResult<SessionSummary> {
        let state = self.inner.lock();
        state
            .session(session)
            .map(|entry| entry.state.summary.clone())
    }

    /// The single path into a session's catalog, for user-created and harness-spawned
    /// chats alike: persisted first, then listed and announced.
    pub(crate) async fn add_chat(
        &self,
        record: ChatRecord,
        initial: InitialTurns,
    ) -> HostResult<()> {
        let uri = record.summary.uri.clone();
        let session = uri.session();
        self.ensure_session(&session).await?;
        let store = &self.inner.store;
        store.insert_chat(&record).await?;
        let turns = match initial {
            InitialTurns::Empty => Vec::new(),
            InitialTurns::Copy {
                source,
                through,
                turns,
            } => {
                // The copy reads the store: let queued saves of the source land first.
                self.inner.writer.flush().await;
                store.copy_turns(&source, &uri, &through).await?;
                turns
            }
        };
        if let Some(conversation) = &record.conversation {
            store
                .mark_conversation(session.harness(), conversation, &uri)
                .await?;
        }
        let mut state = self.inner.lock();
        let generation = state.generation();
        let summary = record.summary.clone();
        let mut entry = chat_entry(generation, summary.clone(), Some(&record), Some(turns));
        // A new chat: no other process knows it yet.
        entry.lease_epoch = Some(0);
        state.chats.insert(uri, entry);
        state.publish(
            ResourceUri::Session(session.clone()),
            Action::ChatAdded { chat: summary },
        );
        state.touch(&session);
        Ok(())
    }

    /// Removes a peer chat: aborts its turn, has the harness dispose its conversation, and
    /// deletes it. The default chat goes only with its session.
    pub async fn dispose_chat(&self, chat: &ChatUri) -> HostResult<()> {
        if chat.is_default() {
            return Err(HostError::InvalidInput(format!(
                "`{chat}` is its session's default chat; delete the session instead"
            )));
        }
        self.ensure_session(chat.session_ref()).await?;
        let context = self.inner.context_for(chat)?;
        self.abort(chat).await?;
        let agent = self.inner.agent_for(chat.session_ref())?;
        if let Err(error) = agent.dispose_chat(&context).await {
            tracing::warn!(%chat, %error, "the harness could not dispose the chat's conversation");
        }
        self.inner.store.delete_chat(chat).await?;
        let mut state = self.inner.lock();
        let resource = ResourceUri::Chat(chat.clone());
        state.publish(resource.clone(), Action::ChatRemoved { chat: chat.clone() });
        state.chats.remove(chat);
        state.retire(&resource);
        state.publish(
            ResourceUri::Session(chat.session()),
            Action::ChatRemoved { chat: chat.clone() },
        );
        Ok(())
    }

    /// Loads a chat's conversation and turns once, however many callers ask at the same time.
    /// A failure leaves the chat listed and the next call retries; a result for a chat
    /// deleted or evicted meanwhile is dropped.
    pub async fn resolve_chat(&self, chat: &ChatUri) -> HostResult<()> {
        self.ensure_session(chat.session_ref()).await?;
        let task = {
            let mut state = self.inner.lock();
            let entry = state.chat_mut(chat)?;
            match &entry.resolution {
                Resolution::Resolved => return Ok(()),
                Resolution::Resolving(task) => task.clone(),
                Resolution::Unresolved | Resolution::Attached => {
                    let host = self.clone();
                    let uri = chat.clone();
                    let generation = entry.generation;
                    let attach = match entry.resolution {
                        Resolution::Attached => Attach::Already,
                        _ => Attach::Materialize,
                    };
                    let task = async move {
                        host.load_chat(&uri, generation, attach)
                            .await
                            .map_err(Arc::new)
                    }
                    .boxed()
                    .shared();
                    entry.resolution = Resolution::Resolving(task.clone());
                    task
                }
            }
        };
        task.await.map_err(HostError::Shared)
    }

    async fn load_chat(&self, chat: &ChatUri, generation: u64, attach: Attach) -> HostResult<()> {
        let result = self.materialize_and_read(chat, attach).await;
        let stale = {
            let mut state = self.inner.lock();
            match state
                .chats
                .get_mut(chat)
                .filter(|entry| entry.generation == generation)
            {
                Some(entry) => {
                    return match result {
                        Ok((_, turns)) => {
                            entry.state.turns = turns;
                            entry.resolution = Resolution::Resolved;
                            Ok(())
                        }
                        Err(error) => {
                            entry.resolution = match attach {
                                Attach::Materialize => Resolution::Unresolved,
                                Attach::Already => Resolution::Attached,
                            };
                            Err(error)
                        }
                    };
                }
                None => result.ok().map(|(context, _)| context),
            }
        };
        // Deleted or evicted while the harness attached it: nobody will use it, so the
        // harness lets it go again instead of keeping it alive.
        if let Some(context) = stale
            && let Ok(agent) = self.inner.agent_for(chat.session_ref())
            && let Err(error) = agent.release_chat(&context).await
        {
            tracing::warn!(%chat, %error, "could not release a chat resolved after it was dropped");
        }
        Err(HostError::NotFound {
            what: "chat",
            key: chat.to_string(),
        })
    }

    async fn materialize_and_read(
        &self,
        chat: &ChatUri,
        attach: Attach,
    ) -> HostResult<(ChatContext, Vec<Turn>)> {
        let context = self.inner.context_for(chat)?;
        if attach == Attach::Materialize {
            self.materialize(chat, &context).await?;
        }
        // Saves queued before an eviction must land before the turns are read back.
        self.inner.writer.flush().await;
        let mut turns = self.inner.store.turns(chat).await?;
        settle_stale_turns(&mut turns);
        Ok((context, turns))
    }

    /// Has the harness attach a chat's conversation, keeping the blob it recovers for a chat
    /// stored without one.
    async fn materialize(&self, chat: &ChatUri, context: &ChatContext) -> HostResult<()> {
        let provider_data = self
            .inner
            .lock()
            .chats
            .get(chat)
            .and_then(|entry| entry.provider_data.clone());
        let agent = self.inner.agent_for(chat.session_ref())?;
        let recovered = agent
            .materialize_chat(context, provider_data.clone())
            .await
            .map_err(|error| Inner::agent_error(chat.harness(), error))?;
        if provider_data.is_none()
            && let Some(recovered) = recovered
        {
            self.inner.store.set_provider_data(chat, &recovered).await?;
            if let Some(entry) = self.inner.lock().chats.get_mut(chat) {
                entry.provider_data = Some(recovered);
            }
        }
        Ok(())
    }

    /// A chat with its turns (resolving it if needed).
    pub async fn chat(&self, chat: &ChatUri) -> HostResult<ChatState> {
        self.resolve_chat(chat).await?;
        self.peek_chat(chat).ok_or_else(|| HostError::NotFound {
            what: "chat",
            key: chat.to_string(),
        })
    }

    /// A chat's state if it is loaded: a synchronous look without I/O.
    pub fn peek_chat(&self, chat: &ChatUri) -> Option<ChatState> {
        let state = self.inner.lock();
        state
            .chats
            .get(chat)
            .filter(|entry| matches!(entry.resolution, Resolution::Resolved))
            .map(|entry| entry.state.clone())
    }

    /// Switches a chat's model for later turns.
    pub async fn set_model(&self, chat: &ChatUri, model: String) -> HostResult<()> {
        self.resolve_chat(chat).await?;
        let context = self.inner.context_for(chat)?;
        let agent = self.inner.agent_for(chat.session_ref())?;
        agent
            .set_model(&context, model.clone())
            .await
            .map_err(|error| Inner::agent_error(chat.harness(), error))?;
        let mut state = self.inner.lock();
        let Some(entry) = state.chats.get(chat) else {
            return Err(HostError::NotFound {
                what: "chat",
                key: chat.to_string(),
            });
        };
        let mut summary = entry.state.summary.clone();
        summary.model = Some(model);
        summary.updated_at = now();
        publish_chat_summary(&mut state, &summary);
        self.inner.queue(WriteJob::UpdateChat(summary));
        Ok(())
    }

    /// Switches a chat's mode (one of those its agent offers) for later turns. The chat's
    /// agent state shows the new mode once the agent took it.
    pub async fn set_mode(&self, chat: &ChatUri, mode: String) -> HostResult<()> {
        self.resolve_chat(chat).await?;
        let context = self.inner.context_for(chat)?;
        let agent = self.inner.agent_for(chat.session_ref())?;
        agent
            .set_mode(&context, mode)
            .await
            .map_err(|error| Inner::agent_error(chat.harness(), error))
    }

    /// Sends a message now when the chat is idle (returns its turn), or queues it behind
    /// the running turn and any message queued before (returns `None`). Queued messages
    /// are kept with the chat, attachments included, and sent one per turn, in order, as
    /// each turn ends.
    pub async fn queue_message(
        &self,
        chat: &ChatUri,
        message: UserMessage,
    ) -> HostResult<Option<TurnId>> {
        self.inner.config.limits.check(&message)?;
        self.resolve_chat(chat).await?;
        let queued = {
            let mut state = self.inner.lock();
            let entry = state.chat_mut(chat)?;
            // A turn another process or node is answering (this host follows it) counts
            // as running: the message waits for its end, as for a turn of this host.
            if entry.running.is_none()
                && entry.state.queued.is_empty()
                && !answered_elsewhere(&entry.state)
            {
                None
            } else {
                let mut queued = entry.state.queued.clone();
                queued.push(message.clone());
                Some(self.publish_queue(&mut state, chat, queued))
            }
        };
        if queued.is_none() {
            return self.send(chat, message).await.map(Some);
        }
        self.inner.writer.flush().await;
        // The turn may have ended while the message was queued: start the queue then.
        self.drain_queue(chat).await;
        Ok(None)
    }

    /// Replaces a chat's queue (a message removed or reordered by the user).
    pub async fn set_queue(&self, chat: &ChatUri, queued: Vec<UserMessage>) -> HostResult<()> {
        for message in &queued {
            self.inner.config.limits.check(message)?;
        }
        self.resolve_chat(chat).await?;
        {
            let mut state = self.inner.lock();
            if !state.chats.contains_key(chat) {
                return Err(HostError::NotFound {
                    what: "chat",
                    key: chat.to_string(),
                });
            }
            self.publish_queue(&mut state, chat, queued);
        }
        self.inner.writer.flush().await;
        Ok(())
    }

    /// Sets a chat's queue in memory, tells its subscribers and queues the write.
    pub(crate) fn publish_queue(
        &self,
        state: &mut HostState,
        chat: &ChatUri,
        queued: Vec<UserMessage>,
    ) -> Vec<UserMessage> {
        state.publish(
            ResourceUri::Chat(chat.clone()),
            Action::QueueChanged {
                queued: queued.clone(),
            },
        );
        self.inner.queue(WriteJob::SetQueue {
            chat: chat.clone(),
            queued: queued.clone(),
        });
        queued
    }

    /// Sends the first queued message of an idle chat, if any. A send that fails puts
    /// the message back at the front, and the failure is logged.
    /// Sends the chat's next queued message, if it has one and no turn runs here: after a
    /// turn another process or node answered ended, and its lease was released.
    pub async fn send_queued(&self, chat: &ChatUri) {
        self.drain_queue(chat).await;
    }

    pub(crate) async fn drain_queue(&self, chat: &ChatUri) {
        let next = {
            let mut state = self.inner.lock();
            let Some(entry) = state.chats.get(chat) else {
                return;
            };
            if entry.running.is_some()
                || entry.state.queued.is_empty()
                || answered_elsewhere(&entry.state)
            {
                return;
            }
            let mut queued = entry.state.queued.clone();
            let next = queued.remove(0);
            self.publish_queue(&mut state, chat, queued);
            next
        };
        if let Err(error) = self.send(chat, next.clone()).await {
            tracing::warn!(%chat, %error, "a queued message could not be sent; it stays first in the queue");
            let mut state = self.inner.lock();
            if let Some(entry) = state.chats.get(chat) {
                let mut queued = entry.state.queued.clone();
                queued.insert(0, next);
                self.publish_queue(&mut state, chat, queued);
            }
        }
    }

    /// Saves a chat's unsent draft (durably), or clears it.
    pub async fn set_draft(&self, chat: &ChatUri, draft: Option<String>) -> HostResult<()> {
        self.ensure_session(chat.session_ref()).await?;
        if !self.inner.lock().chats.contains_key(chat) {
            return Err(HostError::NotFound {
                what: "chat",
                key: chat.to_string(),
            });
        }
        let draft = draft.filter(|text| !text.is_empty());
        self.inner.store.set_draft(chat, draft.as_deref()).await?;
        self.inner.lock().publish(
            ResourceUri::Chat(chat.clone()),
            Action::DraftChanged { draft },
        );
        Ok(())
    }
}

/// Whether the chat's newest turn is still running though no turn runs here: another
/// process or node answers it, and this host follows it.
fn answered_elsewhere(chat: &hearth_core::ChatState) -> bool {
    chat.turns
        .last()
        .is_some_and(|turn| turn.stop_reason.is_none())
}
