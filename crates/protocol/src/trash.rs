//! `trash/*`: the sessions and projects the user deleted, restorable until the trash is
//! emptied.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a trash item is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TrashKind {
    /// A session, with its chats and turns.
    Session,
    /// A project (its folder and sessions are not part of it).
    Project,
}

/// `trash/list`: everything in the trash (no parameters).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TrashListParams {}

/// One item in the trash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TrashItem {
    /// Session or project.
    pub kind: TrashKind,
    /// The session's URI or the project's id.
    pub id: String,
    /// The session's title or the project's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// When it was deleted (RFC 3339).
    pub deleted_at: String,
    /// When it is erased by itself (`[history] trash_days`), RFC 3339; `null` when it
    /// stays until the trash is emptied.
    pub purge_at: Option<String>,
}

/// What `trash/list` returns: newest deletion first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TrashListResponse {
    /// The items.
    pub items: Vec<TrashItem>,
}

/// `trash/restore`: takes a session or project out of the trash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TrashRestoreParams {
    /// Session or project.
    pub kind: TrashKind,
    /// The session's URI or the project's id.
    pub id: String,
}

/// What `trash/restore` returns.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TrashRestoreResponse {}

/// `trash/empty`: erases everything in the trash (no parameters).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TrashEmptyParams {}

/// What `trash/empty` returns.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TrashEmptyResponse {
    /// How many items were erased.
    pub erased: u32,
}
