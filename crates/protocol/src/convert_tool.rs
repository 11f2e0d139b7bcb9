//! Conversions of tool-call details, permission option kinds and an agent's chat state
//! between the domain and the wire.

use hearth_core as core;

use crate::model::{AgentChatState, AvailableCommand, Choice, ChoiceState};
use crate::turn::{PermissionOptionKind, ToolCallContent, ToolCallPatch, ToolKind, ToolLocation};

impl From<core::ToolKind> for ToolKind {
    fn from(kind: core::ToolKind) -> Self {
        match kind {
            core::ToolKind::Read => Self::Read,
            core::ToolKind::Edit => Self::Edit,
            core::ToolKind::Delete => Self::Delete,
            core::ToolKind::Move => Self::Move,
            core::ToolKind::Search => Self::Search,
            core::ToolKind::Execute => Self::Execute,
            core::ToolKind::Think => Self::Think,
            core::ToolKind::Fetch => Self::Fetch,
            core::ToolKind::SwitchMode => Self::SwitchMode,
            core::ToolKind::Other => Self::Other,
        }
    }
}

impl From<ToolKind> for core::ToolKind {
    fn from(kind: ToolKind) -> Self {
        match kind {
            ToolKind::Read => Self::Read,
            ToolKind::Edit => Self::Edit,
            ToolKind::Delete => Self::Delete,
            ToolKind::Move => Self::Move,
            ToolKind::Search => Self::Search,
            ToolKind::Execute => Self::Execute,
            ToolKind::Think => Self::Think,
            ToolKind::Fetch => Self::Fetch,
            ToolKind::SwitchMode => Self::SwitchMode,
            ToolKind::Other => Self::Other,
        }
    }
}

impl From<core::ToolLocation> for ToolLocation {
    fn from(location: core::ToolLocation) -> Self {
        Self {
            path: location.path,
            line: location.line,
        }
    }
}

impl From<ToolLocation> for core::ToolLocation {
    fn from(location: ToolLocation) -> Self {
        Self {
            path: location.path,
            line: location.line,
        }
    }
}

impl From<core::ToolCallContent> for ToolCallContent {
    fn from(content: core::ToolCallContent) -> Self {
        match content {
            core::ToolCallContent::Text { text } => Self::Text { text },
            core::ToolCallContent::Diff {
                path,
                old_text,
                new_text,
            } => Self::Diff {
                path,
                old_text,
                new_text,
            },
            core::ToolCallContent::Terminal { terminal_id } => Self::Terminal { terminal_id },
        }
    }
}

impl From<ToolCallContent> for core::ToolCallContent {
    fn from(content: ToolCallContent) -> Self {
        match content {
            ToolCallContent::Text { text } => Self::Text { text },
            ToolCallContent::Diff {
                path,
                old_text,
                new_text,
            } => Self::Diff {
                path,
                old_text,
                new_text,
            },
            ToolCallContent::Terminal { terminal_id } => Self::Terminal { terminal_id },
        }
    }
}

fn map_all<A, B: From<A>>(items: Vec<A>) -> Vec<B> {
    items.into_iter().map(Into::into).collect()
}

impl From<core::ToolCallPatch> for ToolCallPatch {
    fn from(patch: core::ToolCallPatch) -> Self {
        Self {
            title: patch.title,
            kind: patch.kind.map(Into::into),
            locations: patch.locations.map(map_all),
            content: patch.content.map(map_all),
            arguments: patch.arguments,
        }
    }
}

impl From<ToolCallPatch> for core::ToolCallPatch {
    fn from(patch: ToolCallPatch) -> Self {
        Self {
            title: patch.title,
            kind: patch.kind.map(Into::into),
            locations: patch.locations.map(map_all),
            content: patch.content.map(map_all),
            arguments: patch.arguments,
        }
    }
}

/// Converts a call's details (title, kind, locations, content) to the wire.
pub(crate) fn details_to_wire(
    locations: Vec<core::ToolLocation>,
    content: Vec<core::ToolCallContent>,
) -> (Vec<ToolLocation>, Vec<ToolCallContent>) {
    (map_all(locations), map_all(content))
}

/// Converts a call's details (locations, content) from the wire.
pub(crate) fn details_from_wire(
    locations: Vec<ToolLocation>,
    content: Vec<ToolCallContent>,
) -> (Vec<core::ToolLocation>, Vec<core::ToolCallContent>) {
    (map_all(locations), map_all(content))
}

impl From<core::PermissionOptionKind> for PermissionOptionKind {
    fn from(kind: core::PermissionOptionKind) -> Self {
        match kind {
            core::PermissionOptionKind::AllowOnce => Self::AllowOnce,
            core::PermissionOptionKind::AllowAlways => Self::AllowAlways,
            core::PermissionOptionKind::RejectOnce => Self::RejectOnce,
            core::PermissionOptionKind::RejectAlways => Self::RejectAlways,
        }
    }
}

impl From<PermissionOptionKind> for core::PermissionOptionKind {
    fn from(kind: PermissionOptionKind) -> Self {
        match kind {
            PermissionOptionKind::AllowOnce => Self::AllowOnce,
            PermissionOptionKind::AllowAlways => Self::AllowAlways,
            PermissionOptionKind::RejectOnce => Self::RejectOnce,
            PermissionOptionKind::RejectAlways => Self::RejectAlways,
        }
    }
}

impl From<core::AvailableCommand> for AvailableCommand {
    fn from(command: core::AvailableCommand) -> Self {
        Self {
            name: command.name,
            description: command.description,
            input_hint: command.input_hint,
        }
    }
}

impl From<AvailableCommand> for core::AvailableCommand {
    fn from(command: AvailableCommand) -> Self {
        Self {
            name: command.name,
            description: command.description,
            input_hint: command.input_hint,
        }
    }
}

impl From<core::Choice> for Choice {
    fn from(choice: core::Choice) -> Self {
        Self {
            id: choice.id,
            name: choice.name,
            description: choice.description,
        }
    }
}

impl From<Choice> for core::Choice {
    fn from(choice: Choice) -> Self {
        Self {
            id: choice.id,
            name: choice.name,
            description: choice.description,
        }
    }
}

impl From<core::ChoiceState> for ChoiceState {
    fn from(state: core::ChoiceState) -> Self {
        Self {
            current: state.current,
            choices: map_all(state.choices),
        }
    }
}

impl From<ChoiceState> for core::ChoiceState {
    fn from(state: ChoiceState) -> Self {
        Self {
            current: state.current,
            choices: map_all(state.choices),
        }
    }
}

impl From<core::AgentChatState> for AgentChatState {
    fn from(state: core::AgentChatState) -> Self {
        Self {
            commands: map_all(state.commands),
            modes: state.modes.map(Into::into),
            models: state.models.map(Into::into),
        }
    }
}

impl From<AgentChatState> for core::AgentChatState {
    fn from(state: AgentChatState) -> Self {
        Self {
            commands: map_all(state.commands),
            modes: state.modes.map(Into::into),
            models: state.models.map(Into::into),
        }
    }
}
