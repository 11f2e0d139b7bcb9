//! Hearth's store on PostgreSQL, for a team server whose nodes share one database: the
//! same tables, columns and numbered migrations as the SQLite store (in PostgreSQL's
//! dialect, `migrations/postgres`), the same [`Store`] contract and the same tests.
//!
//! What differs, and why:
//! - Durable writes commit with `synchronous_commit = on` (the server's default): acknowledged
//!   when the server has flushed them. The *relaxed* writes use a second pool with
//!   `synchronous_commit = off`, PostgreSQL's own version of "survives a crash of the
//!   client, may roll back on the server's power loss".
//! - Writers of one chat are ordered by locking the chat's row (`FOR UPDATE`) where SQLite
//!   takes its one write lock.
//! - Lease times come from the database's clock, so nodes need not agree on theirs.
//! - Erasure: a deleted session's rows are deleted, and its proposals' text overwritten,
//!   as in SQLite; what PostgreSQL keeps of removed rows until vacuum, in its write-ahead
//!   log and in backups is the server operator's to protect (storage encryption), since
//!   no client can overwrite the server's files.
//! - Search uses a trigram index (`pg_trgm`) over each turn's prompt and answer, and the
//!   snippets are cut in Rust.

mod advisory;
mod archive;
mod audit;
mod changes;
mod projects;
mod proposals;
mod search;

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use sqlx::Connection;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};

use crate::error::{StoreError, StoreResult};
use crate::open::SCHEMA_VERSION;

pub use advisory::AdvisoryLock;

/// The numbered migrations in PostgreSQL's dialect. Version N is `MIGRATIONS[N - 1]`, the
/// same N as the SQLite migration of that number.
const MIGRATIONS: [&str; SCHEMA_VERSION as usize] = [
    include_str!("../../migrations/postgres/0001_init.sql"),
    include_str!("../../migrations/postgres/0002_tools.sql"),
    include_str!("../../migrations/postgres/0003_turn_bodies.sql"),
    include_str!("../../migrations/postgres/0004_working_directories.sql"),
    include_str!("../../migrations/postgres/0005_audit_keys.sql"),
    include_str!("../../migrations/postgres/0006_chat_leases.sql"),
    include_str!("../../migrations/postgres/0007_erase_on_delete.sql"),
    include_str!("../../migrations/postgres/0008_projects.sql"),
    include_str!("../../migrations/postgres/0009_chat_queue.sql"),
    include_str!("../../migrations/postgres/0010_project_trust.sql"),
    include_str!("../../migrations/postgres/0011_turn_search.sql"),
    include_str!("../../migrations/postgres/0012_trash.sql"),
    include_str!("../../migrations/postgres/0013_session_marks.sql"),
    include_str!("../../migrations/postgres/0014_users.sql"),
    include_str!("../../migrations/postgres/0015_user_credentials.sql"),
];

/// The key of the advisory lock under which nodes migrate one database exactly once
/// ("hearth" in ASCII).
const MIGRATION_LOCK: i64 = 0x6865_6172_7468;

/// Connections per pool: a node's concurrent turns share them.
const POOL_SIZE: u32 = 8;

/// How long a write waits for a connection (or a lock) before it reports the store busy.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);

/// Hearth's store on PostgreSQL. Several nodes (and processes) may use one database.
#[derive(Clone, Debug)]
pub struct PgStore {
    pub(crate) pool: PgPool,
    /// For writes that need not be flushed before they return (`synchronous_commit = off`).
    pub(crate) relaxed: PgPool,
    /// For advisory locks, which hold a connection while held.
    locks: PgPool,
    /// The server and database, without credentials, for messages.
    name: PathBuf,
}

impl PgStore {
    /// A turn's `body` as bytes: its text's UTF-8.
    pub(crate) const BODY_BYTES: &str = "convert_to(body, 'UTF8')";

    /// What a read that a transaction will write back locks: the rows, as writers lock only what they touch.
    pub(crate) const FOR_UPDATE: &str = " FOR UPDATE";

    /// The collation that orders text by its bytes, as SQLite compares text, not the database's locale.
    pub(crate) const BYTE_ORDER: &str = " COLLATE \"C\"";

    /// The database's case-insensitive `LIKE`: PostgreSQL's `ILIKE` ignores the case of every letter.
    pub(crate) const CASELESS_LIKE: &str = "ILIKE";

    /// A turn's stored body with its stop reason set to `incomplete` (a copy of a turn
    /// that was still running).
    pub(crate) const INCOMPLETE_BODY: &str =
        "jsonb_set(body::jsonb, '{stop_reason}', '\"incomplete\"')::text";

    /// A write transaction. PostgreSQL's writers lock only the rows they touch (the
    /// statements' `FOR_UPDATE`) or a table.
    pub(crate) async fn write_transaction(
        &self,
    ) -> StoreResult<sqlx::Transaction<'static, sqlx::Postgres>> {
        self.pool.begin().await.map_err(|e| self.error(e))
    }

    /// Commits a deletion (the server reclaims the space of what it removed).
    pub(crate) async fn commit_deletion(
        &self,
        deletion: sqlx::Transaction<'static, sqlx::Postgres>,
    ) -> StoreResult<()> {
        deletion.commit().await.map_err(|e| self.error(e))
    }

    /// Connects to the database at `url` (`postgres://user:password@host:port/database`)
    /// and migrates it. Refuses a database of another program (it has tables, none of them
    /// Hearth's) and one migrated by a newer Hearth, and changes neither.
    pub async fn connect(url: &str) -> StoreResult<Self> {
        let name = PathBuf::from(redacted(url));
        let options = PgConnectOptions::from_str(url).map_err(|error| {
            StoreError::InvalidQuery(format!(
                "`{}` is not a PostgreSQL URL ({error}); give one like postgres://user:password@host:5432/hearth",
                name.display()
            ))
        })?;
        let options = options.application_name("hearth");
        // One connection first, so that a server that cannot be reached says why at once
        // rather than after the pool's wait.
        let first = sqlx::PgConnection::connect_with(&options)
            .await
            .map_err(|error| classify(&name, error))?;
        let _ = first.close().await;
        let pool = |options: PgConnectOptions| {
            PgPoolOptions::new()
                .max_connections(POOL_SIZE)
                .acquire_timeout(ACQUIRE_TIMEOUT)
                .connect_lazy_with(options)
        };
        let store = Self {
            pool: pool(options.clone()),
            locks: advisory::lock_pool(options.clone()),
            relaxed: pool(options.options([("synchronous_commit", "off")])),
            name,
        };
        store.migrate().await?;
        Ok(store)
    }

    /// The server and database (without credentials).
    pub fn name(&self) -> String {
        self.name.display().to_string()
    }

    /// The connection pool, for crates that keep their own tables in this database.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Waits for open connections to finish and closes them.
    pub async fn close(&self) {
        self.locks.close().await;
        self.relaxed.close().await;
        self.pool.close().await;
    }

    /// Brings the schema to [`SCHEMA_VERSION`] in one transaction under an advisory lock,
    /// so nodes starting at once migrate it exactly once, and a failed migration leaves
    /// the schema as it was.
    async fn migrate(&self) -> StoreResult<()> {
        let mut transaction = self.pool.begin().await.map_err(|e| self.error(e))?;
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(MIGRATION_LOCK)
            .execute(&mut *transaction)
            .await
            .map_err(|e| self.error(e))?;
        let found = self.schema_version(&mut transaction).await?;
        if found > SCHEMA_VERSION {
            return Err(StoreError::NewerSchema {
                path: self.name.clone(),
                found,
                known: SCHEMA_VERSION,
            });
        }
        if found == SCHEMA_VERSION {
            return Ok(());
        }
        if found == 0 {
            sqlx::raw_sql(
                "CREATE TABLE hearth_schema (version BIGINT NOT NULL);
                 INSERT INTO hearth_schema (version) VALUES (0);",
            )
            .execute(&mut *transaction)
            .await
            .map_err(|e| self.error(e))?;
        }
        for (index, migration) in MIGRATIONS.iter().enumerate() {
            let version = index as i64 + 1;
            if version <= found {
                continue;
            }
            tracing::info!(version, store = %self.name.display(), "migrating database schema");
            sqlx::raw_sql(*migration)
                .execute(&mut *transaction)
                .await
                .map_err(|e| self.error(e))?;
        }
        sqlx::query("UPDATE hearth_schema SET version = $1")
            .bind(SCHEMA_VERSION)
            .execute(&mut *transaction)
            .await
            .map_err(|e| self.error(e))?;
        transaction.commit().await.map_err(|e| self.error(e))
    }

    /// The schema version (0 for an empty database); refuses another program's database.
    async fn schema_version(&self, connection: &mut sqlx::PgConnection) -> StoreResult<i64> {
        let (ours, tables): (bool, i64) = sqlx::query_as(
            "SELECT to_regclass('hearth_schema') IS NOT NULL,
                    (SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema())",
        )
        .fetch_one(&mut *connection)
        .await
        .map_err(|e| self.error(e))?;
        if !ours {
            if tables > 0 {
                return Err(StoreError::Foreign {
                    path: self.name.clone(),
                });
            }
            return Ok(0);
        }
        sqlx::query_scalar("SELECT version FROM hearth_schema")
            .fetch_one(&mut *connection)
            .await
            .map_err(|e| self.error(e))
    }

    pub(crate) fn error(&self, error: sqlx::Error) -> StoreError {
        classify(&self.name, error)
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

    /// Now by the database's clock, in milliseconds since the epoch: what every node
    /// compares lease times with.
    pub(crate) async fn clock(&self, connection: &mut sqlx::PgConnection) -> StoreResult<i64> {
        sqlx::query_scalar("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint")
            .fetch_one(&mut *connection)
            .await
            .map_err(|e| self.error(e))
    }
}

/// Classifies an error of the PostgreSQL server `name` by its SQLSTATE: what may pass
/// when retried (a lock or serialization conflict, a server going away, a connection
/// that cannot be made) apart from what will not.
fn classify(name: &std::path::Path, error: sqlx::Error) -> StoreError {
    let path = name.to_path_buf();
    match error {
        sqlx::Error::Database(db) => {
            let code = db.code().map(|code| code.into_owned()).unwrap_or_default();
            let detail = db.message().to_owned();
            match code.as_str() {
                // serialization_failure, deadlock_detected, lock_not_available
                "40001" | "40P01" | "55P03" => StoreError::Busy { path },
                // disk_full, insufficient_resources
                "53100" | "53000" => StoreError::DiskFull { path },
                // read_only_sql_transaction, insufficient_privilege
                "25006" | "42501" => StoreError::ReadOnly { path, detail },
                // data_corrupted, index_corrupted
                "XX001" | "XX002" => StoreError::Corrupt { path, detail },
                // admin_shutdown, crash_shutdown, cannot_connect_now, connection exceptions
                code if code.starts_with("57P") || code.starts_with("08") => {
                    StoreError::Unreachable { path, detail }
                }
                _ => StoreError::Database { path, detail },
            }
        }
        sqlx::Error::Io(io) => StoreError::Unreachable {
            path,
            detail: io.to_string(),
        },
        sqlx::Error::PoolTimedOut => StoreError::Unreachable {
            path,
            detail: format!(
                "no connection could be had within {} s",
                ACQUIRE_TIMEOUT.as_secs()
            ),
        },
        sqlx::Error::PoolClosed | sqlx::Error::Tls(_) | sqlx::Error::Protocol(_) => {
            StoreError::Unreachable {
                path,
                detail: error.to_string(),
            }
        }
        other => StoreError::Database {
            path,
            detail: other.to_string(),
        },
    }
}

/// `url` without its password (and without anything after `?`), for messages.
fn redacted(url: &str) -> String {
    let url = url.split('?').next().unwrap_or(url);
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    match rest.rsplit_once('@') {
        Some((credentials, host)) => {
            let user = credentials.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}@{host}")
        }
        None => url.to_owned(),
    }
}

crate::store::store_by_impls!(PgStore);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_never_show_a_password() {
        assert_eq!(
            redacted("postgres://hearth:s3cret@db.internal:5432/hearth?sslmode=require"),
            "postgres://hearth@db.internal:5432/hearth"
        );
        assert_eq!(
            redacted("postgres://db.internal/hearth"),
            "postgres://db.internal/hearth"
        );
        assert_eq!(redacted("not a url"), "not a url");
    }
}
