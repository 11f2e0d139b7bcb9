//! Projects: folders with instructions and context sources, each a scope of sessions.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::Timestamp;

/// Whether a project can take new sessions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ProjectState {
    /// Its folder and `project.md` are there.
    Ready,
    /// Its folder (or `project.md`) is gone: its sessions stay readable, new turns are
    /// refused until it is re-linked (`project/relink`).
    Missing,
    /// Its `project.md` cannot be read; `problem` says why.
    Unreadable,
}

/// One context source of a project.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectSource {
    /// `web`, `youtube`, `file`, `folder` or `glob`.
    pub kind: String,
    /// Its URL, path or pattern, as configured.
    pub target: String,
}

/// A project.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Project {
    /// Its id (in its `project.md`; survives the folder moving).
    pub id: String,
    /// Its name.
    pub name: String,
    /// The folder holding its `project.md`: its sessions' working directory.
    pub folder: String,
    /// Whether it can take new sessions.
    pub state: ProjectState,
    /// Why it cannot, when it cannot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// A line about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The agent its new sessions use by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The provider its new sessions use by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The model its new sessions use by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Its context sources.
    #[serde(default)]
    pub sources: Vec<ProjectSource>,
    /// Its instructions (the body of `project.md`).
    #[serde(default)]
    pub instructions: String,
    /// When it was registered.
    pub created_at: Timestamp,
    /// When its folder or name last changed.
    pub updated_at: Timestamp,
}

/// `project/list` params.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectListParams {}

/// `project/list` result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectListResponse {
    /// Every project, by name.
    pub projects: Vec<Project>,
}

/// Params naming one project.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectParams {
    /// Its id, name, or the start of its id.
    pub project: String,
}

/// A project after a change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectResponse {
    /// The project now.
    pub project: Project,
}

/// `project/create` params.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectCreateParams {
    /// Its name.
    pub name: String,
    /// Its folder (absolute); created when missing. A folder that already holds a
    /// `project.md` is adopted.
    pub folder: String,
    /// A line about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// `project/rename` params.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectRenameParams {
    /// Its id, name, or the start of its id.
    pub project: String,
    /// The new name.
    pub name: String,
}

/// `project/addSource` params.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectAddSourceParams {
    /// Its id, name, or the start of its id.
    pub project: String,
    /// A URL, YouTube link, file, folder or pattern (relative paths are taken from the
    /// project's folder).
    pub source: String,
}

/// `project/removeSource` params.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectRemoveSourceParams {
    /// Its id, name, or the start of its id.
    pub project: String,
    /// The source as configured, or its number (from 1).
    pub source: String,
}

/// `project/relink` params.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectRelinkParams {
    /// Its id, name, or the start of its id.
    pub project: String,
    /// The folder (absolute) now holding its `project.md`.
    pub folder: String,
}

/// `project/delete` result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectDeleteResponse {
    /// The deleted project's id.
    pub id: String,
    /// Whether Hearth's `AGENTS.md` mirror was removed from its folder.
    pub mirror_removed: bool,
}
