//! The SQLite implementation of [`Store`].

use std::path::{Path, PathBuf};

use hearth_core::SessionUri;
use sqlx::SqlitePool;

use crate::error::{StoreError, StoreResult};
use crate::open::{Access, open_memory_pool, open_pool, open_read_only_pool, unwritable_reason};

/// Hearth's store on SQLite: WAL journal, `synchronous=FULL`, foreign keys on, numbered
/// migrations. Several processes may open one database at once.
#[derive(Clone, Debug)]
pub struct SqliteStore {
    pub(crate) pool: SqlitePool,
    /// For writes that need not be on disk before they return (see `Pools`).
    pub(crate) relaxed: SqlitePool,
    path: PathBuf,
    access: Access,
}

impl SqliteStore {
    /// A turn's `body` as bytes: as stored, valid text or not.
    pub(crate) const BODY_BYTES: &str = "CAST(body AS BLOB)";

    /// What a read that a transaction will write back locks: nothing: a writer holds the whole database until it commits.
    pub(crate) const FOR_UPDATE: &str = "";

    /// The collation that orders text by its bytes, SQLite's own default.
    pub(crate) const BYTE_ORDER: &str = " COLLATE BINARY";

    /// The database's case-insensitive `LIKE`: SQLite's `LIKE` ignores the case of ASCII letters.
    pub(crate) const CASELESS_LIKE: &str = "LIKE";

    /// A turn's stored body with its stop reason set to `incomplete` (a copy of a turn
    /// that was still running).
    pub(crate) const INCOMPLETE_BODY: &str = "json_set(body, '$.stop_reason', 'incomplete')";

    /// A write transaction: SQLite's one writer lock, taken at its start (so that it never
    /// has to be upgraded, which can fail with the database busy).
    pub(crate) async fn write_transaction(
        &self,
    ) -> StoreResult<sqlx::Transaction<'static, sqlx::Sqlite>> {
        self.pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(|e| self.error(e))
    }

    /// Now, in milliseconds: SQLite has no server, so its clock is this machine's.
    #[allow(clippy::unused_async)]
    pub(crate) async fn clock(&self, _connection: &mut sqlx::SqliteConnection) -> StoreResult<i64> {
        Ok(crate::codec::to_millis(&hearth_core::now()))
    }

    /// SQLite announces nothing (PostgreSQL does, see `postgres/changes.rs`): other
    /// processes see a change when they read it.
    #[allow(clippy::unused_async)]
    pub(crate) async fn announce(
        _connection: &mut sqlx::SqliteConnection,
        _change: &crate::stores::Change,
    ) -> Result<(), sqlx::Error> {
        Ok(())
    }

    /// `update` as it is, with no parameters added: SQLite announces nothing.
    pub(crate) fn announcing(
        update: &str,
        _next: usize,
        _change: &crate::stores::Change,
    ) -> (String, Vec<String>) {
        (update.to_owned(), Vec::new())
    }

    /// SQLite announces nothing (PostgreSQL does, see `postgres/changes.rs`): other
    /// processes see a shared session when they read it.
    #[allow(clippy::unused_async)]
    pub(crate) async fn announce_summary(
        &self,
        _session: &hearth_core::SessionUri,
    ) -> crate::error::StoreResult<()> {
        Ok(())
    }

    /// SQLite carries no asks: another process answering a chat is not told anything.
    #[allow(clippy::unused_async)]
    pub(crate) async fn ask_holder_impl(
        &self,
        _ask: &crate::HolderAsk,
    ) -> crate::error::StoreResult<bool> {
        Ok(false)
    }

    /// A live session as one JSON Lines archive (see [`SqliteStore::export_session`]).
    pub(crate) async fn archive_session_impl(&self, session: &SessionUri) -> StoreResult<String> {
        let mut out = Vec::new();
        self.export_session(session, &mut out).await?;
        String::from_utf8(out)
            .map_err(|error| StoreError::Archive(format!("the archive is not UTF-8: {error}")))
    }

    /// Opens (creating if needed) the database at `path` and migrates it. Refuses a file
    /// that is not an SQLite database, a database from a newer Hearth, and never
    /// overwrites either.
    pub async fn open(path: &Path) -> StoreResult<Self> {
        let pools = open_pool(path).await?;
        Ok(Self {
            pool: pools.durable,
            relaxed: pools.relaxed,
            path: path.to_path_buf(),
            access: Access::ReadWrite,
        })
    }

    /// Opens an existing database for reading only, whatever its permissions: nothing is
    /// created, migrated or changed, and every write fails with [`StoreError::ReadOnly`].
    pub async fn open_read_only(path: &Path) -> StoreResult<Self> {
        Self::read_only(path, "reading only was asked for".to_owned()).await
    }

    /// Opens the database at `path` for reading and writing, or, when it exists but
    /// this process cannot write it (the file, its directory or its file system is
    /// read-only), for reading only: [`access`](Self::access) says which, and why.
    pub async fn open_or_read_only(path: &Path) -> StoreResult<Self> {
        if let Some(reason) = unwritable_reason(path) {
            return Self::read_only(path, reason).await;
        }
        match Self::open(path).await {
            Err(StoreError::ReadOnly { detail, .. }) if path.exists() => {
                Self::read_only(path, detail).await
            }
            other => other,
        }
    }

    async fn read_only(path: &Path, reason: String) -> StoreResult<Self> {
        let pool = open_read_only_pool(path).await?;
        Ok(Self {
            relaxed: pool.clone(),
            pool,
            path: path.to_path_buf(),
            access: Access::ReadOnly { reason },
        })
    }

    /// A private in-memory database (tests).
    pub async fn open_in_memory() -> StoreResult<Self> {
        let pools = open_memory_pool().await?;
        Ok(Self {
            pool: pools.durable,
            relaxed: pools.relaxed,
            path: PathBuf::from(":memory:"),
            access: Access::ReadWrite,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the store can be written, and if not, why.
    pub fn access(&self) -> &Access {
        &self.access
    }

    /// The connection pool, for crates that keep their own tables in this database.
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// Waits for open connections to finish and closes them.
    pub async fn close(&self) {
        self.relaxed.close().await;
        self.pool.close().await;
    }

    pub(crate) fn error(&self, error: sqlx::Error) -> StoreError {
        match (StoreError::from_sqlx(&self.path, error), &self.access) {
            (StoreError::ReadOnly { path, .. }, Access::ReadOnly { reason }) => {
                StoreError::ReadOnly {
                    path,
                    detail: format!("it is open for reading only: {reason}"),
                }
            }
            (error, _) => error,
        }
    }

    /// Maps a uniqueness violation to a conflict naming the record.
    pub(crate) fn unique_conflict(&self, error: sqlx::Error, what: &str, key: &str) -> StoreError {
        if let sqlx::Error::Database(db) = &error
            && db.is_unique_violation()
        {
            return StoreError::Conflict(format!("{what} {key} already exists"));
        }
        self.error(error)
    }
}

crate::store::store_by_impls!(SqliteStore);
