//! Proposals and the audit log: `proposal/*`, `audit/*`, through the approval gate.

use hearth_protocol::{self as wire, Method, RpcError};

use crate::backend::Shared;
use crate::dispatch::{MethodTable, route};
use crate::edge::unavailable;

/// The proposal and audit methods.
pub(crate) fn register(table: &mut MethodTable) {
    route!(table, wire::ProposalList => proposal_list);
    route!(table, wire::ProposalApprove => proposal_approve);
    route!(table, wire::ProposalReject => proposal_reject);
    route!(table, wire::AuditList => audit_list);
    route!(table, wire::AuditVerify => audit_verify);
}

async fn proposal_list(
    shared: &Shared,
    params: <wire::ProposalList as Method>::Params,
) -> Result<<wire::ProposalList as Method>::Response, RpcError> {
    approvals(shared)?.list(params).await
}

async fn proposal_approve(
    shared: &Shared,
    params: <wire::ProposalApprove as Method>::Params,
) -> Result<<wire::ProposalApprove as Method>::Response, RpcError> {
    let id = params.proposal_id.clone();
    let decided = approvals(shared)?.approve(params).await;
    // Applied or failed, the proposal changed unless it was refused outright.
    if decided.is_ok() {
        shared.host().proposal_changed(&id);
    }
    decided
}

async fn proposal_reject(
    shared: &Shared,
    params: <wire::ProposalReject as Method>::Params,
) -> Result<<wire::ProposalReject as Method>::Response, RpcError> {
    let id = params.proposal_id.clone();
    let decided = approvals(shared)?.reject(params).await;
    if decided.as_ref().is_ok_and(|decided| decided.changed) {
        shared.host().proposal_changed(&id);
    }
    decided
}

async fn audit_list(
    shared: &Shared,
    params: <wire::AuditList as Method>::Params,
) -> Result<<wire::AuditList as Method>::Response, RpcError> {
    approvals(shared)?.audit(params).await
}

async fn audit_verify(
    shared: &Shared,
    params: <wire::AuditVerify as Method>::Params,
) -> Result<<wire::AuditVerify as Method>::Response, RpcError> {
    approvals(shared)?.verify(params).await
}

fn approvals(shared: &Shared) -> Result<&dyn crate::approvals::Approvals, RpcError> {
    shared.backend.approvals.as_deref().ok_or_else(|| {
        unavailable(
            "proposals and the audit log are not available in this server (the tool registry is not running)",
        )
    })
}
