//! Proposals as users, UIs and the server see them.

use hearth_store::ProposalRecord;
use serde::Serialize;
use serde_json::Value;

/// A change a mutating tool staged, awaiting (or past) the user's decision: the stored
/// record with its payload parsed (`From<ProposalRecord>`).
pub type Proposal = ProposalRecord<Value>;

/// One page of proposals.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProposalList {
    /// Newest first.
    pub proposals: Vec<Proposal>,
    /// Cursor of the next page, if there is one.
    pub next_cursor: Option<String>,
}

/// What a decision did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Decided {
    /// The proposal as it is now.
    pub proposal: Proposal,
    /// Whether this call changed it (false: it was already so — a no-op).
    pub changed: bool,
}

/// What an apply did.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ApplyOutcome {
    /// This call applied it.
    Applied {
        /// The proposal as it is now.
        proposal: Proposal,
        /// What was written.
        summary: String,
    },
    /// It had been applied before; nothing was done.
    AlreadyApplied {
        /// The proposal.
        proposal: Proposal,
    },
    /// Another apply is running it; nothing was done.
    InProgress {
        /// The proposal.
        proposal: Proposal,
    },
}

impl ApplyOutcome {
    /// The proposal as it is now.
    pub fn proposal(&self) -> &Proposal {
        match self {
            Self::Applied { proposal, .. }
            | Self::AlreadyApplied { proposal }
            | Self::InProgress { proposal } => proposal,
        }
    }
}
