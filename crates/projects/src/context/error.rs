//! The context cache's one error type.

use std::fmt;
use std::path::PathBuf;

use hearth_core::redact_userinfo;
use hearth_fetch::FetchError;
use thiserror::Error;

use crate::convert::ConvertError;

/// The confinement rule that refused a path inside the cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Confinement {
    /// Internal paths are relative to the cache root.
    Relative,
    /// Internal paths have no `..` (or `.`) components.
    NoParent,
    /// Internal paths name something.
    NotEmpty,
    /// Nothing below the root is a symbolic link.
    NoSymlink,
    /// No file read from the cache has a second hard link (it may be a file outside).
    SingleLink,
}

impl Confinement {
    /// A stable short code for logs and tests.
    pub fn code(self) -> &'static str {
        match self {
            Self::Relative => "relative",
            Self::NoParent => "no-parent",
            Self::NotEmpty => "not-empty",
            Self::NoSymlink => "no-symlink",
            Self::SingleLink => "single-link",
        }
    }
}

impl fmt::Display for Confinement {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.code())
    }
}

/// Why a context operation failed. Messages say what failed, on what, and what to do.
#[derive(Debug, Error)]
pub enum ContextError {
    /// A path inside the cache broke a confinement rule.
    #[error(
        "refused the context cache path {}: rule {rule}; remove what is there (the \
         context cache is safe to clear)",
        .path.display()
    )]
    Confined {
        /// The path, as asked for (relative) or as found (absolute).
        path: PathBuf,
        /// The rule that refused it.
        rule: Confinement,
    },
    /// Something in the cache is not the kind of entry expected.
    #[error(
        "{} in the context cache is not a {expected}; remove it (the context cache is \
         safe to clear)",
        .path.display()
    )]
    WrongKind {
        /// The entry.
        path: PathBuf,
        /// What it should have been.
        expected: &'static str,
    },
    /// A file system operation failed.
    #[error("could not {operation} {}: {source}", .path.display())]
    Io {
        /// What was being done ("read", "create directory", …).
        operation: &'static str,
        /// On what.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The cache's directory could not be used (the kernel cannot confine access to it,
    /// or something in it changed while it was checked).
    #[error("the context cache: {0}")]
    Cache(hearth_confine::Error),
    /// A file or folder source does not exist.
    #[error("not found: {}", .path.display())]
    NotFound {
        /// The missing path.
        path: PathBuf,
    },
    /// A file source names a directory (or something else that is not a file).
    #[error("{} is not a regular file; add a folder as a folder source", .path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// A glob pattern matched nothing.
    #[error("no files match {pattern:?}")]
    NoMatches {
        /// The pattern.
        pattern: String,
    },
    /// Fetching a web or YouTube source failed.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// Converting a document failed.
    #[error(transparent)]
    Convert(#[from] ConvertError),
    /// A web page was served with a content type Hearth does not convert.
    #[error(
        "{} is served as {content_type}, which Hearth does not convert; link an HTML \
         page or a document (PDF, DOCX, …) instead",
        redact_userinfo(url)
    )]
    UnsupportedContent {
        /// The URL.
        url: String,
        /// Its declared media type.
        content_type: String,
    },
    /// A YouTube source names no video.
    #[error(
        "{} is not a YouTube video link; use https://www.youtube.com/watch?v=… or https://youtu.be/…",
        redact_userinfo(url)
    )]
    NotAVideo {
        /// The URL.
        url: String,
    },
    /// A YouTube watch page carried no usable player data.
    #[error(
        "the YouTube page of {} has no video details ({reason}); check that the video is public",
        redact_userinfo(url)
    )]
    NoVideoDetails {
        /// The URL.
        url: String,
        /// What YouTube said, or what was missing.
        reason: String,
    },
    /// The shared store of a team server's context cache cannot be used as named.
    #[error(
        "the shared context cache `{location}` cannot be used: {reason}; name an S3 \
         bucket and prefix (`s3://bucket/prefix`, credentials and region from the AWS_* \
         environment variables) or an absolute folder (`file:///srv/hearth/context`)"
    )]
    SharedLocation {
        /// The location, as given.
        location: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The lock shared by the nodes of a team server could not be taken.
    #[error(
        "could not take the shared context cache's lock for `{location}`: {reason}; check \
         that the store's database can be reached"
    )]
    SharedLock {
        /// The shared store.
        location: String,
        /// Why.
        reason: String,
    },
    /// A background task (conversion or file access) ended abnormally.
    #[error("a context task failed: {message}")]
    Task {
        /// What happened.
        message: String,
    },
}

impl ContextError {
    /// Whether the failure belongs to the source (it is remembered in a failure
    /// marker), rather than to the cache or the machine (retried on the next run).
    pub fn is_source_failure(&self) -> bool {
        match self {
            Self::Fetch(_)
            | Self::Convert(_)
            | Self::UnsupportedContent { .. }
            | Self::NotAVideo { .. }
            | Self::NoVideoDetails { .. } => true,
            Self::Confined { .. }
            | Self::WrongKind { .. }
            | Self::Cache(_)
            | Self::Io { .. }
            | Self::NotFound { .. }
            | Self::NotAFile { .. }
            | Self::NoMatches { .. }
            | Self::SharedLocation { .. }
            | Self::SharedLock { .. }
            | Self::Task { .. } => false,
        }
    }

    pub(crate) fn io(
        operation: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io {
            operation,
            path,
            source,
        }
    }

    pub(crate) fn task(error: tokio::task::JoinError) -> Self {
        Self::Task {
            message: error.to_string(),
        }
    }
}

/// Result of a context operation.
pub type Result<T, E = ContextError> = std::result::Result<T, E>;
