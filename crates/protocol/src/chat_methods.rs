//! Parameters and responses of the `chat/*` methods and `permission/*`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::{ChatState, ChatSummary, HarnessInfo};
use crate::turn::{PermissionOption, ToolCallPart, Turn, UserMessage};

/// How a new chat starts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ChatSeed {
    /// An empty conversation.
    #[default]
    Fresh,
    /// A copy of a chat's history up to and including a turn (needs `multipleChats.fork`).
    Fork {
        /// The chat forked from.
        source_chat: String,
        /// The last turn copied.
        turn_id: String,
    },
    /// A side chat that sees a chat's context up to a turn (needs
    /// `multipleChats.sideChat`).
    SideChat {
        /// The chat it hangs off.
        source_chat: String,
        /// The turn whose context it sees.
        turn_id: String,
    },
}

/// `chat/create`: adds a peer chat to a session (needs `multipleChats`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatCreateParams {
    /// The session.
    pub session: String,
    /// How it starts (default: fresh).
    #[serde(default)]
    pub seed: ChatSeed,
}

/// What `chat/create` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatCreateResponse {
    /// The new chat.
    pub chat: ChatSummary,
}

/// Addresses one chat: the params of `chat/dispose`, `chat/abort` and `chat/resolve`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatParams {
    /// The chat.
    pub chat: String,
}

/// `chat/dispose`: removes a peer chat from its session.
pub type ChatDisposeParams = ChatParams;

/// What `chat/dispose` returns.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatDisposeResponse {}

/// `chat/send`: starts a turn. The user's message is stored before the response;
/// progress arrives as envelopes on the chat's subscription.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatSendParams {
    /// The chat.
    pub chat: String,
    /// What the user sends.
    pub message: UserMessage,
}

/// What `chat/send` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatSendResponse {
    /// The new turn.
    pub turn_id: String,
}

/// `chat/abort`: stops the chat's running turn; what streamed is kept.
pub type ChatAbortParams = ChatParams;

/// What `chat/abort` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatAbortResponse {
    /// Whether a turn was running.
    pub aborted: bool,
}

/// `chat/compact`: summarises the chat's earlier turns now, so its next turns send the
/// summary instead of them (Hearth's own agent; other agents manage their own context
/// and refuse). The turns themselves stay, shown and searchable.
pub type ChatCompactParams = ChatParams;

/// What `chat/compact` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatCompactResponse {
    /// How many of the chat's turns its summary stands for now (0: it has none).
    pub turns: u32,
    /// How many of them this call summarised (0: there was nothing new to summarise).
    pub summarised: u32,
    /// The summary the agent reads instead of those turns.
    pub summary: String,
}

/// `chat/setModel`: the model the chat's next turns use.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatSetModelParams {
    /// The chat.
    pub chat: String,
    /// The model.
    pub model: String,
}

/// What `chat/setModel` returns.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatSetModelResponse {}

/// `chat/setMode`: the mode the chat's next turns use (one of the agent's modes, listed
/// in the chat's agent state).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatSetModeParams {
    /// The chat.
    pub chat: String,
    /// The mode's id.
    pub mode: String,
}

/// What `chat/setMode` returns.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatSetModeResponse {}

/// `chat/setDraft`: stores the chat's unsent draft.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatSetDraftParams {
    /// The chat.
    pub chat: String,
    /// The draft; absent clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft: Option<String>,
}

/// What `chat/setDraft` returns.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatSetDraftResponse {}

/// `chat/queue`: sends a message now when the chat is idle, or queues it behind the
/// running turn; queued messages are kept with the chat and sent one per turn, in order,
/// as each turn ends by itself (after Stop or a failure the queue waits).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatQueueParams {
    /// The chat.
    pub chat: String,
    /// The message.
    pub message: UserMessage,
}

/// What `chat/queue` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatQueueResponse {
    /// The turn it started, when the chat was idle; absent when it was queued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
}

/// `chat/setQueue`: replaces a chat's queue (a message removed or reordered).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatSetQueueParams {
    /// The chat.
    pub chat: String,
    /// The whole queue, in sending order (each message with its attachments).
    pub queued: Vec<UserMessage>,
}

/// What `chat/setQueue` returns.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatSetQueueResponse {}

/// `chat/resolve`: loads a chat's turns (restoring its conversation if needed) and returns
/// them.
pub type ChatResolveParams = ChatParams;

/// What `chat/resolve` returns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatResolveResponse {
    /// The chat with its turns.
    pub chat: ChatState,
}

/// `permission/respond`: answers a permission request of a chat's running turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRespondParams {
    /// The chat.
    pub chat: String,
    /// The request.
    pub request_id: String,
    /// The chosen option's id.
    pub option_id: String,
    /// The answer is Hearth's refusal because nobody could be asked (a client with no
    /// one at its terminal), not a person's choice: the model is told so, and the audit
    /// log records it as Hearth's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_policy: bool,
}

/// What `permission/respond` returns.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRespondResponse {}

/// `permission/list`: the permission requests nobody answered yet.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionListParams {}

/// A permission request nobody answered yet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PendingPermission {
    /// The chat whose running turn asks.
    pub chat: String,
    /// The turn.
    pub turn_id: String,
    /// The request (answer it with `permission/respond`).
    pub request_id: String,
    /// What is asked.
    pub title: String,
    /// The choices.
    pub options: Vec<PermissionOption>,
    /// The tool call it is about (its kind, files and diff), when the agent linked one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call: Option<ToolCallPart>,
}

/// What `permission/list` returns.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionListResponse {
    /// The requests, grouped by chat.
    pub permissions: Vec<PendingPermission>,
}

/// `permission/grants`: the standing answers ("allow for this chat") the harnesses hold.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionGrantsParams {}

/// A standing answer for the rest of a chat, covering exactly the call it was given for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionGrant {
    /// Its id (revoke it with `permission/revokeGrant`).
    pub id: String,
    /// The chat it holds in.
    pub chat: String,
    /// What it covers, in words (`edit of /work/a.md`, `` execute of `make test` ``).
    pub scope: String,
    /// Allowed (`true`) or refused (`false`).
    pub allowed: bool,
}

/// What `permission/grants` returns.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionGrantsResponse {
    /// The grants, by chat.
    pub grants: Vec<PermissionGrant>,
}

/// `permission/revokeGrant`: ends a standing answer; the next such call asks again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRevokeGrantParams {
    /// The grant's id.
    pub grant: String,
}

/// What `permission/revokeGrant` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRevokeGrantResponse {
    /// Whether a grant of that id was held (and is now gone).
    pub revoked: bool,
}

/// `harness/start`: starts a harness now (an external agent's process) so the
/// conversations in its own catalog are listed as external sessions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HarnessStartParams {
    /// The harness's id (`provider`, its older name, is read too).
    #[serde(alias = "provider")]
    pub harness: String,
}

/// What `harness/start` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HarnessStartResponse {
    /// The harness as it describes itself once started.
    pub harness: HarnessInfo,
}

/// `chat/turns`: a page of a chat's turns, for showing a long chat from its end and
/// reading back as the user scrolls. Costs the page, not the chat's length; a chat that
/// is not loaded is not restored for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatTurnsParams {
    /// The chat.
    pub chat: String,
    /// The page ends just before this turn (the first turn of the page the client has);
    /// absent: the page ends with the newest turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    /// Page size, 1 to 200 (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

/// What `chat/turns` returns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatTurnsResponse {
    /// The turns, oldest first.
    pub turns: Vec<Turn>,
    /// Whether the chat has turns before the first of these (ask again with `before`
    /// set to its id).
    pub has_more: bool,
}
