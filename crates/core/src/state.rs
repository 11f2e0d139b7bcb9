//! The state clients see: snapshots of resources, actions, envelopes, and the one reducer
//! that applies actions to state (used by the host and by every client alike).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::agent_state::AgentChatState;
use crate::chat::{ChatSummary, SessionSummary};
use crate::error::UriError;
use crate::ids::{CHAT_SCHEME, ChatUri, SESSION_SCHEME, SessionUri, TurnId};
use crate::parts::{Lookup, PartIndex};
use crate::tool_call::ToolCallPatch;
use crate::turn::{
    PlanEntry, ResponsePart, StopReason, Timestamp, ToolCallPart, ToolCallStatus, ToolResult, Turn,
    Usage,
};

/// The URI of the root resource (the session list).
pub const ROOT_URI: &str = "hearth-root:";

/// Something a client can subscribe to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ResourceUri {
    /// The session list: sessions added, updated, removed.
    Root,
    /// One session: its summary and chat catalog.
    Session(SessionUri),
    /// One chat: its turns and draft.
    Chat(ChatUri),
}

impl ResourceUri {
    /// Parses a resource URI by its scheme.
    pub fn parse(text: &str) -> Result<Self, UriError> {
        let text = text.trim();
        if text == ROOT_URI {
            Ok(Self::Root)
        } else if text.starts_with(SESSION_SCHEME) {
            SessionUri::parse(text).map(Self::Session)
        } else if text.starts_with(CHAT_SCHEME) {
            ChatUri::parse(text).map(Self::Chat)
        } else {
            Err(UriError::Malformed {
                expected: "session",
                value: text.to_owned(),
            })
        }
    }
}

impl fmt::Display for ResourceUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Root => f.write_str(ROOT_URI),
            Self::Session(uri) => uri.fmt(f),
            Self::Chat(uri) => uri.fmt(f),
        }
    }
}

impl FromStr for ResourceUri {
    type Err = UriError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text)
    }
}

impl Serialize for ResourceUri {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ResourceUri {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// A chat as its session shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatListing {
    /// The chat's summary.
    pub summary: ChatSummary,
    /// Whether a turn is running in it.
    #[serde(default)]
    pub running: bool,
}

/// A session with its chat catalog (default chat first, then peers in creation order).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionState {
    /// The session.
    pub summary: SessionSummary,
    /// Its chats.
    pub chats: Vec<ChatListing>,
}

impl SessionState {
    /// The chats with a running turn.
    pub fn running_chats(&self) -> impl Iterator<Item = &ChatUri> {
        self.chats
            .iter()
            .filter(|chat| chat.running)
            .map(|chat| &chat.summary.uri)
    }
}

/// A chat with its turns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatState {
    /// The chat.
    pub summary: ChatSummary,
    /// Its turns, oldest first.
    pub turns: Vec<Turn>,
    /// The unsent draft.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft: Option<String>,
    /// Messages waiting for the running turn to end (with their attachments), sent one
    /// per turn in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queued: Vec<crate::UserMessage>,
    /// What the agent offers in the chat (commands, modes, models), once it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentChatState>,
}

impl ChatState {
    /// `summary`'s chat with no turns, draft, queued messages or agent offer yet.
    pub fn new(summary: ChatSummary) -> Self {
        Self {
            summary,
            turns: Vec::new(),
            draft: None,
            queued: Vec::new(),
            agent: None,
        }
    }

    fn turn_mut(&mut self, turn_id: &TurnId) -> Option<&mut Turn> {
        self.turns.iter_mut().rev().find(|turn| &turn.id == turn_id)
    }
}

/// A state change. Each applies to one kind of resource; the reducer ignores the rest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Action {
    // Root.
    /// A session was registered.
    SessionAdded {
        /// The session.
        summary: SessionSummary,
    },
    /// A session's summary changed (root and session resources).
    SessionUpdated {
        /// The new summary.
        summary: SessionSummary,
    },
    /// A session was deleted (root and session resources).
    SessionRemoved {
        /// The session.
        session: SessionUri,
    },
    // Session.
    /// A chat entered the catalog.
    ChatAdded {
        /// The chat.
        chat: ChatSummary,
    },
    /// A chat's summary changed (session and chat resources).
    ChatUpdated {
        /// The new summary.
        chat: ChatSummary,
    },
    /// A chat left the catalog (session and chat resources).
    ChatRemoved {
        /// The chat.
        chat: ChatUri,
    },
    /// A chat started or stopped running a turn.
    ChatActivity {
        /// The chat.
        chat: ChatUri,
        /// Whether a turn runs.
        running: bool,
    },
    // Chat.
    /// A turn started.
    TurnStarted {
        /// The turn as it starts (no parts).
        turn: Turn,
    },
    /// Answer text arrived.
    TextDelta {
        /// The turn.
        turn_id: TurnId,
        /// The text.
        text: String,
    },
    /// Reasoning text arrived.
    ReasoningDelta {
        /// The turn.
        turn_id: TurnId,
        /// The text.
        text: String,
    },
    /// A tool call was announced.
    ToolCallStarted {
        /// The turn.
        turn_id: TurnId,
        /// The call.
        call: ToolCallPart,
    },
    /// A tool call changed.
    ToolCallUpdated {
        /// The turn.
        turn_id: TurnId,
        /// Call id.
        call_id: String,
        /// New status.
        status: ToolCallStatus,
        /// Result, when finished.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<ToolResult>,
        /// Changed details.
        #[serde(default, skip_serializing_if = "ToolCallPatch::is_empty")]
        patch: ToolCallPatch,
    },
    /// The plan was replaced.
    PlanUpdated {
        /// The turn.
        turn_id: TurnId,
        /// The whole plan.
        entries: Vec<PlanEntry>,
    },
    /// Another response part (proposal reference, permission request, error).
    PartAdded {
        /// The turn.
        turn_id: TurnId,
        /// The part.
        part: ResponsePart,
    },
    /// A permission request was answered.
    PermissionResolved {
        /// The turn.
        turn_id: TurnId,
        /// The request.
        request_id: String,
        /// The chosen option.
        outcome: String,
    },
    /// Usage so far.
    UsageUpdated {
        /// The turn.
        turn_id: TurnId,
        /// Usage.
        usage: Usage,
    },
    /// A turn ended.
    TurnCompleted {
        /// The turn.
        turn_id: TurnId,
        /// Why.
        stop_reason: StopReason,
        /// Final usage.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
        /// When.
        completed_at: Timestamp,
    },
    /// What the agent offers in the chat changed (chat).
    AgentStateChanged {
        /// The whole new state.
        state: AgentChatState,
    },
    /// The chat's draft changed.
    DraftChanged {
        /// The draft; `None` clears it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        draft: Option<String>,
    },
    /// The chat's queue of messages waiting for the running turn changed.
    QueueChanged {
        /// The whole queue, in sending order.
        #[serde(default)]
        queued: Vec<crate::UserMessage>,
    },
    /// A proposal was staged or decided (root): pages that show proposals, and the
    /// calendar's ghost events, read them again.
    ProposalChanged {
        /// The proposal's id.
        proposal_id: String,
    },
    /// The harnesses the host offers changed (root): a model provider was set up while
    /// it runs. Carries the whole new list.
    HarnessesChanged {
        /// Every harness, by id.
        harnesses: Vec<crate::HarnessDescriptor>,
    },
}

/// An action addressed to a resource, numbered per resource.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    /// Sequence number within the resource, starting at 1.
    pub seq: u64,
    /// The resource.
    pub resource: ResourceUri,
    /// What changed.
    pub action: Action,
}

/// The state of a resource at a sequence number.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResourceState {
    /// The root carries no state of its own; list sessions with pagination.
    Root,
    /// A session.
    Session(SessionState),
    /// A chat.
    Chat(ChatState),
}

/// A resource's state and the sequence number it reflects.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The resource.
    pub resource: ResourceUri,
    /// The last envelope folded into `state`.
    pub seq: u64,
    /// The state.
    pub state: ResourceState,
}

/// Applies an action to a session's state.
pub fn reduce_session(state: &mut SessionState, action: &Action) {
    match action {
        Action::SessionUpdated { summary } if summary.uri == state.summary.uri => {
            state.summary = summary.clone();
        }
        Action::ChatAdded { chat } => {
            if let Some(existing) = state.chats.iter_mut().find(|c| c.summary.uri == chat.uri) {
                existing.summary = chat.clone();
            } else {
                state.chats.push(ChatListing {
                    summary: chat.clone(),
                    running: false,
                });
            }
        }
        Action::ChatUpdated { chat } => {
            if let Some(existing) = state.chats.iter_mut().find(|c| c.summary.uri == chat.uri) {
                existing.summary = chat.clone();
            }
        }
        Action::ChatRemoved { chat } => state.chats.retain(|c| &c.summary.uri != chat),
        Action::ChatActivity { chat, running } => {
            if let Some(existing) = state.chats.iter_mut().find(|c| &c.summary.uri == chat) {
                existing.running = *running;
            }
        }
        _ => {}
    }
}

/// Applies an action to a chat's state.
pub fn reduce_chat(state: &mut ChatState, action: &Action) {
    apply_chat(state, action, Lookup::Search);
}

/// Applies an action to a chat's state as [`reduce_chat`] does, finding the parts of the
/// turn it changes through `index` (kept by the caller for one turn), so that each
/// action costs the same however many parts the turn holds.
pub fn reduce_chat_indexed(state: &mut ChatState, action: &Action, index: &mut PartIndex) {
    apply_chat(state, action, Lookup::Index(index));
}

fn apply_chat(state: &mut ChatState, action: &Action, lookup: Lookup<'_>) {
    match action {
        Action::ChatUpdated { chat } if chat.uri == state.summary.uri => {
            state.summary = chat.clone();
        }
        Action::TurnStarted { turn } if state.turn_mut(&turn.id).is_none() => {
            state.turns.push(turn.clone());
        }
        Action::AgentStateChanged { state: agent } => {
            state.agent = Some(agent.clone());
        }
        Action::DraftChanged { draft } => state.draft.clone_from(draft),
        Action::QueueChanged { queued } => state.queued.clone_from(queued),
        _ => apply_turn(state, action, lookup),
    }
}

/// The actions that change one of the chat's turns; an action for a turn the chat does
/// not hold, or for no turn, changes nothing.
fn apply_turn(state: &mut ChatState, action: &Action, mut lookup: Lookup<'_>) {
    let Some(turn) = changed_turn(action).and_then(|turn_id| state.turn_mut(turn_id)) else {
        return;
    };
    match action {
        Action::TextDelta { text, .. } => turn.push_text(text),
        Action::ReasoningDelta { text, .. } => turn.push_reasoning(text),
        Action::ToolCallStarted { call, .. } => match lookup.call(turn, &call.call_id) {
            Some(position) => turn.parts[position] = ResponsePart::ToolCall(call.clone()),
            None => turn.parts.push(ResponsePart::ToolCall(call.clone())),
        },
        Action::ToolCallUpdated {
            call_id,
            status,
            result,
            patch,
            ..
        } => {
            if let Some(position) = lookup.call(turn, call_id)
                && let ResponsePart::ToolCall(call) = &mut turn.parts[position]
            {
                // A finished call stays finished: a late update (a terminal's last
                // output, say) does not make it run again.
                let finished = matches!(
                    call.status,
                    ToolCallStatus::Completed | ToolCallStatus::Failed | ToolCallStatus::Cancelled
                );
                if !finished || !matches!(status, ToolCallStatus::Pending | ToolCallStatus::Running)
                {
                    call.status = *status;
                }
                if result.is_some() {
                    call.result = result.clone();
                }
                patch.apply(call);
            }
        }
        Action::PlanUpdated { entries, .. } => update_plan(turn, entries, &mut lookup),
        Action::PartAdded { part, .. } => turn.parts.push(part.clone()),
        Action::PermissionResolved {
            request_id,
            outcome,
            ..
        } => {
            for position in lookup.permissions(turn, request_id) {
                if let ResponsePart::PermissionRequest {
                    outcome: answer, ..
                } = &mut turn.parts[position]
                {
                    *answer = Some(outcome.clone());
                }
            }
        }
        Action::UsageUpdated { usage, .. } => turn.usage = Some(usage.clone()),
        Action::TurnCompleted {
            stop_reason,
            usage,
            completed_at,
            ..
        } => {
            turn.end(stop_reason.clone());
            turn.completed_at = Some(*completed_at);
            if usage.is_some() {
                turn.usage.clone_from(usage);
            }
        }
        _ => {}
    }
}

impl Action {
    /// The turn of a chat the action starts or changes, if it is about one.
    pub fn turn_id(&self) -> Option<&TurnId> {
        match self {
            Self::TurnStarted { turn } => Some(&turn.id),
            _ => changed_turn(self),
        }
    }
}

/// The turn an action changes, for the actions [`apply_turn`] applies.
fn changed_turn(action: &Action) -> Option<&TurnId> {
    match action {
        Action::TextDelta { turn_id, .. }
        | Action::ReasoningDelta { turn_id, .. }
        | Action::ToolCallStarted { turn_id, .. }
        | Action::ToolCallUpdated { turn_id, .. }
        | Action::PlanUpdated { turn_id, .. }
        | Action::PartAdded { turn_id, .. }
        | Action::PermissionResolved { turn_id, .. }
        | Action::UsageUpdated { turn_id, .. }
        | Action::TurnCompleted { turn_id, .. } => Some(turn_id),
        _ => None,
    }
}

/// Replaces the turn's plan, or adds one.
fn update_plan(turn: &mut Turn, entries: &[PlanEntry], lookup: &mut Lookup<'_>) {
    let plan = lookup
        .plan(turn)
        .and_then(|position| match &mut turn.parts[position] {
            ResponsePart::Plan { entries } => Some(entries),
            _ => None,
        });
    match plan {
        Some(existing) => {
            existing.clear();
            existing.extend_from_slice(entries);
        }
        None => turn.parts.push(ResponsePart::Plan {
            entries: entries.to_vec(),
        }),
    }
}

/// Applies an action to a resource's state.
pub fn reduce(state: &mut ResourceState, action: &Action) {
    match state {
        ResourceState::Root => {}
        ResourceState::Session(session) => reduce_session(session, action),
        ResourceState::Chat(chat) => reduce_chat(chat, action),
    }
}

/// An envelope did not follow the last one applied: the client must take a fresh
/// snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("missed envelopes: expected seq {expected}, got {got}; take a fresh snapshot")]
pub struct SequenceGap {
    /// The seq that should have come.
    pub expected: u64,
    /// The seq that came.
    pub got: u64,
}

/// A client's copy of one resource: a snapshot with envelopes folded in, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Mirror {
    /// The state and the seq it reflects.
    pub snapshot: Snapshot,
}

impl Mirror {
    /// Starts from a snapshot.
    pub fn new(snapshot: Snapshot) -> Self {
        Self { snapshot }
    }

    /// Folds in the next envelope. Envelopes already reflected are skipped; a gap is an
    /// error.
    pub fn apply(&mut self, envelope: &Envelope) -> Result<(), SequenceGap> {
        if envelope.seq <= self.snapshot.seq {
            return Ok(());
        }
        let expected = self.snapshot.seq + 1;
        if envelope.seq != expected {
            return Err(SequenceGap {
                expected,
                got: envelope.seq,
            });
        }
        reduce(&mut self.snapshot.state, &envelope.action);
        self.snapshot.seq = envelope.seq;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::ChatOrigin;
    use crate::ids::ChatUri;
    use crate::turn::{UserMessage, now};
    use pretty_assertions::assert_eq;

    fn chat_state() -> ChatState {
        let session = SessionUri::parse("hearth-session:replay/s1").unwrap();
        let uri = ChatUri::default_for(&session);
        ChatState::new(ChatSummary::new(uri, ChatOrigin::User, now()))
    }

    #[test]
    fn mirror_applies_in_order_and_detects_gaps() {
        let resource = ResourceUri::Chat(chat_state().summary.uri);
        let mut mirror = Mirror::new(Snapshot {
            resource: resource.clone(),
            seq: 0,
            state: ResourceState::Chat(chat_state()),
        });
        let turn = Turn::started(TurnId::generate(), UserMessage::text("hi"), now());
        let turn_id = turn.id.clone();
        let envelopes = [
            Action::TurnStarted { turn },
            Action::TextDelta {
                turn_id: turn_id.clone(),
                text: "Hel".into(),
            },
            Action::TextDelta {
                turn_id: turn_id.clone(),
                text: "lo".into(),
            },
        ];
        for (index, action) in envelopes.into_iter().enumerate() {
            let envelope = Envelope {
                seq: index as u64 + 1,
                resource: resource.clone(),
                action,
            };
            mirror.apply(&envelope).unwrap();
            // Re-delivery of an envelope already applied is harmless.
            mirror.apply(&envelope).unwrap();
        }
        let ResourceState::Chat(chat) = &mirror.snapshot.state else {
            panic!("not a chat")
        };
        assert_eq!(chat.turns[0].response_text(), "Hello");
        let gap = Envelope {
            seq: 5,
            resource,
            action: Action::TextDelta {
                turn_id,
                text: "!".into(),
            },
        };
        assert_eq!(
            mirror.apply(&gap),
            Err(SequenceGap {
                expected: 4,
                got: 5
            })
        );
    }

    #[test]
    fn completing_a_turn_cancels_unfinished_tool_calls() {
        let mut state = chat_state();
        let turn = Turn::started(TurnId::generate(), UserMessage::text("hi"), now());
        let turn_id = turn.id.clone();
        reduce_chat(&mut state, &Action::TurnStarted { turn });
        reduce_chat(
            &mut state,
            &Action::ToolCallStarted {
                turn_id: turn_id.clone(),
                call: ToolCallPart {
                    call_id: "c1".into(),
                    name: "web_fetch".into(),
                    arguments: serde_json::json!({}),
                    status: ToolCallStatus::Running,
                    result: None,
                    title: None,
                    kind: None,
                    locations: Vec::new(),
                    content: Vec::new(),
                },
            },
        );
        reduce_chat(
            &mut state,
            &Action::TurnCompleted {
                turn_id,
                stop_reason: StopReason::Aborted,
                usage: None,
                completed_at: now(),
            },
        );
        let ResponsePart::ToolCall(call) = &state.turns[0].parts[0] else {
            panic!("no call")
        };
        assert_eq!(call.status, ToolCallStatus::Cancelled);
        assert_eq!(state.turns[0].stop_reason, Some(StopReason::Aborted));
    }

    #[test]
    fn a_finished_call_is_not_made_to_run_again_by_a_late_update() {
        let mut state = chat_state();
        let turn = Turn::started(TurnId::generate(), UserMessage::text("hi"), now());
        let turn_id = turn.id.clone();
        reduce_chat(&mut state, &Action::TurnStarted { turn });
        reduce_chat(
            &mut state,
            &Action::ToolCallStarted {
                turn_id: turn_id.clone(),
                call: ToolCallPart::new(
                    "c1",
                    "run",
                    serde_json::json!({}),
                    ToolCallStatus::Running,
                ),
            },
        );
        let update = |status| Action::ToolCallUpdated {
            turn_id: turn_id.clone(),
            call_id: "c1".into(),
            status,
            result: None,
            patch: ToolCallPatch {
                title: Some(format!("{status:?}")),
                ..ToolCallPatch::default()
            },
        };
        reduce_chat(&mut state, &update(ToolCallStatus::Completed));
        reduce_chat(&mut state, &update(ToolCallStatus::Running));
        let ResponsePart::ToolCall(call) = &state.turns[0].parts[0] else {
            panic!("no call")
        };
        // The status stays; the rest of the late update is taken.
        assert_eq!(call.status, ToolCallStatus::Completed);
        assert_eq!(call.title.as_deref(), Some("Running"));
        reduce_chat(&mut state, &update(ToolCallStatus::Failed));
        let ResponsePart::ToolCall(call) = &state.turns[0].parts[0] else {
            panic!("no call")
        };
        assert_eq!(call.status, ToolCallStatus::Failed);
    }

    #[test]
    fn resource_uris_parse_by_scheme() {
        assert_eq!(
            ResourceUri::parse("hearth-root:").unwrap(),
            ResourceUri::Root
        );
        assert!(matches!(
            ResourceUri::parse("hearth-chat:replay/s/c").unwrap(),
            ResourceUri::Chat(_)
        ));
        assert!(ResourceUri::parse("nope").is_err());
    }
}
