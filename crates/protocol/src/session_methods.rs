//! Parameters and responses of `initialize` and the `session/*` methods.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::{HarnessInfo, Provenance, SessionState, SessionSummary};

/// Who the client is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientInfo {
    /// Program name (`hearth-cli`, `hearth-web`, an editor).
    pub name: String,
    /// Program version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// `initialize`: the first request of every connection.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// Who the client is.
    pub client_info: ClientInfo,
    /// The protocol version the client speaks; the server answers with its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
}

/// Who the server is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerInfo {
    /// Always `hearth`.
    pub name: String,
    /// Hearth's version.
    pub version: String,
}

/// Which optional parts of Hearth this server offers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerFeatures {
    /// `proposal/*` works.
    pub proposals: bool,
    /// `audit/list` works.
    pub audit: bool,
    /// Hearth's tools are offered to MCP clients at `/mcp`.
    pub mcp: bool,
}

/// What `initialize` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResponse {
    /// Who the server is.
    pub server_info: ServerInfo,
    /// The protocol version the server speaks.
    pub protocol_version: String,
    /// The harnesses sessions can be created with, with their capabilities.
    pub harnesses: Vec<HarnessInfo>,
    /// The harness `session/create` uses when none is named (absent from a server that
    /// predates the name: see `defaultProvider`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_harness: Option<String>,
    /// Deprecated: the same as `defaultHarness`, still sent for clients written before
    /// the rename.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_provider: Option<String>,
    /// Optional parts on offer.
    pub features: ServerFeatures,
}

/// Which sessions a listing returns.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ScopeFilter {
    /// Every scope.
    #[default]
    Any,
    /// Only the global scope.
    Global,
    /// Only one project.
    Project {
        /// The project.
        project_id: String,
    },
}

/// `session/list`: a page of sessions, most recently updated first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionListParams {
    /// Continue after this cursor (a previous page's `nextCursor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Page size, 1 to 500 (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// Only this harness (`provider`, its older name, is read too).
    #[serde(default, alias = "provider", skip_serializing_if = "Option::is_none")]
    pub harness: Option<String>,
    /// Only this scope (default: any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<ScopeFilter>,
    /// Only sessions created through Hearth, or only those found in a provider's own
    /// catalog (default: both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
    /// Only sessions whose title contains this text (ASCII letters in any case; an
    /// untitled session matches nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title_contains: Option<String>,
    /// Only pinned sessions (`true`) or only those not pinned (`false`); both when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned: Option<bool>,
    /// Only archived sessions (`true`) or only those not archived (`false`); both when
    /// absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived: Option<bool>,
}

/// `session/mark`: pins or unpins, archives or unarchives a session (a field left out
/// stays as it is). The root's and the session's subscribers get `sessionUpdated`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionMarkParams {
    /// The session.
    pub session: String,
    /// Pinned or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned: Option<bool>,
    /// Archived or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived: Option<bool>,
}

/// What `session/mark` returns: the session's summary with its marks.
pub type SessionMarkResponse = SessionRenameResponse;

/// `session/share` (a team server with users): shares a session with a team, whose
/// members then see and use it, or with nobody (`team` left out). A user shares their
/// own sessions, with a team they are in. The root's and the session's subscribers get
/// `sessionUpdated`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionShareParams {
    /// The session.
    pub session: String,
    /// The team; absent: shared with nobody.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<String>,
}

/// What `session/share` returns: the session's summary with its owner and team.
pub type SessionShareResponse = SessionRenameResponse;

/// What `session/list` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionListResponse {
    /// The sessions.
    pub sessions: Vec<SessionSummary>,
    /// Pass as `cursor` for the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `session/create`: a new session with its default chat.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionCreateParams {
    /// The harness (default: the server's default harness; `provider`, its older name,
    /// is read too).
    #[serde(default, alias = "provider", skip_serializing_if = "Option::is_none")]
    pub harness: Option<String>,
    /// The model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Initial title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The project; absent means the global scope. Fixed for the session's life.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_id: Option<String>,
    /// Absolute directories the agent works in: the first is its working directory, the
    /// rest additional directories (default: the server's). Fixed for the session's life.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub working_directories: Vec<String>,
}

/// What `session/create` and `session/fork` return.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionCreateResponse {
    /// The new session with its chat catalog.
    pub session: SessionState,
}

/// `session/dispose`: deletes a session: moves it to the trash (`trash/restore`
/// brings it back), or erases it at once when it was never used (no turn, no draft).
/// Either way discovery never lists it again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionDisposeParams {
    /// The session.
    pub session: String,
}

/// What `session/dispose` returns.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionDisposeResponse {
    /// Whether the session went to the trash (`trash/restore` brings it back); `false`:
    /// it was never used, and was erased at once.
    #[serde(default)]
    pub trashed: bool,
}

/// `session/fork`: a new session whose default chat is a copy of another session's
/// default chat up to and including a turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionForkParams {
    /// The session forked from.
    pub session: String,
    /// The last turn copied.
    pub turn_id: String,
}

/// What `session/fork` returns.
pub type SessionForkResponse = SessionCreateResponse;

/// `session/rename`: gives a session a title of the user's. The title is trimmed; it
/// must not be empty, longer than 200 characters or hold line breaks. The root's and the
/// session's subscribers get `sessionUpdated`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionRenameParams {
    /// The session.
    pub session: String,
    /// The new title.
    pub title: String,
}

/// What `session/rename` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionRenameResponse {
    /// The session's summary with its new title.
    pub summary: SessionSummary,
}
