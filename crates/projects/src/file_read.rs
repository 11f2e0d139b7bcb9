//! `file_read`: the read-only tool that lets Hearth's own agent read what a project gives
//! it — files in the session's working directories (the project's folder and the folders
//! it lists) and the Markdown snapshots its `<project_context>` block names. Paths are
//! confined by the kernel (`hearth-confine`): nothing outside those directories, nothing
//! else of Hearth's data directory, no symlink or `..` escape.

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use hearth_confine::Roots;
use hearth_core::{ToolCallContext, ToolError, ToolHandler, ToolOutput};
use serde::Deserialize;
use serde_json::{Value, json};

/// The most a call reads of a file.
const READ_LIMIT: u64 = 4 * 1024 * 1024;
/// The most text a call returns (a model's context is not a file system).
const ANSWER_LIMIT: usize = 100 * 1024;
/// Lines returned when the model names none.
const DEFAULT_LINES: usize = 2000;

/// The `file_read` tool.
pub struct FileReadTool {
    /// Hearth's data directory: off limits.
    data_directory: PathBuf,
    /// The context cache inside it: readable.
    snapshots: PathBuf,
}

impl FileReadTool {
    /// The tool, with Hearth's data directory off limits except the context cache.
    pub fn new(data_directory: PathBuf, snapshots: PathBuf) -> Self {
        Self {
            data_directory,
            snapshots,
        }
    }

    fn roots_for(&self, call: &ToolCallContext, path: &Path) -> Result<Roots, ToolError> {
        let snapshots = self
            .snapshots
            .canonicalize()
            .unwrap_or_else(|_| self.snapshots.clone());
        let refused = |error: hearth_confine::Error| ToolError::Refused(error.to_string());
        if path.starts_with(&snapshots) || path.starts_with(&self.snapshots) {
            return Roots::new(std::slice::from_ref(&snapshots), &[]).map_err(refused);
        }
        let data = self
            .data_directory
            .canonicalize()
            .unwrap_or_else(|_| self.data_directory.clone());
        let directories: Vec<PathBuf> = call
            .working_directories
            .iter()
            .filter(|directory| {
                let directory = directory
                    .canonicalize()
                    .unwrap_or_else(|_| (*directory).clone());
                !directory.starts_with(&data)
            })
            .cloned()
            .collect();
        if directories.is_empty() {
            return Err(ToolError::Refused(
                "this session has no working directory to read files from".into(),
            ));
        }
        Roots::new(&directories, std::slice::from_ref(&data)).map_err(refused)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Arguments {
    path: String,
    #[serde(default)]
    offset: Option<usize>,
    #[serde(default)]
    limit: Option<usize>,
}

/// Lines `offset..offset + limit` (from 1), cut to the answer limit on a character
/// boundary, with a note saying what was left out.
fn excerpt(text: &str, offset: usize, limit: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = offset.saturating_sub(1).min(lines.len());
    let end = start.saturating_add(limit).min(lines.len());
    let mut answer = lines[start..end].join("\n");
    let mut notes = Vec::new();
    if answer.len() > ANSWER_LIMIT {
        let mut cut = ANSWER_LIMIT;
        while !answer.is_char_boundary(cut) {
            cut -= 1;
        }
        answer.truncate(cut);
        notes.push("cut at 100 KiB".to_owned());
    }
    if end < lines.len() {
        notes.push(format!(
            "lines {}-{} of {}; read on with offset {}",
            start + 1,
            end,
            lines.len(),
            end + 1
        ));
    }
    if !notes.is_empty() {
        answer.push_str(&format!("\n[{}]", notes.join("; ")));
    }
    answer
}

impl ToolHandler for FileReadTool {
    fn name(&self) -> &str {
        "file_read"
    }

    fn description(&self) -> &str {
        "Reads a text file: one in the session's working directories (a project's folder and the folders it lists), or a context snapshot named in a <project_context> block. Give an absolute path, or one relative to the first working directory; `offset` (first line, from 1) and `limit` (lines) read a long file in parts."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The file's path."},
                "offset": {"type": "integer", "minimum": 1, "description": "First line to read (from 1)."},
                "limit": {"type": "integer", "minimum": 1, "description": "How many lines to read."}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    fn mutates(&self) -> bool {
        false
    }

    fn execute<'a>(
        &'a self,
        call: &'a ToolCallContext,
        arguments: Value,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let arguments: Arguments = serde_json::from_value(arguments)
                .map_err(|error| ToolError::InvalidArguments(error.to_string()))?;
            let given = PathBuf::from(arguments.path.trim());
            let path = if given.is_absolute() {
                given
            } else {
                match call.working_directories.first() {
                    Some(first) => first.join(given),
                    None => {
                        return Err(ToolError::InvalidArguments(
                            "give an absolute path: this session has no working directory".into(),
                        ));
                    }
                }
            };
            let roots = self.roots_for(call, &path)?;
            let target = path.clone();
            let read = tokio::task::spawn_blocking(move || roots.read(&target, READ_LIMIT))
                .await
                .map_err(|error| ToolError::Failed(format!("reading failed: {error}")))?;
            let bytes = match read {
                Ok(Some(bytes)) => bytes,
                Ok(None) => {
                    return Err(ToolError::Failed(format!(
                        "{} does not exist",
                        path.display()
                    )));
                }
                Err(error) => return Err(ToolError::Refused(error.to_string())),
            };
            let text = String::from_utf8_lossy(&bytes);
            let answer = excerpt(
                &text,
                arguments.offset.unwrap_or(1),
                arguments.limit.unwrap_or(DEFAULT_LINES),
            );
            Ok(ToolOutput::Content {
                text: answer,
                data: None,
            })
        })
    }
}
