//! Proposals and the audit log: `proposal/*`, `audit/*`, through the approval gate.

use hearth_protocol::{self as wire, Method, RpcError};

use crate::access::Access;
use crate::access::{Principal, keep_visible};
use crate::backend::Shared;
use crate::dispatch::{MethodTable, route};
use crate::edge::unavailable;

/// The proposal and audit methods.
pub(crate) fn register(table: &mut MethodTable) {
    route!(table, wire::ProposalList => proposal_list, narrowed);
    route!(table, wire::ProposalApprove => proposal_approve, Access::Decide("proposalId"), with caller);
    route!(table, wire::ProposalReject => proposal_reject, Access::Decide("proposalId"), with caller);
    route!(table, wire::AuditList => audit_list, narrowed);
    route!(table, wire::AuditVerify => audit_verify, Access::Operator("checking the whole audit log"));
}

/// A user's page holds only the proposals of sessions they may reach (a page may come
/// out shorter than its limit; its cursor still goes on).
async fn proposal_list(
    shared: &Shared,
    caller: &Principal,
    params: <wire::ProposalList as Method>::Params,
) -> Result<<wire::ProposalList as Method>::Response, RpcError> {
    if let (Some(user), Some(session)) = (caller.viewer(), params.session.as_deref())
        && let Ok(session) = hearth_core::SessionUri::parse(session)
    {
        crate::access::see_session(shared, user, &session).await?;
    }
    let mut page = approvals(shared)?.list(params).await?;
    page.proposals = keep_visible(shared, caller, page.proposals, |proposal| {
        hearth_core::SessionUri::parse(&proposal.session).ok()
    })
    .await?;
    Ok(page)
}

async fn proposal_approve(
    shared: &Shared,
    caller: &Principal,
    params: <wire::ProposalApprove as Method>::Params,
) -> Result<<wire::ProposalApprove as Method>::Response, RpcError> {
    let id = params.proposal_id.clone();
    let decided = approvals(shared)?.approve(params, caller.user_id()).await;
    // Applied or failed, the proposal changed unless it was refused outright.
    if decided.is_ok() {
        shared.host().proposal_changed(&id);
    }
    decided
}

async fn proposal_reject(
    shared: &Shared,
    caller: &Principal,
    params: <wire::ProposalReject as Method>::Params,
) -> Result<<wire::ProposalReject as Method>::Response, RpcError> {
    let id = params.proposal_id.clone();
    let decided = approvals(shared)?.reject(params, caller.user_id()).await;
    if decided.as_ref().is_ok_and(|decided| decided.changed) {
        shared.host().proposal_changed(&id);
    }
    decided
}

/// A user reads only the entries of what they did themselves.
async fn audit_list(
    shared: &Shared,
    caller: &Principal,
    mut params: <wire::AuditList as Method>::Params,
) -> Result<<wire::AuditList as Method>::Response, RpcError> {
    if let Some(user) = caller.viewer() {
        params.actor = Some(format!("user:{}", user.id));
    }
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
