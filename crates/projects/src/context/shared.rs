//! The shared layer of a team server's context cache: an object store (S3, or a folder)
//! that several nodes, each with its own local cache, treat as the source of truth
//! between them, and a lock every node takes before converting.
//!
//! - **Keyed as the local cache.** An object's key is the prefix followed by the same
//!   relative name the local cache uses (`remotes/web-<md5>.md`, `files/file-<md5>.md`,
//!   `markers/<md5(project)>/failed-….json`), and its bytes are the same file.
//! - **Agents read local files.** A snapshot found in the shared store is checked and
//!   copied into the local cache (atomically, as every local write), and the manifest
//!   points at the local copy.
//! - **Checked, never trusted.** A shared snapshot is adopted only when it is UTF-8,
//!   starts with a complete header of the current version, names the very source asked
//!   for, carries the source's current fingerprint and is no larger than a snapshot can
//!   be; anything else is a miss, converted again and overwritten. The object is
//!   streamed and its header judged first, so a stale or foreign one is not downloaded
//!   whole. A failure marker is honoured only when it parses and its fingerprint
//!   matches.
//! - **Converted once across nodes.** Under the local per-artifact lock, a node takes
//!   the shared lock of the artifact ([`SharedLocks`]: a PostgreSQL advisory lock on a
//!   team server), checks the local and the shared copy again, and only then converts;
//!   the snapshot is put to the shared store, then written locally.
//! - **Degrades to the local cache.** A shared store that cannot be read reads as a miss
//!   and a failed put is logged: the node converts and serves its local copy, as a node
//!   without a shared store would. A shared lock that cannot be taken fails the source
//!   (nothing is converted without it).
//! - **The operator owns the shared store.** `hearth context clear` and `gc`, and the
//!   status, look at this node's local cache only: a cleared node fills again from the
//!   shared store without converting. Objects in the shared store are removed by the
//!   operator (a bucket lifecycle rule, or deleting the prefix); a removed object is
//!   only converted again. A retry (`retry_failed`) converts again and replaces both
//!   the shared marker and the shared snapshot.

use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use futures::future::BoxFuture;
use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

use super::cache::{Artifact, ContextCache, HEADER_MAX_BYTES, HEADER_PROBE_BYTES};
use super::error::{ContextError, Result};
use super::header::{Parsed, SnapshotHeader};
use super::marker::FailureMarker;
use super::source::ContextSource;

/// What the shared store holds for an artifact.
#[derive(Debug)]
pub(crate) enum SharedSnapshot {
    /// Nothing (or a store that could not be read).
    Missing,
    /// A snapshot Hearth wrote for this very version of the source: UTF-8, a complete
    /// header of the current version naming the source, the current fingerprint.
    Adoptable {
        /// Its header.
        header: SnapshotHeader,
        /// The whole object.
        bytes: Bytes,
    },
    /// A snapshot of the source, of another version (the file changed since).
    Stale,
    /// Not a snapshot of this source: garbage, another source's, or too large.
    Foreign,
}

/// A header check on the first bytes of an object.
enum Judged {
    /// The header of this very version.
    Header(SnapshotHeader),
    /// More bytes are needed.
    Wait,
    /// The object is not adoptable.
    Verdict(SharedSnapshot),
}

/// Judges the header at the start of `bytes` (`ended`: nothing more will come).
fn judge_header(bytes: &[u8], source: &ContextSource, fingerprint: &str, ended: bool) -> Judged {
    match SnapshotHeader::parse(bytes) {
        Parsed::Header(header) if &header.source != source => {
            Judged::Verdict(SharedSnapshot::Foreign)
        }
        Parsed::Header(header) if header.fingerprint == fingerprint => Judged::Header(header),
        Parsed::Header(_) => Judged::Verdict(SharedSnapshot::Stale),
        Parsed::Incomplete if !ended && (bytes.len() as u64) < HEADER_MAX_BYTES => Judged::Wait,
        Parsed::Incomplete | Parsed::Invalid => Judged::Verdict(SharedSnapshot::Foreign),
    }
}

/// A held shared lock; released when dropped.
pub type SharedLockGuard = Box<dyn Send>;

/// Why a shared lock could not be taken.
pub type SharedLockError = Box<dyn std::error::Error + Send + Sync>;

/// Locks shared by every node using one shared store (on a team server, PostgreSQL
/// advisory locks). A lock must end when its holder dies, so a dead node never keeps
/// others from converting.
pub trait SharedLocks: Send + Sync + std::fmt::Debug {
    /// Waits for the lock named `name`; held until the guard is dropped.
    fn lock<'a>(
        &'a self,
        name: &'a str,
    ) -> BoxFuture<'a, std::result::Result<SharedLockGuard, SharedLockError>>;
}

/// The shared store of a team server's context cache and its locks. Cheap to clone.
#[derive(Clone, Debug)]
pub struct SharedCache {
    store: Arc<dyn ObjectStore>,
    prefix: ObjectPath,
    /// Where the store is, for messages and lock names (never with credentials).
    location: String,
    locks: Arc<dyn SharedLocks>,
}

impl SharedCache {
    /// A shared cache in `store` under `prefix` (`location` names it in messages).
    pub fn new(
        store: Arc<dyn ObjectStore>,
        prefix: &str,
        location: impl Into<String>,
        locks: Arc<dyn SharedLocks>,
    ) -> Result<Self> {
        let location = location.into();
        let prefix = ObjectPath::parse(prefix).map_err(|error| ContextError::SharedLocation {
            location: location.clone(),
            reason: error.to_string(),
        })?;
        Ok(Self {
            store,
            prefix,
            location,
            locks,
        })
    }

    /// The shared cache at `url`: `s3://bucket/prefix` (credentials, region and
    /// endpoint from the standard `AWS_*` environment variables) or
    /// `file:///absolute/folder` (created if missing).
    pub fn open(url: &str, locks: Arc<dyn SharedLocks>) -> Result<Self> {
        let refuse = |reason: String| ContextError::SharedLocation {
            location: url.to_owned(),
            reason,
        };
        let parsed = url::Url::parse(url.trim()).map_err(|error| refuse(error.to_string()))?;
        match parsed.scheme() {
            "s3" => {
                let bucket = parsed
                    .host_str()
                    .filter(|bucket| !bucket.is_empty())
                    .ok_or_else(|| refuse("it names no bucket".to_owned()))?;
                let store = object_store::aws::AmazonS3Builder::from_env()
                    .with_bucket_name(bucket)
                    .build()
                    .map_err(|error| refuse(error.to_string()))?;
                let location = format!("s3://{bucket}{}", parsed.path());
                Self::new(Arc::new(store), parsed.path(), location, locks)
            }
            "file" => {
                let folder = parsed
                    .to_file_path()
                    .map_err(|()| refuse("it is not an absolute local path".to_owned()))?;
                std::fs::create_dir_all(&folder)
                    .map_err(|error| refuse(format!("cannot create the folder: {error}")))?;
                let store = LocalFileSystem::new_with_prefix(&folder)
                    .map_err(|error| refuse(error.to_string()))?;
                Self::new(Arc::new(store), "", parsed.to_string(), locks)
            }
            other => Err(refuse(format!("the scheme `{other}` is not supported"))),
        }
    }

    /// Where the shared store is.
    pub fn location(&self) -> &str {
        &self.location
    }

    fn key(&self, relative: &std::path::Path) -> ObjectPath {
        let mut key = self.prefix.clone();
        for part in relative.iter() {
            key = key.join(part.to_string_lossy().as_ref());
        }
        key
    }

    fn marker_key(&self, project_id: &str, artifact: &Artifact) -> ObjectPath {
        let relative = ContextCache::marker_directory(project_id).join(&artifact.marker_name);
        self.key(&relative)
    }

    /// Waits for the artifact's shared lock.
    pub(crate) async fn lock(&self, artifact: &Artifact) -> Result<SharedLockGuard> {
        let name = format!("hearth-context:{}:{}", self.location, artifact.name);
        self.locks
            .lock(&name)
            .await
            .map_err(|error| ContextError::SharedLock {
                location: self.location.clone(),
                reason: error.to_string(),
            })
    }

    /// What the shared store holds for the artifact, judged against `source` and its
    /// current `fingerprint`. The object is streamed: its header is checked as soon as
    /// it has arrived, and a stale or foreign object is not read further. A store that
    /// cannot be read is logged and reads as missing.
    pub(crate) async fn snapshot(
        &self,
        artifact: &Artifact,
        source: &ContextSource,
        fingerprint: &str,
        max_bytes: u64,
    ) -> SharedSnapshot {
        let key = self.key(&artifact.relative);
        let result = match self.store.get(&key).await {
            Ok(result) => result,
            Err(object_store::Error::NotFound { .. }) => return SharedSnapshot::Missing,
            Err(error) => {
                tracing::warn!(%error, %key, "could not read the shared context cache");
                return SharedSnapshot::Missing;
            }
        };
        if result.meta.size > max_bytes {
            return SharedSnapshot::Foreign;
        }
        let mut stream = result.into_stream();
        let mut bytes = Vec::new();
        let mut header = None;
        loop {
            let chunk = stream.next().await;
            let ended = chunk.is_none();
            match chunk {
                None => {}
                Some(Ok(chunk)) => bytes.extend_from_slice(&chunk),
                Some(Err(error)) => {
                    tracing::warn!(%error, %key, "could not read the shared context cache");
                    return SharedSnapshot::Missing;
                }
            }
            if bytes.len() as u64 > max_bytes {
                return SharedSnapshot::Foreign;
            }
            if header.is_none() && (ended || bytes.len() as u64 >= HEADER_PROBE_BYTES) {
                match judge_header(&bytes, source, fingerprint, ended) {
                    Judged::Header(found) => header = Some(found),
                    Judged::Wait => {}
                    Judged::Verdict(verdict) => return verdict,
                }
            }
            if ended {
                break;
            }
        }
        match header {
            Some(header) if std::str::from_utf8(&bytes).is_ok() => SharedSnapshot::Adoptable {
                header,
                bytes: Bytes::from(bytes),
            },
            Some(_) | None => SharedSnapshot::Foreign,
        }
    }

    /// Puts the artifact's snapshot; a failure is logged (this node keeps its copy).
    pub(crate) async fn put_snapshot(&self, artifact: &Artifact, bytes: Bytes) {
        self.put(self.key(&artifact.relative), bytes).await;
    }

    /// The project's shared failure marker for the artifact, if one parses.
    pub(crate) async fn marker(
        &self,
        project_id: &str,
        artifact: &Artifact,
    ) -> Option<FailureMarker> {
        let key = self.marker_key(project_id, artifact);
        let read = async { self.store.get(&key).await?.bytes().await };
        match read.await {
            Ok(bytes) if bytes.len() as u64 <= HEADER_MAX_BYTES => FailureMarker::from_json(&bytes),
            Ok(_) | Err(object_store::Error::NotFound { .. }) => None,
            Err(error) => {
                tracing::warn!(%error, %key, "could not read the shared context cache");
                None
            }
        }
    }

    /// Shares the project's failure marker; a failure is logged.
    pub(crate) async fn put_marker(
        &self,
        project_id: &str,
        artifact: &Artifact,
        marker: &FailureMarker,
    ) {
        let key = self.marker_key(project_id, artifact);
        self.put(key, Bytes::from(marker.to_json())).await;
    }

    /// Removes the project's shared failure marker, if any; a failure is logged.
    pub(crate) async fn remove_marker(&self, project_id: &str, artifact: &Artifact) {
        let key = self.marker_key(project_id, artifact);
        match self.store.delete(&key).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
            Err(error) => {
                tracing::warn!(%error, %key, "could not remove a shared failure marker");
            }
        }
    }

    async fn put(&self, key: ObjectPath, bytes: Bytes) {
        if let Err(error) = self.store.put(&key, PutPayload::from(bytes)).await {
            tracing::warn!(%error, %key, "could not write to the shared context cache");
        }
    }
}
