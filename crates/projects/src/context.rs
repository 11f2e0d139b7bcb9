//! The shared context cache and the materializer.
//!
//! A project lists [`ContextSource`]s: web pages, YouTube videos, files, folders and
//! glob patterns. The [`Materializer`] turns them into a [`Manifest`] whose
//! [`Manifest::render`] is the `<project_context>` block of a session's first prompt:
//! one line per source with the absolute path of its Markdown snapshot (agents read
//! snapshots with their file tools), or the reason it failed. Folders are not
//! converted; those outside the project folder become
//! [`Manifest::additional_directories`].
//!
//! Snapshots live in one [`ContextCache`] per data directory, shared by every project:
//!
//! - **Identity-named.** A snapshot's file name hashes the source's identity (the
//!   exact trimmed URL, or the file's absolute path), never its content or a project,
//!   so two projects referencing one source share one snapshot.
//! - **Fresh by fingerprint.** Each snapshot starts with a header carrying its
//!   fingerprint (a file's `mtime_ns:size`; a remote's `kind:url`, so a fetched URL is
//!   kept until its configured string changes). An unchanged source is a cheap skip:
//!   no fetch, no conversion.
//! - **Converted once.** A per-artifact lock, both in-process and across processes,
//!   wraps each source's read-decide-write: two projects cold-converting one source
//!   fetch it once; the second re-reads the header and skips.
//! - **Failure markers.** A source that fails with no usable snapshot leaves a marker
//!   in its project's bucket; automatic runs re-surface the stored error without
//!   retrying until the file changes or [`MaterializeOptions::retry_failed`] is set. A
//!   project's stale marker is cleared once the source has a snapshot.
//! - **Shared between nodes, when asked.** A team server's nodes each keep their own
//!   cache (agents read local files) over one [`SharedCache`] (S3 or a folder) with
//!   locks shared through the database: a source is converted once for all nodes, and
//!   a node with an empty cache copies what another node made. See the `shared`
//!   module for what is checked and what `clear`/`gc` leave to the operator.
//! - **Root-confined.** Internal paths are relative to the root; `..`, absolute paths
//!   and symbolic links below the root are refused. Directories are 0700, files 0600,
//!   writes atomic (temporary file, sync, rename).
//!
//! Materializing never fails: every error becomes the source's [`SourceStatus`].
//! [`ContextCache::status`], [`ContextCache::clear`] and [`ContextCache::gc`] serve the
//! CLI's cache commands; a retry is [`Materializer::materialize`] with `retry_failed`.
//!
//! This module does not read `project.md`, decide when to materialize (callers compare
//! [`signature`]s), or grant a session access to the snapshot directories
//! ([`Manifest::snapshot_directories`] says which they are).

mod admin;
mod cache;
mod digest;
mod error;
mod fs;
mod glob;
mod header;
mod lock;
mod manifest;
mod marker;
mod materialize;
mod plan;
mod remote;
mod shared;
mod source;
mod youtube;

pub use admin::{CacheState, GcReport, KnownFailure, SourceCacheStatus};
pub use cache::ContextCache;
pub use error::{Confinement, ContextError, Result};
pub use manifest::{Manifest, ManifestEntry, SourceStatus, StatusCounts};
pub use marker::FailureMarker;
pub use materialize::{
    DEFAULT_CONCURRENCY, MaterializeOptions, Materializer, NoProgress, Progress, ProjectRef,
};
pub use plan::GLOB_CAP;
pub use shared::{SharedCache, SharedLockError, SharedLockGuard, SharedLocks};
pub use source::{ContextSource, signature};
pub use youtube::DEFAULT_YOUTUBE_BASE;

pub(crate) use digest::hex;
pub(crate) use glob::expand as expand_glob;
pub(crate) use source::resolve_path;
