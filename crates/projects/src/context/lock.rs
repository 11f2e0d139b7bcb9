//! Per-artifact locks: one per snapshot file name, held across a source's whole
//! read-decide-write, in this process (an async mutex) and across processes (an
//! exclusive lock on a file under `locks/`, taken on a blocking thread).
//!
//! The in-process table is process-wide, keyed by the lock file's absolute path, so two
//! caches opened on one root share it. The file lock survives the lock file being
//! removed (by `clear` or `gc`): after locking, the holder checks that the path still
//! names the file it locked, and starts again if not.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

use super::error::{ContextError, Result};
use super::fs::CacheFs;

type Table = Mutex<HashMap<PathBuf, Arc<AsyncMutex<()>>>>;

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(Table::default)
}

/// A held per-artifact lock; released when dropped.
pub(crate) struct ArtifactLock {
    key: PathBuf,
    // Dropped before `Drop::drop` returns; the file unlocks when closed.
    _file: File,
    guard: Option<OwnedMutexGuard<()>>,
}

impl ArtifactLock {
    /// Waits for the lock of `name` (a snapshot file name) in `cache`.
    pub(crate) async fn acquire(cache: &CacheFs, name: &str) -> Result<Self> {
        let relative = PathBuf::from("locks").join(format!("{name}.lock"));
        let key = cache.resolve(&relative)?;
        let mutex = {
            let mut table = table().lock().unwrap_or_else(PoisonError::into_inner);
            Arc::clone(table.entry(key.clone()).or_default())
        };
        let guard = mutex.lock_owned().await;
        let cache = cache.clone();
        let file = tokio::task::spawn_blocking(move || lock_file(&cache, &relative))
            .await
            .map_err(ContextError::task)??;
        Ok(Self {
            key,
            _file: file,
            guard: Some(guard),
        })
    }
}

impl Drop for ArtifactLock {
    fn drop(&mut self) {
        let mut table = table().lock().unwrap_or_else(PoisonError::into_inner);
        drop(self.guard.take());
        // Only the table holds the mutex now: nobody waits, drop the entry.
        if table
            .get(&self.key)
            .is_some_and(|mutex| Arc::strong_count(mutex) == 1)
        {
            table.remove(&self.key);
        }
    }
}

/// Opens and exclusively locks the lock file, retrying if it was replaced meanwhile.
fn lock_file(cache: &CacheFs, relative: &Path) -> Result<File> {
    let path = cache.resolve(relative)?;
    for _ in 0..ATTEMPTS {
        let file = cache.open_lock_file(relative)?;
        file.lock().map_err(ContextError::io("lock", &path))?;
        if cache.still_names(relative, &file)? {
            return Ok(file);
        }
    }
    Err(ContextError::Io {
        operation: "lock",
        path,
        source: std::io::Error::other("the lock file kept being replaced"),
    })
}

/// How many times a replaced lock file is reopened before giving up.
const ATTEMPTS: usize = 32;
