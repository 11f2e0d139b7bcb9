//! What can go wrong with an external agent, worded for the user.

use hearth_core::{HarnessError, HarnessErrorKind};
use thiserror::Error;

/// A failure of an external agent or of Hearth's side of the conversation with it.
#[derive(Debug, Error)]
pub enum Error {
    /// The agent's program could not be started.
    #[error(
        "could not start agent `{agent}` (`{command}`): {reason}; check `command` under [agents.{agent}] in config.toml, or install the agent"
    )]
    Spawn {
        /// The agent id.
        agent: String,
        /// The program.
        command: String,
        /// Why.
        reason: String,
    },
    /// The agent stopped (exited, was killed, or closed its output).
    #[error("agent `{agent}` stopped{status}{stderr}")]
    Exited {
        /// The agent id.
        agent: String,
        /// ` (exit status 3)`-style text, or empty.
        status: String,
        /// `; its last words on stderr: …`, or empty.
        stderr: String,
    },
    /// The agent broke the protocol: junk, over-long lines, a failed handshake.
    #[error(
        "agent `{agent}` {what}{stderr}; it was stopped and will be restarted on the next prompt"
    )]
    Protocol {
        /// The agent id.
        agent: String,
        /// What it did.
        what: String,
        /// Its stderr tail, if any.
        stderr: String,
    },
    /// The agent did not answer in time.
    #[error("agent `{agent}` did not answer {what} within {seconds} s{stderr}")]
    Timeout {
        /// The agent id.
        agent: String,
        /// Which request.
        what: String,
        /// The bound.
        seconds: u64,
        /// Its stderr tail, if any.
        stderr: String,
    },
    /// The agent answered a request with an error.
    #[error("agent `{agent}` refused {what}: {message}")]
    Refused {
        /// The agent id.
        agent: String,
        /// Which request.
        what: String,
        /// Its message.
        message: String,
    },
    /// The agent wants the user to sign in first.
    #[error(
        "agent `{agent}` needs you to sign in first; it offers: {methods}. Sign in with `hearth agents login {agent}`, or set `auth_method = \"<id>\"` under [agents.{agent}] in config.toml"
    )]
    AuthRequired {
        /// The agent id.
        agent: String,
        /// The methods it offers, as `id (name: description)`.
        methods: String,
    },
    /// The agent does not offer what was asked.
    #[error("agent `{agent}` does not support {what}")]
    Unsupported {
        /// The agent id.
        agent: String,
        /// What.
        what: String,
    },
    /// The chat cannot go on with this agent (it cannot reopen the conversation).
    #[error("{0}")]
    ReadOnly(String),
    /// The request made no sense.
    #[error("{0}")]
    Invalid(String),
    /// The stored conversation of a chat could not be used.
    #[error("{0}")]
    Conversation(String),
    /// A chat is not held, or already runs a turn.
    #[error(transparent)]
    Table(#[from] hearth_harness::TableError),
}

impl Error {
    /// The class of failure the host acts on.
    pub fn kind(&self) -> HarnessErrorKind {
        match self {
            Self::Spawn { .. }
            | Self::Exited { .. }
            | Self::Protocol { .. }
            | Self::Refused { .. }
            | Self::AuthRequired { .. } => HarnessErrorKind::Provider,
            Self::Timeout { .. } => HarnessErrorKind::Transient,
            Self::Unsupported { .. } | Self::ReadOnly(_) => HarnessErrorKind::Unsupported,
            Self::Invalid(_) => HarnessErrorKind::InvalidInput,
            Self::Conversation(_) => HarnessErrorKind::Internal,
            Self::Table(hearth_harness::TableError::NotOpen { .. }) => HarnessErrorKind::NotFound,
            Self::Table(hearth_harness::TableError::Busy { .. }) => HarnessErrorKind::Busy,
        }
    }
}

impl From<Error> for HarnessError {
    fn from(error: Error) -> Self {
        HarnessError::new(error.kind(), error.to_string())
    }
}

/// Result of this crate's operations.
pub type Result<T, E = Error> = std::result::Result<T, E>;
