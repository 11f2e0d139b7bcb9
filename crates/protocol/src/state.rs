//! Wire shapes of what subscribers see: snapshots of resources and the action envelopes
//! that follow them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::{
    AgentChatState, ChatState, ChatSummary, HarnessInfo, SessionState, SessionSummary, Timestamp,
};
use crate::turn::{
    PlanEntry, ResponsePart, StopReason, ToolCallPart, ToolCallPatch, ToolCallStatus, ToolResult,
    Turn, Usage,
};

/// A state change. Each applies to one kind of resource; clients fold them in with the
/// same reducer as the host.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Action {
    /// A session was registered (root).
    SessionAdded {
        /// The session.
        summary: SessionSummary,
    },
    /// A session's summary changed (root and session).
    SessionUpdated {
        /// The new summary.
        summary: SessionSummary,
    },
    /// A session was deleted (root and session).
    SessionRemoved {
        /// The session.
        session: String,
    },
    /// A chat entered the catalog (session).
    ChatAdded {
        /// The chat.
        chat: ChatSummary,
    },
    /// A chat's summary changed (session and chat).
    ChatUpdated {
        /// The new summary.
        chat: ChatSummary,
    },
    /// A chat left the catalog (session and chat).
    ChatRemoved {
        /// The chat.
        chat: String,
    },
    /// A chat started or stopped running a turn (session).
    ChatActivity {
        /// The chat.
        chat: String,
        /// Whether a turn runs.
        running: bool,
    },
    /// A turn started (chat).
    TurnStarted {
        /// The turn as it starts.
        turn: Turn,
    },
    /// Answer text arrived (chat).
    TextDelta {
        /// The turn.
        turn_id: String,
        /// The text.
        text: String,
    },
    /// Reasoning text arrived (chat).
    ReasoningDelta {
        /// The turn.
        turn_id: String,
        /// The text.
        text: String,
    },
    /// A tool call was announced (chat).
    ToolCallStarted {
        /// The turn.
        turn_id: String,
        /// The call.
        call: ToolCallPart,
    },
    /// A tool call changed (chat).
    ToolCallUpdated {
        /// The turn.
        turn_id: String,
        /// Call id.
        call_id: String,
        /// New status.
        status: ToolCallStatus,
        /// Result, when finished.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<ToolResult>,
        /// Changed details (title, kind, locations, content, arguments).
        #[serde(default, skip_serializing_if = "ToolCallPatch::is_empty")]
        patch: ToolCallPatch,
    },
    /// The plan was replaced (chat).
    PlanUpdated {
        /// The turn.
        turn_id: String,
        /// The whole plan.
        entries: Vec<PlanEntry>,
    },
    /// Another response part: proposal reference, permission request, error (chat).
    PartAdded {
        /// The turn.
        turn_id: String,
        /// The part.
        part: ResponsePart,
    },
    /// A permission request was answered (chat).
    PermissionResolved {
        /// The turn.
        turn_id: String,
        /// The request.
        request_id: String,
        /// The chosen option.
        outcome: String,
    },
    /// Usage so far (chat).
    UsageUpdated {
        /// The turn.
        turn_id: String,
        /// Usage.
        usage: Usage,
    },
    /// A turn ended (chat).
    TurnCompleted {
        /// The turn.
        turn_id: String,
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
    /// The chat's draft changed (chat).
    DraftChanged {
        /// The draft; absent clears it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        draft: Option<String>,
    },
    /// The chat's queue of messages waiting for the running turn changed (chat).
    QueueChanged {
        /// The whole queue, in sending order.
        #[serde(default)]
        queued: Vec<crate::UserMessage>,
    },
    /// A proposal was staged, approved, rejected or applied (root). Clients that show
    /// proposals (or the calendar's proposed changes) read them again with
    /// `proposal/list` or `calendar/events`.
    ProposalChanged {
        /// The proposal's id.
        proposal_id: String,
    },
    /// The harnesses the server offers changed (root): a model provider was added while
    /// it runs (`provider/add`). Carries the whole new list, as `initialize` gives it.
    HarnessesChanged {
        /// Every harness, by id.
        harnesses: Vec<HarnessInfo>,
    },
}

/// An action addressed to a resource, numbered per resource: the params of the
/// `subscription/envelope` notification.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Envelope {
    /// Sequence number within the resource, starting at 1, without gaps.
    pub seq: u64,
    /// The resource (`hearth-root:`, `hearth-session:…` or `hearth-chat:…`).
    pub resource: String,
    /// What changed.
    pub action: Action,
}

/// The state of a resource.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ResourceState {
    /// The session list carries no state of its own; page through `session/list`.
    Root,
    /// A session and its chat catalog.
    Session(SessionState),
    /// A chat and its turns.
    Chat(ChatState),
}

/// A resource's state and the last sequence number folded into it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    /// The resource.
    pub resource: String,
    /// The last envelope folded into `state`; the next one has `seq + 1`.
    pub seq: u64,
    /// The state.
    pub state: ResourceState,
}
