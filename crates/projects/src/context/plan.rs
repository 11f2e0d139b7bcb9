//! Resolving a project's sources into work: paths made absolute against the project
//! folder, globs expanded, folders checked. Touches the file system; run it on a
//! blocking thread.

use std::path::{Path, PathBuf};

use super::cache::{Artifact, ArtifactKind};
use super::error::ContextError;
use super::glob;
use super::manifest::SourceStatus;
use super::source::{ContextSource, normalize, resolve_path};

/// Files one glob source may expand into.
pub const GLOB_CAP: usize = 200;

/// Something to convert into a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Work {
    /// A web page or document (`url` trimmed).
    Web { url: String },
    /// A YouTube video (`url` trimmed).
    Youtube { url: String },
    /// A local file (absolute, normalized).
    File { path: PathBuf },
}

impl Work {
    pub(crate) fn artifact(&self) -> Artifact {
        match self {
            Self::Web { url } => Artifact::remote(ArtifactKind::Web, url),
            Self::Youtube { url } => Artifact::remote(ArtifactKind::Youtube, url),
            Self::File { path } => Artifact::file(path),
        }
    }

    /// The source as recorded in the snapshot header.
    pub(crate) fn source(&self) -> ContextSource {
        match self {
            Self::Web { url } => ContextSource::Web { url: url.clone() },
            Self::Youtube { url } => ContextSource::Youtube { url: url.clone() },
            Self::File { path } => ContextSource::File { path: path.clone() },
        }
    }
}

/// What one entry of the manifest needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Convert (or find fresh in the cache).
    Convert(Work),
    /// Already decided.
    Done(SourceStatus),
}

/// A project's sources resolved.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Manifest entries to produce, in order.
    pub(crate) steps: Vec<(ContextSource, Step)>,
    /// Folders outside the project folder.
    pub(crate) additional_directories: Vec<PathBuf>,
}

/// Resolves `sources` against `project_folder`.
pub(crate) fn plan(project_folder: &Path, sources: &[ContextSource]) -> Plan {
    let project_folder = normalize(
        &std::path::absolute(project_folder).unwrap_or_else(|_| project_folder.to_path_buf()),
    );
    let mut plan = Plan::default();
    for source in sources {
        match source {
            ContextSource::Web { url } => plan.push(
                source,
                Step::Convert(Work::Web {
                    url: url.trim().to_owned(),
                }),
            ),
            ContextSource::Youtube { url } => plan.push(
                source,
                Step::Convert(Work::Youtube {
                    url: url.trim().to_owned(),
                }),
            ),
            ContextSource::File { path } => {
                let path = resolve_path(&project_folder, path);
                if path.is_dir() {
                    plan.folder(&project_folder, source, path);
                } else {
                    plan.push(source, Step::Convert(Work::File { path }));
                }
            }
            ContextSource::Folder { path } => {
                let path = resolve_path(&project_folder, path);
                if path.is_dir() {
                    plan.folder(&project_folder, source, path);
                } else {
                    plan.push(source, failed(&ContextError::NotFound { path }));
                }
            }
            ContextSource::Glob { pattern } => {
                let absolute = resolve_path(&project_folder, Path::new(pattern));
                let expansion = glob::expand(&absolute, GLOB_CAP);
                if expansion.files.is_empty() {
                    let error = ContextError::NoMatches {
                        pattern: pattern.clone(),
                    };
                    plan.push(source, failed(&error));
                    continue;
                }
                plan.push(
                    source,
                    Step::Done(SourceStatus::Expanded {
                        matched: expansion.files.len(),
                        capped: expansion.capped,
                    }),
                );
                for path in expansion.files {
                    let file = ContextSource::File { path: path.clone() };
                    plan.push(&file, Step::Convert(Work::File { path }));
                }
            }
        }
    }
    plan
}

impl Plan {
    fn push(&mut self, source: &ContextSource, step: Step) {
        self.steps.push((source.clone(), step));
    }

    fn folder(&mut self, project_folder: &Path, source: &ContextSource, path: PathBuf) {
        if !path.starts_with(project_folder) && !self.additional_directories.contains(&path) {
            self.additional_directories.push(path.clone());
        }
        self.push(source, Step::Done(SourceStatus::Directory { path }));
    }
}

fn failed(error: &ContextError) -> Step {
    Step::Done(SourceStatus::Failed {
        reason: error.to_string(),
        cached_marker: false,
    })
}
