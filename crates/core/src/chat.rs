//! Chats and sessions as the host records them: origin, scope, summaries, provider data.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::ids::{ChatUri, ConversationId, HarnessId, ProjectId, SessionUri, TurnId};
use crate::turn::Timestamp;

/// How a chat came into existence. Recorded in the catalog; a restored chat's origin is
/// known before its turns are loaded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ChatOrigin {
    /// Created by the user (including every session's default chat).
    User,
    /// A copy of another chat's history up to and including a turn.
    Fork {
        /// The chat forked from.
        source_chat: ChatUri,
        /// The last turn copied.
        turn_id: TurnId,
    },
    /// A side conversation that sees another chat's context up to a turn without
    /// copying its visible history.
    SideChat {
        /// The chat the side chat hangs off.
        source_chat: ChatUri,
        /// The turn whose context it sees.
        turn_id: TurnId,
    },
    /// Spawned by a tool call of another chat (a subagent).
    Tool {
        /// The chat whose tool call spawned it.
        parent_chat: ChatUri,
        /// The spawning tool call.
        tool_call_id: String,
    },
}

/// Whether a session belongs to a project or to the global scope.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Scope {
    /// No project.
    #[default]
    Global,
    /// Inside a project.
    Project {
        /// The project.
        project_id: ProjectId,
    },
}

impl Scope {
    /// The project id, or `None` for the global scope.
    pub fn project_id(&self) -> Option<&ProjectId> {
        match self {
            Self::Global => None,
            Self::Project { project_id } => Some(project_id),
        }
    }

    /// The scope of an optional project id.
    pub fn from_project(project_id: Option<ProjectId>) -> Self {
        match project_id {
            None => Self::Global,
            Some(project_id) => Self::Project { project_id },
        }
    }
}

/// The harness's conversation blob for a chat. Opaque to the host: stored and handed back
/// byte for byte, never parsed, validated or rewritten.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct HarnessData(Vec<u8>);

impl HarnessData {
    /// Wraps raw bytes.
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        Self(bytes)
    }

    /// The raw bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Consumes into the raw bytes.
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }

    /// Serializes a harness's own record as JSON (a convenience for harnesses).
    pub fn encode<T: Serialize>(value: &T) -> Result<Self, serde_json::Error> {
        serde_json::to_vec(value).map(Self)
    }

    /// Deserializes a harness's own record from JSON (a convenience for harnesses).
    pub fn decode<T: for<'de> Deserialize<'de>>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_slice(&self.0)
    }
}

impl fmt::Debug for HarnessData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HarnessData({} bytes)", self.0.len())
    }
}

/// Where a session was first registered from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Provenance {
    /// Created through Hearth.
    Hearth,
    /// Found in a provider's own catalog by external discovery.
    External,
}

/// A session as listed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSummary {
    /// The session.
    pub uri: SessionUri,
    /// Its harness (`provider` in JSON, as scripts reading `--json` output know it).
    #[serde(rename = "provider")]
    pub harness: HarnessId,
    /// Display title (the default chat's, or one the user set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Created through Hearth or discovered.
    pub provenance: Provenance,
    /// Free-form source label (`cli`, `server`, `discovery`).
    pub source: String,
    /// The project scope.
    pub scope: Scope,
    /// The model, when chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Where its agent works: index 0 is the working directory, the rest are additional
    /// directories it may read and write. Fixed when the session is created.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub working_directories: Vec<PathBuf>,
    /// When it was created.
    pub started_at: Timestamp,
    /// When anything in it last changed.
    pub updated_at: Timestamp,
    /// The user pinned it: lists show it first.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pinned: bool,
    /// The user archived it: kept and searchable, out of the recent list.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub archived: bool,
    /// On a team server, the user it belongs to and the team it is shared with; `None`
    /// on a single user's Hearth (and for what the operator made or discovery found,
    /// which only the operator sees on a team server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
}

/// Who a session belongs to on a team server.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Owner {
    /// The user's id.
    pub user: String,
    /// The team it is shared with: its members see it and may use it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<String>,
}

impl Owner {
    /// A user's own, shared with nobody.
    pub fn user(user: impl Into<String>) -> Self {
        Self {
            user: user.into(),
            team: None,
        }
    }
}

/// A chat as listed in its session's catalog.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatSummary {
    /// The chat.
    pub uri: ChatUri,
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

impl ChatSummary {
    /// A chat made at `at`, with no title or model yet.
    pub fn new(uri: ChatUri, origin: ChatOrigin, at: Timestamp) -> Self {
        Self {
            uri,
            origin,
            title: None,
            model: None,
            created_at: at,
            updated_at: at,
        }
    }
}

/// A conversation found in a provider's own catalog, offered to the host's registry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiscoveredChat {
    /// The harness's own id of the conversation.
    pub conversation: ConversationId,
    /// Title, if the provider has one.
    pub title: Option<String>,
    /// When the conversation started.
    pub started_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
    /// What the harness needs to materialize it as a session's default chat.
    pub provider_data: HarnessData,
    /// The working directory it ran in, if known.
    pub working_directory: Option<PathBuf>,
}
