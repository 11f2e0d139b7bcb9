//! Agents' permission requests and the standing answers: `permission/*`.

use hearth_core::{ChatUri, PermissionAnswer};
use hearth_protocol::{self as wire, Method, RpcError};

use crate::access::Access;
use crate::access::{Principal, keep_visible};
use crate::backend::Shared;
use crate::dispatch::{MethodTable, parse_field, route};
use crate::edge::host_error;

/// The permission methods.
pub(crate) fn register(table: &mut MethodTable) {
    route!(table, wire::PermissionRespond => permission_respond, Access::Chat("chat"));
    route!(table, wire::PermissionList => permission_list, narrowed);
    route!(table, wire::PermissionGrants => permission_grants, narrowed);
    route!(table, wire::PermissionRevokeGrant => permission_revoke_grant, narrowed);
}

async fn permission_respond(
    shared: &Shared,
    params: <wire::PermissionRespond as Method>::Params,
) -> Result<<wire::PermissionRespond as Method>::Response, RpcError> {
    let host = shared.host();
    let chat = parse_field("chat", &params.chat, ChatUri::parse)?;
    let answer = PermissionAnswer {
        option_id: params.option_id,
        via: if params.by_policy {
            hearth_core::PERMISSION_BY_POLICY
        } else {
            "server"
        }
        .to_owned(),
    };
    host.respond_permission(&chat, &params.request_id, &answer)
        .await
        .map_err(|e| host_error(&e))?;
    Ok(wire::PermissionRespondResponse {})
}

async fn permission_list(
    shared: &Shared,
    caller: &Principal,
    _params: <wire::PermissionList as Method>::Params,
) -> Result<<wire::PermissionList as Method>::Response, RpcError> {
    let host = shared.host();
    let pending = keep_visible(shared, caller, host.pending_permissions(), |pending| {
        Some(pending.chat.session())
    })
    .await?;
    let permissions = pending
        .into_iter()
        .map(|pending| wire::PendingPermission {
            chat: pending.chat.to_string(),
            turn_id: pending.turn_id.to_string(),
            request_id: pending.request_id,
            title: pending.title,
            options: pending.options.into_iter().map(Into::into).collect(),
            tool_call: pending.tool_call.map(Into::into),
        })
        .collect();
    Ok(wire::PermissionListResponse { permissions })
}

async fn permission_grants(
    shared: &Shared,
    caller: &Principal,
    _params: <wire::PermissionGrants as Method>::Params,
) -> Result<<wire::PermissionGrants as Method>::Response, RpcError> {
    let host = shared.host();
    let grants = keep_visible(shared, caller, host.permission_grants(), |grant| {
        Some(grant.chat.session())
    })
    .await?;
    let grants = grants
        .into_iter()
        .map(|grant| wire::PermissionGrant {
            id: grant.id,
            chat: grant.chat.to_string(),
            scope: grant.scope,
            allowed: grant.allowed,
        })
        .collect();
    Ok(wire::PermissionGrantsResponse { grants })
}

async fn permission_revoke_grant(
    shared: &Shared,
    caller: &Principal,
    params: <wire::PermissionRevokeGrant as Method>::Params,
) -> Result<<wire::PermissionRevokeGrant as Method>::Response, RpcError> {
    let host = shared.host();
    // A user revokes only the grants of chats they may reach; another's reads as absent.
    let theirs = keep_visible(shared, caller, host.permission_grants(), |grant| {
        Some(grant.chat.session())
    })
    .await?;
    if !theirs.iter().any(|grant| grant.id == params.grant) {
        return Ok(wire::PermissionRevokeGrantResponse { revoked: false });
    }
    Ok(wire::PermissionRevokeGrantResponse {
        revoked: host.revoke_permission_grant(&params.grant),
    })
}
