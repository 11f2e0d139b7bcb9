//! Looking after the cache: what a project's sources have in it, clearing it, and
//! removing snapshots no project references.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use super::cache::{Artifact, ContextCache, FILES, LOCKS, MARKERS, REMOTES};
use super::error::Result;
use super::glob;
use super::lock::ArtifactLock;
use super::manifest::SourceStatus;
use super::materialize::{ProjectRef, blocking};
use super::plan::{GLOB_CAP, Step, Work, plan};
use super::source::ContextSource;

/// What the cache holds for one source (nothing is fetched or converted to find out).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceCacheStatus {
    /// The source (a glob's matches follow it as file sources).
    pub source: ContextSource,
    /// Its state in the cache.
    pub state: CacheState,
    /// This project's failure marker for the source, if any.
    pub failure: Option<KnownFailure>,
}

/// A source's state in the cache.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CacheState {
    /// A snapshot exists.
    Cached {
        /// Its absolute path.
        snapshot: PathBuf,
        /// Whether it matches the source's current fingerprint.
        fresh: bool,
        /// Its size.
        bytes: u64,
        /// When it was converted.
        converted_at: DateTime<Utc>,
        /// The document's title.
        title: Option<String>,
    },
    /// No snapshot yet; it would be written at `snapshot`.
    Missing {
        /// Where the snapshot would be.
        snapshot: PathBuf,
    },
    /// A folder, listed for the agent, never cached.
    Directory {
        /// Its absolute path.
        path: PathBuf,
    },
    /// A glob and how many files it matches now.
    Expanded {
        /// Files matched (up to the cap).
        matched: usize,
        /// Whether more matched.
        capped: bool,
    },
    /// The source cannot be checked (a missing file, a refused cache path, …).
    Unavailable {
        /// Why.
        reason: String,
    },
}

/// A failure marker as [`ContextCache::status`] reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnownFailure {
    /// The stored error.
    pub error: String,
    /// When the source failed.
    pub failed_at: DateTime<Utc>,
    /// Whether the marker still applies (the source's fingerprint is unchanged), so
    /// an automatic run skips the source.
    pub current: bool,
}

/// What [`ContextCache::gc`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GcReport {
    /// Snapshots removed.
    pub removed: usize,
    /// Snapshots kept.
    pub kept: usize,
    /// Bytes of the removed snapshots.
    pub bytes_freed: u64,
    /// Failure markers removed (their source is no longer referenced).
    pub markers_removed: usize,
}

impl ContextCache {
    /// The cache state of each of `project`'s sources, without converting anything.
    pub async fn status(
        &self,
        project: &ProjectRef,
        sources: &[ContextSource],
    ) -> Vec<SourceCacheStatus> {
        let cache = self.clone();
        let project = project.clone();
        let owned = sources.to_vec();
        let result = blocking(move || Ok(cache.status_blocking(&project, &owned))).await;
        match result {
            Ok(statuses) => statuses,
            Err(error) => sources
                .iter()
                .map(|source| SourceCacheStatus {
                    source: source.clone(),
                    state: CacheState::Unavailable {
                        reason: error.to_string(),
                    },
                    failure: None,
                })
                .collect(),
        }
    }

    fn status_blocking(
        &self,
        project: &ProjectRef,
        sources: &[ContextSource],
    ) -> Vec<SourceCacheStatus> {
        let plan = plan(&project.folder, sources);
        plan.steps
            .into_iter()
            .map(|(source, step)| {
                let (state, failure) = match step {
                    Step::Done(status) => (done_state(status), None),
                    Step::Convert(work) => self.work_state(&project.id, &work),
                };
                SourceCacheStatus {
                    source,
                    state,
                    failure,
                }
            })
            .collect()
    }

    fn work_state(&self, project_id: &str, work: &Work) -> (CacheState, Option<KnownFailure>) {
        let artifact = work.artifact();
        let fingerprint = super::materialize::fingerprint(work);
        let failure = match self.read_marker(project_id, &artifact) {
            Ok(Some(marker)) => Some(KnownFailure {
                current: fingerprint
                    .as_ref()
                    .is_ok_and(|current| *current == marker.fingerprint),
                error: marker.error,
                failed_at: marker.failed_at,
            }),
            Ok(None) => None,
            Err(error) => {
                tracing::debug!(%error, "unreadable failure marker");
                None
            }
        };
        let state = match self.read_snapshot(&artifact) {
            Ok(Some(stored)) => CacheState::Cached {
                snapshot: self.snapshot_path(&artifact),
                fresh: fingerprint
                    .as_ref()
                    .is_ok_and(|current| *current == stored.header.fingerprint),
                bytes: stored.bytes,
                converted_at: stored.header.converted_at,
                title: stored.header.title,
            },
            Ok(None) => match &fingerprint {
                Ok(_) => CacheState::Missing {
                    snapshot: self.snapshot_path(&artifact),
                },
                Err(error) => CacheState::Unavailable {
                    reason: error.to_string(),
                },
            },
            Err(error) => CacheState::Unavailable {
                reason: error.to_string(),
            },
        };
        (state, failure)
    }

    /// Empties the cache: snapshots, failure markers and locks. The root stays, and
    /// nothing above it is touched. A team server's shared store is left alone (its
    /// objects are the operator's to expire); this node fills again from it.
    pub async fn clear(&self) -> Result<()> {
        let cache = self.clone();
        blocking(move || {
            for folder in [REMOTES, FILES, MARKERS, LOCKS] {
                cache.fs().remove_tree(Path::new(folder))?;
            }
            Ok(())
        })
        .await
    }

    /// Removes the snapshots, failure markers and locks of sources that no project
    /// references. `referenced` is the union of every project's sources, resolved
    /// ([`ContextSource::resolved`]): a relative path protects nothing. Only this
    /// node's cache is collected, never a team server's shared store.
    pub async fn gc(&self, referenced: &[ContextSource]) -> Result<GcReport> {
        let cache = self.clone();
        let owned = referenced.to_vec();
        let keep = blocking(move || Ok(referenced_artifacts(&owned))).await?;
        let mut report = GcReport::default();
        for folder in [REMOTES, FILES] {
            let listed = {
                let cache = cache.clone();
                blocking(move || cache.fs().list(Path::new(folder))).await?
            };
            for entry in listed {
                if keep.names.contains(&entry.name) || !entry.name.ends_with(".md") {
                    report.kept += 1;
                    continue;
                }
                let lock = ArtifactLock::acquire(cache.fs(), &entry.name).await?;
                let relative = Path::new(folder).join(&entry.name);
                let lock_file = Path::new(LOCKS).join(format!("{}.lock", entry.name));
                let removed = {
                    let cache = cache.clone();
                    blocking(move || {
                        let removed = cache.fs().remove(&relative)?;
                        cache.fs().remove(&lock_file)?;
                        Ok(removed)
                    })
                    .await?
                };
                drop(lock);
                if removed {
                    report.removed += 1;
                    report.bytes_freed += entry.bytes;
                }
            }
        }
        // Locks of sources that never got a snapshot (failures) and are unreferenced.
        let locks = {
            let cache = cache.clone();
            blocking(move || cache.fs().list(Path::new(LOCKS))).await?
        };
        for entry in locks {
            let Some(name) = entry.name.strip_suffix(".lock") else {
                continue;
            };
            if keep.names.contains(name) {
                continue;
            }
            let lock = ArtifactLock::acquire(cache.fs(), name).await?;
            let lock_file = Path::new(LOCKS).join(&entry.name);
            let cache = cache.clone();
            blocking(move || cache.fs().remove(&lock_file)).await?;
            drop(lock);
        }
        let keep_markers = keep.markers;
        let gc_cache = cache.clone();
        report.markers_removed = blocking(move || gc_cache.gc_markers(&keep_markers)).await?;
        Ok(report)
    }

    fn gc_markers(&self, keep: &HashSet<String>) -> Result<usize> {
        let mut removed = 0;
        for project in self.fs().list(Path::new(MARKERS))? {
            let directory = Path::new(MARKERS).join(&project.name);
            if !project.is_directory() {
                continue;
            }
            let markers = self.fs().list(&directory)?;
            let mut remaining = markers.len();
            for marker in markers {
                if !keep.contains(&marker.name)
                    && self.fs().remove(&directory.join(&marker.name))?
                {
                    removed += 1;
                    remaining -= 1;
                }
            }
            if remaining == 0 {
                self.fs().remove_tree(&directory)?;
            }
        }
        Ok(removed)
    }
}

/// Snapshot and marker names of the referenced sources.
struct Referenced {
    names: HashSet<String>,
    markers: HashSet<String>,
}

fn referenced_artifacts(sources: &[ContextSource]) -> Referenced {
    let mut referenced = Referenced {
        names: HashSet::new(),
        markers: HashSet::new(),
    };
    let mut add = |artifact: Artifact| {
        referenced.names.insert(artifact.name);
        referenced.markers.insert(artifact.marker_name);
    };
    for source in sources {
        match source {
            ContextSource::Web { url } => add(Work::Web {
                url: url.trim().to_owned(),
            }
            .artifact()),
            ContextSource::Youtube { url } => add(Work::Youtube {
                url: url.trim().to_owned(),
            }
            .artifact()),
            ContextSource::File { path } if path.is_absolute() => add(Artifact::file(path)),
            ContextSource::Glob { pattern } if Path::new(pattern).is_absolute() => {
                for path in glob::expand(Path::new(pattern), GLOB_CAP).files {
                    add(Artifact::file(&path));
                }
            }
            ContextSource::File { .. }
            | ContextSource::Glob { .. }
            | ContextSource::Folder { .. } => {}
        }
    }
    referenced
}

fn done_state(status: SourceStatus) -> CacheState {
    match status {
        SourceStatus::Directory { path } => CacheState::Directory { path },
        SourceStatus::Expanded { matched, capped } => CacheState::Expanded { matched, capped },
        SourceStatus::Failed { reason, .. } => CacheState::Unavailable { reason },
        SourceStatus::Ready { snapshot, .. } => CacheState::Missing { snapshot },
    }
}
