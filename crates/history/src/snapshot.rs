//! A private copy of an agent's SQLite database to read from. Even a read-only
//! connection writes the WAL index (`-shm`) of a database in WAL mode; reading a copy
//! leaves every file of the agent's store as it was.

use std::path::{Path, PathBuf};

use sqlx::ConnectOptions as _;

/// How often the copy is taken again when the database changed while it was copied.
const ATTEMPTS: usize = 3;

/// A copy of a database and its log, deleted when dropped.
pub(crate) struct Snapshot {
    _folder: tempfile::TempDir,
    database: PathBuf,
}

fn stat(file: &Path) -> Option<(u64, std::time::SystemTime)> {
    let metadata = std::fs::metadata(file).ok()?;
    Some((metadata.len(), metadata.modified().ok()?))
}

fn suffixed(file: &Path, suffix: &str) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

impl Snapshot {
    /// Copies `database` and its `-wal` (the database first: its log is newer). When
    /// either changed during the copy, it copies again.
    pub fn take(database: &Path) -> Result<Self, String> {
        let wal = suffixed(database, "-wal");
        for _ in 0..ATTEMPTS {
            let before = (stat(database), stat(&wal));
            let folder = tempfile::tempdir()
                .map_err(|error| format!("cannot make a folder to copy it into: {error}"))?;
            let copy = folder.path().join("copy.sqlite");
            std::fs::copy(database, &copy).map_err(|error| format!("cannot copy it: {error}"))?;
            if wal.is_file() {
                std::fs::copy(&wal, suffixed(&copy, "-wal"))
                    .map_err(|error| format!("cannot copy its log: {error}"))?;
            }
            if (stat(database), stat(&wal)) == before {
                return Ok(Self {
                    _folder: folder,
                    database: copy,
                });
            }
        }
        Err(format!(
            "it kept changing while it was copied ({ATTEMPTS} times); the next import tries again"
        ))
    }

    /// A connection to the copy.
    pub async fn connect(&self) -> Result<sqlx::SqliteConnection, String> {
        sqlx::sqlite::SqliteConnectOptions::new()
            .filename(&self.database)
            .create_if_missing(false)
            .connect()
            .await
            .map_err(|error| format!("cannot open a copy of it: {error}"))
    }
}
