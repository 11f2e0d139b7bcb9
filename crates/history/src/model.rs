//! What the readers find: native sessions with their turns, and problems.

use std::path::PathBuf;

use hearth_core::Timestamp;

/// An agent whose own store Hearth reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Agent {
    /// OpenAI Codex (CLI and `codex-acp`).
    Codex,
    /// Claude Code (CLI and both ACP adapters).
    Claude,
    /// Gemini CLI.
    Gemini,
    /// OpenCode.
    OpenCode,
    /// GitHub Copilot CLI.
    Copilot,
}

impl Agent {
    /// Every agent, in a fixed order.
    pub const ALL: [Agent; 5] = [
        Agent::Codex,
        Agent::Claude,
        Agent::Gemini,
        Agent::OpenCode,
        Agent::Copilot,
    ];

    /// Its id: `codex`, `claude`, `gemini`, `opencode`, `copilot` (also the id of the
    /// agent Hearth runs it as).
    pub fn id(self) -> &'static str {
        match self {
            Agent::Codex => "codex",
            Agent::Claude => "claude",
            Agent::Gemini => "gemini",
            Agent::OpenCode => "opencode",
            Agent::Copilot => "copilot",
        }
    }

    /// The agent with this id (`claude-code`, the older Claude adapter, reads Claude
    /// Code's store too).
    pub fn from_id(id: &str) -> Option<Agent> {
        match id {
            "claude-code" => Some(Agent::Claude),
            _ => Agent::ALL.into_iter().find(|agent| agent.id() == id),
        }
    }
}

impl std::fmt::Display for Agent {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.id())
    }
}

/// One exchange of a native session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NativeTurn {
    /// What the user sent.
    pub user: String,
    /// The agent's answer text.
    pub answer: String,
    /// The tool calls the agent made, each summarised on one line (`name: argument`).
    pub tools: Vec<String>,
    /// When the user sent it.
    pub at: Timestamp,
}

/// A session found in an agent's own store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NativeSession {
    /// The agent.
    pub agent: Agent,
    /// The agent's own id of the session.
    pub native_id: String,
    /// The file it was read from.
    pub source: PathBuf,
    /// The folder it worked in, when the store says.
    pub folder: Option<PathBuf>,
    /// Its title, when the store has one.
    pub title: Option<String>,
    /// When it started.
    pub started_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
    /// Its exchanges, oldest first.
    pub turns: Vec<NativeTurn>,
}

/// A file of a store that could not be read as expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The file.
    pub file: PathBuf,
    /// What was unexpected.
    pub what: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{}: {}", self.file.display(), self.what)
    }
}

/// What reading a store found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scan {
    /// The sessions read.
    pub sessions: Vec<NativeSession>,
    /// The files that could not be.
    pub problems: Vec<Problem>,
    /// The files read (changed since the last import, or new).
    pub files: Vec<PathBuf>,
    /// The files left unread: unchanged since the last import.
    pub unchanged: Vec<PathBuf>,
}

/// Whether a source file changed since the last import (then it is read).
pub type Changed<'a> = &'a (dyn Fn(&std::path::Path) -> bool + Sync);

impl Scan {
    pub(crate) fn problem(&mut self, file: impl Into<PathBuf>, what: impl Into<String>) {
        self.problems.push(Problem {
            file: file.into(),
            what: what.into(),
        });
    }

    /// Reads `file` with `read` when it changed, and keeps what it gave.
    pub(crate) fn read_file(
        &mut self,
        file: &std::path::Path,
        changed: Changed<'_>,
        read: impl FnOnce(&std::path::Path) -> Result<Option<NativeSession>, String>,
    ) {
        if !changed(file) {
            self.unchanged.push(file.to_path_buf());
            return;
        }
        self.files.push(file.to_path_buf());
        match read(file) {
            Ok(Some(session)) => self.sessions.push(session),
            Ok(None) => {}
            Err(what) => self.problem(file, what),
        }
    }
}
