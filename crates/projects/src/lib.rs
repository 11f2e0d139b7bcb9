//! Hearth's projects: a project is a folder holding `project.md` (YAML front matter:
//! id, name, description, context sources, default agent/provider/model; body: the
//! instructions). This crate reads and writes that file ([`ProjectFile`]), keeps the
//! registry of projects in step with it ([`Projects`]), keeps the marker-gated
//! `AGENTS.md` mirror beside it ([`sync_mirror`]), and serves projects to the host as
//! scopes ([`ProjectScopes`]): a project session works in the project's folder, gets the
//! project's instructions and, before its first prompt, its context. A `project.md`
//! Hearth did not write acts only once the user trusts what it asks ([`Review`],
//! [`Consent`]).
//!
//! - [`convert`]: local conversion of documents (PDF, DOCX, PPTX, XLSX, ODT, EPUB,
//!   HTML, Markdown, text, images) into Markdown.
//! - [`context`]: the shared context cache, its per-artifact locks and failure
//!   markers, and the materializer that builds a session's `<project_context>` block.
//!
//! It does not own sessions (the host does) or the registry's table (the store does).

mod client_files;
pub mod context;
pub mod convert;
mod error;
mod file_read;
mod mirror;
mod policy;
mod project_file;
mod registry;
mod scopes;
mod trust;
mod view;

pub use client_files::{ClientFileReader, ClientFiles};
pub use error::{ProjectError, ProjectResult};
pub use file_read::FileReadTool;
pub use mirror::{
    MIRROR_FILE, MIRROR_MARKER, MirrorOutcome, has_mirror, remove_mirror, sync_mirror,
};
pub use policy::{PROJECT_POLICY, compose_instructions};
pub use project_file::{PROJECT_FILE, ProjectFile};
pub use registry::{Created, Project, ProjectChanges, Projects, Relinked};
pub use scopes::{ProjectScopes, session_folders};
pub use trust::{Consent, OutsideSource, Review, ReviewReason, TrustDigest};
pub use view::{OpenEnd, PendingOpen, ScopeView};
