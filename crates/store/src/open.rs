//! Opening the SQLite database: refusing files that are not ours, connecting with the
//! durability settings, and migrating the schema.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Connection, SqlitePool};

use crate::error::{StoreError, StoreResult};

/// The numbered migrations, in order. Version N is `MIGRATIONS[N - 1]`.
const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/sqlite/0001_init.sql"),
    include_str!("../migrations/sqlite/0002_tools.sql"),
    include_str!("../migrations/sqlite/0003_turn_bodies.sql"),
    include_str!("../migrations/sqlite/0004_working_directories.sql"),
];

/// The schema version this binary writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// `PRAGMA application_id` of a Hearth database ("HRTH").
const APPLICATION_ID: i64 = 0x4852_5448;

/// How long a write waits for another process's write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Checks that an existing file is an SQLite database before SQLite touches it.
fn check_header(path: &Path) -> StoreResult<()> {
    let mut file = match fs::File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(error) if error.kind() == io::ErrorKind::PermissionDenied => {
            return Err(StoreError::ReadOnly {
                path: path.to_path_buf(),
                detail: error.to_string(),
            });
        }
        Err(error) => {
            return Err(StoreError::Database {
                path: path.to_path_buf(),
                detail: error.to_string(),
            });
        }
    };
    let mut header = [0_u8; 16];
    let mut read = 0;
    while read < header.len() {
        match file.read(&mut header[read..]) {
            Ok(0) => break,
            Ok(count) => read += count,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => {
                return Err(StoreError::Database {
                    path: path.to_path_buf(),
                    detail: error.to_string(),
                });
            }
        }
    }
    // An empty file is a database nobody wrote yet.
    if read == 0 || (read == header.len() && &header == SQLITE_HEADER) {
        Ok(())
    } else {
        Err(StoreError::NotADatabase {
            path: path.to_path_buf(),
        })
    }
}

fn ensure_directory(path: &Path) -> StoreResult<()> {
    let Some(parent) = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    else {
        return Ok(());
    };
    fs::create_dir_all(parent).map_err(|error| match error.kind() {
        io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
            StoreError::ReadOnly {
                path: parent.to_path_buf(),
                detail: error.to_string(),
            }
        }
        io::ErrorKind::StorageFull => StoreError::DiskFull {
            path: parent.to_path_buf(),
        },
        _ => StoreError::Database {
            path: parent.to_path_buf(),
            detail: error.to_string(),
        },
    })
}

/// Connections to one database: `durable` syncs every commit to disk before it returns
/// (writes that acknowledge user input); `relaxed` leaves syncing to checkpoints (writes
/// that survive a crash of the process but may roll back on power loss: streaming
/// checkpoints, titles, activity times).
pub(crate) struct Pools {
    pub durable: SqlitePool,
    pub relaxed: SqlitePool,
}

/// Refuses an existing SQLite database another program made, before anything (even the
/// switch to WAL) writes to it: one marked with another application id, or one holding
/// tables but none of Hearth's.
async fn check_owner(path: &Path) -> StoreResult<()> {
    if fs::metadata(path).map_or(true, |metadata| metadata.len() == 0) {
        return Ok(());
    }
    let options = SqliteConnectOptions::new()
        .filename(path)
        .read_only(true)
        .busy_timeout(BUSY_TIMEOUT);
    let mut connection = sqlx::SqliteConnection::connect_with(&options)
        .await
        .map_err(|error| StoreError::from_sqlx(path, error))?;
    let probe: Result<(i64, i64, i64), sqlx::Error> = sqlx::query_as(
        "SELECT (SELECT application_id FROM pragma_application_id),
                (SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table'),
                (SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name IN ('sessions', 'chats'))",
    )
    .fetch_one(&mut connection)
    .await;
    if let Err(error) = connection.close().await {
        tracing::debug!(%error, "closing the probe connection");
    }
    let (application_id, tables, ours) =
        probe.map_err(|error| StoreError::from_sqlx(path, error))?;
    let foreign_id = application_id != 0 && application_id != APPLICATION_ID;
    let foreign_tables = application_id == 0 && tables > 0 && ours < 2;
    if foreign_id || foreign_tables {
        return Err(StoreError::Foreign {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// Opens (creating if needed) and migrates the database at `path`.
pub(crate) async fn open_pool(path: &Path) -> StoreResult<Pools> {
    ensure_directory(path)?;
    check_header(path)?;
    check_owner(path).await?;
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Full)
        .foreign_keys(true)
        .busy_timeout(BUSY_TIMEOUT);
    let pool = SqlitePoolOptions::new()
        .max_connections(4)
        .min_connections(0)
        .acquire_timeout(BUSY_TIMEOUT + Duration::from_secs(5))
        .connect_with(options.clone())
        .await
        .map_err(|error| StoreError::from_sqlx(path, error))?;
    migrate(&pool, path).await?;
    // Opened on first use only.
    let relaxed = SqlitePoolOptions::new()
        .max_connections(1)
        .min_connections(0)
        .acquire_timeout(BUSY_TIMEOUT + Duration::from_secs(5))
        .connect_lazy_with(options.synchronous(SqliteSynchronous::Normal));
    Ok(Pools {
        durable: pool,
        relaxed,
    })
}

/// Opens a private in-memory database (tests).
pub(crate) async fn open_memory_pool() -> StoreResult<Pools> {
    let path = PathBuf::from(":memory:");
    let options = SqliteConnectOptions::new()
        .in_memory(true)
        .foreign_keys(true);
    // One connection: every connection to `:memory:` is a separate database.
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .min_connections(1)
        .idle_timeout(None)
        .max_lifetime(None)
        .connect_with(options)
        .await
        .map_err(|error| StoreError::from_sqlx(&path, error))?;
    migrate(&pool, &path).await?;
    Ok(Pools {
        durable: pool.clone(),
        relaxed: pool,
    })
}

async fn user_version(connection: &mut sqlx::SqliteConnection) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar::<_, i64>("PRAGMA user_version")
        .fetch_one(&mut *connection)
        .await
}

/// Brings the schema to [`SCHEMA_VERSION`] under an immediate (write) transaction, so
/// several processes opening one database at once migrate it exactly once. A database
/// from a newer schema is refused before anything is written.
async fn migrate(pool: &SqlitePool, path: &Path) -> StoreResult<()> {
    let sqlx_error = |error| StoreError::from_sqlx(path, error);
    let mut connection = pool.acquire().await.map_err(sqlx_error)?;
    let found = user_version(&mut connection).await.map_err(sqlx_error)?;
    if found > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            path: path.to_path_buf(),
            found,
            known: SCHEMA_VERSION,
        });
    }
    if found == SCHEMA_VERSION {
        return Ok(());
    }
    let mut transaction = connection
        .begin_with("BEGIN IMMEDIATE")
        .await
        .map_err(sqlx_error)?;
    // Another process may have migrated while this one waited for the lock.
    let current = user_version(&mut transaction).await.map_err(sqlx_error)?;
    if current > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            path: path.to_path_buf(),
            found: current,
            known: SCHEMA_VERSION,
        });
    }
    for (index, migration) in MIGRATIONS.iter().enumerate() {
        let version = index as i64 + 1;
        if version <= current {
            continue;
        }
        tracing::info!(version, "migrating database schema");
        sqlx::raw_sql(*migration)
            .execute(&mut *transaction)
            .await
            .map_err(sqlx_error)?;
    }
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {SCHEMA_VERSION}"
    )))
    .execute(&mut *transaction)
    .await
    .map_err(sqlx_error)?;
    transaction.commit().await.map_err(sqlx_error)?;
    Ok(())
}
