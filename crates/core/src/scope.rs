//! The scope seam: what the host asks of the crate that owns projects, so that it runs
//! every scope (the global one and each project) on one code path without knowing what
//! a project is.

use std::path::PathBuf;

use futures::future::BoxFuture;

use crate::chat::Scope;
use crate::harness::Customizations;

/// Why a scope takes no new sessions or turns (its project was deleted, or its folder
/// is missing). The message says what happened and what to do; what was said in the
/// scope's sessions stays readable.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ScopeUnavailable(pub String);

/// What a turn in a scope gets from it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScopeTurn {
    /// The scope's customizations (a project's instructions and policy), published to
    /// the harness in the chat's context; `None` for a scope that has none.
    pub customizations: Option<Customizations>,
}

/// The scopes of sessions, as the host sees them. Implemented by hearth-projects; the
/// host without one runs every session in the global scope's defaults.
pub trait Scopes: Send + Sync {
    /// The working directories of a new session in `scope` (index 0 is where its agent
    /// runs), or `None` for the host's defaults. Refused when the scope takes no new
    /// sessions.
    fn session_directories<'a>(
        &'a self,
        scope: &'a Scope,
    ) -> BoxFuture<'a, Result<Option<Vec<PathBuf>>, ScopeUnavailable>>;

    /// Checks that a turn may run in `scope` and gives what the turn needs from it.
    /// Refused when the scope takes no new turns; nothing is stored then.
    fn prepare_turn<'a>(
        &'a self,
        scope: &'a Scope,
    ) -> BoxFuture<'a, Result<ScopeTurn, ScopeUnavailable>>;

    /// Context to put before the first prompt of a session in `scope` (a project's
    /// `<project_context>` block), or `None`. Never fails: a source that could not be
    /// prepared is described in the block instead.
    fn first_prompt_context<'a>(&'a self, scope: &'a Scope) -> BoxFuture<'a, Option<String>>;
}
