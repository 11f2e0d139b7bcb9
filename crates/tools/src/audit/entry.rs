//! What one audit row records: the entry a caller builds, and the row as listings and
//! exports show it.

use hearth_core::{ProposalId, Timestamp};
use hearth_store::{AuditDraft, AuditRecord};
use serde::Serialize;
use serde_json::{Value, json};

use crate::actor::Actor;
use crate::canonical::{canonical_json, sha256_hex, value_hash};
use crate::redact::{redact_text, redact_value};

/// Detail larger than this (as JSON) is stored as its size and hash only.
const MAX_DETAIL_BYTES: usize = 8 * 1024;

/// What kind of event a row records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditKind {
    /// An agent (or the user) called a tool.
    ToolCall,
    /// A tool fetched a URL.
    Fetch,
    /// A decision on a proposal, or applying it.
    Proposal,
    /// An agent's permission request, and its answer.
    Permission,
    /// An external agent wrote a file through Hearth.
    FileWrite,
    /// An external agent ran a command in a terminal Hearth gave it.
    Terminal,
    /// Sessions and projects erased from the trash.
    Trash,
}

impl AuditKind {
    /// The kind as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ToolCall => "tool_call",
            Self::Fetch => "fetch",
            Self::Proposal => "proposal",
            Self::Permission => "permission",
            Self::FileWrite => "file_write",
            Self::Terminal => "terminal",
            Self::Trash => "trash",
        }
    }
}

/// What was decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// A read tool ran.
    Ran,
    /// A mutating tool's change was staged as a proposal.
    Staged,
    /// The call was not carried out: unknown tool, invalid arguments, or the tool
    /// refused it.
    Denied,
    /// A mutating tool failed before staging its change: nothing awaits approval.
    Failed,
    /// A URL was fetched (or the fetch refused; see the outcome).
    Fetched,
    /// The user approved a proposal.
    Approved,
    /// The user rejected a proposal.
    Rejected,
    /// A proposal expired.
    Expired,
    /// A proposal was applied (see the outcome).
    Applied,
    /// A decision or apply was refused (wrong hash, wrong status, changed payload).
    Refused,
    /// The user answered a permission request.
    Answered,
    /// An agent asked for permission.
    Requested,
    /// The configured policy answered a permission request, or allowed or refused an
    /// agent's file or command request, without asking the user.
    Policy,
    /// A file was written.
    Written,
    /// What the trash held was erased.
    Erased,
}

impl Decision {
    /// The decision as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ran => "ran",
            Self::Staged => "staged",
            Self::Denied => "denied",
            Self::Failed => "failed",
            Self::Fetched => "fetched",
            Self::Approved => "approved",
            Self::Rejected => "rejected",
            Self::Expired => "expired",
            Self::Applied => "applied",
            Self::Refused => "refused",
            Self::Answered => "answered",
            Self::Requested => "requested",
            Self::Policy => "policy",
            Self::Written => "written",
            Self::Erased => "erased",
        }
    }
}

/// How it ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuditOutcome {
    /// It worked (with a note, maybe).
    Ok(Option<String>),
    /// It failed or was refused.
    Error(String),
}

impl AuditOutcome {
    /// Success without a note.
    pub fn ok() -> Self {
        Self::Ok(None)
    }

    /// Success with a note.
    pub fn ok_with(note: impl Into<String>) -> Self {
        Self::Ok(Some(note.into()))
    }

    /// Failure.
    pub fn error(message: impl Into<String>) -> Self {
        Self::Error(message.into())
    }

    fn text(&self) -> String {
        match self {
            Self::Ok(None) => "ok".to_owned(),
            Self::Ok(Some(note)) => format!("ok: {note}"),
            Self::Error(message) => format!("error: {message}"),
        }
    }
}

/// One event to record.
#[derive(Clone, Debug, PartialEq)]
pub struct AuditEntry {
    /// Who acted.
    pub actor: Actor,
    /// What kind of event.
    pub kind: AuditKind,
    /// The tool involved.
    pub tool: Option<String>,
    /// SHA-256 of the canonical arguments or payload.
    pub argument_hash: Option<String>,
    /// The proposal involved.
    pub proposal: Option<ProposalId>,
    /// What was decided.
    pub decision: Decision,
    /// How it ended.
    pub outcome: AuditOutcome,
    /// More (redacted before it is stored; large detail is kept as size and hash).
    pub detail: Option<Value>,
}

impl AuditEntry {
    /// An entry without tool, arguments, proposal or detail.
    pub fn new(actor: Actor, kind: AuditKind, decision: Decision, outcome: AuditOutcome) -> Self {
        Self {
            actor,
            kind,
            tool: None,
            argument_hash: None,
            proposal: None,
            decision,
            outcome,
            detail: None,
        }
    }

    /// With the tool involved.
    pub fn tool(mut self, tool: impl Into<String>) -> Self {
        self.tool = Some(tool.into());
        self
    }

    /// With the hash of `arguments`.
    pub fn arguments(mut self, arguments: &Value) -> Self {
        self.argument_hash = Some(value_hash(arguments));
        self
    }

    /// With a hash computed elsewhere (a proposal's payload hash).
    pub fn argument_hash(mut self, hash: impl Into<String>) -> Self {
        self.argument_hash = Some(hash.into());
        self
    }

    /// With the proposal involved.
    pub fn proposal(mut self, id: ProposalId) -> Self {
        self.proposal = Some(id);
        self
    }

    /// With detail.
    pub fn detail(mut self, detail: Value) -> Self {
        self.detail = Some(detail);
        self
    }

    /// The row to store: secrets redacted, detail capped.
    pub(super) fn draft(&self, at: Timestamp) -> AuditDraft {
        let detail = self.detail.as_ref().map(|detail| {
            let text = canonical_json(&redact_value(detail));
            if text.len() > MAX_DETAIL_BYTES {
                canonical_json(&json!({
                    "truncated": true,
                    "bytes": text.len(),
                    "sha256": sha256_hex(text.as_bytes()),
                }))
            } else {
                text
            }
        });
        AuditDraft {
            at,
            actor: self.actor.audit_name(),
            kind: self.kind.as_str().to_owned(),
            tool: self.tool.clone(),
            argument_hash: self.argument_hash.clone(),
            proposal_id: self.proposal.as_ref().map(|id| id.as_str().to_owned()),
            decision: self.decision.as_str().to_owned(),
            outcome: redact_text(&self.outcome.text()),
            detail,
        }
    }
}

/// A stored row, as listings and exports show it: its detail parsed
/// (`From<AuditRecord>`).
pub type AuditRow = AuditRecord<Value>;
