//! Proposals, their decisions, and the audit log.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::Timestamp;

/// Where a proposal is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ProposalStatus {
    /// Waiting for the user.
    Pending,
    /// Approved; not yet applied.
    Approved,
    /// Rejected by the user.
    Rejected,
    /// Not decided (or not applied) in time.
    Expired,
    /// Being applied.
    Applying,
    /// Approved and written.
    Applied,
    /// Applying failed or was refused (e.g. the target changed since staging); `error`
    /// says why.
    Failed,
}

/// A change a mutating tool staged, awaiting (or past) the user's decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Proposal {
    /// The proposal.
    pub id: String,
    /// The tool that staged it and applies it.
    pub tool: String,
    /// The session of the call.
    pub session: String,
    /// The chat that called the tool.
    pub chat: String,
    /// The turn of the call.
    pub turn_id: String,
    /// The model's call id.
    pub call_id: String,
    /// One line a human reads.
    pub summary: String,
    /// Before and after, human-readable.
    pub diff: String,
    /// What applying does, exactly.
    pub payload: Value,
    /// SHA-256 of the payload's canonical JSON (lower-case hex); an approval names it.
    pub payload_hash: String,
    /// Where it is in its life.
    pub status: ProposalStatus,
    /// The payload hash the user approved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_hash: Option<String>,
    /// Who decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// When it was decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<Timestamp>,
    /// Why the user rejected it, if they said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What applying did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// Why applying failed or was refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// When it was staged.
    pub created_at: Timestamp,
    /// When it expires unless applied.
    pub expires_at: Timestamp,
    /// Its last change.
    pub updated_at: Timestamp,
    /// When applying ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_at: Option<Timestamp>,
}

/// `proposal/list`: a page of proposals, newest first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProposalListParams {
    /// Only proposals in these states (default: all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub statuses: Vec<ProposalStatus>,
    /// Only proposals from this session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Continue after this cursor (a previous page's `nextCursor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Page size, 1 to 500 (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

/// What `proposal/list` returns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProposalListResponse {
    /// The proposals.
    pub proposals: Vec<Proposal>,
    /// Pass as `cursor` for the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `proposal/approve`: approves a pending proposal and applies it. The approval binds
/// to the payload the user was shown: a different hash is a conflict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProposalApproveParams {
    /// The proposal.
    pub proposal_id: String,
    /// The `payloadHash` the user was shown.
    pub payload_hash: String,
}

/// `proposal/reject`: rejects a pending (or approved, not yet applied) proposal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProposalRejectParams {
    /// The proposal.
    pub proposal_id: String,
    /// Why, for the audit log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What `proposal/approve` and `proposal/reject` return.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProposalDecisionResponse {
    /// The proposal after the decision (for an approval, after applying it: `applied`,
    /// or `failed` with its `error`).
    pub proposal: Proposal,
    /// Whether this call changed it (false: it was already so).
    pub changed: bool,
}

/// One row of the append-only, hash-chained audit log (secrets redacted).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    /// Position in the chain, from 1.
    pub seq: i64,
    /// When it happened.
    pub recorded_at: Timestamp,
    /// Who: an agent's chat URI, `user` or `hearth`.
    pub actor: String,
    /// What kind of event (`tool_call`, `proposal`, `permission`, …).
    pub kind: String,
    /// The tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// SHA-256 of the arguments or payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argument_hash: Option<String>,
    /// The proposal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal_id: Option<String>,
    /// What was decided.
    pub decision: String,
    /// How it ended (`ok`, `ok: …`, `error: …`).
    pub outcome: String,
    /// More, redacted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<Value>,
    /// The previous row's hash.
    pub prev_hash: String,
    /// This row's hash.
    pub hash: String,
}

/// `audit/list`: a page of the audit log, newest first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditListParams {
    /// Only rows of this actor (`user`, `hearth`, a chat URI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<String>,
    /// Only rows about this tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Continue after this cursor (a previous page's `nextCursor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Page size, 1 to 1000 (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

/// What `audit/list` returns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditListResponse {
    /// The entries, newest first.
    pub entries: Vec<AuditEntry>,
    /// Pass as `cursor` for the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `audit/verify`: checks the audit log as `hearth audit verify` does — the hash chain,
/// the key, the head file, a head the user kept, and that every applied proposal has its
/// entry.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditVerifyParams {
    /// A head an earlier verify returned (`SEQ:HASH`), kept where Hearth cannot write:
    /// the log must still hold it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
}

/// What `audit/verify` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditVerifyResponse {
    /// Every check passed.
    pub ok: bool,
    /// Entries checked (up to and including the first broken one).
    pub entries: u64,
    /// The newest entry as `SEQ:HASH`, when every check passed and the log has entries:
    /// keep it somewhere Hearth cannot write and pass it to a later verify.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
    /// What is wrong, where, and what it means, when a check failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}
