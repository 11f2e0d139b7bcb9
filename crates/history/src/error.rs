//! The errors of the import.

/// What went wrong while importing.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// Hearth's store refused or failed.
    #[error(transparent)]
    Store(#[from] hearth_store::StoreError),
    /// A native session could not be made into a chat's conversation.
    #[error("could not record {agent} session {native_id} from {source_file}: {reason}")]
    Encode {
        /// The agent.
        agent: &'static str,
        /// Its id of the session.
        native_id: String,
        /// The file it came from.
        source_file: String,
        /// Why.
        reason: String,
    },
    /// The record of what was imported could not be written.
    #[error(
        "could not write the record of imported history {path}: {reason}; the next import reads every store again"
    )]
    Record {
        /// The record's file.
        path: String,
        /// Why.
        reason: String,
    },
}

/// The import's result.
pub type HistoryResult<T> = Result<T, HistoryError>;
