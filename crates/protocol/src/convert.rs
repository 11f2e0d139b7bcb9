//! Explicit conversions between domain values (`hearth-core`) and wire values: `From`
//! from domain to wire (always works), `TryFrom` from wire to domain (URIs and ids are
//! parsed, so a malformed one names its field).

use hearth_core as core;
use hearth_core::UriError;

use crate::error::{ProtocolError, Result};
use crate::model::{
    Capabilities, ChatListing, ChatOrigin, ChatState, ChatSummary, HarnessInfo, MultipleChats,
    MultipleWorkingDirectories, Provenance, Scope, SessionState, SessionSummary,
};

/// Parses a URI or id field, naming the field when it does not parse.
pub(crate) fn parse<T>(
    field: &'static str,
    text: &str,
    parse: impl FnOnce(&str) -> std::result::Result<T, UriError>,
) -> Result<T> {
    parse(text).map_err(|source| ProtocolError::Uri { field, source })
}

/// Converts every item of a list.
pub(crate) fn try_all<W, D>(items: Vec<W>) -> Result<Vec<D>>
where
    D: TryFrom<W, Error = ProtocolError>,
{
    items.into_iter().map(D::try_from).collect()
}

impl From<core::ChatOrigin> for ChatOrigin {
    fn from(origin: core::ChatOrigin) -> Self {
        match origin {
            core::ChatOrigin::User => Self::User,
            core::ChatOrigin::Fork {
                source_chat,
                turn_id,
            } => Self::Fork {
                source_chat: source_chat.to_string(),
                turn_id: turn_id.to_string(),
            },
            core::ChatOrigin::SideChat {
                source_chat,
                turn_id,
            } => Self::SideChat {
                source_chat: source_chat.to_string(),
                turn_id: turn_id.to_string(),
            },
            core::ChatOrigin::Tool {
                parent_chat,
                tool_call_id,
            } => Self::Tool {
                parent_chat: parent_chat.to_string(),
                tool_call_id,
            },
        }
    }
}

impl TryFrom<ChatOrigin> for core::ChatOrigin {
    type Error = ProtocolError;
    fn try_from(origin: ChatOrigin) -> Result<Self> {
        Ok(match origin {
            ChatOrigin::User => Self::User,
            ChatOrigin::Fork {
                source_chat,
                turn_id,
            } => Self::Fork {
                source_chat: parse("sourceChat", &source_chat, core::ChatUri::parse)?,
                turn_id: parse("turnId", &turn_id, core::TurnId::parse)?,
            },
            ChatOrigin::SideChat {
                source_chat,
                turn_id,
            } => Self::SideChat {
                source_chat: parse("sourceChat", &source_chat, core::ChatUri::parse)?,
                turn_id: parse("turnId", &turn_id, core::TurnId::parse)?,
            },
            ChatOrigin::Tool {
                parent_chat,
                tool_call_id,
            } => Self::Tool {
                parent_chat: parse("parentChat", &parent_chat, core::ChatUri::parse)?,
                tool_call_id,
            },
        })
    }
}

impl From<core::Scope> for Scope {
    fn from(scope: core::Scope) -> Self {
        match scope {
            core::Scope::Global => Self::Global,
            core::Scope::Project { project_id } => Self::Project {
                project_id: project_id.to_string(),
            },
        }
    }
}

impl TryFrom<Scope> for core::Scope {
    type Error = ProtocolError;
    fn try_from(scope: Scope) -> Result<Self> {
        Ok(match scope {
            Scope::Global => Self::Global,
            Scope::Project { project_id } => Self::Project {
                project_id: parse("projectId", &project_id, core::ProjectId::parse)?,
            },
        })
    }
}

impl From<core::Provenance> for Provenance {
    fn from(provenance: core::Provenance) -> Self {
        match provenance {
            core::Provenance::Hearth => Self::Hearth,
            core::Provenance::External => Self::External,
        }
    }
}

impl From<Provenance> for core::Provenance {
    fn from(provenance: Provenance) -> Self {
        match provenance {
            Provenance::Hearth => Self::Hearth,
            Provenance::External => Self::External,
        }
    }
}

impl From<core::SessionSummary> for SessionSummary {
    fn from(summary: core::SessionSummary) -> Self {
        Self {
            uri: summary.uri.to_string(),
            harness: summary.harness.to_string(),
            provider: summary.harness.to_string(),
            title: summary.title,
            provenance: summary.provenance.into(),
            source: summary.source,
            scope: summary.scope.into(),
            model: summary.model,
            working_directories: summary
                .working_directories
                .iter()
                .map(|directory| directory.display().to_string())
                .collect(),
            started_at: summary.started_at,
            updated_at: summary.updated_at,
            pinned: summary.pinned,
            archived: summary.archived,
            team: summary.owner.as_ref().and_then(|owner| owner.team.clone()),
            owner: summary.owner.map(|owner| owner.user),
        }
    }
}

impl TryFrom<SessionSummary> for core::SessionSummary {
    type Error = ProtocolError;
    fn try_from(summary: SessionSummary) -> Result<Self> {
        Ok(Self {
            uri: parse("uri", &summary.uri, core::SessionUri::parse)?,
            harness: parse("harness", summary.harness_id(), core::HarnessId::parse)?,
            title: summary.title,
            provenance: summary.provenance.into(),
            source: summary.source,
            scope: summary.scope.try_into()?,
            model: summary.model,
            working_directories: summary
                .working_directories
                .into_iter()
                .map(std::path::PathBuf::from)
                .collect(),
            started_at: summary.started_at,
            updated_at: summary.updated_at,
            pinned: summary.pinned,
            archived: summary.archived,
            owner: summary.owner.map(|user| core::Owner {
                user,
                team: summary.team,
            }),
        })
    }
}

impl From<core::ChatSummary> for ChatSummary {
    fn from(summary: core::ChatSummary) -> Self {
        Self {
            uri: summary.uri.to_string(),
            origin: summary.origin.into(),
            title: summary.title,
            model: summary.model,
            created_at: summary.created_at,
            updated_at: summary.updated_at,
        }
    }
}

impl TryFrom<ChatSummary> for core::ChatSummary {
    type Error = ProtocolError;
    fn try_from(summary: ChatSummary) -> Result<Self> {
        Ok(Self {
            uri: parse("uri", &summary.uri, core::ChatUri::parse)?,
            origin: summary.origin.try_into()?,
            title: summary.title,
            model: summary.model,
            created_at: summary.created_at,
            updated_at: summary.updated_at,
        })
    }
}

impl From<core::ChatListing> for ChatListing {
    fn from(listing: core::ChatListing) -> Self {
        Self {
            summary: listing.summary.into(),
            running: listing.running,
        }
    }
}

impl TryFrom<ChatListing> for core::ChatListing {
    type Error = ProtocolError;
    fn try_from(listing: ChatListing) -> Result<Self> {
        Ok(Self {
            summary: listing.summary.try_into()?,
            running: listing.running,
        })
    }
}

impl From<core::SessionState> for SessionState {
    fn from(state: core::SessionState) -> Self {
        Self {
            summary: state.summary.into(),
            chats: state.chats.into_iter().map(Into::into).collect(),
        }
    }
}

impl TryFrom<SessionState> for core::SessionState {
    type Error = ProtocolError;
    fn try_from(state: SessionState) -> Result<Self> {
        Ok(Self {
            summary: state.summary.try_into()?,
            chats: try_all(state.chats)?,
        })
    }
}

impl From<core::ChatState> for ChatState {
    fn from(state: core::ChatState) -> Self {
        Self {
            summary: state.summary.into(),
            turns: state.turns.into_iter().map(Into::into).collect(),
            draft: state.draft,
            queued: state.queued.into_iter().map(Into::into).collect(),
            agent: state.agent.map(Into::into),
            older_turns: false,
        }
    }
}

impl TryFrom<ChatState> for core::ChatState {
    type Error = ProtocolError;
    fn try_from(state: ChatState) -> Result<Self> {
        Ok(Self {
            summary: state.summary.try_into()?,
            turns: try_all(state.turns)?,
            draft: state.draft,
            queued: state.queued.into_iter().map(Into::into).collect(),
            agent: state.agent.map(Into::into),
        })
    }
}

impl From<core::Capabilities> for Capabilities {
    fn from(capabilities: core::Capabilities) -> Self {
        Self {
            multiple_chats: capabilities.multiple_chats.map(|chats| MultipleChats {
                fork: chats.fork,
                side_chat: chats.side_chat,
            }),
            multiple_working_directories: capabilities.multiple_working_directories.map(
                |directories| MultipleWorkingDirectories {
                    immutable_primary: directories.immutable_primary,
                },
            ),
        }
    }
}

impl From<core::HarnessDescriptor> for HarnessInfo {
    fn from(descriptor: core::HarnessDescriptor) -> Self {
        Self {
            id: descriptor.id.to_string(),
            name: descriptor.name,
            description: descriptor.description,
            capabilities: descriptor.capabilities.into(),
            demo: descriptor.demo,
        }
    }
}

impl From<Capabilities> for core::Capabilities {
    fn from(capabilities: Capabilities) -> Self {
        Self {
            multiple_chats: capabilities
                .multiple_chats
                .map(|chats| core::MultipleChats {
                    fork: chats.fork,
                    side_chat: chats.side_chat,
                }),
            multiple_working_directories: capabilities.multiple_working_directories.map(
                |directories| core::MultipleWorkingDirectories {
                    immutable_primary: directories.immutable_primary,
                },
            ),
        }
    }
}

impl TryFrom<HarnessInfo> for core::HarnessDescriptor {
    type Error = ProtocolError;
    fn try_from(info: HarnessInfo) -> Result<Self> {
        Ok(Self {
            id: parse("id", &info.id, core::HarnessId::parse)?,
            name: info.name,
            description: info.description,
            capabilities: info.capabilities.into(),
            demo: info.demo,
        })
    }
}

impl TryFrom<crate::chat_methods::ChatSeed> for core::ChatSeed {
    type Error = ProtocolError;
    fn try_from(seed: crate::chat_methods::ChatSeed) -> Result<Self> {
        use crate::chat_methods::ChatSeed;
        Ok(match seed {
            ChatSeed::Fresh => Self::Fresh,
            ChatSeed::Fork {
                source_chat,
                turn_id,
            } => Self::Fork {
                source_chat: parse("sourceChat", &source_chat, core::ChatUri::parse)?,
                turn_id: parse("turnId", &turn_id, core::TurnId::parse)?,
            },
            ChatSeed::SideChat {
                source_chat,
                turn_id,
            } => Self::SideChat {
                source_chat: parse("sourceChat", &source_chat, core::ChatUri::parse)?,
                turn_id: parse("turnId", &turn_id, core::TurnId::parse)?,
            },
        })
    }
}
