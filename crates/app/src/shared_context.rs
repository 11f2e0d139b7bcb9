//! The context cache a team server's nodes share (`[context] shared`,
//! `HEARTH_CONTEXT_SHARED`): an object store under every node's local cache, with the
//! per-artifact lock taken as a PostgreSQL advisory lock of the store's database.
//!
//! A shared cache needs the store on PostgreSQL: the nodes' only common lock is their
//! database's. With the store on SQLite (one machine), naming a shared cache is an
//! error saying so, never a cache shared without a lock between nodes.

use std::sync::Arc;

use anyhow::Context as _;
use futures::future::BoxFuture;
use hearth_config::CONTEXT_SHARED_VARIABLE;
use hearth_projects::context::{SharedCache, SharedLockError, SharedLockGuard, SharedLocks};
use hearth_store::{PgStore, Stores};

use crate::app::App;

/// The PostgreSQL store's advisory locks as the context cache's shared locks.
#[derive(Debug)]
struct AdvisoryLocks(PgStore);

impl SharedLocks for AdvisoryLocks {
    fn lock<'a>(
        &'a self,
        name: &'a str,
    ) -> BoxFuture<'a, Result<SharedLockGuard, SharedLockError>> {
        Box::pin(async move {
            let lock = self.0.advisory_lock(name).await?;
            Ok(Box::new(lock) as SharedLockGuard)
        })
    }
}

/// The shared context cache configured for this app over `store`, if one is.
pub(crate) fn shared_cache(
    app: &App,
    store: &Arc<dyn Stores>,
) -> anyhow::Result<Option<SharedCache>> {
    let Some(location) = app.config.context.shared_location() else {
        return Ok(None);
    };
    let Some(postgres) = store.as_postgres() else {
        anyhow::bail!(
            "the shared context cache `{location}` ([context] shared or {CONTEXT_SHARED_VARIABLE}) is for a team server whose nodes share a PostgreSQL store, but the store is {}; set [store] url (or HEARTH_STORE_URL) to a postgres:// URL, or remove the setting",
            store.location()
        );
    };
    let locks = Arc::new(AdvisoryLocks(postgres.clone()));
    let shared = SharedCache::open(&location, locks)
        .with_context(|| format!("[context] shared (or {CONTEXT_SHARED_VARIABLE})"))?;
    Ok(Some(shared))
}
