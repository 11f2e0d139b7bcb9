//! `trash/*`: the sessions and projects the user deleted — listed with when each is
//! erased by itself (`[history] trash_days`), restored, or erased now (audited).

use hearth_core::SessionUri;
use hearth_protocol::{self as wire, ErrorKind, Method, RpcError};
use hearth_store::{StoreError, TrashKind};
use hearth_tools::{Actor, Emptying, UserActor};

use crate::access::{Access, Principal};
use crate::backend::Shared;
use crate::dispatch::{MethodTable, parse_field, route};
use crate::edge::{host_error, unavailable};

/// The trash methods.
pub(crate) fn register(table: &mut MethodTable) {
    route!(table, wire::TrashList => trash_list, narrowed);
    route!(table, wire::TrashRestore => trash_restore, narrowed);
    route!(table, wire::TrashEmpty => trash_empty, Access::Operator("emptying the trash"));
}

/// The error response for a store failure of a trash method.
fn store_error(error: &StoreError) -> RpcError {
    let kind = match error {
        StoreError::NotFound { .. } => ErrorKind::NotFound,
        StoreError::Conflict(_) => ErrorKind::Conflict,
        _ => ErrorKind::Internal,
    };
    RpcError::new(kind, error.to_string(), error.is_retryable())
}

fn kind(kind: wire::TrashKind) -> TrashKind {
    match kind {
        wire::TrashKind::Session => TrashKind::Session,
        wire::TrashKind::Project => TrashKind::Project,
    }
}

fn wire_kind(kind: TrashKind) -> wire::TrashKind {
    match kind {
        TrashKind::Session => wire::TrashKind::Session,
        TrashKind::Project => wire::TrashKind::Project,
    }
}

/// What of the trash the caller may see: all of it for the operator; a user's own (and
/// their teams') deleted sessions and projects.
async fn visible_items(
    shared: &Shared,
    caller: &Principal,
) -> Result<Vec<hearth_store::TrashItem>, RpcError> {
    let mut items = shared
        .host()
        .store()
        .trash_items()
        .await
        .map_err(|error| store_error(&error))?;
    if let Some(user) = caller.viewer() {
        items.retain(|item| user.sees(item.owner.as_ref()));
    }
    Ok(items)
}

async fn trash_list(
    shared: &Shared,
    caller: &Principal,
    _params: <wire::TrashList as Method>::Params,
) -> Result<<wire::TrashList as Method>::Response, RpcError> {
    let items = visible_items(shared, caller).await?;
    let days = shared.backend.config.history.trash_days();
    Ok(wire::TrashListResponse {
        items: items
            .into_iter()
            .map(|item| wire::TrashItem {
                kind: wire_kind(item.kind),
                purge_at: hearth_tools::purge_at(item.deleted_at, days).map(|at| at.to_rfc3339()),
                deleted_at: item.deleted_at.to_rfc3339(),
                id: item.id,
                title: item.title,
            })
            .collect(),
    })
}

async fn trash_restore(
    shared: &Shared,
    caller: &Principal,
    params: <wire::TrashRestore as Method>::Params,
) -> Result<<wire::TrashRestore as Method>::Response, RpcError> {
    // A user restores only what they may see in the trash; the rest is not there.
    if caller.viewer().is_some() {
        let wanted = kind(params.kind);
        let theirs = visible_items(shared, caller)
            .await?
            .into_iter()
            .any(|item| item.kind == wanted && item.id == params.id);
        if !theirs {
            return Err(RpcError::new(
                ErrorKind::NotFound,
                format!("nothing in the trash is called `{}`", params.id),
                false,
            ));
        }
    }
    match kind(params.kind) {
        TrashKind::Session => {
            let session = parse_field("id", &params.id, SessionUri::parse)?;
            shared
                .host()
                .restore_session(&session)
                .await
                .map_err(|error| match error {
                    hearth_host::HostError::Store(store) => store_error(&store),
                    other => host_error(&other),
                })?;
        }
        TrashKind::Project => shared
            .host()
            .store()
            .restore_from_trash(TrashKind::Project, &params.id)
            .await
            .map_err(|error| store_error(&error))?,
    }
    Ok(wire::TrashRestoreResponse {})
}

async fn trash_empty(
    shared: &Shared,
    _params: <wire::TrashEmpty as Method>::Params,
) -> Result<<wire::TrashEmpty as Method>::Response, RpcError> {
    let audit = shared.backend.audit.as_ref().ok_or_else(|| {
        unavailable("emptying the trash is not available in this server (it has no audit log)")
    })?;
    let erased = hearth_tools::empty_trash(
        shared.host().store().as_ref(),
        audit,
        Actor::User(UserActor::new(crate::gate::VIA)),
        Emptying::Asked {
            older_than_days: None,
        },
    )
    .await
    .map_err(|error| RpcError::new(ErrorKind::Internal, error.to_string(), false))?;
    Ok(wire::TrashEmptyResponse {
        erased: u32::try_from(erased.len()).unwrap_or(u32::MAX),
    })
}
