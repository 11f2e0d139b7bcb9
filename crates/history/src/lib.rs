//! Every agent's history in Hearth: readers of the agents' own session stores and the
//! import that turns what they hold into external sessions of Hearth's store.
//!
//! Owns:
//! - one reader per agent store, each read-only (files only opened for reading; a
//!   SQLite database read from a private copy of it and its log, because even a
//!   read-only connection writes a WAL database's `-shm` index; a user's store is never
//!   written):
//!   Codex (`$CODEX_HOME`: the `threads` table of `state_*.sqlite` and the rollout files
//!   `sessions/YYYY/MM/DD/rollout-*.jsonl`), Claude Code
//!   (`$CLAUDE_CONFIG_DIR/projects/*/*.jsonl`), Gemini CLI (`~/.gemini/tmp/*/chats/`),
//!   OpenCode (`$XDG_DATA_HOME/opencode/opencode.db`) and GitHub Copilot CLI
//!   (`$COPILOT_HOME/session-state/*/events.jsonl`);
//! - [`locate`]: where each store is, from the environment Hearth starts that agent with;
//! - [`import`]: the import, incremental (a source file unchanged since the last import
//!   is not read again; a session gets only the turns it does not have yet), never over
//!   a tombstone, never for a conversation that backs one of Hearth's own chats.
//!
//! A store of a shape the reader does not know is reported as a [`Problem`] naming the
//! file and what was unexpected; nothing is guessed.
//!
//! It does not know how a harness keeps its conversations: the caller encodes them
//! ([`ConversationData`]).

mod claude;
mod codex;
mod copilot;
mod error;
mod gemini;
mod import;
mod jsonl;
mod locate;
mod model;
mod opencode;
mod record;
mod snapshot;

pub use error::{HistoryError, HistoryResult};
pub use import::{
    AgentReport, ConversationData, IMPORT_SOURCE, ImportOptions, ImportSource, agent_of, import,
};
pub use locate::{StoreLocation, locate};
pub use model::{Agent, Changed, NativeSession, NativeTurn, Problem, Scan};

/// Reads the store of `agent` at `location`: every session found, and every file that
/// could not be read as the reader expects.
/// Files for which `changed` answers `false` are not read (they are listed as unchanged).
pub async fn read_store(agent: Agent, location: &StoreLocation, changed: Changed<'_>) -> Scan {
    match agent {
        Agent::Codex => codex::read(&location.root, changed).await,
        Agent::Claude => claude::read(&location.root, changed),
        Agent::Gemini => gemini::read(&location.root, changed),
        Agent::OpenCode => opencode::read(&location.root, changed).await,
        Agent::Copilot => copilot::read(&location.root, changed),
    }
}

#[cfg(test)]
pub(crate) mod fixtures {
    //! The small stores under `fixtures/`, copied from what the real agents wrote (long
    //! strings cut to 300 characters; SQLite databases reduced to the tables read).

    use std::path::PathBuf;

    use crate::{Agent, NativeSession};

    /// The fixture store of `agent`.
    pub fn root(agent: Agent) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(agent.id())
    }

    /// What a test compares: id, folder, title, and each turn's prompt, answer and tools.
    pub type Seen = (
        String,
        Option<PathBuf>,
        Option<String>,
        Vec<(String, String, Vec<String>)>,
    );

    /// A session as a test compares it.
    pub fn seen(session: &NativeSession) -> Seen {
        (
            session.native_id.clone(),
            session.folder.clone(),
            session.title.clone(),
            session
                .turns
                .iter()
                .map(|turn| (turn.user.clone(), turn.answer.clone(), turn.tools.clone()))
                .collect(),
        )
    }

    /// Every file is read.
    pub fn all(_: &std::path::Path) -> bool {
        true
    }
}
