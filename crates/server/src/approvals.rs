//! The approval seam: proposals and the audit log, as the protocol offers them. The
//! tool registry's approval gate implements it; a server without one answers
//! `proposal/*` and `audit/list` with an "unavailable" error.

use futures::future::BoxFuture;
use hearth_protocol::{
    AuditListParams, AuditListResponse, AuditVerifyParams, AuditVerifyResponse,
    ProposalApproveParams, ProposalDecisionResponse, ProposalListParams, ProposalListResponse,
    ProposalRejectParams, RpcError,
};

/// Lists and decides proposals and reads the audit log on behalf of an authenticated
/// user. Implementations map their own errors to [`RpcError`]s (kind `conflict` when a
/// proposal was decided already or its payload changed, `notFound` for unknown ids).
pub trait Approvals: Send + Sync + 'static {
    /// A page of proposals.
    fn list(
        &self,
        params: ProposalListParams,
    ) -> BoxFuture<'_, Result<ProposalListResponse, RpcError>>;

    /// Approves a pending proposal (bound to its payload hash) and applies it; `user` is
    /// the team server's user who decides (`None`: the operator), for the audit log.
    fn approve(
        &self,
        params: ProposalApproveParams,
        user: Option<String>,
    ) -> BoxFuture<'_, Result<ProposalDecisionResponse, RpcError>>;

    /// Rejects a pending proposal.
    fn reject(
        &self,
        params: ProposalRejectParams,
        user: Option<String>,
    ) -> BoxFuture<'_, Result<ProposalDecisionResponse, RpcError>>;

    /// A page of the audit log.
    fn audit(&self, params: AuditListParams) -> BoxFuture<'_, Result<AuditListResponse, RpcError>>;

    /// Checks the audit log as `hearth audit verify` does; a broken log is an answer
    /// (`ok: false` with the problem), not an error.
    fn verify(
        &self,
        params: AuditVerifyParams,
    ) -> BoxFuture<'_, Result<AuditVerifyResponse, RpcError>>;
}
