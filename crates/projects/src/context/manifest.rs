//! The result of materializing a project's context, and its `<project_context>` block.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::source::ContextSource;

/// What became of one source.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SourceStatus {
    /// A Markdown snapshot is ready to read.
    Ready {
        /// The snapshot's absolute path.
        snapshot: PathBuf,
        /// The document's title, if it has one.
        title: Option<String>,
        /// Whether the snapshot was already cached (nothing was fetched or converted).
        fresh: bool,
        /// The snapshot's size.
        bytes: u64,
    },
    /// A folder the agent may search (not converted).
    Directory {
        /// Its absolute path.
        path: PathBuf,
    },
    /// A glob pattern; the files it matched follow as their own entries.
    Expanded {
        /// How many files are listed.
        matched: usize,
        /// Whether more files matched than are listed.
        capped: bool,
    },
    /// The source could not be materialized.
    Failed {
        /// Why, as shown to the user.
        reason: String,
        /// Whether the reason comes from an earlier run's failure marker (nothing was
        /// retried; retry explicitly, or change the file).
        cached_marker: bool,
    },
}

/// One source and what became of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestEntry {
    /// The source (a glob's matches appear as file sources with absolute paths).
    pub source: ContextSource,
    /// Its status.
    pub status: SourceStatus,
}

/// The materialized context of a project.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// One entry per source, in the project's order; a glob's matches follow it.
    pub entries: Vec<ManifestEntry>,
    /// Folders outside the project folder that the session should be able to search.
    pub additional_directories: Vec<PathBuf>,
    /// The [`signature`](super::signature) of the sources materialized.
    pub signature: String,
}

/// The block's first line, telling the agent what the list is.
const INSTRUCTION: &str = "This project has context sources. Ready sources were converted to Markdown snapshots: read a snapshot with your file tools when it is relevant. Folders are yours to search.";

impl Manifest {
    /// The `<project_context>` block for a session's first prompt: an instruction line,
    /// then one line per source with its status, and a snapshot's absolute path or a
    /// failure's reason. Empty when there are no sources.
    pub fn render(&self) -> String {
        if self.entries.is_empty() {
            return String::new();
        }
        let mut text = String::from("<project_context>\n");
        text.push_str(INSTRUCTION);
        text.push('\n');
        for entry in &self.entries {
            let source = one_line(&entry.source.to_string());
            // Writing to a String cannot fail.
            let line = match &entry.status {
                SourceStatus::Ready {
                    snapshot, title, ..
                } => match title {
                    Some(title) => format!(
                        "- {source} | ready | {} | {}",
                        snapshot.display(),
                        one_line(title)
                    ),
                    None => format!("- {source} | ready | {}", snapshot.display()),
                },
                SourceStatus::Directory { path } => {
                    format!("- {source} | folder | {}", path.display())
                }
                SourceStatus::Expanded { matched, capped } => {
                    let more = if *capped {
                        " (more matched; only these are listed)"
                    } else {
                        ""
                    };
                    format!("- {source} | {matched} matching files{more}")
                }
                SourceStatus::Failed { reason, .. } => {
                    format!("- {source} | failed | {}", one_line(reason))
                }
            };
            if writeln!(text, "{line}").is_err() {
                break;
            }
        }
        text.push_str("</project_context>\n");
        text
    }

    /// The directories holding ready snapshots: what a session must be allowed to read
    /// for the agent to open them.
    pub fn snapshot_directories(&self) -> Vec<PathBuf> {
        let mut directories: Vec<PathBuf> = Vec::new();
        for entry in &self.entries {
            if let SourceStatus::Ready { snapshot, .. } = &entry.status
                && let Some(parent) = snapshot.parent()
                && !directories.iter().any(|known| known == parent)
            {
                directories.push(parent.to_path_buf());
            }
        }
        directories
    }

    /// Counts of ready, folder and failed entries (globs themselves not counted).
    pub fn counts(&self) -> StatusCounts {
        let mut counts = StatusCounts::default();
        for entry in &self.entries {
            match entry.status {
                SourceStatus::Ready { fresh, .. } => {
                    counts.ready += 1;
                    if !fresh {
                        counts.converted += 1;
                    }
                }
                SourceStatus::Directory { .. } => counts.folders += 1,
                SourceStatus::Expanded { .. } => {}
                SourceStatus::Failed { .. } => counts.failed += 1,
            }
        }
        counts
    }
}

/// A summary of a [`Manifest`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatusCounts {
    /// Snapshots ready.
    pub ready: usize,
    /// Of those, converted by this run.
    pub converted: usize,
    /// Folders listed.
    pub folders: usize,
    /// Sources that failed.
    pub failed: usize,
}

/// `text` on one line: line breaks and `|` (the block's separator) become spaces.
fn one_line(text: &str) -> String {
    text.split(['\n', '\r', '|'])
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
