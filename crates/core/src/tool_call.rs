//! What a tool call shows besides its name and arguments: a title, a kind, the files it
//! touches and the content it produced (text, a diff, a terminal), as external agents
//! report them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::turn::ToolCallPart;

/// What kind of work a tool call does (it chooses an icon, and a permission policy can
/// allow a kind without asking).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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

impl ToolKind {
    /// Every kind, in a stable order.
    pub const ALL: [ToolKind; 10] = [
        Self::Read,
        Self::Edit,
        Self::Delete,
        Self::Move,
        Self::Search,
        Self::Execute,
        Self::Think,
        Self::Fetch,
        Self::SwitchMode,
        Self::Other,
    ];

    /// The kind as written in configuration and on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Edit => "edit",
            Self::Delete => "delete",
            Self::Move => "move",
            Self::Search => "search",
            Self::Execute => "execute",
            Self::Think => "think",
            Self::Fetch => "fetch",
            Self::SwitchMode => "switch_mode",
            Self::Other => "other",
        }
    }

    /// Parses a kind as written in configuration.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == text)
    }
}

/// A file a tool call touches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolLocation {
    /// The file's path.
    pub path: String,
    /// A line in it (1-based), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// Content a tool call produced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
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
        /// Its content before (`None` for a new file).
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

/// Changes to a tool call's details; `None` leaves a field as it is, `Some` replaces it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCallPatch {
    /// A new title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A new kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<ToolKind>,
    /// New locations (replacing the old ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locations: Option<Vec<ToolLocation>>,
    /// New content (replacing the old).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<ToolCallContent>>,
    /// New arguments (agents stream them).
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

    /// Applies the patch to a call.
    pub fn apply(&self, call: &mut ToolCallPart) {
        if let Some(title) = &self.title {
            call.title = Some(title.clone());
        }
        if let Some(kind) = self.kind {
            call.kind = Some(kind);
        }
        if let Some(locations) = &self.locations {
            call.locations.clone_from(locations);
        }
        if let Some(content) = &self.content {
            call.content.clone_from(content);
        }
        if let Some(arguments) = &self.arguments {
            call.arguments = arguments.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::turn::ToolCallStatus;
    use pretty_assertions::assert_eq;

    #[test]
    fn kinds_round_trip_through_their_names() {
        for kind in ToolKind::ALL {
            assert_eq!(ToolKind::parse(kind.as_str()), Some(kind));
            assert_eq!(
                serde_json::to_value(kind).unwrap(),
                serde_json::json!(kind.as_str())
            );
        }
        assert_eq!(ToolKind::parse("write"), None);
    }

    #[test]
    fn a_patch_replaces_only_what_it_names() {
        let mut call = ToolCallPart::new("c1", "Write", Value::Null, ToolCallStatus::Pending);
        call.title = Some("old".into());
        call.locations = vec![ToolLocation {
            path: "/a".into(),
            line: None,
        }];
        let patch = ToolCallPatch {
            kind: Some(ToolKind::Edit),
            content: Some(vec![ToolCallContent::Text { text: "x".into() }]),
            ..ToolCallPatch::default()
        };
        assert!(!patch.is_empty());
        patch.apply(&mut call);
        assert_eq!(call.title.as_deref(), Some("old"));
        assert_eq!(call.kind, Some(ToolKind::Edit));
        assert_eq!(call.locations.len(), 1);
        assert_eq!(
            call.content,
            vec![ToolCallContent::Text { text: "x".into() }]
        );
        assert!(ToolCallPatch::default().is_empty());
    }
}
