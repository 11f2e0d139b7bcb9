//! The trash: sessions and projects the user deleted, kept restorable until the trash is
//! emptied. A trashed row has `deleted_at` set, as a tombstone has, so every other query
//! already treats it as deleted (lists, lookups, search, discovery); `trashed` = 1 says
//! its content is still there (the statements are `trash_statements`). Emptying erases a session as deleting used to (see
//! `erase`), and leaves a project a tombstone without folder or name.

use hearth_core::Timestamp;

/// What deleting a session did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Removal {
    /// It went to the trash, restorable until the trash is emptied.
    Trashed,
    /// It was never used (no turn, no draft, no queued message) and was erased at once.
    Erased,
    /// No live session has this URI.
    Missing,
}

/// What a trash item is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TrashKind {
    /// A session with its chats and turns.
    Session,
    /// A project's registry entry (its folder and sessions are not part of it).
    Project,
}

impl TrashKind {
    /// The kind as the protocol and the command line name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Session => "session",
            Self::Project => "project",
        }
    }

    /// The kind named `text` (`session` or `project`).
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "session" => Some(Self::Session),
            "project" => Some(Self::Project),
            _ => None,
        }
    }
}

/// A session or project in the trash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrashItem {
    /// Session or project.
    pub kind: TrashKind,
    /// The session's URI or the project's id.
    pub id: String,
    /// The session's title or the project's name.
    pub title: Option<String>,
    /// When it was deleted.
    pub deleted_at: Timestamp,
    /// On a team server, the user it belongs to (and the team it is shared with).
    pub owner: Option<hearth_core::Owner>,
}
