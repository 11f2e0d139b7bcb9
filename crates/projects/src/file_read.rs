//! `file_read`: the read-only tool that lets Hearth's own agent read what a project gives
//! it — files in the session's working directories (the project's folder and the folders
//! it lists) and the Markdown snapshots its `<project_context>` block names. Paths are
//! confined by the kernel (`hearth-confine`): nothing outside those directories, nothing
//! else of Hearth's data directory, no symlink or `..` escape. In a session whose client
//! reads files for it ([`ClientFiles`]: an editor over the Agent Client Protocol), a file
//! of the working directories that passes those checks is read through the client, so
//! the agent sees the editor's unsaved buffer; a client error is the call's error.

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use hearth_confine::Roots;
use hearth_core::{ToolCallContext, ToolError, ToolHandler, ToolOutput, ToolReach};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::client_files::ClientFiles;

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
    /// The sessions whose files are read through their client.
    client_files: ClientFiles,
}

impl FileReadTool {
    /// The tool, with Hearth's data directory off limits except the context cache.
    pub fn new(data_directory: PathBuf, snapshots: PathBuf) -> Self {
        Self {
            data_directory,
            snapshots,
            client_files: ClientFiles::default(),
        }
    }

    /// The tool, reading the files of the sessions in `client_files` through their
    /// client (context snapshots still from disk).
    pub fn with_client_files(mut self, client_files: ClientFiles) -> Self {
        self.client_files = client_files;
        self
    }

    /// Whether `path` is in the context cache.
    fn is_snapshot(&self, path: &Path) -> bool {
        let snapshots = self
            .snapshots
            .canonicalize()
            .unwrap_or_else(|_| self.snapshots.clone());
        path.starts_with(&snapshots) || path.starts_with(&self.snapshots)
    }

    fn roots_for(&self, call: &ToolCallContext, path: &Path) -> Result<Roots, ToolError> {
        let snapshots = self
            .snapshots
            .canonicalize()
            .unwrap_or_else(|_| self.snapshots.clone());
        let refused = |error: hearth_confine::Error| ToolError::Refused(error.to_string());
        if self.is_snapshot(path) {
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

    fn reach(&self) -> ToolReach {
        ToolReach::Private
    }

    fn execute<'a>(
        &'a self,
        call: &'a ToolCallContext,
        arguments: Value,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let arguments: Arguments = hearth_core::parse_arguments(self.name(), arguments)?;
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
            let client = if self.is_snapshot(&path) {
                None
            } else {
                self.client_files.get(&call.session)
            };
            let target = path.clone();
            // The confined read is also the check a client's read must pass first.
            let read = tokio::task::spawn_blocking(move || roots.read(&target, READ_LIMIT))
                .await
                .map_err(|error| ToolError::Failed(format!("reading failed: {error}")))?;
            let bytes = match read {
                Ok(bytes) => bytes,
                Err(error) => return Err(ToolError::Refused(error.to_string())),
            };
            let text = match (client, bytes) {
                // The editor may hold a buffer not yet saved to disk.
                (Some(client), _) => client.read(&path).await.map_err(|error| {
                    ToolError::Failed(format!(
                        "the editor could not read {}: {error}",
                        path.display()
                    ))
                })?,
                (None, Some(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
                (None, None) => {
                    return Err(ToolError::Failed(format!(
                        "{} does not exist",
                        path.display()
                    )));
                }
            };
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use hearth_core::{ChatUri, HarnessId, Scope, SessionId, SessionUri, TurnId};
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::client_files::ClientFileReader;

    /// A client that answers every read with one text, or fails.
    struct Editor(Result<String, String>);

    impl ClientFileReader for Editor {
        fn read<'a>(&'a self, _path: &'a Path) -> BoxFuture<'a, Result<String, String>> {
            Box::pin(async move { self.0.clone() })
        }
    }

    fn call(directory: &Path) -> ToolCallContext {
        let session = SessionUri::new(HarnessId::parse("mock").unwrap(), SessionId::generate());
        ToolCallContext {
            chat: ChatUri::default_for(&session),
            session,
            turn_id: TurnId::generate(),
            call_id: "call".into(),
            scope: Scope::Global,
            working_directories: vec![directory.to_path_buf()],
        }
    }

    async fn read(
        tool: &FileReadTool,
        call: &ToolCallContext,
        path: &Path,
    ) -> Result<String, ToolError> {
        let arguments = json!({"path": path.display().to_string(), "offset": 2, "limit": 1});
        match tool.execute(call, arguments).await? {
            ToolOutput::Content { text, .. } => Ok(text),
            other => panic!("unexpected output {other:?}"),
        }
    }

    #[test]
    fn the_schema_says_what_the_arguments_are() {
        let schema = FileReadTool::new(PathBuf::from("/a"), PathBuf::from("/b")).parameters();
        assert_eq!(schema["required"], json!(["path"]));
        assert_eq!(schema["additionalProperties"], json!(false));
        for line in ["offset", "limit"] {
            assert_eq!(schema["properties"][line]["minimum"], json!(1), "{schema}");
        }
        assert_eq!(
            schema["properties"]["path"]["description"],
            json!("The file's path.")
        );
    }

    #[tokio::test]
    async fn a_session_with_a_client_reads_its_files_through_it_after_the_confinement_check() {
        let home = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let snapshots = home.path().join("context");
        std::fs::create_dir_all(&snapshots).unwrap();
        std::fs::write(work.path().join("a.txt"), "disk 1\ndisk 2\n").unwrap();
        std::fs::write(outside.path().join("b.txt"), "secret\n").unwrap();
        std::fs::write(snapshots.join("s.md"), "snap 1\nsnap 2\n").unwrap();
        let files = ClientFiles::new();
        let tool = FileReadTool::new(home.path().to_path_buf(), snapshots.clone())
            .with_client_files(files.clone());
        let ours = call(work.path());
        let other = call(work.path());
        files.set(
            &ours.session,
            Arc::new(Editor(Ok("buffer 1\nbuffer 2\nbuffer 3".into()))),
        );
        let file = work.path().join("a.txt");

        assert_eq!(
            read(&tool, &ours, &file).await.unwrap(),
            "buffer 2\n[lines 2-2 of 3; read on with offset 3]"
        );
        assert_eq!(read(&tool, &other, &file).await.unwrap(), "disk 2");
        assert_eq!(
            read(&tool, &ours, &snapshots.join("s.md")).await.unwrap(),
            "snap 2"
        );
        assert!(matches!(
            read(&tool, &ours, &outside.path().join("b.txt")).await,
            Err(ToolError::Refused(_))
        ));

        files.set(
            &ours.session,
            Arc::new(Editor(Err("no such buffer".into()))),
        );
        let error = read(&tool, &ours, &file).await.unwrap_err();
        assert!(
            matches!(&error, ToolError::Failed(message) if message.contains("no such buffer")),
            "{error:?}"
        );

        files.clear();
        assert_eq!(read(&tool, &ours, &file).await.unwrap(), "disk 2");
    }
}
