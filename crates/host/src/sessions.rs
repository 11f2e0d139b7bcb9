//! Sessions: create, fork, list, load (restore), delete, idle eviction, discovery.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::FutureExt;
use hearth_core::{
    Action, ChatContext, ChatListing, ChatOrigin, ChatSeed, ChatState, ChatSummary, ChatUri,
    CreateChatRequest, CreatedChat, Harness, HarnessData, HarnessId, Owner, Provenance,
    ResourceUri, Scope, SessionId, SessionState, SessionSummary, SessionUri, Turn, TurnId, now,
};
use hearth_store::{ChatLease, ChatRecord, NewSession, SessionPage, SessionQuery};

use crate::error::{HostError, HostResult};
use crate::host::{Host, HostConfig, Inner};
use crate::lease;
use crate::state::{ChatEntry, LeaseHold, Resolution, SessionEntry};

/// What a new session is.
#[derive(Clone, Debug)]
pub struct NewSessionRequest {
    /// The harness.
    pub provider: HarnessId,
    /// Global or a project; fixed for the session's life.
    pub scope: Scope,
    /// Initial title.
    pub title: Option<String>,
    /// Model to use.
    pub model: Option<String>,
    /// Where its agent works (index 0) and what else it may use; empty means the host's
    /// configured directories.
    pub working_directories: Vec<PathBuf>,
    /// On a team server, the user it belongs to (and the team it is shared with).
    pub owner: Option<Owner>,
}

/// The one derivation of a chat's context from its session and catalog entry.
pub(crate) fn make_context(
    config: &HostConfig,
    session: &SessionSummary,
    chat: &ChatSummary,
) -> ChatContext {
    ChatContext {
        session: session.uri.clone(),
        chat: chat.uri.clone(),
        origin: chat.origin.clone(),
        scope: session.scope.clone(),
        working_directories: if session.working_directories.is_empty() {
            config.working_directories.clone()
        } else {
            session.working_directories.clone()
        },
        customizations: None,
        model: chat.model.clone().or_else(|| session.model.clone()),
    }
}

/// Turns stored as running that this process does not run ended with the process that
/// ran them: they read as incomplete.
pub(crate) fn settle_stale_turns(turns: &mut [Turn]) {
    for turn in turns {
        turn.settle_if_stale();
    }
}

pub(crate) fn chat_entry(
    generation: u64,
    summary: ChatSummary,
    record: Option<&ChatRecord>,
    turns: Option<Vec<Turn>>,
) -> ChatEntry {
    let resolution = if turns.is_some() {
        Resolution::Resolved
    } else {
        Resolution::Unresolved
    };
    ChatEntry {
        state: ChatState {
            summary,
            turns: turns.unwrap_or_default(),
            draft: record.and_then(|record| record.draft.clone()),
            queued: record
                .map(|record| record.queued.clone())
                .unwrap_or_default(),
            agent: None,
        },
        provider_data: record.and_then(|record| record.provider_data.clone()),
        resolution,
        generation,
        running: None,
        lease: LeaseHold::Free,
        lease_epoch: None,
    }
}

fn chat_record(summary: ChatSummary, created: CreatedChat) -> ChatRecord {
    ChatRecord {
        summary,
        provider_data: Some(created.provider_data),
        conversation: created.conversation,
        draft: None,
        queued: Vec::new(),
    }
}

impl Host {
    /// Creates a session: mints its URI, derives its default chat, has the harness
    /// provision it, and registers it (durably) with its provenance and scope.
    pub async fn create_session(&self, request: NewSessionRequest) -> HostResult<SessionUri> {
        self.inner.check_running()?;
        let scope_directories = match &self.inner.config.scopes.0 {
            Some(scopes) => scopes.session_directories(&request.scope).await?,
            None => None,
        };
        let uri = SessionUri::new(request.provider.clone(), SessionId::generate());
        let at = now();
        let summary = SessionSummary {
            uri: uri.clone(),
            harness: request.provider.clone(),
            title: request.title,
            provenance: Provenance::Hearth,
            source: self.inner.config.source.clone(),
            scope: request.scope,
            model: request.model.clone(),
            working_directories: if !request.working_directories.is_empty() {
                request.working_directories
            } else if let Some(directories) = scope_directories.filter(|found| !found.is_empty()) {
                directories
            } else {
                self.inner.config.working_directories.clone()
            },
            started_at: at,
            updated_at: at,
            pinned: false,
            archived: false,
            owner: request.owner,
        };
        // A session created with a title gives it to its default chat: one title, from
        // one place, and no other made for the chat.
        let chat = ChatSummary {
            title: summary.title.clone(),
            model: request.model,
            ..ChatSummary::new(ChatUri::default_for(&uri), ChatOrigin::User, at)
        };
        self.register_new_session(summary, chat, ChatSeed::Fresh, Vec::new())
            .await?;
        Ok(uri)
    }

    /// Creates a new session whose default chat is a fork of another session's default
    /// chat at a turn. When the session's harness is not configured now, the fork is a
    /// copy of its stored turns ([`Host::fork_stored_session`]).
    pub async fn fork_session(
        &self,
        source: &SessionUri,
        turn_id: &TurnId,
    ) -> HostResult<SessionUri> {
        self.inner.check_running()?;
        let source_chat = ChatUri::default_for(source);
        if matches!(
            self.inner.agent_for(source),
            Err(HostError::UnknownProvider { .. })
        ) {
            return self.fork_stored_session(source, turn_id).await;
        }
        self.resolve_chat(&source_chat).await?;
        let agent = self.inner.agent_for(source)?;
        if !agent.descriptor().capabilities.supports_fork() {
            return Err(HostError::Unsupported {
                provider: source.harness().clone(),
                what: "forking",
            });
        }
        let (source_summary, turns) = {
            let state = self.inner.lock();
            let session = state.session(source)?;
            let turns = turns_through(&state.chats, &source_chat, turn_id)?;
            (session.state.summary.clone(), turns)
        };
        let (summary, chat) = self.fork_summaries(source_summary, turn_id);
        let uri = summary.uri.clone();
        let seed = ChatSeed::Fork {
            source_chat: source_chat.clone(),
            turn_id: turn_id.clone(),
        };
        self.register_new_session(summary, chat, seed, turns)
            .await?;
        // The copy reads the store: let queued saves of the source land first.
        self.inner.writer.flush().await;
        self.inner
            .store
            .copy_turns(&source_chat, &ChatUri::default_for(&uri), turn_id)
            .await?;
        Ok(uri)
    }

    /// The summaries of a fork of `source` at `turn_id`: a new session of the same
    /// harness, its default chat forked from the source's.
    fn fork_summaries(
        &self,
        source: SessionSummary,
        turn_id: &TurnId,
    ) -> (SessionSummary, ChatSummary) {
        let source_chat = ChatUri::default_for(&source.uri);
        let uri = SessionUri::new(source.uri.harness().clone(), SessionId::generate());
        let at = now();
        let summary = SessionSummary {
            uri: uri.clone(),
            title: source.title.as_ref().map(|title| format!("{title} (fork)")),
            provenance: Provenance::Hearth,
            source: self.inner.config.source.clone(),
            started_at: at,
            updated_at: at,
            pinned: false,
            archived: false,
            ..source
        };
        let chat = ChatSummary {
            uri: ChatUri::default_for(&uri),
            origin: ChatOrigin::Fork {
                source_chat,
                turn_id: turn_id.clone(),
            },
            title: summary.title.clone(),
            model: summary.model.clone(),
            created_at: at,
            updated_at: at,
        };
        (summary, chat)
    }

    /// Forks a session whose harness is not configured now: a fork only copies stored
    /// turns, so the new session (of the same harness) is registered with the turns up
    /// to `turn_id`, read from the store; its harness makes its conversation when it
    /// is configured again and the session continues.
    pub async fn fork_stored_session(
        &self,
        source: &SessionUri,
        turn_id: &TurnId,
    ) -> HostResult<SessionUri> {
        self.inner.check_running()?;
        let source_summary =
            self.inner
                .store
                .session(source)
                .await?
                .ok_or_else(|| HostError::NotFound {
                    what: "session",
                    key: source.to_string(),
                })?;
        let source_chat = ChatUri::default_for(source);
        // Saves of a loaded source land first.
        self.inner.writer.flush().await;
        let stored = self.inner.store.turns(&source_chat).await?;
        if !stored.iter().any(|turn| &turn.id == turn_id) {
            return Err(HostError::NotFound {
                what: "turn",
                key: turn_id.to_string(),
            });
        }
        let (summary, chat) = self.fork_summaries(source_summary, turn_id);
        let uri = summary.uri.clone();
        let new = NewSession {
            summary: summary.clone(),
            default_chat: ChatRecord {
                summary: chat.clone(),
                provider_data: None,
                conversation: None,
                draft: None,
                queued: Vec::new(),
            },
        };
        self.inner.store.create_session(&new).await?;
        self.inner
            .store
            .copy_turns(&source_chat, &chat.uri, turn_id)
            .await?;
        self.inner
            .lock()
            .publish(ResourceUri::Root, Action::SessionAdded { summary });
        Ok(uri)
    }

    async fn register_new_session(
        &self,
        summary: SessionSummary,
        mut chat: ChatSummary,
        seed: ChatSeed,
        turns: Vec<Turn>,
    ) -> HostResult<()> {
        let agent = self.inner.agent(&summary.harness)?;
        let context = make_context(&self.inner.config, &summary, &chat);
        let _creating = self.creating_chat(&summary.harness);
        let created = agent
            .create_chat(
                &context,
                CreateChatRequest {
                    seed,
                    title: chat.title.clone(),
                },
            )
            .await
            .map_err(|error| Inner::agent_error(&summary.harness, error))?;
        if chat.model.is_none() {
            chat.model.clone_from(&created.model);
        }
        let marker = created.conversation.clone();
        let agent_state = created.agent.clone();
        let record = chat_record(chat.clone(), created);
        let new = NewSession {
            summary: summary.clone(),
            default_chat: record.clone(),
        };
        if let Err(error) = self.inner.store.create_session(&new).await {
            if let Err(dispose) = agent.dispose_chat(&context).await {
                tracing::warn!(%dispose, "could not dispose the conversation of a session that failed to register");
            }
            return Err(error.into());
        }
        if let Some(marker) = marker {
            self.inner
                .store
                .mark_conversation(&summary.harness, &marker, &chat.uri)
                .await?;
        }
        let mut state = self.inner.lock();
        let generation = state.generation();
        let mut entry = chat_entry(generation, chat.clone(), Some(&record), Some(turns));
        entry.state.agent = agent_state;
        // A new chat: no other process knows it yet.
        entry.lease_epoch = Some(0);
        state.chats.insert(chat.uri.clone(), entry);
        state.sessions.insert(
            summary.uri.clone(),
            SessionEntry {
                state: SessionState {
                    summary: summary.clone(),
                    chats: vec![ChatListing {
                        summary: chat,
                        running: false,
                    }],
                },
                last_used: Instant::now(),
            },
        );
        state.publish(ResourceUri::Root, Action::SessionAdded { summary });
        Ok(())
    }

    /// A page of sessions, newest first.
    pub async fn list_sessions(&self, query: &SessionQuery) -> HostResult<SessionPage> {
        Ok(self.inner.store.list_sessions(query).await?)
    }

    /// A session with its chat catalog (loading it if needed).
    pub async fn session(&self, session: &SessionUri) -> HostResult<SessionState> {
        self.ensure_session(session).await?;
        let state = self.inner.lock();
        state.session(session).map(|entry| entry.state.clone())
    }

    /// The chats of a session that run a turn now.
    pub fn active_chats(&self, session: &SessionUri) -> Vec<ChatUri> {
        let state = self.inner.lock();
        state
            .sessions
            .get(session)
            .map(|entry| entry.state.running_chats().cloned().collect())
            .unwrap_or_default()
    }

    /// Loads a session once, however many callers ask at the same time.
    pub(crate) async fn ensure_session(&self, session: &SessionUri) -> HostResult<()> {
        let task = {
            let mut state = self.inner.lock();
            if state.sessions.contains_key(session) {
                state.touch(session);
                return Ok(());
            }
            if let Some(task) = state.loading.get(session) {
                task.clone()
            } else {
                let host = self.clone();
                let uri = session.clone();
                // The load removes its own entry when it ends, so a waiter that wakes
                // late never removes a newer load started by a retry.
                let task = async move {
                    let result = host.load_session(&uri).await.map_err(Arc::new);
                    host.inner.lock().loading.remove(&uri);
                    result
                }
                .boxed()
                .shared();
                state.loading.insert(session.clone(), task.clone());
                task
            }
        };
        task.await.map_err(HostError::Shared)
    }

    /// Restores a session from the store: the default chat is re-attached through
    /// `materialize_chat` with its stored blob; peers are listed at once and resolved
    /// lazily.
    async fn load_session(&self, session: &SessionUri) -> HostResult<()> {
        let store = &self.inner.store;
        let summary = self.stored_session(session).await?;
        let agent = self.inner.agent_for(session)?;
        // Read before the chats: a lease taken after this shows as a newer epoch.
        let leases = store.leases(session).await?;
        let records = store.chats(session).await?;
        let default_uri = ChatUri::default_for(session);
        let default = records
            .iter()
            .find(|record| record.summary.uri == default_uri)
            .ok_or_else(|| HostError::NotFound {
                what: "default chat",
                key: default_uri.to_string(),
            })?;
        let context = make_context(&self.inner.config, &summary, &default.summary);
        let recovered = agent
            .materialize_chat(&context, default.provider_data.clone())
            .await
            .map_err(|error| Inner::agent_error(session.harness(), error))?;
        let mut default_data = default.provider_data.clone();
        if default_data.is_none()
            && let Some(recovered) = recovered
        {
            // An old record without a blob: keep the one the harness recovered.
            store.set_provider_data(&default_uri, &recovered).await?;
            default_data = Some(recovered);
        }
        // Saves queued before an eviction must land before the turns are read back.
        self.inner.writer.flush().await;
        // A session created through Hearth has its default chat's turns read on first
        // use (a long chat's first page is read without them); a discovered one is read
        // now, since its history may have to be imported.
        let external = summary.provenance == Provenance::External;
        let turns = if external {
            self.imported_turns(agent.as_ref(), &context, &default_uri)
                .await?
        } else {
            Vec::new()
        };
        self.install_session(
            session,
            Loaded {
                summary,
                records,
                leases,
                default_data,
                default_turns: external.then_some(turns),
            },
        );
        Ok(())
    }

    /// The stored summary of a session; a deleted or unknown one is an error saying so.
    async fn stored_session(&self, session: &SessionUri) -> HostResult<SessionSummary> {
        let store = &self.inner.store;
        match store.session(session).await? {
            Some(summary) => Ok(summary),
            None if store.is_tombstoned(session).await? => {
                Err(HostError::Deleted(session.to_string()))
            }
            None => Err(HostError::NotFound {
                what: "session",
                key: session.to_string(),
            }),
        }
    }

    /// The default chat's turns of a discovered session: as stored, or, the first time,
    /// its history as the harness captured it, stored durably so it survives the agent
    /// forgetting it.
    async fn imported_turns(
        &self,
        agent: &dyn Harness,
        context: &ChatContext,
        default_uri: &ChatUri,
    ) -> HostResult<Vec<Turn>> {
        let store = &self.inner.store;
        let mut turns = store.turns(default_uri).await?;
        if turns.is_empty() {
            turns = agent
                .messages(context)
                .await
                .map_err(|error| Inner::agent_error(default_uri.harness(), error))?;
            settle_stale_turns(&mut turns);
            for turn in &turns {
                store.insert_turn(default_uri, turn).await?;
            }
        }
        settle_stale_turns(&mut turns);
        Ok(turns)
    }

    /// Lists a loaded session and its chats in the host's state, unless another load
    /// got there first.
    fn install_session(&self, session: &SessionUri, loaded: Loaded) {
        let Loaded {
            summary,
            records,
            leases,
            default_data,
            mut default_turns,
        } = loaded;
        let default_uri = ChatUri::default_for(session);
        let mut state = self.inner.lock();
        if state.sessions.contains_key(session) {
            return;
        }
        let listings = records
            .iter()
            .map(|record| ChatListing {
                summary: record.summary.clone(),
                running: false,
            })
            .collect();
        for record in &records {
            let generation = state.generation();
            let is_default = record.summary.uri == default_uri;
            let initial = if is_default {
                default_turns.take()
            } else {
                None
            };
            let read_now = initial.is_some();
            let mut entry = chat_entry(generation, record.summary.clone(), Some(record), initial);
            if is_default && !read_now {
                entry.resolution = Resolution::Attached;
            }
            entry.lease_epoch =
                lease::known_epoch(&leases, &record.summary.uri, &self.inner.instance.holder);
            if is_default {
                entry.provider_data.clone_from(&default_data);
            }
            state.chats.insert(record.summary.uri.clone(), entry);
        }
        state.sessions.insert(
            session.clone(),
            SessionEntry {
                state: SessionState {
                    summary,
                    chats: listings,
                },
                last_used: Instant::now(),
            },
        );
    }

    /// Releases sessions nobody used for `idle`: no running turn, no subscriber. Their
    /// conversations are released (never destroyed) and they reload on next use. Returns how
    /// many were evicted.
    pub async fn evict_idle(&self, idle: Duration) -> usize {
        let now = Instant::now();
        let victims: Vec<(SessionUri, Vec<ChatContext>)> = {
            let mut state = self.inner.lock();
            let candidates: Vec<SessionUri> = state
                .sessions
                .iter()
                .filter(|(uri, entry)| {
                    now.duration_since(entry.last_used) >= idle
                        && entry.state.running_chats().next().is_none()
                        && !state.has_subscribers(&ResourceUri::Session((*uri).clone()))
                        && entry.state.chats.iter().all(|chat| {
                            !state.has_subscribers(&ResourceUri::Chat(chat.summary.uri.clone()))
                                // A chat being resolved is left alone: its harness is
                                // attaching it, and a release now would be undone.
                                && !matches!(
                                    state.chats.get(&chat.summary.uri).map(|entry| &entry.resolution),
                                    Some(Resolution::Resolving(_))
                                )
                        })
                })
                .map(|(uri, _)| uri.clone())
                .collect();
            let mut victims = Vec::new();
            for uri in candidates {
                let Some(entry) = state.sessions.remove(&uri) else {
                    continue;
                };
                let mut contexts = Vec::new();
                for listing in &entry.state.chats {
                    let chat = &listing.summary.uri;
                    if let Some(chat_entry) = state.chats.remove(chat)
                        && !matches!(chat_entry.resolution, Resolution::Unresolved)
                    {
                        contexts.push(make_context(
                            &self.inner.config,
                            &entry.state.summary,
                            &chat_entry.state.summary,
                        ));
                    }
                    state.retire(&ResourceUri::Chat(chat.clone()));
                }
                state.retire(&ResourceUri::Session(uri.clone()));
                victims.push((uri, contexts));
            }
            victims
        };
        for (session, contexts) in &victims {
            let Ok(agent) = self.inner.agent_for(session) else {
                continue;
            };
            for context in contexts {
                if let Err(error) = agent.release_chat(context).await {
                    tracing::warn!(chat = %context.chat, %error, "could not release an idle chat");
                }
            }
        }
        victims.len()
    }
}

/// A chat's turns up to and including `turn_id` (for forks), running ones settled.
pub(crate) fn turns_through(
    chats: &std::collections::HashMap<ChatUri, ChatEntry>,
    chat: &ChatUri,
    turn_id: &TurnId,
) -> HostResult<Vec<Turn>> {
    let entry = chats.get(chat).ok_or_else(|| HostError::NotFound {
        what: "chat",
        key: chat.to_string(),
    })?;
    let position = entry
        .state
        .turns
        .iter()
        .position(|turn| &turn.id == turn_id)
        .ok_or_else(|| {
            HostError::InvalidInput(format!("turn `{turn_id}` is not in chat `{chat}`"))
        })?;
    let mut turns = entry.state.turns[..=position].to_vec();
    settle_stale_turns(&mut turns);
    Ok(turns)
}
/// A session read from the store, ready to be listed.
struct Loaded {
    summary: SessionSummary,
    records: Vec<ChatRecord>,
    /// The session's chat leases, read before its chats.
    leases: Vec<ChatLease>,
    /// The default chat's provider data.
    default_data: Option<HarnessData>,
    /// The default chat's turns when they were read now (a discovered session); `None`
    /// when they are read on first use.
    default_turns: Option<Vec<Turn>>,
}
