//! The record of what was imported: per source file, its size and modification time
//! when it was last read, so that an unchanged file is not read again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{HistoryError, HistoryResult};

/// A source file as it was when it was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Seen {
    size: u64,
    modified_ns: u128,
    /// How many sessions it held.
    pub sessions: u64,
}

/// The record, kept as JSON in Hearth's data directory.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Record {
    files: BTreeMap<PathBuf, Seen>,
}

/// A file's size and modification time now, if it can be read.
fn stat(file: &Path) -> Option<(u64, u128)> {
    let metadata = std::fs::metadata(file).ok()?;
    let modified = metadata.modified().ok()?;
    let since = modified.duration_since(std::time::UNIX_EPOCH).ok()?;
    Some((metadata.len(), since.as_nanos()))
}

impl Record {
    /// The record at `path`; an absent or unreadable one is empty (every store is then
    /// read again, which imports nothing twice).
    pub fn load(path: &Path) -> Self {
        match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|error| {
                tracing::warn!(file = %path.display(), %error, "ignoring an unreadable record of imported history");
                Self::default()
            }),
            Err(_) => Self::default(),
        }
    }

    /// Whether `file` changed since it was last read (or was never read).
    pub fn changed(&self, file: &Path) -> bool {
        match (self.files.get(file), stat(file)) {
            (Some(seen), Some((size, modified_ns))) => {
                seen.size != size || seen.modified_ns != modified_ns
            }
            _ => true,
        }
    }

    /// How many sessions `file` held when it was last read.
    pub fn sessions(&self, file: &Path) -> u64 {
        self.files.get(file).map_or(0, |seen| seen.sessions)
    }

    /// Notes that `file`, as it is now, was read and held `sessions`.
    pub fn read(&mut self, file: &Path, sessions: u64) {
        if let Some((size, modified_ns)) = stat(file) {
            self.files.insert(
                file.to_path_buf(),
                Seen {
                    size,
                    modified_ns,
                    sessions,
                },
            );
        }
    }

    /// Writes the record to `path` (private, replaced whole).
    pub fn save(&self, path: &Path) -> HistoryResult<()> {
        let failed = |reason: String| HistoryError::Record {
            path: path.display().to_string(),
            reason,
        };
        let bytes = serde_json::to_vec_pretty(self).map_err(|error| failed(error.to_string()))?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|error| failed(error.to_string()))?;
        }
        hearth_fs::write_atomic(
            path,
            &bytes,
            hearth_fs::WriteMode::Replace,
            hearth_fs::FilePermissions::Private,
        )
        .map_err(|error| failed(error.to_string()))
    }
}
