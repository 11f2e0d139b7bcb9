//! The materializer: turns a project's sources into a [`Manifest`], converting each
//! source at most once per cache.
//!
//! For each source to convert, in order:
//!
//! 1. Fingerprint it (file: `mtime_ns:size` from its metadata; remote: `kind:url`).
//!    A missing file fails here ("not found"), without a marker: the check is cheap.
//! 2. Cheap skip: the snapshot's header carries the same fingerprint → ready. This
//!    read takes no lock: snapshots are replaced by rename, so it sees a whole file.
//!    A stale failure marker of this project is cleared (best effort). With a shared
//!    store ([`SharedCache`]), a local miss or stale copy is looked up there: a shared
//!    snapshot of this very version is copied into the local cache → ready.
//! 3. Known-bad skip: this project has a failure marker with the same fingerprint (its
//!    own, else a shared one, copied here) and no retry was asked for → failed, with
//!    the stored reason.
//! 4. Under the per-artifact lock (and then the shared lock), check 2 again, local and
//!    shared (another project, process or node may have just converted it), otherwise
//!    fetch and convert, put the snapshot to the shared store, write it locally
//!    atomically and clear the markers; on a source failure write a marker (shared
//!    too).
//!
//! Materializing never fails: every error becomes the source's status.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::UNIX_EPOCH;

use chrono::Utc;
use futures::StreamExt;
use hearth_fetch::Fetcher;

use super::cache::{Artifact, ContextCache, HEADER_MAX_BYTES, Stored};
use super::error::{ContextError, Result};
use super::header::{SnapshotHeader, clean_title};
use super::lock::ArtifactLock;
use super::manifest::{Manifest, ManifestEntry, SourceStatus};
use super::marker::FailureMarker;
use super::plan::{Plan, Step, Work, plan};
use super::remote::{Snapshot, convert_web};
use super::shared::{SharedCache, SharedSnapshot};
use super::source::{ContextSource, signature};
use super::youtube::{DEFAULT_YOUTUBE_BASE, convert_youtube};
use crate::convert::{ConvertLimits, convert_source};

/// Sources converted at the same time, by default.
pub const DEFAULT_CONCURRENCY: usize = 4;

/// The project whose context is materialized.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectRef {
    /// The project's id (keys its failure markers).
    pub id: String,
    /// The project folder (relative paths of sources resolve against it).
    pub folder: PathBuf,
}

/// How a materialization treats known failures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MaterializeOptions {
    /// Retry sources this project has failure markers for (the user's "Retry").
    pub retry_failed: bool,
}

/// Receives progress of a materialization (a CLI draws progress bars from it).
///
/// Called from the materializing task; keep the calls quick.
pub trait Progress: Send + Sync {
    /// A source's work starts.
    fn started(&self, source: &ContextSource);
    /// A source's work ended with `status`.
    fn finished(&self, source: &ContextSource, status: &SourceStatus);
}

/// A [`Progress`] that ignores everything.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn started(&self, _source: &ContextSource) {}
    fn finished(&self, _source: &ContextSource, _status: &SourceStatus) {}
}

/// Materializes projects' context sources into the shared [`ContextCache`].
#[derive(Clone, Debug)]
pub struct Materializer {
    cache: ContextCache,
    fetcher: Arc<Fetcher>,
    limits: ConvertLimits,
    youtube_base: String,
    concurrency: usize,
    /// Directories no file source may really lie in (Hearth's data directory).
    protected: Arc<Vec<PathBuf>>,
    /// The shared store and locks of a team server's nodes, if any.
    shared: Option<SharedCache>,
}

/// The fingerprint of a source and its snapshot, if any.
struct Check {
    fingerprint: String,
    stored: Option<Stored>,
}

impl Materializer {
    /// A materializer writing into `cache`, fetching through `fetcher` and converting
    /// documents within `limits`.
    pub fn new(cache: ContextCache, fetcher: Arc<Fetcher>, limits: ConvertLimits) -> Self {
        Self {
            cache,
            fetcher,
            limits,
            youtube_base: DEFAULT_YOUTUBE_BASE.to_owned(),
            concurrency: DEFAULT_CONCURRENCY,
            protected: Arc::new(Vec::new()),
            shared: None,
        }
    }

    /// Shares snapshots and failure markers with other nodes through `shared` (see
    /// [`SharedCache`]): this node's cache stays what agents read.
    pub fn sharing(mut self, shared: SharedCache) -> Self {
        self.shared = Some(shared);
        self
    }

    /// Refuses file sources that really lie in one of `directories` (Hearth's data
    /// directory), whatever symlink or hard link leads there: a source is never a way
    /// to copy Hearth's own secrets into the context an agent reads.
    pub fn protecting(mut self, directories: Vec<PathBuf>) -> Self {
        self.protected = Arc::new(directories);
        self
    }

    /// Fetches YouTube watch pages from `base` instead of `https://www.youtube.com`
    /// (a test server). Only the watch page's URL changes: which sources are YouTube
    /// sources, and their identities, stay those configured.
    pub fn with_youtube_base(mut self, base: impl Into<String>) -> Self {
        self.youtube_base = base.into();
        self
    }

    /// The cache written to.
    pub fn cache(&self) -> &ContextCache {
        &self.cache
    }

    /// Materializes `sources` of `project`; never fails.
    pub async fn materialize(
        &self,
        project: &ProjectRef,
        sources: &[ContextSource],
        options: MaterializeOptions,
    ) -> Manifest {
        self.materialize_with_progress(project, sources, options, &NoProgress)
            .await
    }

    /// Like [`Materializer::materialize`], reporting each source to `progress`.
    pub async fn materialize_with_progress(
        &self,
        project: &ProjectRef,
        sources: &[ContextSource],
        options: MaterializeOptions,
        progress: &dyn Progress,
    ) -> Manifest {
        let signature = signature(sources);
        let folder = project.folder.clone();
        let owned = sources.to_vec();
        let Plan {
            steps,
            additional_directories,
        } = match tokio::task::spawn_blocking(move || plan(&folder, &owned)).await {
            Ok(plan) => plan,
            Err(error) => {
                return failed_manifest(sources, &ContextError::task(error), signature);
            }
        };
        let markers = self.marker_names(&project.id).await;
        let checks = self.warm_checks(&steps).await;
        let entries = futures::stream::iter(steps.into_iter().zip(checks))
            .map(|((source, step), check)| {
                let markers = &markers;
                async move {
                    progress.started(&source);
                    let status = match step {
                        Step::Done(status) => status,
                        Step::Convert(work) => {
                            self.materialize_one(&project.id, &work, check, markers, options)
                                .await
                        }
                    };
                    progress.finished(&source, &status);
                    ManifestEntry { source, status }
                }
            })
            .buffered(self.concurrency)
            .collect::<Vec<_>>()
            .await;
        Manifest {
            entries,
            additional_directories,
            signature,
        }
    }

    async fn marker_names(&self, project_id: &str) -> HashSet<String> {
        let cache = self.cache.clone();
        let id = project_id.to_owned();
        match blocking(move || cache.marker_names(&id)).await {
            Ok(names) => names,
            Err(error) => {
                tracing::warn!(%error, "could not list the project's failure markers");
                HashSet::new()
            }
        }
    }

    /// Steps 1 and 2 for every source up front, in `concurrency` batches on blocking
    /// threads: on a warm cache that is all the work there is. A batch that fails to run leaves its
    /// sources to be checked one by one.
    async fn warm_checks(&self, steps: &[(ContextSource, Step)]) -> Vec<Option<Result<Check>>> {
        let works: Vec<(usize, Work)> = steps
            .iter()
            .enumerate()
            .filter_map(|(index, (_, step))| match step {
                Step::Convert(work) => Some((index, work.clone())),
                Step::Done(_) => None,
            })
            .collect();
        // At most `concurrency` batches, spawned at once (the futures own their data).
        let size = works.len().div_ceil(self.concurrency).max(1);
        let handles: Vec<_> = works
            .chunks(size)
            .map(|chunk| {
                let (cache, chunk) = (self.cache.clone(), chunk.to_vec());
                tokio::task::spawn_blocking(move || {
                    chunk
                        .into_iter()
                        .map(|(index, work)| {
                            let artifact = work.artifact();
                            (index, check_blocking(&cache, &work, &artifact))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let finished = futures::future::join_all(handles).await;
        let mut checks: Vec<Option<Result<Check>>> = steps.iter().map(|_| None).collect();
        for batch in finished {
            match batch {
                Ok(batch) => {
                    for (index, check) in batch {
                        checks[index] = Some(check);
                    }
                }
                Err(error) => tracing::warn!(%error, "a cache check task failed"),
            }
        }
        checks
    }

    async fn materialize_one(
        &self,
        project_id: &str,
        work: &Work,
        check: Option<Result<Check>>,
        markers: &HashSet<String>,
        options: MaterializeOptions,
    ) -> SourceStatus {
        let artifact = work.artifact();
        match self
            .try_materialize(project_id, work, &artifact, check, markers, options)
            .await
        {
            Ok(status) => status,
            Err(error) => SourceStatus::Failed {
                reason: error.to_string(),
                cached_marker: false,
            },
        }
    }

    /// Brings one source's snapshot up to date: fresh snapshots and remembered failures
    /// are answered from the cache (or the shared store); otherwise, under the artifact's
    /// lock, the source is converted again and its snapshot (or its failure) stored.
    async fn try_materialize(
        &self,
        project_id: &str,
        work: &Work,
        artifact: &Artifact,
        check: Option<Result<Check>>,
        markers: &HashSet<String>,
        options: MaterializeOptions,
    ) -> Result<SourceStatus> {
        let has_marker = markers.contains(&artifact.marker_name);
        // Steps 1 and 2.
        let check = match check {
            Some(check) => check?,
            None => self.check(work, artifact).await?,
        };
        if let Some(status) = self.fresh(project_id, artifact, &check, has_marker).await {
            return Ok(status);
        }
        if let Some(status) = self
            .adopt_shared(project_id, work, artifact, &check.fingerprint, has_marker)
            .await?
        {
            return Ok(status);
        }
        // Step 3.
        if !options.retry_failed
            && let Some(status) = self
                .remembered_failure(project_id, artifact, &check.fingerprint, has_marker)
                .await?
        {
            return Ok(status);
        }
        // Step 4.
        self.convert_locked(project_id, work, artifact, has_marker)
            .await
    }

    /// Step 4: under the artifact's lock (this node's, then the shared one), check the
    /// local and shared snapshots again, otherwise convert and store the snapshot or
    /// remember the failure.
    async fn convert_locked(
        &self,
        project_id: &str,
        work: &Work,
        artifact: &Artifact,
        has_marker: bool,
    ) -> Result<SourceStatus> {
        let lock = ArtifactLock::acquire(self.cache.fs(), &artifact.name).await?;
        let shared_lock = match &self.shared {
            Some(shared) => Some(shared.lock(artifact).await?),
            None => None,
        };
        let check = self.check(work, artifact).await?;
        if let Some(status) = self.fresh(project_id, artifact, &check, has_marker).await {
            return Ok(status);
        }
        if let Some(status) = self
            .adopt_shared(project_id, work, artifact, &check.fingerprint, has_marker)
            .await?
        {
            return Ok(status);
        }
        let status = match self.convert(work).await {
            Ok(snapshot) => {
                self.store_snapshot(
                    project_id,
                    work,
                    artifact,
                    check.fingerprint,
                    snapshot,
                    has_marker,
                )
                .await?
            }
            Err(error) => {
                self.remember_failure(project_id, work, artifact, check.fingerprint, &error)
                    .await;
                SourceStatus::Failed {
                    reason: error.to_string(),
                    cached_marker: false,
                }
            }
        };
        drop(shared_lock);
        drop(lock);
        Ok(status)
    }

    /// The snapshot another node put in the shared store, if it is one of this very
    /// version of the source: checked, copied into the local cache, and ready.
    async fn adopt_shared(
        &self,
        project_id: &str,
        work: &Work,
        artifact: &Artifact,
        fingerprint: &str,
        has_marker: bool,
    ) -> Result<Option<SourceStatus>> {
        let Some(shared) = &self.shared else {
            return Ok(None);
        };
        let most = self.limits.max_output_bytes as u64 + HEADER_MAX_BYTES;
        let (header, bytes) = match shared
            .snapshot(artifact, &work.source(), fingerprint, most)
            .await
        {
            SharedSnapshot::Adoptable { header, bytes } => (header, bytes),
            SharedSnapshot::Missing | SharedSnapshot::Stale => return Ok(None),
            SharedSnapshot::Foreign => {
                tracing::warn!(snapshot = %artifact.name, "a shared object is not a snapshot of this source; converting it again");
                return Ok(None);
            }
        };
        let cache = self.cache.clone();
        let relative = artifact.relative.clone();
        let written = blocking(move || cache.fs().write(&relative, &bytes)).await?;
        if has_marker {
            self.clear_marker(project_id, artifact).await;
        }
        Ok(Some(SourceStatus::Ready {
            snapshot: self.cache.snapshot_path(artifact),
            title: header.title,
            fresh: true,
            bytes: written,
        }))
    }

    /// The failed status a marker remembers for this very version of the source (same
    /// fingerprint), if there is one: this node's marker, else the shared one (copied
    /// here, so the next run needs no shared read).
    async fn remembered_failure(
        &self,
        project_id: &str,
        artifact: &Artifact,
        fingerprint: &str,
        has_marker: bool,
    ) -> Result<Option<SourceStatus>> {
        let current = |marker: &FailureMarker| marker.fingerprint == fingerprint;
        let marker = if has_marker {
            let cache = self.cache.clone();
            let (id, marked) = (project_id.to_owned(), artifact.clone());
            blocking(move || cache.read_marker(&id, &marked))
                .await?
                .filter(current)
        } else {
            None
        };
        let marker = match (marker, &self.shared) {
            (Some(marker), _) => Some(marker),
            (None, None) => None,
            (None, Some(shared)) => {
                let shared = shared.marker(project_id, artifact).await.filter(current);
                if let Some(marker) = &shared {
                    self.write_local_marker(project_id, artifact, marker.clone())
                        .await;
                }
                shared
            }
        };
        Ok(marker.map(|marker| SourceStatus::Failed {
            reason: marker.error,
            cached_marker: true,
        }))
    }

    /// Writes a converted snapshot to the cache, clears an old failure marker, and
    /// returns the ready status.
    async fn store_snapshot(
        &self,
        project_id: &str,
        work: &Work,
        artifact: &Artifact,
        fingerprint: String,
        snapshot: Snapshot,
        has_marker: bool,
    ) -> Result<SourceStatus> {
        let title = snapshot.title.as_deref().and_then(clean_title);
        let header = SnapshotHeader {
            fingerprint,
            source: work.source(),
            converted_at: Utc::now(),
            title: title.clone(),
            truncated: snapshot.truncated,
        };
        let rendered = bytes::Bytes::from(header.render(&snapshot.markdown));
        if let Some(shared) = &self.shared {
            shared.put_snapshot(artifact, rendered.clone()).await;
            shared.remove_marker(project_id, artifact).await;
        }
        let cache = self.cache.clone();
        let relative = artifact.relative.clone();
        let bytes = blocking(move || cache.fs().write(&relative, &rendered)).await?;
        if has_marker {
            self.clear_marker(project_id, artifact).await;
        }
        Ok(SourceStatus::Ready {
            snapshot: self.cache.snapshot_path(artifact),
            title,
            fresh: false,
            bytes,
        })
    }

    /// Writes a failure marker when the conversion failed because of the source itself,
    /// so the same version is not tried again; a marker that cannot be written is logged.
    async fn remember_failure(
        &self,
        project_id: &str,
        work: &Work,
        artifact: &Artifact,
        fingerprint: String,
        error: &ContextError,
    ) {
        if !error.is_source_failure() {
            return;
        }
        let marker = FailureMarker {
            source: work.source(),
            error: error.to_string(),
            fingerprint,
            failed_at: Utc::now(),
        };
        if let Some(shared) = &self.shared {
            shared.put_marker(project_id, artifact, &marker).await;
        }
        self.write_local_marker(project_id, artifact, marker).await;
    }

    /// Writes this node's failure marker; one that cannot be written is logged.
    async fn write_local_marker(
        &self,
        project_id: &str,
        artifact: &Artifact,
        marker: FailureMarker,
    ) {
        let cache = self.cache.clone();
        let (id, marked) = (project_id.to_owned(), artifact.clone());
        if let Err(write) = blocking(move || cache.write_marker(&id, &marked, &marker)).await {
            tracing::warn!(error = %write, "could not write a failure marker");
        }
    }

    /// The ready status if the snapshot is fresh, clearing a stale marker.
    async fn fresh(
        &self,
        project_id: &str,
        artifact: &Artifact,
        check: &Check,
        has_marker: bool,
    ) -> Option<SourceStatus> {
        let stored = check
            .stored
            .as_ref()
            .filter(|stored| stored.header.fingerprint == check.fingerprint)?;
        if has_marker {
            self.clear_marker(project_id, artifact).await;
        }
        Some(SourceStatus::Ready {
            snapshot: self.cache.snapshot_path(artifact),
            title: stored.header.title.clone(),
            fresh: true,
            bytes: stored.bytes,
        })
    }

    /// Best effort: a marker left behind is only a wrong reason shown later.
    async fn clear_marker(&self, project_id: &str, artifact: &Artifact) {
        let cache = self.cache.clone();
        let (id, marked) = (project_id.to_owned(), artifact.clone());
        if let Err(error) = blocking(move || cache.remove_marker(&id, &marked)).await {
            tracing::warn!(%error, "could not clear a stale failure marker");
        }
    }

    /// Steps 1 and 2 on a blocking thread: fingerprint and snapshot header.
    async fn check(&self, work: &Work, artifact: &Artifact) -> Result<Check> {
        let cache = self.cache.clone();
        let (work, artifact) = (work.clone(), artifact.clone());
        blocking(move || check_blocking(&cache, &work, &artifact)).await
    }

    async fn convert(&self, work: &Work) -> Result<Snapshot> {
        match work {
            Work::Web { url } => convert_web(&self.fetcher, url, &self.limits).await,
            Work::Youtube { url } => convert_youtube(&self.fetcher, &self.youtube_base, url).await,
            Work::File { path } => {
                let converted = convert_source(path, &self.protected, &self.limits).await?;
                Ok(Snapshot {
                    title: converted.title,
                    markdown: converted.markdown,
                    truncated: converted.truncated,
                })
            }
        }
    }
}

/// Steps 1 and 2: the source's fingerprint and its snapshot's header.
fn check_blocking(cache: &ContextCache, work: &Work, artifact: &Artifact) -> Result<Check> {
    let fingerprint = fingerprint(work)?;
    let stored = cache.read_snapshot(artifact)?;
    Ok(Check {
        fingerprint,
        stored,
    })
}

/// The source's fingerprint: file `mtime_ns:size`, remote `kind:url`.
pub(crate) fn fingerprint(work: &Work) -> Result<String> {
    match work {
        Work::Web { url } => Ok(format!("web:{url}")),
        Work::Youtube { url } => Ok(format!("youtube:{url}")),
        Work::File { path } => file_fingerprint(path),
    }
}

pub(crate) fn file_fingerprint(path: &Path) -> Result<String> {
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Err(ContextError::NotFound {
                path: path.to_path_buf(),
            });
        }
        Err(error) => return Err(ContextError::io("inspect", path)(error)),
    };
    if !metadata.is_file() {
        return Err(ContextError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let modified = metadata
        .modified()
        .ok()
        .and_then(|time| time.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |elapsed| elapsed.as_nanos());
    Ok(format!("{modified}:{}", metadata.len()))
}

/// Runs a file system step on a blocking thread.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(ContextError::task)?
}

fn failed_manifest(sources: &[ContextSource], error: &ContextError, signature: String) -> Manifest {
    Manifest {
        entries: sources
            .iter()
            .map(|source| ManifestEntry {
                source: source.clone(),
                status: SourceStatus::Failed {
                    reason: error.to_string(),
                    cached_marker: false,
                },
            })
            .collect(),
        additional_directories: Vec::new(),
        signature,
    }
}
