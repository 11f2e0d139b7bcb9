//! Errors of the registry, the gate and the audit log, each saying what failed, on
//! what, and what to do.

use hearth_core::{Timestamp, ToolError};
use hearth_store::{ProposalStatus, StoreError};
use thiserror::Error;

/// A failure of the registry, the approval gate or the audit log.
#[derive(Debug, Error)]
pub enum ToolsError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// No proposal has this id.
    #[error("proposal `{id}` does not exist; list the proposals to find its id")]
    ProposalNotFound {
        /// The id asked for.
        id: String,
    },
    /// The approval names a payload hash the proposal does not hold.
    #[error(
        "proposal `{id}` holds payload {actual}, not {expected}: what was approved is not what is stored; show the proposal again and approve what it shows"
    )]
    HashMismatch {
        /// The proposal.
        id: String,
        /// The hash the user approved.
        expected: String,
        /// The hash of the stored payload.
        actual: String,
    },
    /// The proposal is not in a state that allows the action.
    #[error("proposal `{id}` is {status}, so it cannot be {action}")]
    WrongStatus {
        /// The proposal.
        id: String,
        /// Its status.
        status: ProposalStatus,
        /// What was asked (`approved`, `rejected`, `applied`).
        action: &'static str,
    },
    /// The proposal expired before it was approved or applied.
    #[error(
        "proposal `{id}` expired at {expired_at} and was not applied; ask the agent to propose the change again"
    )]
    Expired {
        /// The proposal.
        id: String,
        /// When it expired.
        expired_at: Timestamp,
    },
    /// The stored payload no longer matches the approved hash.
    #[error(
        "proposal `{id}` was not applied: its stored payload is not the payload that was approved (it changed after the approval); it is marked failed — ask the agent to propose the change again"
    )]
    PayloadChanged {
        /// The proposal.
        id: String,
    },
    /// The tool that staged the proposal is not registered here.
    #[error(
        "proposal `{id}` was staged by the tool `{tool}`, which this Hearth does not offer (is the calendar configured?); it stays approved"
    )]
    UnknownTool {
        /// The proposal.
        id: String,
        /// The tool's name.
        tool: String,
    },
    /// Applying ran and failed; the proposal is marked failed.
    #[error("applying proposal `{id}` failed: {error}; it is marked failed")]
    ApplyFailed {
        /// The proposal.
        id: String,
        /// Why.
        error: ToolError,
    },
    /// Two tools with one name.
    #[error("a tool named `{name}` is already registered")]
    DuplicateTool {
        /// The name.
        name: String,
    },
    /// A tool name models cannot call.
    #[error(
        "`{name}` is not a valid tool name (1 to 64 letters, digits, `_` or `-`); rename the tool"
    )]
    InvalidToolName {
        /// The name.
        name: String,
    },
    /// A proposal's payload could not be read as JSON.
    #[error("proposal `{id}` has a payload that is not JSON ({detail}); it cannot be applied")]
    InvalidPayload {
        /// The proposal.
        id: String,
        /// The parser's message.
        detail: String,
    },
}

impl ToolsError {
    /// Whether retrying the same operation may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Store(error) => error.is_retryable(),
            Self::ProposalNotFound { .. }
            | Self::HashMismatch { .. }
            | Self::WrongStatus { .. }
            | Self::Expired { .. }
            | Self::PayloadChanged { .. }
            | Self::UnknownTool { .. }
            | Self::ApplyFailed { .. }
            | Self::DuplicateTool { .. }
            | Self::InvalidToolName { .. }
            | Self::InvalidPayload { .. } => false,
        }
    }

    /// Whether applying found its target changed since the proposal was staged.
    pub fn is_conflict(&self) -> bool {
        matches!(
            self,
            Self::ApplyFailed {
                error: ToolError::Conflict(_),
                ..
            }
        )
    }
}

/// Result of a registry, gate or audit operation.
pub type Result<T, E = ToolsError> = std::result::Result<T, E>;
