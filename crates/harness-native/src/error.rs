//! The crate's one error type, and how it reaches the host.

use hearth_core::{ChatUri, HarnessError, HarnessErrorKind, TurnId};
use hearth_harness::{ConversationError, TableError};
use thiserror::Error;

/// What can go wrong in Hearth's agent outside a model call (model failures are
/// [`hearth_llm::LlmError`]s, converted to the host's [`HarnessError`] as they are).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum Error {
    /// The chat is not held by this agent.
    #[error(
        "chat `{chat}` is not open in Hearth's agent (it was disposed or released, or never created here); materialize it from its stored provider data first"
    )]
    NotOpen {
        /// The chat.
        chat: ChatUri,
    },
    /// The chat already runs a turn.
    #[error("chat `{chat}` is already running turn `{turn}`; wait for it to finish or abort it")]
    Busy {
        /// The chat.
        chat: ChatUri,
        /// The running turn.
        turn: TurnId,
    },
    /// A fork or side chat names a turn the source chat has not finished.
    #[error(
        "turn `{turn}` is not a finished turn of chat `{chat}`; fork or branch at a turn that has ended"
    )]
    UnknownTurn {
        /// The source chat.
        chat: ChatUri,
        /// The turn asked for.
        turn: TurnId,
    },
    /// Stored provider data that is not a conversation of this agent.
    #[error(
        "cannot restore chat `{chat}`: its stored provider data is not a Hearth agent conversation ({reason}); its turns are still in Hearth's store, but the agent cannot continue it"
    )]
    UnreadableConversation {
        /// The chat.
        chat: ChatUri,
        /// What the decoder said.
        reason: String,
    },
    /// Provider data written by a newer Hearth.
    #[error(
        "cannot restore chat `{chat}`: its provider data has layout version {found}, but this Hearth reads version {supported}; use the Hearth version that wrote it"
    )]
    NewerConversation {
        /// The chat.
        chat: ChatUri,
        /// The version found.
        found: u32,
        /// The version this build reads.
        supported: u32,
    },
    /// The host has no stored provider data and the agent does not hold the chat.
    #[error(
        "cannot restore chat `{chat}`: Hearth has no stored provider data for it, and the agent keeps a chat only in that data"
    )]
    NoConversation {
        /// The chat.
        chat: ChatUri,
    },
    /// A conversation could not be encoded.
    #[error("could not encode the conversation of chat `{chat}`: {reason}")]
    Encode {
        /// The chat.
        chat: ChatUri,
        /// What the encoder said.
        reason: String,
    },
    /// No model was chosen and the provider has no default.
    #[error(
        "no model is chosen for provider `{provider}`: pass --model, or set default_model in [providers.{provider}] of config.toml"
    )]
    NoModel {
        /// The provider id.
        provider: String,
    },
    /// No model is configured and the provider's listing did not give one.
    #[error(
        "no model is chosen for provider `{provider}` and its model list did not give one ({detail}): pass --model, or set default_model in [providers.{provider}] of config.toml"
    )]
    NoModelListed {
        /// The provider id.
        provider: String,
        /// Why the listing did not help.
        detail: String,
    },
    /// No model is configured and the provider offers several.
    #[error(
        "no model is chosen for provider `{provider}`, which offers {models}{}: pass --model NAME, or set default_model in [providers.{provider}] of config.toml",
        if *more > 0 { format!(" and {more} more") } else { String::new() }
    )]
    ModelToChoose {
        /// The provider id.
        provider: String,
        /// The first models it offers.
        models: String,
        /// How many more it offers.
        more: usize,
    },
    /// A model name that cannot be used.
    #[error("`{model}` is not a usable model name")]
    InvalidModel {
        /// The name given.
        model: String,
    },
    /// A resolved provider that cannot back an agent.
    #[error("cannot use model provider `{provider}`: {reason}")]
    Provider {
        /// The provider id.
        provider: String,
        /// Why (an invalid id, a missing key, a bad base URL).
        reason: String,
    },
}

/// Result of this crate's operations.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<Error> for HarnessError {
    fn from(error: Error) -> Self {
        let kind = match &error {
            Error::NotOpen { .. } => HarnessErrorKind::NotFound,
            Error::Busy { .. } => HarnessErrorKind::Busy,
            Error::UnknownTurn { .. }
            | Error::UnreadableConversation { .. }
            | Error::NewerConversation { .. }
            | Error::NoConversation { .. }
            | Error::NoModel { .. }
            | Error::NoModelListed { .. }
            | Error::ModelToChoose { .. }
            | Error::InvalidModel { .. }
            | Error::Provider { .. } => HarnessErrorKind::InvalidInput,
            Error::Encode { .. } => HarnessErrorKind::Internal,
        };
        HarnessError::new(kind, error.to_string())
    }
}

impl From<TableError> for Error {
    fn from(error: TableError) -> Self {
        match error {
            TableError::NotOpen { chat } => Self::NotOpen { chat },
            TableError::Busy { chat, turn } => Self::Busy { chat, turn },
        }
    }
}

impl From<ConversationError> for Error {
    fn from(error: ConversationError) -> Self {
        match error {
            ConversationError::Encode { chat, reason, .. } => Self::Encode { chat, reason },
            ConversationError::Unreadable {
                chat,
                bytes,
                reason,
                ..
            } => Self::UnreadableConversation {
                chat,
                reason: format!("{bytes} bytes: {reason}"),
            },
            ConversationError::Newer {
                chat,
                found,
                supported,
                ..
            } => Self::NewerConversation {
                chat,
                found,
                supported,
            },
        }
    }
}
