//! `search/query`: full-text search over every turn of every live session.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `search/query`: the turns holding every word of `query` (three characters or more
/// each; any part of a word, any case), newest chat first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchQueryParams {
    /// The words.
    pub query: String,
    /// Only sessions of this harness (agent or provider id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness: Option<String>,
    /// Only sessions of this project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_id: Option<String>,
    /// Only turns of this chat (its URI): search inside one conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat: Option<String>,
    /// Only turns started at or after this time (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// Continue after this cursor (`nextCursor` of the previous page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Page size (1..=200; 50 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

/// A piece of a hit's snippet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnippetPiece {
    /// The text.
    pub text: String,
    /// Whether it matches the query (to highlight).
    #[serde(rename = "match")]
    pub is_match: bool,
}

/// One matching turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// The session's URI.
    pub session: String,
    /// The session's title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The chat's URI.
    pub chat: String,
    /// The turn's id.
    pub turn_id: String,
    /// The turn's number in its chat (1 is the first).
    pub index: u32,
    /// When the turn started (RFC 3339).
    pub started_at: String,
    /// The text around the match, in pieces.
    pub snippet: Vec<SnippetPiece>,
}

/// What `search/query` returns.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchQueryResponse {
    /// The hits.
    pub hits: Vec<SearchHit>,
    /// Where the next page starts, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}
