//! Advisory locks across the nodes of a team server: a named lock any node may take,
//! held by a PostgreSQL transaction (`pg_advisory_xact_lock`), so it ends with the
//! transaction — when its guard is dropped, or when the holder's connection dies (a
//! node killed or cut off loses its locks with its connection, never holds them on).
//!
//! The locks have their own small pool ([`LOCK_CONNECTIONS`] connections, opened on
//! first use): a node waiting on many locks never takes the connections its turns need.
//! Names are hashed to PostgreSQL's 64-bit lock keys with `hashtextextended`; two names
//! sharing a hash only share a lock, which costs waiting, never correctness.

use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::{Postgres, Transaction};

use super::PgStore;
use crate::error::StoreResult;

/// Connections of the lock pool: locks held (or waited on) at once by one node.
pub(super) const LOCK_CONNECTIONS: u32 = 4;

/// How long a lock waits for one of the pool's connections: the holders may be busy
/// converting for a while, and a wait for a lock is a wait for their work.
const LOCK_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(600);

/// The lock pool over `options`, connecting lazily.
pub(super) fn lock_pool(options: PgConnectOptions) -> PgPool {
    PgPoolOptions::new()
        .max_connections(LOCK_CONNECTIONS)
        .acquire_timeout(LOCK_ACQUIRE_TIMEOUT)
        .connect_lazy_with(options)
}

/// A held advisory lock; released when dropped (its transaction rolls back).
#[derive(Debug)]
pub struct AdvisoryLock {
    _transaction: Transaction<'static, Postgres>,
}

impl PgStore {
    /// Waits for the advisory lock named `name`, shared by every node on this database.
    pub async fn advisory_lock(&self, name: &str) -> StoreResult<AdvisoryLock> {
        let mut transaction = self.locks.begin().await.map_err(|e| self.error(e))?;
        sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
            .bind(name)
            .execute(&mut *transaction)
            .await
            .map_err(|e| self.error(e))?;
        Ok(AdvisoryLock {
            _transaction: transaction,
        })
    }
}
