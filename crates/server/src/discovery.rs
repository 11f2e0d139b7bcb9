//! The discovery file: a running `hearth serve` writes `server.json` (its URL, port and
//! process id) into the data directory, so the CLI finds it without being told, and
//! removes it on the way out. No secret is in it; the token stays in its own file.
//!
//! One server owns a data directory at a time: it holds an exclusive lock on
//! `serve.lock` for its whole life (the kernel releases it however the process ends), and
//! a second server refuses to start, naming the first.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Result, ServerError};

/// The discovery file's name in the data directory.
pub const SERVER_FILE: &str = "server.json";
/// The lock file a running server holds in the data directory.
pub const LOCK_FILE: &str = "serve.lock";

/// The data directory's lock, held while the server runs (released when dropped or when
/// the process ends in any way).
#[derive(Debug)]
pub struct ServeLock {
    _file: fs::File,
}

/// Takes the data directory's lock, or says which server holds it.
pub fn lock_data_directory(home: &Path) -> Result<ServeLock> {
    let path = home.join(LOCK_FILE);
    let error = |source| ServerError::Discovery {
        path: path.clone(),
        source,
    };
    let file = {
        use std::os::unix::fs::OpenOptionsExt;
        fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .mode(0o600)
            .open(&path)
            .map_err(error)?
    };
    match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(ServeLock { _file: file }),
        Err(errno) if errno == rustix::io::Errno::WOULDBLOCK => {
            let holder = read_record(&server_file(home))
                .map(|record| format!(" (pid {}, at {})", record.pid, record.url))
                .unwrap_or_default();
            Err(ServerError::AlreadyServed {
                home: home.to_path_buf(),
                holder,
            })
        }
        Err(errno) => Err(error(io::Error::from(errno))),
    }
}

/// Where a running server can be reached.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerRecord {
    /// Base URL (`http://127.0.0.1:8421`).
    pub url: String,
    /// The port.
    pub port: u16,
    /// The server's process id.
    pub pid: u32,
    /// Hearth's version.
    pub version: String,
}

/// The discovery file of a data directory.
pub fn server_file(home: &Path) -> PathBuf {
    home.join(SERVER_FILE)
}

/// Writes the record atomically (a temporary file renamed over the old one).
pub fn write_record(path: &Path, record: &ServerRecord) -> Result<()> {
    let error = |source| ServerError::Discovery {
        path: path.to_path_buf(),
        source,
    };
    let text = serde_json::to_vec_pretty(record).map_err(|e| error(io::Error::other(e)))?;
    hearth_fs::write_atomic(
        path,
        &text,
        hearth_fs::WriteMode::Replace,
        hearth_fs::FilePermissions::Private,
    )
    .map_err(error)
}

/// Reads the record, if there is one that parses.
pub fn read_record(path: &Path) -> Option<ServerRecord> {
    let text = fs::read(path).ok()?;
    serde_json::from_slice(&text).ok()
}

/// Removes the record if it is this process's (a newer server may have replaced it).
pub fn remove_record(path: &Path) {
    if read_record(path).is_some_and(|record| record.pid == std::process::id())
        && let Err(error) = fs::remove_file(path)
    {
        tracing::warn!(path = %path.display(), %error, "could not remove the discovery file");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_only_the_owner_removes_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = server_file(dir.path());
        let mine = ServerRecord {
            url: "http://127.0.0.1:8421".into(),
            port: 8421,
            pid: std::process::id(),
            version: "0".into(),
        };
        write_record(&path, &mine).unwrap();
        assert_eq!(read_record(&path), Some(mine.clone()));
        let theirs = ServerRecord {
            pid: mine.pid.wrapping_add(1),
            ..mine
        };
        write_record(&path, &theirs).unwrap();
        remove_record(&path);
        assert!(path.exists());
        write_record(
            &path,
            &ServerRecord {
                pid: std::process::id(),
                ..theirs
            },
        )
        .unwrap();
        remove_record(&path);
        assert!(!path.exists());
    }
}
