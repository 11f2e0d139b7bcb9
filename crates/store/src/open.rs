//! Opening the SQLite database: refusing files that are not ours, keeping its files
//! private, connecting with the durability and erasure settings, and migrating the schema;
//! or opening an existing database for reading only, when it cannot be written.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{ConnectOptions as _, Connection, SqlitePool};

use crate::error::{StoreError, StoreResult};

/// The numbered migrations, in order. Version N is `MIGRATIONS[N - 1]`.
const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/sqlite/0001_init.sql"),
    include_str!("../migrations/sqlite/0002_tools.sql"),
    include_str!("../migrations/sqlite/0003_turn_bodies.sql"),
    include_str!("../migrations/sqlite/0004_working_directories.sql"),
    include_str!("../migrations/sqlite/0005_audit_keys.sql"),
    include_str!("../migrations/sqlite/0006_chat_leases.sql"),
    include_str!("../migrations/sqlite/0007_erase_on_delete.sql"),
    include_str!("../migrations/sqlite/0008_projects.sql"),
    include_str!("../migrations/sqlite/0009_chat_queue.sql"),
    include_str!("../migrations/sqlite/0010_project_trust.sql"),
    include_str!("../migrations/sqlite/0011_turn_search.sql"),
    include_str!("../migrations/sqlite/0012_trash.sql"),
    include_str!("../migrations/sqlite/0013_session_marks.sql"),
    include_str!("../migrations/sqlite/0014_users.sql"),
    include_str!("../migrations/sqlite/0015_user_credentials.sql"),
];

/// The schema version this binary writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// `PRAGMA application_id` of a Hearth database ("HRTH").
const APPLICATION_ID: i64 = 0x4852_5448;

/// How long a statement runs before it is logged (at info level: `-v`) as slow.
const SLOW_STATEMENT: Duration = Duration::from_secs(1);

/// How long a write waits for another process's write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The files SQLite keeps beside a database: its write-ahead log, the log's shared-memory
/// index, and the rollback journal of a database not (yet) in WAL mode.
const COMPANION_SUFFIXES: [&str; 3] = ["-wal", "-shm", "-journal"];

/// The file beside a database whose lock a process holds while it opens the database.
const OPENING_LOCK_SUFFIX: &str = "-opening.lock";

/// How a store was opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Access {
    /// Reads and writes.
    ReadWrite,
    /// Reads only, because the database cannot be written by this process; every write
    /// fails with [`StoreError::ReadOnly`] naming this reason.
    ReadOnly {
        /// Why it cannot be written (the file, its directory or its file system).
        reason: String,
    },
}

/// A file beside the database (`-wal`, `-shm`, `-journal`).
pub(crate) fn companion(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

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
    // Only its owner may look inside (0700): it holds every conversation.
    hearth_config::create_private_dir(parent).map_err(|error| StoreError::from_io(parent, &error))
}

/// Creates a missing database file as an empty file only its owner can read and write
/// (0600) before SQLite opens it: SQLite would create it with the process's default
/// mode, and it creates the `-wal` and `-shm` files with the database file's mode.
fn create_private_database(path: &Path) -> StoreResult<()> {
    match hearth_config::private_file_options()
        .write(true)
        .create_new(true)
        .open(path)
    {
        Ok(_) => Ok(()),
        // It exists (perhaps made by another process this instant): SQLite checks it.
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(error) => Err(StoreError::from_io(path, &error)),
    }
}

/// Narrows the database and the files beside it to their owner (an install made before
/// Hearth kept them private); says so in the log.
fn make_files_private(path: &Path) {
    let files = std::iter::once(path.to_path_buf())
        .chain(COMPANION_SUFFIXES.map(|suffix| companion(path, suffix)));
    for file in files {
        match hearth_config::make_private(&file) {
            Ok(Some(tightened)) => tracing::warn!(
                path = %file.display(),
                "made the database file readable by its owner only (it was {:o}, now {:o})",
                tightened.was,
                tightened.now
            ),
            Ok(None) => {}
            Err(error) => tracing::warn!(
                path = %file.display(),
                %error,
                "could not make the database file private; other users may be able to read it"
            ),
        }
    }
}

/// Why the existing database at `path` cannot be written by this process, if it
/// cannot: the file, or the directory SQLite keeps its write-ahead log in.
pub(crate) fn unwritable_reason(path: &Path) -> Option<String> {
    if !path.exists() {
        return None;
    }
    let directory = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let writable = |path: &Path| rustix::fs::access(path, rustix::fs::Access::WRITE_OK);
    let (what, errno) = match (writable(path), writable(directory)) {
        (Err(errno), _) => ("the file".to_owned(), errno),
        (Ok(()), Err(errno)) => (format!("its directory {}", directory.display()), errno),
        (Ok(()), Ok(())) => return None,
    };
    Some(if errno == rustix::io::Errno::ROFS {
        "it is on a read-only file system".to_owned()
    } else if errno == rustix::io::Errno::ACCESS || errno == rustix::io::Errno::PERM {
        format!("you may not write {what}")
    } else {
        format!("{what} cannot be written ({errno})")
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

/// How a read-only connection shares the file with other processes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sharing {
    /// Others may write meanwhile: SQLite coordinates through the `-shm` file, which it
    /// creates when missing.
    Shared,
    /// Nobody can write it (its directory is read-only, so no `-wal` or `-shm` file can
    /// exist or appear): SQLite reads the file alone.
    Immutable,
}

fn read_only_options(path: &Path, sharing: Sharing) -> SqliteConnectOptions {
    SqliteConnectOptions::new()
        .filename(path)
        .read_only(true)
        .immutable(sharing == Sharing::Immutable)
        .foreign_keys(true)
        .busy_timeout(BUSY_TIMEOUT)
        .log_slow_statements(log::LevelFilter::Info, SLOW_STATEMENT)
}

/// Refuses an existing SQLite database another program made, before anything (even the
/// switch to WAL) writes to it: one marked with another application id, or one holding
/// tables but none of Hearth's.
async fn check_owner(path: &Path) -> StoreResult<()> {
    match check_owner_with(path, Sharing::Shared).await {
        // A WAL database in a read-only directory without its `-shm` file.
        Err(StoreError::ReadOnly { .. }) => check_owner_with(path, Sharing::Immutable).await,
        other => other,
    }
}

async fn check_owner_with(path: &Path, sharing: Sharing) -> StoreResult<()> {
    if fs::metadata(path).map_or(true, |metadata| metadata.len() == 0) {
        return Ok(());
    }
    let options = read_only_options(path, sharing);
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

/// Waits (up to [`BUSY_TIMEOUT`]) for an exclusive lock on the file beside the database
/// that keeps one process at a time opening it; the lock holds until the returned file
/// is dropped.
///
/// SQLite's own locks do not make concurrent first opens wait: switching a new database
/// to WAL takes its exclusive lock, and SQLite answers "database is locked" at once,
/// without waiting its busy timeout, to a process that found another one switching (it
/// would deadlock otherwise). A lock of the database file itself is no way around it:
/// closing any handle of the file drops every SQLite lock this process holds on it.
async fn lock_for_opening(path: &Path) -> StoreResult<fs::File> {
    let lock_path = companion(path, OPENING_LOCK_SUFFIX);
    let file = hearth_config::private_file_options()
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_path)
        .map_err(|error| StoreError::from_io(&lock_path, &error))?;
    let deadline = tokio::time::Instant::now() + BUSY_TIMEOUT;
    let mut pause = Duration::from_millis(1);
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(fs::TryLockError::WouldBlock) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(fs::TryLockError::WouldBlock) => {
                return Err(StoreError::Busy {
                    path: path.to_path_buf(),
                });
            }
            Err(fs::TryLockError::Error(error)) => {
                return Err(StoreError::from_io(&lock_path, &error));
            }
        }
    }
}

/// Opens (creating if needed) and migrates the database at `path`, one process at a
/// time (see [`lock_for_opening`]).
pub(crate) async fn open_pool(path: &Path) -> StoreResult<Pools> {
    ensure_directory(path)?;
    check_header(path)?;
    let opening = lock_for_opening(path).await?;
    let pools = open_locked(path).await;
    drop(opening);
    pools
}

async fn open_locked(path: &Path) -> StoreResult<Pools> {
    check_owner(path).await?;
    create_private_database(path)?;
    make_files_private(path);
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Full)
        .foreign_keys(true)
        // What a deletion removes is overwritten, not left in free space.
        .pragma("secure_delete", "ON")
        .busy_timeout(BUSY_TIMEOUT)
        // A slow statement is a diagnostic for `-v`, not a warning for every user.
        .log_slow_statements(log::LevelFilter::Info, SLOW_STATEMENT);
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

/// Opens an existing database for reading only: nothing is created, tightened or
/// migrated, and every write fails. A database whose directory cannot be written, and
/// so cannot hold the `-shm` file SQLite needs to read a write-ahead log, is read as
/// immutable (nobody can change it there).
pub(crate) async fn open_read_only_pool(path: &Path) -> StoreResult<SqlitePool> {
    if !path.exists() {
        return Err(StoreError::NotFound {
            what: "database",
            key: path.display().to_string(),
        });
    }
    check_header(path)?;
    check_owner(path).await?;
    let (pool, found) = match connect_read_only(path, Sharing::Shared).await {
        // A WAL database in a read-only directory without its `-shm` file.
        Err(StoreError::ReadOnly { .. }) => connect_read_only(path, Sharing::Immutable).await?,
        other => other?,
    };
    let refusal = if found > SCHEMA_VERSION {
        StoreError::NewerSchema {
            path: path.to_path_buf(),
            found,
            known: SCHEMA_VERSION,
        }
    } else if found < SCHEMA_VERSION {
        StoreError::ReadOnly {
            path: path.to_path_buf(),
            detail: format!(
                "its schema (version {found}) must be upgraded to version {SCHEMA_VERSION} before this Hearth can read it, which needs write access"
            ),
        }
    } else {
        return Ok(pool);
    };
    pool.close().await;
    Err(refusal)
}

/// Connects for reading and reads the schema version: the first read is where SQLite
/// needs the `-shm` file.
async fn connect_read_only(path: &Path, sharing: Sharing) -> StoreResult<(SqlitePool, i64)> {
    let sqlx_error = |error| StoreError::from_sqlx(path, error);
    let pool = SqlitePoolOptions::new()
        .max_connections(4)
        .min_connections(0)
        .acquire_timeout(BUSY_TIMEOUT + Duration::from_secs(5))
        .connect_with(read_only_options(path, sharing))
        .await
        .map_err(sqlx_error)?;
    let found = match pool.acquire().await {
        Ok(mut connection) => user_version(&mut connection).await,
        Err(error) => Err(error),
    };
    match found {
        Ok(found) => Ok((pool, found)),
        Err(error) => {
            pool.close().await;
            Err(sqlx_error(error))
        }
    }
}

/// Opens a private in-memory database (tests).
pub(crate) async fn open_memory_pool() -> StoreResult<Pools> {
    let path = PathBuf::from(":memory:");
    let options = SqliteConnectOptions::new()
        .in_memory(true)
        .foreign_keys(true)
        .pragma("secure_delete", "ON");
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
