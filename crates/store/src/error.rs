//! Store errors, each saying what failed, on what, and what to do.

use std::io;
use std::path::{Path, PathBuf};

use thiserror::Error;

/// A store failure.
#[derive(Debug, Error)]
pub enum StoreError {
    /// The database file is not an SQLite database.
    #[error(
        "{} is not a Hearth database (it is not an SQLite file); Hearth left it untouched — move it away or choose another data directory with --home or HEARTH_HOME",
        path.display()
    )]
    NotADatabase {
        /// The file.
        path: PathBuf,
    },
    /// The file is an SQLite database, but another program's.
    #[error(
        "{} is an SQLite database of another program, not Hearth's; Hearth left it untouched — move it away or choose another data directory with --home or HEARTH_HOME",
        path.display()
    )]
    Foreign {
        /// The file.
        path: PathBuf,
    },
    /// The database is damaged.
    #[error(
        "the database {} is corrupt ({detail}); Hearth will not modify it — restore it from a backup, or move it away to start fresh",
        path.display()
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// SQLite's message.
        detail: String,
    },
    /// The database was written by a newer Hearth.
    #[error(
        "the database {} has schema version {found}, but this Hearth knows only up to {known}; it was written by a newer Hearth — upgrade Hearth (the database was not modified)",
        path.display()
    )]
    NewerSchema {
        /// The file.
        path: PathBuf,
        /// The database's version.
        found: i64,
        /// The newest version this binary knows.
        known: i64,
    },
    /// The data directory or database cannot be written.
    #[error(
        "cannot write to {}: {detail}; make the data directory writable or choose another with --home or HEARTH_HOME",
        path.display()
    )]
    ReadOnly {
        /// The file or directory.
        path: PathBuf,
        /// The underlying message.
        detail: String,
    },
    /// The disk is full.
    #[error(
        "the disk holding {} is full; the last change was rolled back and nothing stored was lost — free some space and retry",
        path.display()
    )]
    DiskFull {
        /// The file.
        path: PathBuf,
    },
    /// Another process held the database locked for too long.
    #[error(
        "the database {} stayed locked by another Hearth process; retry in a moment",
        path.display()
    )]
    Busy {
        /// The file.
        path: PathBuf,
    },
    /// The disk or file system failed a read or write (SQLite's I/O error); it may pass.
    #[error(
        "reading or writing {} failed ({detail}); check the disk holding it and retry",
        path.display()
    )]
    Io {
        /// The file.
        path: PathBuf,
        /// SQLite's message.
        detail: String,
    },
    /// The database server cannot be reached (PostgreSQL): nothing was written.
    #[error(
        "the database server {} cannot be reached ({detail}); nothing was written — check that it runs and that this machine can reach it, then retry",
        path.display()
    )]
    Unreachable {
        /// The server and database (without credentials).
        path: PathBuf,
        /// Why.
        detail: String,
    },
    /// Another process answers in the chat: it holds the chat's lease.
    #[error(
        "chat `{chat}` is answering in another Hearth process (pid {} on {}); wait for it or abort it there",
        holder.pid,
        holder.host
    )]
    Leased {
        /// The chat.
        chat: String,
        /// The lease's holder.
        holder: crate::leases::LeaseHolder,
        /// When the lease ends unless its holder renews it.
        expires_at: hearth_core::Timestamp,
    },
    /// A record that must exist does not.
    #[error("{what} `{key}` does not exist")]
    NotFound {
        /// The kind of record.
        what: &'static str,
        /// Its key.
        key: String,
    },
    /// A record conflicts with one already stored.
    #[error("{0}")]
    Conflict(String),
    /// A query or value that cannot be used as given — a search, a user or team name, a
    /// token digest (the message says why and what to give).
    #[error("{0}")]
    InvalidQuery(String),
    /// An archive that cannot be written or imported (the message says which line and
    /// why); an import that fails this way imported nothing.
    #[error("{0}")]
    Archive(String),
    /// A stored value could not be decoded.
    #[error("stored {what} could not be read: {detail}")]
    Decode {
        /// What was being read.
        what: &'static str,
        /// Why.
        detail: String,
    },
    /// Any other database failure.
    #[error("database error on {}: {detail}", path.display())]
    Database {
        /// The file.
        path: PathBuf,
        /// The underlying message.
        detail: String,
    },
}

impl StoreError {
    /// An I/O failure on a file of the store (or beside it), classified: a file or
    /// file system that cannot be written, a full disk, or anything else.
    pub fn from_io(path: &Path, error: &io::Error) -> Self {
        match error.kind() {
            io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => Self::ReadOnly {
                path: path.to_path_buf(),
                detail: error.to_string(),
            },
            io::ErrorKind::StorageFull => Self::DiskFull {
                path: path.to_path_buf(),
            },
            _ => Self::Database {
                path: path.to_path_buf(),
                detail: error.to_string(),
            },
        }
    }

    /// Whether retrying the same operation may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Busy { .. }
            | Self::DiskFull { .. }
            | Self::Io { .. }
            | Self::Unreachable { .. }
            | Self::Leased { .. } => true,
            Self::NotADatabase { .. }
            | Self::Foreign { .. }
            | Self::Corrupt { .. }
            | Self::NewerSchema { .. }
            | Self::ReadOnly { .. }
            | Self::NotFound { .. }
            | Self::Conflict(_)
            | Self::InvalidQuery(_)
            | Self::Archive(_)
            | Self::Decode { .. }
            | Self::Database { .. } => false,
        }
    }

    /// Whether the same operation may succeed when retried after a short pause, with
    /// nothing changed by the user: another process held the database locked, or the
    /// disk had a passing I/O failure. A full disk is not transient.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Busy { .. } | Self::Io { .. } | Self::Unreachable { .. } => true,
            Self::NotADatabase { .. }
            | Self::Foreign { .. }
            | Self::Corrupt { .. }
            | Self::NewerSchema { .. }
            | Self::ReadOnly { .. }
            | Self::DiskFull { .. }
            | Self::Leased { .. }
            | Self::NotFound { .. }
            | Self::Conflict(_)
            | Self::InvalidQuery(_)
            | Self::Archive(_)
            | Self::Decode { .. }
            | Self::Database { .. } => false,
        }
    }

    /// Classifies an sqlx error on the database at `path`.
    pub(crate) fn from_sqlx(path: &std::path::Path, error: sqlx::Error) -> Self {
        let path = path.to_path_buf();
        let (code, detail) = match &error {
            sqlx::Error::Database(db) => {
                let code = db
                    .code()
                    .and_then(|code| code.parse::<i64>().ok())
                    .unwrap_or(0);
                (code & 0xff, db.message().to_owned())
            }
            sqlx::Error::Io(io) => {
                return match io.kind() {
                    std::io::ErrorKind::PermissionDenied
                    | std::io::ErrorKind::ReadOnlyFilesystem => Self::ReadOnly {
                        path,
                        detail: io.to_string(),
                    },
                    std::io::ErrorKind::StorageFull => Self::DiskFull { path },
                    std::io::ErrorKind::Interrupted
                    | std::io::ErrorKind::TimedOut
                    | std::io::ErrorKind::WouldBlock => Self::Io {
                        path,
                        detail: io.to_string(),
                    },
                    _ => Self::Database {
                        path,
                        detail: io.to_string(),
                    },
                };
            }
            sqlx::Error::PoolTimedOut => return Self::Busy { path },
            other => (0, other.to_string()),
        };
        match code {
            // SQLITE_NOTADB
            26 => Self::NotADatabase { path },
            // SQLITE_CORRUPT
            11 => Self::Corrupt { path, detail },
            // SQLITE_READONLY, SQLITE_PERM, SQLITE_CANTOPEN
            8 | 3 | 14 => Self::ReadOnly { path, detail },
            // SQLITE_FULL
            13 => Self::DiskFull { path },
            // SQLITE_BUSY, SQLITE_LOCKED
            5 | 6 => Self::Busy { path },
            // SQLITE_IOERR
            10 => Self::Io { path, detail },
            _ => Self::Database { path, detail },
        }
    }
}

/// Result of a store operation.
pub type StoreResult<T> = Result<T, StoreError>;
