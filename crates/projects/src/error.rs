//! Errors of projects: what failed, on which project or file, and what to do.

use std::path::PathBuf;

use thiserror::Error;

use crate::trust::{Review, needs_trust_message};

/// A project operation's failure.
#[derive(Debug, Error)]
pub enum ProjectError {
    /// The folder holds no `project.md`.
    #[error(
        "{} is not a project: it has no project.md (make one with `hearth projects new NAME --folder {}`)",
        folder.display(),
        folder.display()
    )]
    NoProjectFile {
        /// The folder.
        folder: PathBuf,
    },
    /// `project.md` could not be read as a project.
    #[error("{} is not a valid project file: {detail}; fix it in an editor", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// No project has that id or name.
    #[error("no project is called `{0}`; `hearth projects list` shows them")]
    Unknown(String),
    /// A name or id prefix matches several projects.
    #[error("`{key}` could mean several projects ({matches}); give more of its id")]
    Ambiguous {
        /// What was given.
        key: String,
        /// The projects it matches.
        matches: String,
    },
    /// The project's folder is gone (moved, renamed or deleted).
    #[error(
        "project `{name}` ({id}) is missing: its folder {} is gone; if it moved, run `hearth projects relink {id} NEW-FOLDER`; its sessions stay readable",
        folder.display()
    )]
    Missing {
        /// The project's id.
        id: String,
        /// Its name.
        name: String,
        /// Where its folder was.
        folder: PathBuf,
    },
    /// The folder's `project.md` belongs to another project.
    #[error(
        "{} holds project {found}, not {expected}; give the folder of project {expected}",
        folder.display()
    )]
    OtherProject {
        /// The folder.
        folder: PathBuf,
        /// The id asked for.
        expected: String,
        /// The id found.
        found: String,
    },
    /// The project's file asks something of the user's trust that they have not given
    /// (adopting it, or it changed since): the review says what.
    #[error("{}", needs_trust_message(.0))]
    NeedsTrust(Box<Review>),
    /// The user trusted the file as they saw it, and it changed since: the review says
    /// what it gives now.
    #[error(
        "the project.md in {} changed since it was shown to you; look at it again before trusting it",
        .0.folder.display()
    )]
    ChangedSinceShown(Box<Review>),
    /// The request makes no sense.
    #[error("{0}")]
    Invalid(String),
    /// A file operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The failure.
        source: std::io::Error,
    },
    /// The registry failed.
    #[error(transparent)]
    Store(#[from] hearth_store::StoreError),
}

/// Result of a project operation.
pub type ProjectResult<T> = Result<T, ProjectError>;
