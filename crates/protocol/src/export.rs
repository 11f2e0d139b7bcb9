//! `session/export`: a session as a file to download.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The format of an exported session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ExportFormat {
    /// For reading: title, agent, folder, then each turn's prompt, answer and tool calls.
    Markdown,
    /// Lossless: one JSON object per line (a header, the session, its chats, every turn
    /// with every field), what `hearth import` reads back.
    Jsonl,
}

/// `session/export`: one session as a file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionExportParams {
    /// The session's URI.
    pub session_id: String,
    /// The format.
    pub format: ExportFormat,
}

/// What `session/export` returns: the file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionExportResponse {
    /// A file name for it (`<title>-<id>.md` or `.jsonl`).
    pub file_name: String,
    /// Its media type (`text/markdown`, `application/jsonl`).
    pub media_type: String,
    /// Its content.
    pub content: String,
}
