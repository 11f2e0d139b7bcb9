//! The shared cache's layout and its snapshot and marker files.
//!
//! ```text
//! <root>/
//!   remotes/  web-<md5(url)>.md · youtube-<md5(url)>.md      shared by all projects
//!   files/    file-<md5(absolute path)>.md                    shared by all projects
//!   markers/  <md5(project id)>/failed-<kind>-<md5(identity)>.json   per project
//!   locks/    <snapshot name>.lock                            per-artifact locks
//! ```
//!
//! Names hash the source's identity (the exact trimmed URL, the file's absolute
//! path), never its content or a project.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::digest::md5_hex;
use super::error::Result;
use super::fs::CacheFs;
use super::header::{Parsed, SnapshotHeader};
use super::marker::FailureMarker;

/// Folders of the cache, relative to its root.
pub(crate) const REMOTES: &str = "remotes";
pub(crate) const FILES: &str = "files";
pub(crate) const MARKERS: &str = "markers";
pub(crate) const LOCKS: &str = "locks";

/// First read of a header; enough for any header Hearth writes.
pub(crate) const HEADER_PROBE_BYTES: u64 = 4 * 1024;
/// Largest header read before a snapshot is treated as invalid.
pub(crate) const HEADER_MAX_BYTES: u64 = 64 * 1024;

/// The shared context cache: one per data directory, shared by every project.
///
/// Cheap to clone; clones share the root. Nothing is created until first written.
#[derive(Clone, Debug)]
pub struct ContextCache {
    fs: CacheFs,
}

/// The kinds of sources converted into snapshots.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ArtifactKind {
    Web,
    Youtube,
    File,
}

impl ArtifactKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Web => "web",
            Self::Youtube => "youtube",
            Self::File => "file",
        }
    }

    fn directory(self) -> &'static str {
        match self {
            Self::Web | Self::Youtube => REMOTES,
            Self::File => FILES,
        }
    }
}

/// A source's snapshot in the cache, named from its identity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Artifact {
    pub(crate) kind: ArtifactKind,
    /// `kind-<md5(identity)>.md`: also the key of its lock.
    pub(crate) name: String,
    /// `remotes/<name>` or `files/<name>`.
    pub(crate) relative: PathBuf,
    /// `failed-<kind>-<md5(identity)>.json`.
    pub(crate) marker_name: String,
}

impl Artifact {
    /// The snapshot of a web page or YouTube video (`url` exactly as configured, trimmed).
    pub(crate) fn remote(kind: ArtifactKind, url: &str) -> Self {
        Self::named(kind, &md5_hex(url.trim().as_bytes()))
    }

    /// The snapshot of the file at the absolute `path`.
    pub(crate) fn file(path: &Path) -> Self {
        Self::named(
            ArtifactKind::File,
            &md5_hex(path.as_os_str().as_encoded_bytes()),
        )
    }

    fn named(kind: ArtifactKind, hash: &str) -> Self {
        let name = format!("{}-{hash}.md", kind.as_str());
        Self {
            kind,
            relative: Path::new(kind.directory()).join(&name),
            marker_name: format!("failed-{}-{hash}.json", kind.as_str()),
            name,
        }
    }
}

/// A snapshot's header and size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Stored {
    pub(crate) header: SnapshotHeader,
    pub(crate) bytes: u64,
}

impl ContextCache {
    /// The cache rooted at `root` (normally `<data dir>/context-cache`). A relative
    /// root is made absolute against the current directory.
    pub fn new(root: PathBuf) -> Self {
        let root = std::path::absolute(&root).unwrap_or(root);
        Self {
            fs: CacheFs::new(root),
        }
    }

    /// The cache's root directory.
    pub fn root(&self) -> &Path {
        self.fs.root()
    }

    /// The absolute path of `relative` inside the cache, after the lexical confinement
    /// checks: no `..` or `.`, nothing absolute, nothing empty.
    pub fn resolve_within(&self, relative: &Path) -> Result<PathBuf> {
        self.fs.resolve(relative)
    }

    pub(crate) fn fs(&self) -> &CacheFs {
        &self.fs
    }

    pub(crate) fn snapshot_path(&self, artifact: &Artifact) -> PathBuf {
        self.fs.root().join(&artifact.relative)
    }

    /// The header and size of the artifact's snapshot; `None` if there is none or it is
    /// not a snapshot Hearth can read (a miss).
    pub(crate) fn read_snapshot(&self, artifact: &Artifact) -> Result<Option<Stored>> {
        let Some((file, metadata)) = self.fs.open(&artifact.relative)? else {
            return Ok(None);
        };
        let mut prefix = Vec::with_capacity(HEADER_PROBE_BYTES as usize);
        let mut reader = file.take(HEADER_MAX_BYTES);
        let path = self.snapshot_path(artifact);
        (&mut reader)
            .take(HEADER_PROBE_BYTES)
            .read_to_end(&mut prefix)
            .map_err(super::error::ContextError::io("read", &path))?;
        let mut parsed = SnapshotHeader::parse(&prefix);
        if parsed == Parsed::Incomplete && metadata.len() > HEADER_PROBE_BYTES {
            reader
                .read_to_end(&mut prefix)
                .map_err(super::error::ContextError::io("read", &path))?;
            parsed = SnapshotHeader::parse(&prefix);
        }
        Ok(match parsed {
            Parsed::Header(header) => Some(Stored {
                header,
                bytes: metadata.len(),
            }),
            Parsed::Incomplete | Parsed::Invalid => None,
        })
    }

    pub(crate) fn marker_directory(project_id: &str) -> PathBuf {
        Path::new(MARKERS).join(md5_hex(project_id.as_bytes()))
    }

    /// Names of the project's failure markers.
    pub(crate) fn marker_names(&self, project_id: &str) -> Result<HashSet<String>> {
        Ok(self
            .fs
            .list(&Self::marker_directory(project_id))?
            .into_iter()
            .map(|entry| entry.name)
            .collect())
    }

    /// The project's failure marker for the artifact; an unreadable one reads as none.
    pub(crate) fn read_marker(
        &self,
        project_id: &str,
        artifact: &Artifact,
    ) -> Result<Option<FailureMarker>> {
        let relative = Self::marker_directory(project_id).join(&artifact.marker_name);
        Ok(self
            .fs
            .read(&relative)?
            .and_then(|bytes| FailureMarker::from_json(&bytes)))
    }

    pub(crate) fn write_marker(
        &self,
        project_id: &str,
        artifact: &Artifact,
        marker: &FailureMarker,
    ) -> Result<()> {
        let relative = Self::marker_directory(project_id).join(&artifact.marker_name);
        self.fs.write(&relative, &marker.to_json()).map(drop)
    }

    /// Removes the project's marker for the artifact; `false` if there was none.
    pub(crate) fn remove_marker(&self, project_id: &str, artifact: &Artifact) -> Result<bool> {
        let relative = Self::marker_directory(project_id).join(&artifact.marker_name);
        self.fs.remove(&relative)
    }
}
