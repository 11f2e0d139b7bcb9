//! Wire shapes of turns: the user's message and the response as ordered parts.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::Timestamp;

/// What the user sent.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserMessage {
    /// The prompt text.
    pub text: String,
    /// Files attached to the message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
    /// Context the user pointed at (notes, URLs, selections).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<ContextReference>,
}

/// A file attached to a user message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Attachment {
    /// Display name.
    pub name: String,
    /// MIME type.
    pub media_type: String,
    /// Where the content lives (a path or URL).
    pub uri: String,
}

/// A reference to context the user included.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContextReference {
    /// Display label.
    pub label: String,
    /// What it points at.
    pub uri: String,
}

/// Why a turn ended. A reason Hearth does not know travels as its own text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// The model hit its output token limit.
    MaxTokens,
    /// The agent loop hit its step limit.
    StepLimit,
    /// The model refused.
    Refusal,
    /// The user aborted the turn; what streamed is kept.
    Aborted,
    /// The turn failed; the error is a response part.
    Error,
    /// The process stopped while the turn ran; what streamed is kept.
    Incomplete,
    /// A provider-specific reason.
    #[serde(untagged)]
    Other(String),
}

/// Token usage of a turn, and what the agent says about its context window and cost.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Prompt tokens.
    #[serde(default)]
    pub input_tokens: u64,
    /// Completion tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Prompt tokens served from a cache.
    #[serde(default)]
    pub cached_input_tokens: u64,
    /// Tokens spent on reasoning.
    #[serde(default)]
    pub reasoning_tokens: u64,
    /// Tokens in the context window now, when the agent says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_used: Option<u64>,
    /// The context window's size in tokens, when the agent says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_size: Option<u64>,
    /// What the conversation has cost so far, when the agent says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<Cost>,
}

/// An amount spent, in a currency (ISO 4217, e.g. `USD`) or another unit (`credits`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    /// The amount.
    pub amount: f64,
    /// Its unit.
    pub currency: String,
}

// Amounts come from finite core amounts or JSON, which has no NaN.
impl Eq for Cost {}

/// Lifecycle of a tool call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ToolCallStatus {
    /// Announced; arguments may still be streaming.
    Pending,
    /// Executing.
    Running,
    /// Finished with a result.
    Completed,
    /// Finished with an error.
    Failed,
    /// Did not run.
    Cancelled,
}

/// What a tool call returned.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// Text given back to the model.
    pub content: String,
    /// Whether the content describes an error.
    #[serde(default)]
    pub is_error: bool,
}

/// A tool call inside a response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallPart {
    /// Call id, unique within the turn.
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as given.
    pub arguments: Value,
    /// Where the call is in its lifecycle.
    pub status: ToolCallStatus,
    /// The result once finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<ToolResult>,
    /// A title for people (external agents give one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What kind of work it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<ToolKind>,
    /// The files it touches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locations: Vec<ToolLocation>,
    /// What it produced: text, diffs, terminals.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content: Vec<ToolCallContent>,
}

/// What kind of work a tool call does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ToolKind {
    /// Reads files or data.
    Read,
    /// Changes files or content.
    Edit,
    /// Removes files or data.
    Delete,
    /// Moves or renames files.
    Move,
    /// Searches.
    Search,
    /// Runs a command.
    Execute,
    /// Thinks or plans.
    Think,
    /// Fetches from the network.
    Fetch,
    /// Switches the agent's mode.
    SwitchMode,
    /// Anything else.
    Other,
}

/// A file a tool call touches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolLocation {
    /// The file's path.
    pub path: String,
    /// A line in it (1-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// Content a tool call produced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ToolCallContent {
    /// Text (Markdown).
    Text {
        /// The text.
        text: String,
    },
    /// A change to a file.
    Diff {
        /// The file.
        path: String,
        /// Its content before (absent for a new file).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        old_text: Option<String>,
        /// Its content after.
        new_text: String,
    },
    /// A terminal the call runs in.
    Terminal {
        /// The terminal's id.
        terminal_id: String,
    },
}

/// Changed details of a tool call; an absent field is unchanged, a present one replaces.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallPatch {
    /// A new title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A new kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<ToolKind>,
    /// New locations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locations: Option<Vec<ToolLocation>>,
    /// New content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<ToolCallContent>>,
    /// New arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
}

impl ToolCallPatch {
    /// Whether the patch changes nothing.
    pub fn is_empty(&self) -> bool {
        self.title.is_none()
            && self.kind.is_none()
            && self.locations.is_none()
            && self.content.is_none()
            && self.arguments.is_none()
    }
}

/// State of a plan entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum PlanStatus {
    /// Not started.
    Pending,
    /// Under way.
    InProgress,
    /// Done.
    Completed,
}

/// One item of a plan or todo list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanEntry {
    /// What is to be done.
    pub content: String,
    /// How far along it is.
    pub status: PlanStatus,
}

/// What choosing a permission option means.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum PermissionOptionKind {
    /// Allow this once.
    AllowOnce,
    /// Allow this and later requests of the same kind.
    AllowAlways,
    /// Refuse this once.
    RejectOnce,
    /// Refuse this and later requests of the same kind.
    RejectAlways,
}

/// One choice a permission request offers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionOption {
    /// Option id, sent back in `permission/respond`.
    pub id: String,
    /// Label shown to the user.
    pub label: String,
    /// What choosing it means, when the agent says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<PermissionOptionKind>,
}

/// One ordered piece of a response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ResponsePart {
    /// Answer text (Markdown).
    Text {
        /// The text.
        text: String,
    },
    /// Visible reasoning.
    Reasoning {
        /// The text.
        text: String,
    },
    /// A tool call with its status and result.
    ToolCall(ToolCallPart),
    /// A plan or todo list (replaced as a whole on update).
    Plan {
        /// The entries.
        entries: Vec<PlanEntry>,
    },
    /// A staged change awaiting the user's approval (`proposal/approve`).
    Proposal {
        /// The proposal.
        proposal_id: String,
        /// What it would do.
        summary: String,
    },
    /// A question to the user from an external agent (`permission/respond`).
    PermissionRequest {
        /// Request id.
        request_id: String,
        /// What is asked.
        title: String,
        /// The choices.
        options: Vec<PermissionOption>,
        /// The chosen option once answered (`cancelled` when its turn was aborted,
        /// `expired` when the agent went away unanswered).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outcome: Option<String>,
        /// The tool call it is about.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_call_id: Option<String>,
    },
    /// An error shown inside the response.
    Error {
        /// What failed and what to do.
        message: String,
    },
    /// A note from Hearth about the chat, not part of the agent's answer (its agent
    /// session could not be reopened and a new one took over, say).
    Notice {
        /// What happened.
        message: String,
    },
    /// Earlier turns of the chat were summarised so the conversation fits the model's
    /// context window: from here on the agent reads the summary instead of them. The
    /// turns themselves are kept, shown and searchable.
    Compaction {
        /// How many turns the summary stands for, when the agent says.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        turns: Option<u32>,
        /// The summary (empty while an agent is still writing it or keeps it to itself).
        #[serde(default)]
        summary: String,
    },
}

/// One exchange: a user message and the response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Turn {
    /// The turn's id.
    pub id: String,
    /// What the user sent.
    pub user: UserMessage,
    /// The response, in order.
    #[serde(default)]
    pub parts: Vec<ResponsePart>,
    /// Token usage, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Why the turn ended; absent while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<StopReason>,
    /// When the user sent it.
    pub started_at: Timestamp,
    /// When it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<Timestamp>,
}
