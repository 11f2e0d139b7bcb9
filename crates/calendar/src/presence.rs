//! Whether a calendar's file or folder is where its configuration says, and the one
//! folder Hearth may create: its own default calendar's, inside its data directory. A
//! configured calendar whose folder is missing (an unmounted drive, a renamed vault, a
//! typo in `path`) is reported and refused, never created: only an iCalendar file may
//! be created, inside its existing folder.

use std::path::Path;

use serde::Serialize;

use crate::error::{CalendarError, Result};
use crate::store::{CalendarInfo, Storage};

/// Whether a calendar's storage is there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StorageState {
    /// Its file or folder exists (a subscription has nothing local and is always here).
    Present,
    /// An iCalendar file that does not exist yet: the first write creates it.
    NotCreated,
    /// Its folder — the note folder, or the folder of its iCalendar file — does not
    /// exist: nothing is read from it or written to it until it does.
    Missing,
}

/// Who placed a calendar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The user's configuration.
    Configured,
    /// Hearth's default calendar, in its data directory.
    HearthDefault,
}

impl CalendarInfo {
    /// The folder the calendar lives in: its note folder, or the folder of its iCalendar
    /// file; `None` for a subscription or a CalDAV calendar.
    pub fn folder(&self) -> Option<&Path> {
        match &self.storage {
            Storage::File(path) => Some(match path.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => parent,
                _ => Path::new("."),
            }),
            Storage::Folder(folder) => Some(folder),
            Storage::Subscription(_) | Storage::CalDav(_) => None,
        }
    }

    /// Whether this is the default calendar Hearth placed in its data directory (rather
    /// than one the user configured).
    pub fn is_hearth_default(&self) -> bool {
        self.origin == Origin::HearthDefault
    }

    /// Whether the calendar's storage is there now.
    pub fn storage_state(&self) -> StorageState {
        match (&self.storage, self.folder()) {
            (Storage::File(path), _) if path.exists() => StorageState::Present,
            (Storage::File(_), Some(folder))
                if folder.is_dir() || self.origin == Origin::HearthDefault =>
            {
                StorageState::NotCreated
            }
            (Storage::Folder(folder), _) if folder.is_dir() => StorageState::Present,
            (Storage::Subscription(_) | Storage::CalDav(_), _) => StorageState::Present,
            _ => StorageState::Missing,
        }
    }

    /// The error for a calendar whose folder is missing.
    pub(crate) fn missing(&self) -> CalendarError {
        CalendarError::Missing {
            id: self.id.clone(),
            path: self.folder().unwrap_or(Path::new(".")).to_path_buf(),
        }
    }

    /// Refuses to write to a calendar whose folder is missing; creates Hearth's own
    /// default calendar's folder (inside its data directory) when it is not there yet.
    pub(crate) fn ensure_folder(&self) -> Result<()> {
        match self.storage_state() {
            StorageState::Missing => Err(self.missing()),
            StorageState::Present => Ok(()),
            StorageState::NotCreated => match (self.origin, self.folder()) {
                // Inside Hearth's data directory: private, like everything there.
                (Origin::HearthDefault, Some(folder)) if !folder.is_dir() => {
                    hearth_config::create_private_dir(folder).map_err(|source| {
                        CalendarError::Write {
                            path: folder.to_path_buf(),
                            source,
                        }
                    })
                }
                _ => Ok(()),
            },
        }
    }
}
