//! Proposals as users, UIs and the server see them.

use hearth_core::{ChatUri, ProposalId, SessionUri, Timestamp, TurnId};
use hearth_store::{ProposalRecord, ProposalStatus};
use serde::Serialize;
use serde_json::Value;

/// A change a mutating tool staged, awaiting (or past) the user's decision.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Proposal {
    /// Its id.
    pub id: ProposalId,
    /// The tool that staged it and applies it.
    pub tool: String,
    /// The session of the call.
    pub session: SessionUri,
    /// The chat that called the tool.
    pub chat: ChatUri,
    /// The turn of the call.
    pub turn_id: TurnId,
    /// The model's call id.
    pub call_id: String,
    /// One line for humans.
    pub summary: String,
    /// Before/after, for humans.
    pub diff: String,
    /// What applying does, exactly (the approval binds to its hash).
    pub payload: Value,
    /// SHA-256 of the payload's canonical JSON, lower-case hex.
    pub payload_hash: String,
    /// Where it is in its life.
    pub status: ProposalStatus,
    /// The payload hash the user approved.
    pub approved_hash: Option<String>,
    /// Who decided (`user`).
    pub decided_by: Option<String>,
    /// When it was decided.
    pub decided_at: Option<Timestamp>,
    /// Why the user rejected it, if they said.
    pub reason: Option<String>,
    /// What applying did.
    pub outcome: Option<String>,
    /// Why applying failed or was refused.
    pub error: Option<String>,
    /// When it was staged.
    pub created_at: Timestamp,
    /// When it expires unless applied.
    pub expires_at: Timestamp,
    /// Last change.
    pub updated_at: Timestamp,
    /// When applying ended.
    pub applied_at: Option<Timestamp>,
}

impl From<ProposalRecord> for Proposal {
    fn from(record: ProposalRecord) -> Self {
        let payload = serde_json::from_str(&record.payload)
            .unwrap_or_else(|_| Value::String(record.payload.clone()));
        Self {
            id: record.id,
            tool: record.tool,
            session: record.session,
            chat: record.chat,
            turn_id: record.turn_id,
            call_id: record.call_id,
            summary: record.summary,
            diff: record.diff,
            payload,
            payload_hash: record.payload_hash,
            status: record.status,
            approved_hash: record.approved_hash,
            decided_by: record.decided_by,
            decided_at: record.decided_at,
            reason: record.reason,
            outcome: record.outcome,
            error: record.error,
            created_at: record.created_at,
            expires_at: record.expires_at,
            updated_at: record.updated_at,
            applied_at: record.applied_at,
        }
    }
}

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
