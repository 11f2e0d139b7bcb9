//! The in-memory state tree (sessions → chats → turns) and the per-resource channels.
//!
//! Client-visible state changes only through [`HostState::publish`], which folds an
//! action into the tree with the one reducer of `hearth-core` and sends the numbered
//! envelope to the resource's subscribers.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use futures::future::{BoxFuture, Shared};
use hearth_core::{
    Action, ChatState, ChatUri, DiscoveredChat, Envelope, HarnessData, HarnessId, OutputLimits,
    PartIndex, ResourceState, ResourceUri, SessionState, SessionSummary, SessionUri, Snapshot,
    TurnBudget, TurnId, reduce_chat, reduce_chat_indexed, reduce_session,
};
use tokio::sync::broadcast;

use crate::error::HostError;
use crate::receiver::EnvelopeReceiver;

/// Envelopes buffered per subscriber before it counts as fallen behind (allocated only
/// for resources someone subscribed to).
pub(crate) const CHANNEL_CAPACITY: usize = 4096;
/// Envelopes kept per resource for clients that reconnect with their last seq.
pub(crate) const REPLAY_CAPACITY: usize = 512;

/// A shared, coalesced piece of async work (a session restore, a chat resolve).
pub(crate) type SharedTask = Shared<BoxFuture<'static, Result<(), Arc<HostError>>>>;

/// One resource's stream.
struct Channel {
    seq: u64,
    /// Created by the first subscriber.
    sender: Option<broadcast::Sender<Arc<Envelope>>>,
    recent: VecDeque<Arc<Envelope>>,
}

impl Channel {
    fn new(seq: u64) -> Self {
        Self {
            seq,
            sender: None,
            recent: VecDeque::new(),
        }
    }

    fn subscribers(&self) -> usize {
        self.sender
            .as_ref()
            .map_or(0, broadcast::Sender::receiver_count)
    }
}

/// A loaded session.
pub(crate) struct SessionEntry {
    /// Summary and catalog (default chat first).
    pub state: SessionState,
    /// Last time anyone used it (eviction).
    pub last_used: Instant,
}

/// Whether a chat's turns and conversation are loaded.
pub(crate) enum Resolution {
    /// Turns loaded, conversation attached.
    Resolved,
    /// Listed from the catalog only.
    Unresolved,
    /// Conversation attached (a restored session's default chat), turns not read yet: they
    /// are read on first use, without attaching it again.
    Attached,
    /// Being resolved; later callers wait on the same work.
    Resolving(SharedTask),
}

/// A turn in progress.
pub(crate) struct RunningTurn {
    /// The turn.
    pub turn_id: TurnId,
    /// Changed since the last checkpoint.
    pub dirty: bool,
    /// About how many bytes it holds (its prompt, and what its signals added).
    pub size: usize,
    /// About how many bytes its signals added since the last checkpoint.
    pub bytes_since_save: usize,
    /// When it was last checkpointed.
    pub last_save: Instant,
    /// What of its output it keeps.
    pub budget: TurnBudget,
    /// Where its parts are, for the reducer.
    pub index: PartIndex,
}

impl RunningTurn {
    /// A turn that has just started with a prompt of `prompt_bytes`.
    pub fn new(turn_id: TurnId, limits: OutputLimits, prompt_bytes: usize) -> Self {
        Self {
            turn_id,
            dirty: false,
            size: prompt_bytes,
            bytes_since_save: 0,
            last_save: Instant::now(),
            budget: TurnBudget::new(limits),
            index: PartIndex::new(),
        }
    }

    /// Notes a checkpoint of the turn.
    pub fn saved(&mut self) {
        self.dirty = false;
        self.bytes_since_save = 0;
        self.last_save = Instant::now();
    }
}

/// Whether this host holds a chat's lease.
pub(crate) enum LeaseHold {
    /// Not held.
    Free,
    /// Held for a running turn.
    Held {
        /// When it was taken or last renewed.
        renewed: Instant,
    },
}

/// A chat in the catalog of a loaded session.
pub(crate) struct ChatEntry {
    /// Summary, turns (empty while unresolved) and draft.
    pub state: ChatState,
    /// The harness's blob.
    pub provider_data: Option<HarnessData>,
    /// Load state.
    pub resolution: Resolution,
    /// Identity of this entry; work started for an older entry is dropped.
    pub generation: u64,
    /// The running turn, if any.
    pub running: Option<RunningTurn>,
    /// Whether this host holds the chat's lease.
    pub lease: LeaseHold,
    /// The lease epoch at which the turns and provider data held here are what the store
    /// holds; `None` when unknown (read while another process answered in the chat).
    pub lease_epoch: Option<i64>,
}

fn chat_not_found(chat: &ChatUri) -> HostError {
    HostError::NotFound {
        what: "chat",
        key: chat.to_string(),
    }
}

impl ChatEntry {
    /// The turn running in the chat, when one runs and the chat holds it.
    pub fn running_turn(&self) -> Option<&hearth_core::Turn> {
        let running = self.running.as_ref()?;
        self.state
            .turns
            .iter()
            .rev()
            .find(|turn| turn.id == running.turn_id)
    }

    /// A copy of the running turn to save now, the turn marked saved; `None` when no
    /// turn runs or the chat does not hold it.
    pub fn checkpoint(&mut self) -> Option<hearth_core::Turn> {
        let turn = self.running_turn()?.clone();
        if let Some(running) = self.running.as_mut() {
            running.saved();
        }
        Some(turn)
    }
}

/// Everything the host holds in memory.
#[derive(Default)]
pub(crate) struct HostState {
    pub sessions: HashMap<SessionUri, SessionEntry>,
    pub chats: HashMap<ChatUri, ChatEntry>,
    pub loading: HashMap<SessionUri, SharedTask>,
    channels: HashMap<ResourceUri, Channel>,
    /// Last seq of resources whose channel was dropped, so numbering continues.
    retired: HashMap<ResourceUri, u64>,
    next_generation: u64,
    pub shutting_down: bool,
    /// Harness `create_chat` calls in flight per provider, until their conversation is marked.
    pub creating: HashMap<HarnessId, usize>,
    /// Discoveries that arrived while a provider was creating chats: registered once it
    /// is done, so a new chat's own conversation is never taken for an external session.
    pub deferred_discoveries: HashMap<HarnessId, DeferredDiscovery>,
}

impl HostState {
    /// A fresh entry generation.
    pub fn generation(&mut self) -> u64 {
        self.next_generation += 1;
        self.next_generation
    }

    fn channel(&mut self, resource: &ResourceUri) -> &mut Channel {
        // Looked up by reference first: publishing to a known resource allocates nothing.
        if !self.channels.contains_key(resource) {
            let seq = self.retired.remove(resource).unwrap_or(0);
            self.channels.insert(resource.clone(), Channel::new(seq));
        }
        match self.channels.get_mut(resource) {
            Some(channel) => channel,
            None => unreachable!("inserted above"),
        }
    }

    /// The chat `chat` of a loaded session, or `NotFound`.
    pub fn chat(&self, chat: &ChatUri) -> Result<&ChatEntry, HostError> {
        self.chats.get(chat).ok_or_else(|| chat_not_found(chat))
    }

    /// The chat `chat` of a loaded session, to change, or `NotFound`.
    pub fn chat_mut(&mut self, chat: &ChatUri) -> Result<&mut ChatEntry, HostError> {
        self.chats.get_mut(chat).ok_or_else(|| chat_not_found(chat))
    }

    /// The loaded session `session`, or `NotFound`.
    pub fn session(&self, session: &SessionUri) -> Result<&SessionEntry, HostError> {
        self.sessions
            .get(session)
            .ok_or_else(|| HostError::NotFound {
                what: "session",
                key: session.to_string(),
            })
    }

    /// Publishes a session's changed summary: to its subscribers when it is loaded, and
    /// to the root's.
    pub fn publish_summary(&mut self, summary: SessionSummary) {
        if self.sessions.contains_key(&summary.uri) {
            self.publish(
                ResourceUri::Session(summary.uri.clone()),
                Action::SessionUpdated {
                    summary: summary.clone(),
                },
            );
        }
        self.publish(ResourceUri::Root, Action::SessionUpdated { summary });
    }

    /// Folds an action into the state of `resource` and sends its envelope.
    pub fn publish(&mut self, resource: ResourceUri, action: Action) {
        match &resource {
            ResourceUri::Root => {}
            ResourceUri::Session(uri) => {
                if let Some(entry) = self.sessions.get_mut(uri) {
                    reduce_session(&mut entry.state, &action);
                }
            }
            ResourceUri::Chat(uri) => {
                if let Some(entry) = self.chats.get_mut(uri) {
                    // The running turn's parts are found through its index, so a signal
                    // costs the same however many parts the turn holds.
                    match entry.running.as_mut() {
                        Some(running) if action.turn_id() == Some(&running.turn_id) => {
                            reduce_chat_indexed(&mut entry.state, &action, &mut running.index);
                        }
                        _ => reduce_chat(&mut entry.state, &action),
                    }
                }
            }
        }
        let channel = self.channel(&resource);
        channel.seq += 1;
        let envelope = Arc::new(Envelope {
            seq: channel.seq,
            resource,
            action,
        });
        if channel.recent.len() == REPLAY_CAPACITY {
            channel.recent.pop_front();
        }
        channel.recent.push_back(envelope.clone());
        if let Some(sender) = channel
            .sender
            .as_ref()
            .filter(|sender| sender.receiver_count() > 0)
            && sender.send(envelope).is_err()
        {
            tracing::trace!("no subscriber took the envelope");
        }
    }

    /// The current snapshot of a loaded resource (no I/O).
    pub fn snapshot(&mut self, resource: &ResourceUri) -> Option<Snapshot> {
        let state = match resource {
            ResourceUri::Root => ResourceState::Root,
            ResourceUri::Session(uri) => {
                ResourceState::Session(self.sessions.get(uri)?.state.clone())
            }
            ResourceUri::Chat(uri) => {
                let entry = self.chats.get(uri)?;
                if !matches!(entry.resolution, Resolution::Resolved) {
                    return None;
                }
                ResourceState::Chat(entry.state.clone())
            }
        };
        let seq = self.channel(resource).seq;
        Some(Snapshot {
            resource: resource.clone(),
            seq,
            state,
        })
    }

    /// The last seq of a resource.
    pub fn seq(&mut self, resource: &ResourceUri) -> u64 {
        self.channel(resource).seq
    }

    /// A receiver for the resource's envelopes after the current seq.
    pub fn receiver(&mut self, resource: &ResourceUri) -> EnvelopeReceiver {
        EnvelopeReceiver::new(
            self.channel(resource)
                .sender
                .get_or_insert_with(|| broadcast::channel(CHANNEL_CAPACITY).0)
                .subscribe(),
        )
    }

    /// The buffered envelopes after `seq`, if the buffer still reaches back that far.
    pub fn replay_since(&mut self, resource: &ResourceUri, seq: u64) -> Option<Vec<Envelope>> {
        let channel = self.channel(resource);
        if seq > channel.seq {
            return None;
        }
        if seq == channel.seq {
            return Some(Vec::new());
        }
        let first = channel.recent.front()?.seq;
        if first > seq + 1 {
            return None;
        }
        Some(
            channel
                .recent
                .iter()
                .filter(|envelope| envelope.seq > seq)
                .map(|envelope| Envelope::clone(envelope))
                .collect(),
        )
    }

    /// Whether anyone listens to the resource.
    pub fn has_subscribers(&self, resource: &ResourceUri) -> bool {
        self.channels
            .get(resource)
            .is_some_and(|channel| channel.subscribers() > 0)
    }

    /// Drops a resource's channel, remembering its seq.
    pub fn retire(&mut self, resource: &ResourceUri) {
        if let Some(channel) = self.channels.remove(resource) {
            self.retired.insert(resource.clone(), channel.seq);
        }
    }

    /// Marks a session as used now.
    pub fn touch(&mut self, session: &SessionUri) {
        if let Some(entry) = self.sessions.get_mut(session) {
            entry.last_used = Instant::now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_core::{ChatOrigin, ChatSummary, Turn, UserMessage, now};

    fn chat_entry(uri: ChatUri) -> ChatEntry {
        ChatEntry {
            state: ChatState::new(ChatSummary::new(uri, ChatOrigin::User, now())),
            provider_data: None,
            resolution: Resolution::Resolved,
            generation: 1,
            running: None,
            lease: LeaseHold::Free,
            lease_epoch: Some(0),
        }
    }

    #[test]
    fn publish_numbers_per_resource_and_replays_from_a_seq() {
        let mut state = HostState::default();
        let session = SessionUri::parse("hearth-session:replay/s").unwrap();
        let chat = ChatUri::default_for(&session);
        state.chats.insert(chat.clone(), chat_entry(chat.clone()));
        let resource = ResourceUri::Chat(chat);
        let turn = Turn::started(TurnId::generate(), UserMessage::text("hi"), now());
        let turn_id = turn.id.clone();
        state.publish(resource.clone(), Action::TurnStarted { turn });
        state.publish(ResourceUri::Root, Action::SessionRemoved { session });
        for piece in ["a", "b", "c"] {
            state.publish(
                resource.clone(),
                Action::TextDelta {
                    turn_id: turn_id.clone(),
                    text: piece.into(),
                },
            );
        }
        let snapshot = state.snapshot(&resource).unwrap();
        assert_eq!(snapshot.seq, 4);
        let ResourceState::Chat(chat_state) = snapshot.state else {
            panic!()
        };
        assert_eq!(chat_state.turns[0].response_text(), "abc");
        let replay = state.replay_since(&resource, 2).unwrap();
        assert_eq!(replay.iter().map(|e| e.seq).collect::<Vec<_>>(), vec![3, 4]);
        assert_eq!(state.replay_since(&resource, 4).unwrap(), Vec::new());
        assert!(state.replay_since(&resource, 9).is_none());
        assert_eq!(state.snapshot(&ResourceUri::Root).unwrap().seq, 1);
        // Numbering continues after a channel is dropped.
        state.retire(&resource);
        state.publish(
            resource.clone(),
            Action::TextDelta {
                turn_id,
                text: "d".into(),
            },
        );
        assert_eq!(state.snapshot(&resource).unwrap().seq, 5);
        assert!(state.replay_since(&resource, 1).is_none());
    }
}

/// Conversations a harness found while it was creating chats, and the harnesses that
/// read the same catalog.
#[derive(Default)]
pub(crate) struct DeferredDiscovery {
    pub chats: Vec<DiscoveredChat>,
    pub peers: Vec<HarnessId>,
}
