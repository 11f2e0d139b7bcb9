//! Sessions on disk: one JSON file per session, named `<session id>.json`.
//!
//! Files are written whole (a temporary file renamed over the old one), so a second
//! process reading the directory never sees half a session. Only ids this agent could
//! have made (UUIDs) are ever turned into paths.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::McpServer;
use anyhow::Context;
use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The model a new session starts with.
pub(crate) const DEFAULT_MODEL: &str = "test-small";
/// The mode a new session starts in.
pub(crate) const DEFAULT_MODE: &str = "ask";

fn default_mode() -> String {
    DEFAULT_MODE.to_owned()
}

/// One exchange of the history: what the user sent and what the agent streamed back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Exchange {
    /// The prompt's text blocks, concatenated.
    pub(crate) user: String,
    /// Every `agent_message_chunk` text of the turn, concatenated.
    pub(crate) agent: String,
}

/// A persisted session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionRecord {
    /// The session id (a UUID).
    pub(crate) id: String,
    /// The working directory the client gave last.
    pub(crate) cwd: PathBuf,
    /// Additional directories the client gave last.
    #[serde(default)]
    pub(crate) additional_directories: Vec<PathBuf>,
    /// MCP servers exactly as the client sent them last.
    #[serde(default)]
    pub(crate) mcp_servers: Vec<McpServer>,
    /// A title: the first prompt's first line, or what `/title` set.
    #[serde(default)]
    pub(crate) title: Option<String>,
    /// When the session was created.
    pub(crate) created_at: DateTime<Utc>,
    /// When the history, title or model last changed.
    pub(crate) updated_at: DateTime<Utc>,
    /// The selected model (`test-small` or `test-large`).
    pub(crate) model: String,
    /// The selected mode (`ask` or `code`).
    #[serde(default = "default_mode")]
    pub(crate) mode: String,
    /// Every answered turn, oldest first.
    #[serde(default)]
    pub(crate) history: Vec<Exchange>,
}

impl SessionRecord {
    /// A fresh session with a new id.
    pub(crate) fn new(
        cwd: PathBuf,
        additional_directories: Vec<PathBuf>,
        mcp_servers: Vec<McpServer>,
    ) -> Self {
        let now = Utc::now();
        Self {
            id: Uuid::now_v7().to_string(),
            cwd,
            additional_directories,
            mcp_servers,
            title: None,
            created_at: now,
            updated_at: now,
            model: DEFAULT_MODEL.to_owned(),
            mode: DEFAULT_MODE.to_owned(),
            history: Vec::new(),
        }
    }

    /// `updatedAt` as the protocol carries it (RFC 3339).
    pub(crate) fn updated_at_text(&self) -> String {
        self.updated_at.to_rfc3339_opts(SecondsFormat::Millis, true)
    }
}

/// The directory of session files.
pub(crate) struct Store {
    dir: PathBuf,
}

impl Store {
    /// A store over an existing directory.
    pub(crate) fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    /// The file of session `id`, or `None` when `id` is not a UUID (and so names no
    /// session this agent made).
    fn path(&self, id: &str) -> Option<PathBuf> {
        let id = Uuid::parse_str(id).ok()?;
        Some(self.dir.join(format!("{}.json", id.hyphenated())))
    }

    /// Reads session `id`; `None` when there is no such session.
    pub(crate) fn load(&self, id: &str) -> anyhow::Result<Option<SessionRecord>> {
        let Some(path) = self.path(id) else {
            return Ok(None);
        };
        match std::fs::read(&path) {
            Ok(bytes) => read_record(&path, &bytes).map(Some),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => {
                Err(error).with_context(|| format!("reading session file {}", path.display()))
            }
        }
    }

    /// Writes `record` whole, replacing any earlier version.
    pub(crate) fn save(&self, record: &SessionRecord) -> anyhow::Result<()> {
        let path = self
            .path(&record.id)
            .with_context(|| format!("session id {:?} is not a UUID", record.id))?;
        let temporary = self
            .dir
            .join(format!(".{}.{}.tmp", record.id, std::process::id()));
        let bytes = serde_json::to_vec_pretty(record).context("encoding a session record")?;
        std::fs::write(&temporary, bytes)
            .with_context(|| format!("writing {}", temporary.display()))?;
        std::fs::rename(&temporary, &path)
            .with_context(|| format!("renaming {} to {}", temporary.display(), path.display()))
    }

    /// Every readable session, most recently updated first (ties by id). Unreadable
    /// files are skipped with a warning.
    pub(crate) fn list(&self) -> anyhow::Result<Vec<SessionRecord>> {
        let entries = std::fs::read_dir(&self.dir)
            .with_context(|| format!("listing {}", self.dir.display()))?;
        let mut records = Vec::new();
        for entry in entries {
            let path = entry
                .with_context(|| format!("listing {}", self.dir.display()))?
                .path();
            let is_session = path
                .extension()
                .is_some_and(|extension| extension == "json")
                && path
                    .file_stem()
                    .and_then(|stem| stem.to_str())
                    .is_some_and(|stem| Uuid::parse_str(stem).is_ok());
            if !is_session {
                continue;
            }
            let record = std::fs::read(&path)
                .with_context(|| format!("reading session file {}", path.display()))
                .and_then(|bytes| read_record(&path, &bytes));
            match record {
                Ok(record) => records.push(record),
                Err(error) => tracing::warn!("skipping a session file: {error:#}"),
            }
        }
        records.sort_by(|a, b| {
            b.updated_at
                .cmp(&a.updated_at)
                .then_with(|| a.id.cmp(&b.id))
        });
        Ok(records)
    }
}

fn read_record(path: &Path, bytes: &[u8]) -> anyhow::Result<SessionRecord> {
    serde_json::from_slice(bytes)
        .with_context(|| format!("session file {} is not a session record", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_saved_session_reads_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().to_path_buf());
        let mut record = SessionRecord::new("/work".into(), vec!["/extra".into()], Vec::new());
        record.history.push(Exchange {
            user: "hello".into(),
            agent: "echo: hello".into(),
        });
        store.save(&record).unwrap();
        assert_eq!(store.load(&record.id).unwrap(), Some(record.clone()));
        assert_eq!(store.list().unwrap(), vec![record]);
    }

    #[test]
    fn ids_that_are_not_uuids_name_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().to_path_buf());
        std::fs::write(dir.path().join("x.json"), "{}").unwrap();
        assert_eq!(store.load("../x").unwrap(), None);
        assert_eq!(store.load("x").unwrap(), None);
        assert!(store.list().unwrap().is_empty());
    }
}
