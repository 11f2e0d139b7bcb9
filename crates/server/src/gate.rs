//! [`Approvals`] over the tool registry's approval gate and audit log: proposals and
//! audit rows converted to the wire, and the gate's failures mapped to error kinds.

use futures::future::BoxFuture;
use hearth_core::{ProposalId, SessionUri};
use hearth_protocol::{
    self as wire, AuditListParams, AuditListResponse, ErrorKind, ProposalApproveParams,
    ProposalDecisionResponse, ProposalListParams, ProposalListResponse, ProposalRejectParams,
    RpcError,
};
use hearth_tools::{
    ApplyOutcome, ApprovalGate, AuditLog, AuditQuery, AuditRow, ChainHead, ProposalQuery,
    ProposalStatus, ToolsError, UserActor,
};

use crate::approvals::Approvals;
use crate::dispatch::parse_field;

/// The channel decisions made through the server are recorded as.
pub(crate) const VIA: &str = "server";

/// The approval gate and audit log, as the protocol offers them.
#[derive(Clone, Debug)]
pub struct GateApprovals {
    gate: ApprovalGate,
    audit: AuditLog,
}

impl GateApprovals {
    /// Wraps a gate and the audit log it records into.
    pub fn new(gate: ApprovalGate, audit: AuditLog) -> Self {
        Self { gate, audit }
    }
}

fn status_to_wire(status: ProposalStatus) -> wire::ProposalStatus {
    match status {
        ProposalStatus::Pending => wire::ProposalStatus::Pending,
        ProposalStatus::Approved => wire::ProposalStatus::Approved,
        ProposalStatus::Rejected => wire::ProposalStatus::Rejected,
        ProposalStatus::Expired => wire::ProposalStatus::Expired,
        ProposalStatus::Applying => wire::ProposalStatus::Applying,
        ProposalStatus::Applied => wire::ProposalStatus::Applied,
        ProposalStatus::Failed => wire::ProposalStatus::Failed,
    }
}

fn status_from_wire(status: wire::ProposalStatus) -> ProposalStatus {
    match status {
        wire::ProposalStatus::Pending => ProposalStatus::Pending,
        wire::ProposalStatus::Approved => ProposalStatus::Approved,
        wire::ProposalStatus::Rejected => ProposalStatus::Rejected,
        wire::ProposalStatus::Expired => ProposalStatus::Expired,
        wire::ProposalStatus::Applying => ProposalStatus::Applying,
        wire::ProposalStatus::Applied => ProposalStatus::Applied,
        wire::ProposalStatus::Failed => ProposalStatus::Failed,
    }
}

fn proposal_to_wire(proposal: hearth_tools::Proposal) -> wire::Proposal {
    wire::Proposal {
        id: proposal.id.to_string(),
        tool: proposal.tool,
        session: proposal.session.to_string(),
        chat: proposal.chat.to_string(),
        turn_id: proposal.turn_id.to_string(),
        call_id: proposal.call_id,
        summary: proposal.summary,
        diff: proposal.diff,
        payload: proposal.payload,
        payload_hash: proposal.payload_hash,
        status: status_to_wire(proposal.status),
        approved_hash: proposal.approved_hash,
        decided_by: proposal.decided_by,
        decided_at: proposal.decided_at,
        reason: proposal.reason,
        outcome: proposal.outcome,
        error: proposal.error,
        created_at: proposal.created_at,
        expires_at: proposal.expires_at,
        updated_at: proposal.updated_at,
        applied_at: proposal.applied_at,
    }
}

/// A proposal a server sent, as the approval gate holds it (for clients that show and
/// decide proposals the same way in-process and through a server); why it cannot be read.
pub fn proposal_from_wire(proposal: wire::Proposal) -> Result<hearth_tools::Proposal, String> {
    let unreadable = |what: &str, error: &dyn std::fmt::Display| {
        format!("the server sent a proposal whose {what} cannot be read: {error}")
    };
    Ok(hearth_tools::Proposal {
        id: ProposalId::parse(&proposal.id).map_err(|e| unreadable("id", &e))?,
        tool: proposal.tool,
        session: hearth_core::SessionUri::parse(&proposal.session)
            .map_err(|e| unreadable("session", &e))?,
        chat: hearth_core::ChatUri::parse(&proposal.chat).map_err(|e| unreadable("chat", &e))?,
        turn_id: hearth_core::TurnId::parse(&proposal.turn_id)
            .map_err(|e| unreadable("turn", &e))?,
        call_id: proposal.call_id,
        summary: proposal.summary,
        diff: proposal.diff,
        payload: proposal.payload,
        payload_hash: proposal.payload_hash,
        status: status_from_wire(proposal.status),
        approved_hash: proposal.approved_hash,
        decided_by: proposal.decided_by,
        decided_at: proposal.decided_at,
        reason: proposal.reason,
        outcome: proposal.outcome,
        error: proposal.error,
        created_at: proposal.created_at,
        expires_at: proposal.expires_at,
        updated_at: proposal.updated_at,
        applied_at: proposal.applied_at,
    })
}

/// A status as the wire names it.
pub fn proposal_status_to_wire(status: ProposalStatus) -> wire::ProposalStatus {
    status_to_wire(status)
}

fn audit_to_wire(row: AuditRow) -> wire::AuditEntry {
    let entry = row.entry;
    wire::AuditEntry {
        seq: row.seq,
        recorded_at: entry.at,
        actor: entry.actor,
        kind: entry.kind,
        tool: entry.tool,
        argument_hash: entry.argument_hash,
        proposal_id: entry.proposal_id,
        decision: entry.decision,
        outcome: entry.outcome,
        detail: entry.detail,
        prev_hash: row.prev_hash,
        hash: row.hash,
    }
}

/// The error response for a gate failure.
fn tools_error(error: &ToolsError) -> RpcError {
    let kind = match error {
        ToolsError::ProposalNotFound { .. } => ErrorKind::NotFound,
        ToolsError::HashMismatch { .. }
        | ToolsError::WrongStatus { .. }
        | ToolsError::Expired { .. }
        | ToolsError::PayloadChanged { .. } => ErrorKind::Conflict,
        ToolsError::ApplyFailed { .. } if error.is_conflict() => ErrorKind::Conflict,
        ToolsError::UnknownTool { .. } => ErrorKind::Unavailable,
        ToolsError::Store(hearth_store::StoreError::Conflict(_)) => ErrorKind::Conflict,
        ToolsError::Store(_)
        | ToolsError::ApplyFailed { .. }
        | ToolsError::DuplicateTool { .. }
        | ToolsError::InvalidToolName { .. }
        | ToolsError::InvalidPayload { .. } => ErrorKind::Internal,
    };
    RpcError::new(kind, error.to_string(), error.is_retryable())
}

impl Approvals for GateApprovals {
    fn list(
        &self,
        params: ProposalListParams,
    ) -> BoxFuture<'_, Result<ProposalListResponse, RpcError>> {
        Box::pin(async move {
            let session = params
                .session
                .as_deref()
                .map(|session| parse_field("session", session, SessionUri::parse))
                .transpose()?;
            let query = ProposalQuery {
                statuses: params.statuses.into_iter().map(status_from_wire).collect(),
                session,
                cursor: params.cursor,
                limit: params.limit.unwrap_or(50).clamp(1, 500),
            };
            let page = self.gate.list(&query).await.map_err(|e| tools_error(&e))?;
            Ok(ProposalListResponse {
                proposals: page.proposals.into_iter().map(proposal_to_wire).collect(),
                next_cursor: page.next_cursor,
            })
        })
    }

    fn approve(
        &self,
        params: ProposalApproveParams,
        user: Option<String>,
    ) -> BoxFuture<'_, Result<ProposalDecisionResponse, RpcError>> {
        Box::pin(async move {
            let id = parse_field("proposalId", &params.proposal_id, ProposalId::parse)?;
            let by = UserActor::new(VIA).for_user(user);
            match self
                .gate
                .approve_and_apply(&id, &params.payload_hash, &by)
                .await
            {
                Ok(outcome) => {
                    let changed = matches!(outcome, ApplyOutcome::Applied { .. });
                    Ok(ProposalDecisionResponse {
                        proposal: proposal_to_wire(outcome.proposal().clone()),
                        changed,
                    })
                }
                // The decision stands; the proposal now says why applying failed.
                Err(ToolsError::ApplyFailed { .. }) => {
                    let proposal = self.gate.get(&id).await.map_err(|e| tools_error(&e))?;
                    Ok(ProposalDecisionResponse {
                        proposal: proposal_to_wire(proposal),
                        changed: true,
                    })
                }
                Err(error) => Err(tools_error(&error)),
            }
        })
    }

    fn reject(
        &self,
        params: ProposalRejectParams,
        user: Option<String>,
    ) -> BoxFuture<'_, Result<ProposalDecisionResponse, RpcError>> {
        Box::pin(async move {
            let id = parse_field("proposalId", &params.proposal_id, ProposalId::parse)?;
            let decided = self
                .gate
                .reject(
                    &id,
                    &UserActor::new(VIA).for_user(user),
                    params.reason.as_deref(),
                )
                .await
                .map_err(|e| tools_error(&e))?;
            Ok(ProposalDecisionResponse {
                proposal: proposal_to_wire(decided.proposal),
                changed: decided.changed,
            })
        })
    }

    fn audit(&self, params: AuditListParams) -> BoxFuture<'_, Result<AuditListResponse, RpcError>> {
        Box::pin(async move {
            let before = params
                .cursor
                .as_deref()
                .map(|cursor| {
                    cursor.parse::<i64>().map_err(|_| {
                        RpcError::new(
                            ErrorKind::InvalidParams,
                            format!("`cursor`: `{cursor}` is not a cursor from `audit/list`"),
                            false,
                        )
                    })
                })
                .transpose()?;
            let limit = params.limit.unwrap_or(50).clamp(1, 1000);
            let query = AuditQuery {
                before,
                actor: params.actor,
                tool: params.tool,
                limit,
            };
            let rows = self.audit.list(&query).await.map_err(|e| tools_error(&e))?;
            let next_cursor = (rows.len() == limit as usize)
                .then(|| rows.last().map(|row| row.seq.to_string()))
                .flatten();
            Ok(AuditListResponse {
                entries: rows.into_iter().map(audit_to_wire).collect(),
                next_cursor,
            })
        })
    }

    fn verify(
        &self,
        params: wire::AuditVerifyParams,
    ) -> BoxFuture<'_, Result<wire::AuditVerifyResponse, RpcError>> {
        Box::pin(async move {
            let kept = params
                .head
                .as_deref()
                .map(|head| {
                    head.parse::<ChainHead>().map_err(|error| {
                        RpcError::new(ErrorKind::InvalidParams, format!("`head`: {error}"), false)
                    })
                })
                .transpose()?;
            let report = self
                .audit
                .verify_with(kept.as_slice())
                .await
                .map_err(|e| tools_error(&e))?;
            let problem = report.broken.as_ref().map(ToString::to_string);
            Ok(wire::AuditVerifyResponse {
                ok: problem.is_none(),
                entries: report.rows,
                head: report.head.as_ref().map(ToString::to_string),
                problem,
            })
        })
    }
}
