//! What happened the last time a chat's session was reopened on a newly started agent,
//! kept in Hearth's data directory (`agent-reopens/<agent>.json`) so that `hearth agents
//! list` says what reopening does with this agent — measured, not taken from what it
//! advertises.

use std::path::PathBuf;

use hearth_core::{Timestamp, now};
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::harness::Inner;

/// The directory of the records, inside Hearth's data directory.
const DIRECTORY: &str = "agent-reopens";

/// How a session is reopened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReopenMethod {
    /// `session/load`.
    Load,
    /// `session/resume`.
    Resume,
}

impl ReopenMethod {
    fn name(self) -> &'static str {
        match self {
            Self::Load => "session/load",
            Self::Resume => "session/resume",
        }
    }
}

/// How reopening went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ReopenOutcome {
    /// The agent reopened the session.
    Reopened,
    /// The agent refused; the chat went on in a new session.
    Refused {
        /// What it said.
        message: String,
    },
}

/// Why a session could not be reopened.
pub(crate) enum Reopen {
    /// The agent answered that it will not (or it cannot reopen sessions at all): the
    /// chat can go on in a new session.
    Refused(Error),
    /// Something else went wrong (the agent stopped, did not answer in time): the
    /// error stands.
    Failed(Error),
}

/// The last reopening of a session on an agent, as `hearth agents list` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastReopen {
    /// The request tried (`session/load` or `session/resume`).
    pub method: String,
    /// Whether the agent reopened the session.
    pub reopened: bool,
    /// What the agent answered when it refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// When.
    pub at: Timestamp,
}

impl Inner {
    /// The file of this agent's record, when Hearth has a data directory.
    fn reopen_file(&self) -> Option<PathBuf> {
        let directory = self.shared.options.data_directory.as_ref()?;
        Some(
            directory
                .join(DIRECTORY)
                .join(format!("{}.json", self.shared.spec.id)),
        )
    }

    /// Records how reopening a session went (a failure to record is only logged: the
    /// chat goes on either way).
    pub(crate) fn remember_reopen(&self, method: ReopenMethod, outcome: ReopenOutcome) {
        let Some(file) = self.reopen_file() else {
            return;
        };
        let (reopened, message) = match outcome {
            ReopenOutcome::Reopened => (true, None),
            ReopenOutcome::Refused { message } => (false, Some(message)),
        };
        let record = LastReopen {
            method: method.name().to_owned(),
            reopened,
            message,
            at: now(),
        };
        let written = serde_json::to_vec_pretty(&record)
            .map_err(std::io::Error::other)
            .and_then(|bytes| {
                if let Some(parent) = file.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                hearth_fs::write_atomic(
                    &file,
                    &bytes,
                    hearth_fs::WriteMode::Replace,
                    hearth_fs::FilePermissions::Private,
                )
            });
        if let Err(error) = written {
            tracing::warn!(agent = %self.shared.agent(), file = %file.display(), %error, "could not record how reopening a session went");
        }
    }

    /// The last reopening recorded for this agent, if any.
    pub(crate) fn last_reopen(&self) -> Option<LastReopen> {
        let file = self.reopen_file()?;
        let bytes = match std::fs::read(&file) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return None,
            Err(error) => {
                tracing::warn!(file = %file.display(), %error, "could not read how reopening a session went");
                return None;
            }
        };
        serde_json::from_slice(&bytes)
            .inspect_err(|error| {
                tracing::warn!(file = %file.display(), %error, "ignoring an unreadable record of reopening a session");
            })
            .ok()
    }
}

/// The reason an agent gave for not reopening a session, for a notice in the chat.
pub(crate) fn refusal_reason(error: &Error) -> String {
    match error {
        Error::Refused { what, message, .. } => {
            format!(
                "it answered {what} with: {}",
                hearth_process::cut(message, 300)
            )
        }
        Error::ReadOnly(_) => "it offers neither session/load nor session/resume".to_owned(),
        other => other.to_string(),
    }
}
