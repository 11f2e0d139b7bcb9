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
    /// Its `project.md` changed since the user trusted it, or was never trusted:
    /// `review` says what it gives its agents now. It takes no new turns until the user
    /// accepts it (`project/trust`).
    NeedsTrust,
}

/// Why a project's file is up for the user's review.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ProjectReviewReason {
    /// The folder already holds a `project.md` Hearth did not write (a cloned folder,
    /// say), about to be adopted.
    Adopt,
    /// The file changed since the user last trusted it.
    Changed,
    /// The project was registered before Hearth recorded trust.
    Unrecorded,
}

/// A source of a project's file that reaches outside its folder.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectOutsideSource {
    /// `file`, `folder` or `glob`.
    pub kind: String,
    /// Its path or pattern, as the file gives it.
    pub target: String,
    /// Where it leads, links followed: the folder or file; for a pattern, the pattern
    /// when its folder is outside, else each matching file outside.
    pub reaches: Vec<String>,
}

/// What a project's `project.md` gives the agents working in it, for the user to see
/// before Hearth acts on it: its description and instructions become their
/// instructions, folders outside become their working directories, files outside are
/// converted into the context they read, and web sources are fetched (and agents may
/// then fetch from those sites without asking).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectReview {
    /// Why it is asked.
    pub reason: ProjectReviewReason,
    /// The project's id, from the file.
    pub id: String,
    /// Its name, from the file.
    pub name: String,
    /// Its folder (links followed).
    pub folder: String,
    /// Its description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its instructions (the body of `project.md`, trimmed).
    pub instructions: String,
    /// Every source reaching outside the folder.
    pub outside_sources: Vec<ProjectOutsideSource>,
    /// Every web and YouTube source.
    pub web_sources: Vec<ProjectSource>,
    /// How many sources stay inside the folder.
    pub inside_sources: u64,
    /// The digest of what is shown: sent back as `reviewDigest`, the trust holds only
    /// if the file still gives exactly this.
    pub digest: String,
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
    /// What to show the user before it takes new turns, when its state is
    /// `needsTrust`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<ProjectReview>,
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
    /// `project.md` is adopted, once the user trusts it (`trust`).
    pub folder: String,
    /// A line about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The user trusts the folder's existing `project.md` (what its review shows): adopt
    /// it. Without it, a folder holding a `project.md` answers `needsTrust`. A folder
    /// without one needs no trust.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trust: bool,
    /// With `trust`: the `digest` of the review the user saw; the adoption fails with a
    /// `conflict` error if the file gives anything else now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_digest: Option<String>,
}

/// `project/create` result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ProjectCreateResponse {
    /// The project was made, or adopted with the user's trust.
    Created {
        /// The project now.
        project: Box<Project>,
        /// Whether the folder's existing `project.md` was adopted.
        adopted: bool,
    },
    /// Nothing was done: the folder holds a `project.md` Hearth did not write. Show the
    /// review; if the user accepts, send the request again with `trust: true` and
    /// `reviewDigest` set to its `digest`.
    NeedsTrust {
        /// What the file gives its agents.
        review: ProjectReview,
    },
}

/// `project/trust` params: the user accepts what a project's changed (or never trusted)
/// `project.md` gives its agents.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectTrustParams {
    /// Its id, name, or the start of its id.
    pub project: String,
    /// The `digest` of the review the user saw; fails with a `conflict` error if the
    /// file gives anything else now. Without it, the file is trusted as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_digest: Option<String>,
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

/// `project/update` params: the user's changes to a project's settings. A field left
/// out stays as it is; an empty string clears it. The project stays trusted: the change
/// is the user's own.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectUpdateParams {
    /// Its id, name, or the start of its id.
    pub project: String,
    /// A line about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its instructions (Markdown, the body of `project.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// The agent (a harness id from `initialize`) its new chats use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_agent: Option<String>,
    /// The model its new chats use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_model: Option<String>,
}

/// Where one context source stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ProjectSourceState {
    /// Converted (or, for a folder or pattern, listed): the project's chats read it.
    Ready,
    /// Being fetched or converted now.
    Materializing,
    /// Not converted yet, or changed since: it is prepared before the next first
    /// prompt of a chat in the project.
    Pending,
    /// It could not be prepared; `error` says why. It is skipped until it changes or
    /// the user retries it (`project/retrySource`).
    Failed,
}

/// One context source and where it stands (a pattern's files follow it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectSourceStatus {
    /// `web`, `youtube`, `file`, `folder` or `glob`.
    pub kind: String,
    /// Its URL, path or pattern.
    pub target: String,
    /// Where it stands.
    pub state: ProjectSourceState,
    /// Why it failed, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The document's title, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// `project/context` params.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectContextParams {
    /// Its id, name, or the start of its id.
    pub project: String,
    /// Answer once the preparation under way (if any) has ended, instead of at once.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub wait: bool,
}

/// `project/context` and `project/retrySource` result: where a trusted project's
/// context sources stand. Sources not prepared yet start preparing when this is
/// asked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectContextResponse {
    /// The project's id.
    pub project_id: String,
    /// Each source, in the project's order.
    pub sources: Vec<ProjectSourceStatus>,
    /// Whether some source is being prepared now.
    pub materializing: bool,
    /// How many sources failed.
    pub failed: u64,
}

/// `project/retrySource` params: prepares one source again, even though it failed
/// before; answers when it is done.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectRetrySourceParams {
    /// Its id, name, or the start of its id.
    pub project: String,
    /// The source's target as `project/context` lists it.
    pub source: String,
}
