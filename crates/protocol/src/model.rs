//! Wire shapes of sessions, chats and harnesses.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::turn::Turn;

/// A point in time: RFC 3339, UTC.
pub type Timestamp = DateTime<Utc>;

/// How a chat came into existence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ChatOrigin {
    /// Created by the user (including every session's default chat).
    User,
    /// A copy of another chat's history up to and including a turn.
    Fork {
        /// The chat forked from (`hearth-chat:…`).
        source_chat: String,
        /// The last turn copied.
        turn_id: String,
    },
    /// A side conversation that sees another chat's context up to a turn.
    SideChat {
        /// The chat it hangs off (`hearth-chat:…`).
        source_chat: String,
        /// The turn whose context it sees.
        turn_id: String,
    },
    /// Spawned by a tool call of another chat (a subagent).
    Tool {
        /// The chat whose tool call spawned it (`hearth-chat:…`).
        parent_chat: String,
        /// The spawning tool call.
        tool_call_id: String,
    },
}

/// Whether a session belongs to a project or to the global scope.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Scope {
    /// No project.
    #[default]
    Global,
    /// Inside a project.
    Project {
        /// The project.
        project_id: String,
    },
}

/// Where a session was first registered from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Provenance {
    /// Created through Hearth.
    Hearth,
    /// Found in a provider's own catalog.
    External,
}

/// A session as listed.
///
/// Read the harness with [`SessionSummary::harness_id`]: a server older than the name
/// `harness` sends only `provider`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    /// The session (`hearth-session:<harness>/<id>`).
    pub uri: String,
    /// Its harness (empty from a server that predates the name: see `provider`).
    #[serde(default)]
    pub harness: String,
    /// Deprecated: the same as `harness`, still sent for clients written before the
    /// rename; [`SessionSummary::harness_id`] reads whichever is there.
    #[serde(default)]
    pub provider: String,
    /// Display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Created through Hearth or discovered.
    pub provenance: Provenance,
    /// Free-form source label (`cli`, `server`, `discovery`).
    pub source: String,
    /// The project scope, fixed for the session's life.
    pub scope: Scope,
    /// The model, when chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Where its agent works: the first is the working directory, the rest additional
    /// directories. Fixed when the session is created.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub working_directories: Vec<String>,
    /// When it was created.
    pub started_at: Timestamp,
    /// When anything in it last changed.
    pub updated_at: Timestamp,
    /// The user pinned it (`session/mark`): lists show it first.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pinned: bool,
    /// The user archived it (`session/mark`): kept and searchable, out of recent lists.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub archived: bool,
    /// On a team server: the id of the user it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// On a team server: the team it is shared with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<String>,
}

impl SessionSummary {
    /// The session's harness: `harness`, or `provider` from a server that predates it.
    pub fn harness_id(&self) -> &str {
        if self.harness.is_empty() {
            &self.provider
        } else {
            &self.harness
        }
    }
}

/// A chat as its session's catalog lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatSummary {
    /// The chat (`hearth-chat:<provider>/<session-id>/<chat-id>`).
    pub uri: String,
    /// How it came to exist.
    pub origin: ChatOrigin,
    /// Display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The model, when chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
}

/// A chat in its session's catalog, with whether it runs a turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatListing {
    /// The chat.
    pub summary: ChatSummary,
    /// Whether a turn runs in it.
    #[serde(default)]
    pub running: bool,
}

/// A session with its chat catalog (default chat first, then peers in creation order).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionState {
    /// The session.
    pub summary: SessionSummary,
    /// Its chats.
    pub chats: Vec<ChatListing>,
}

/// A chat with its turns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatState {
    /// The chat.
    pub summary: ChatSummary,
    /// Its turns, oldest first.
    pub turns: Vec<Turn>,
    /// The unsent draft.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft: Option<String>,
    /// Messages waiting for the running turn, with their attachments, sent one per turn
    /// in order (`chat/queue`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queued: Vec<crate::UserMessage>,
    /// What the agent offers in the chat (commands, modes, models), once it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentChatState>,
    /// The chat has turns before the first of `turns` (a snapshot asked for with
    /// `turnLimit`): read them with `chat/turns`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub older_turns: bool,
}

/// A command an agent offers in a chat (typed as `/name`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AvailableCommand {
    /// The command's name, without the slash.
    pub name: String,
    /// What it does.
    pub description: String,
    /// A hint for its input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_hint: Option<String>,
}

/// One value of a choice (a mode, a model).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Choice {
    /// The value's id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// One line about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A setting with its current value and the values it can take.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChoiceState {
    /// The current value's id.
    pub current: String,
    /// The values.
    pub choices: Vec<Choice>,
}

/// What an agent reports about a chat besides its turns.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentChatState {
    /// Commands the agent offers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<AvailableCommand>,
    /// The agent's modes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modes: Option<ChoiceState>,
    /// The models the chat can use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models: Option<ChoiceState>,
}

/// Peer chats and what a harness can do with them. Present means peer chats work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MultipleChats {
    /// Chats can be forked at a turn.
    pub fork: bool,
    /// Side chats can be opened at a turn.
    pub side_chat: bool,
}

/// Several working directories per session.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MultipleWorkingDirectories {
    /// Index 0 stays the fixed process root.
    pub immutable_primary: bool,
}

/// Optional abilities of a harness. UIs gate actions on these, never on a provider id.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    /// Peer chats, fork, side chats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiple_chats: Option<MultipleChats>,
    /// Several working directories.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiple_working_directories: Option<MultipleWorkingDirectories>,
}

/// A harness the server offers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HarnessInfo {
    /// Provider id: the first segment of every session URI it owns.
    pub id: String,
    /// Display name.
    pub name: String,
    /// One line about it.
    pub description: String,
    /// Optional abilities.
    pub capabilities: Capabilities,
    /// Whether it is a demo that produces scripted answers.
    #[serde(default)]
    pub demo: bool,
}
