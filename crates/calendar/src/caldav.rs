//! CalDAV calendars as configured ([`CalDavSource`]), and where their syncs are kept:
//! one JSON file per calendar, replaced atomically after each sync (its folder private
//! to the user), so a sync that fails part-way leaves the last complete copy — reads
//! work offline from it, with the time it was synced. Talking to the server is
//! hearth-caldav's.

use std::path::{Path, PathBuf};
use std::time::Duration;

use hearth_caldav::{CalDavAccount, DavTransport, SyncCache, SyncReport};

use crate::atomic::{WriteMode, read_optional, write_atomic};
use crate::error::{CalendarError, Result};

/// A CalDAV calendar as configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CalDavSource {
    pub account: CalDavAccount,
    /// How long a sync is used before syncing again.
    pub refresh: Duration,
    /// The cache file.
    pub cache: PathBuf,
    /// The most bytes of one answer.
    pub max_bytes: u64,
}

/// Syncs `source` from its cache file and replaces the file with the result; returns
/// the new sync and what changed. A failure leaves the cache file as it was.
pub(crate) async fn sync(
    transport: &dyn DavTransport,
    source: &CalDavSource,
) -> Result<(SyncCache, SyncReport)> {
    let account = &source.account;
    let previous = read_cache_blocking(source)
        .await?
        .unwrap_or_else(|| SyncCache::empty(account));
    let (cache, report) =
        hearth_caldav::sync(transport, account, source.max_bytes, &previous).await?;
    let path = source.cache.clone();
    let written = cache.clone();
    tokio::task::spawn_blocking(move || write_cache(&written, &path))
        .await
        .map_err(|error| CalendarError::Task(error.to_string()))??;
    Ok((cache, report))
}

/// The last complete sync of `source`, read off the async runtime.
pub(crate) async fn read_cache_blocking(source: &CalDavSource) -> Result<Option<SyncCache>> {
    let path = source.cache.clone();
    let account = source.account.clone();
    tokio::task::spawn_blocking(move || read_cache(&path, &account))
        .await
        .map_err(|error| CalendarError::Task(error.to_string()))?
}

/// The cache at `path` if it is one of this account's collection; an unreadable one is
/// logged and synced afresh.
fn read_cache(path: &Path, account: &CalDavAccount) -> Result<Option<SyncCache>> {
    let Some(bytes) = read_optional(path)? else {
        return Ok(None);
    };
    match serde_json::from_slice::<SyncCache>(&bytes) {
        Ok(cache) if cache.belongs_to(account) => Ok(Some(cache)),
        Ok(_) => Ok(None),
        Err(error) => {
            tracing::warn!(path = %path.display(), %error, "unreadable CalDAV cache; syncing afresh");
            Ok(None)
        }
    }
}

/// Replaces the cache file atomically (its folder is created, private to the user).
fn write_cache(cache: &SyncCache, path: &Path) -> Result<()> {
    if let Some(folder) = path.parent() {
        create_private_folder(folder)?;
    }
    let bytes =
        serde_json::to_vec(cache).map_err(|error| CalendarError::Task(error.to_string()))?;
    write_atomic(path, &bytes, WriteMode::Replace)?;
    restrict(path)
}

fn create_private_folder(folder: &Path) -> Result<()> {
    let error = |source| CalendarError::Write {
        path: folder.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(folder).map_err(error)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o700)).map_err(error)?;
    }
    Ok(())
}

fn restrict(path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(
            |source| CalendarError::Write {
                path: path.to_path_buf(),
                source,
            },
        )?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}
