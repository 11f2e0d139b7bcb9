//! Sessions and harnesses: `initialize`, `session/*`, `harness/start`.

use hearth_core::{HarnessId, ProjectId, Scope, SessionUri, TurnId};
use hearth_host::NewSessionRequest;
use hearth_protocol::{self as wire, ErrorKind, Method, RpcError, ScopeFilter};
use hearth_store::SessionQuery;

use crate::access::Access;
use crate::access::{Principal, forbidden};
use crate::backend::Shared;
use crate::dispatch::{MethodTable, parse_field, route};
use crate::edge::{host_error, internal};

/// The session methods.
pub(crate) fn register(table: &mut MethodTable) {
    route!(table, wire::Initialize => initialize, Access::Open, with caller);
    route!(table, wire::SessionList => session_list, narrowed);
    route!(table, wire::SessionCreate => session_create, narrowed);
    route!(table, wire::SessionDispose => session_dispose, Access::Session("session"));
    route!(table, wire::SessionFork => session_fork, Access::Session("session"));
    route!(table, wire::SessionRename => session_rename, Access::Session("session"));
    route!(table, wire::SessionMark => session_mark, Access::Session("session"));
    route!(table, wire::SessionShare => session_share, Access::Session("session"), with caller);
    route!(table, wire::HarnessStart => harness_start, Access::Operator("starting a harness and listing its sessions on this machine"));
}

async fn initialize(
    shared: &Shared,
    caller: &Principal,
    _params: <wire::Initialize as Method>::Params,
) -> Result<<wire::Initialize as Method>::Response, RpcError> {
    if let Some(user) = caller.viewer() {
        // Their own providers run here from now on; nobody else's are shown to them.
        crate::user_providers::ensure_all(shared, &user.id).await;
    }
    let mut info = server_info(shared);
    // Users' own harnesses are theirs alone: the operator is not offered them either.
    info.harnesses.retain(|harness| match caller.viewer() {
        Some(user) => crate::user_providers::shows(user, &harness.id),
        None => crate::user_providers::owner_of(&harness.id).is_none(),
    });
    Ok(info)
}

async fn session_list(
    shared: &Shared,
    caller: &Principal,
    params: <wire::SessionList as Method>::Params,
) -> Result<<wire::SessionList as Method>::Response, RpcError> {
    let host = shared.host();
    let scope = match params.scope.unwrap_or_default() {
        ScopeFilter::Any => hearth_store::ScopeFilter::Any,
        ScopeFilter::Global => hearth_store::ScopeFilter::Global,
        ScopeFilter::Project { project_id } => hearth_store::ScopeFilter::Project(parse_field(
            "projectId",
            &project_id,
            ProjectId::parse,
        )?),
    };
    let provider = params
        .harness
        .as_deref()
        .map(|harness| parse_field("harness", harness, HarnessId::parse))
        .transpose()?;
    let query = SessionQuery {
        scope,
        provider,
        provenance: params.provenance.map(Into::into),
        title_contains: params.title_contains.filter(|text| !text.is_empty()),
        pinned: params.pinned,
        archived: params.archived,
        cursor: params.cursor,
        limit: params.limit.unwrap_or(50),
        viewer: caller.viewer().map(|user| user.id.clone()),
    };
    let page = host
        .list_sessions(&query)
        .await
        .map_err(|e| host_error(&e))?;
    Ok(wire::SessionListResponse {
        sessions: page.sessions.into_iter().map(Into::into).collect(),
        next_cursor: page.next_cursor,
    })
}

async fn session_create(
    shared: &Shared,
    caller: &Principal,
    mut params: <wire::SessionCreate as Method>::Params,
) -> Result<<wire::SessionCreate as Method>::Response, RpcError> {
    let host = shared.host();
    let owner = user_owner(shared, caller, &mut params).await?;
    // A project's sessions use its default agent or provider and model.
    if let (Some(project), Some(projects)) = (
        params.project_id.as_deref(),
        shared.backend.projects.as_ref(),
    ) && let Ok((_, file)) = projects.open(project).await
    {
        if params.harness.is_none() {
            params.harness = file.agent.clone().or(file.provider.clone());
        }
        if params.model.is_none() {
            params.model = file.model;
        }
    }
    let provider = match params.harness.as_deref() {
        Some(harness) => parse_field("harness", harness, HarnessId::parse)?,
        None => shared.backend.default_provider.clone().ok_or_else(|| {
            RpcError::new(
                ErrorKind::InvalidParams,
                "no `harness` given and the server has no default harness",
                false,
            )
        })?,
    };
    let project = params
        .project_id
        .as_deref()
        .map(|project| parse_field("projectId", project, ProjectId::parse))
        .transpose()?;
    let request = NewSessionRequest {
        provider,
        scope: Scope::from_project(project),
        title: params.title,
        model: params.model,
        working_directories: params
            .working_directories
            .into_iter()
            .map(std::path::PathBuf::from)
            .collect(),
        owner,
    };
    let uri = host
        .create_session(request)
        .await
        .map_err(|e| host_error(&e))?;
    let session = host.session(&uri).await.map_err(|e| host_error(&e))?;
    Ok(wire::SessionCreateResponse {
        session: session.into(),
    })
}

/// Shares a session with a team (or nobody): a user shares their own, with a team they
/// are in; the operator any.
async fn session_share(
    shared: &Shared,
    caller: &Principal,
    params: <wire::SessionShare as Method>::Params,
) -> Result<<wire::SessionShare as Method>::Response, RpcError> {
    let accounts = shared.backend.accounts.as_ref().ok_or_else(|| {
        crate::edge::unavailable(
            "sharing sessions is for a team server with users (`hearth serve --users`)",
        )
    })?;
    let session = parse_field("session", &params.session, SessionUri::parse)?;
    if let Some(user) = caller.viewer() {
        // Read from the store: sharing needs no session loaded into the host.
        let owner = accounts
            .session(&session)
            .await
            .map_err(|error| crate::edge::internal(error.to_string()))?
            .and_then(|summary| summary.owner);
        if owner.is_none_or(|owner| owner.user != user.id) {
            return Err(forbidden("only its owner shares a session"));
        }
        if let Some(team) = params.team.as_deref()
            && !user.teams.iter().any(|member| member.team == team)
        {
            return Err(forbidden(&format!(
                "you are not in team `{team}`: share with a team you are in"
            )));
        }
    }
    let summary = accounts
        .share_session(&session, params.team.as_deref())
        .await
        .map_err(|error| {
            let kind = match error {
                hearth_store::StoreError::InvalidQuery(_) => ErrorKind::InvalidParams,
                _ => ErrorKind::Internal,
            };
            RpcError::new(kind, error.to_string(), error.is_retryable())
        })?
        .ok_or_else(|| {
            RpcError::new(
                ErrorKind::NotFound,
                format!("no session `{session}`"),
                false,
            )
        })?;
    shared
        .host()
        .summary_changed(summary.clone())
        .map_err(|e| host_error(&e))?;
    Ok(wire::SessionRenameResponse {
        summary: summary.into(),
    })
}

/// A user's new session is theirs. They start it in a project of theirs (or shared with
/// them), or in no project — then its agent works in the user's own folder on the server
/// (`users/<id>` in the data directory) — and never name folders of the server
/// themselves: that is the operator's.
async fn user_owner(
    shared: &Shared,
    caller: &Principal,
    params: &mut <wire::SessionCreate as Method>::Params,
) -> Result<Option<hearth_core::Owner>, RpcError> {
    let Some(user) = caller.viewer() else {
        return Ok(None);
    };
    if !params.working_directories.is_empty() {
        return Err(forbidden(
            "choosing folders of the server is for its operator; start the session in a project shared with you instead",
        ));
    }
    if let Some(project) = params.project_id.as_deref() {
        let project = parse_field("projectId", project, ProjectId::parse)?;
        if !crate::access::visible_projects(shared, user)
            .await?
            .contains(&project)
        {
            return Err(RpcError::new(
                ErrorKind::NotFound,
                format!("no project `{project}`"),
                false,
            ));
        }
    } else {
        params.working_directories = vec![user_folder(shared, &user.id)?];
    }
    Ok(Some(hearth_core::Owner::user(user.id.clone())))
}

/// A user's own folder on the server (made, private, when missing): where the agents of
/// their sessions outside projects work.
fn user_folder(shared: &Shared, user: &str) -> Result<String, RpcError> {
    let paths = shared.backend.paths.as_ref().ok_or_else(|| {
        crate::edge::unavailable(
            "this server has no data directory to keep its users' folders in; start the session in a project",
        )
    })?;
    let folder = user_folder_in(&paths.home, user).map_err(crate::edge::internal)?;
    Ok(folder.display().to_string())
}

/// The user's folder in the data directory `home` (`users/<id>`, made private when
/// missing), or what failed.
pub(crate) fn user_folder_in(
    home: &std::path::Path,
    user: &str,
) -> Result<std::path::PathBuf, String> {
    let folder = home.join("users").join(user);
    std::fs::create_dir_all(&folder)
        .and_then(|()| {
            std::fs::set_permissions(&folder, std::os::unix::fs::PermissionsExt::from_mode(0o700))
        })
        .map_err(|error| {
            format!(
                "cannot make the folder {} for the user's sessions: {error}",
                folder.display()
            )
        })?;
    Ok(folder)
}

async fn session_dispose(
    shared: &Shared,
    params: <wire::SessionDispose as Method>::Params,
) -> Result<<wire::SessionDispose as Method>::Response, RpcError> {
    let host = shared.host();
    let session = parse_field("session", &params.session, SessionUri::parse)?;
    let deleted = host
        .delete_session(&session)
        .await
        .map_err(|e| host_error(&e))?;
    Ok(wire::SessionDisposeResponse {
        trashed: deleted.removal == hearth_store::Removal::Trashed,
    })
}

async fn session_fork(
    shared: &Shared,
    params: <wire::SessionFork as Method>::Params,
) -> Result<<wire::SessionFork as Method>::Response, RpcError> {
    let host = shared.host();
    let source = parse_field("session", &params.session, SessionUri::parse)?;
    let turn_id = parse_field("turnId", &params.turn_id, TurnId::parse)?;
    let uri = host
        .fork_session(&source, &turn_id)
        .await
        .map_err(|e| host_error(&e))?;
    let session = host.session(&uri).await.map_err(|e| host_error(&e))?;
    Ok(wire::SessionCreateResponse {
        session: session.into(),
    })
}

async fn session_rename(
    shared: &Shared,
    params: <wire::SessionRename as Method>::Params,
) -> Result<<wire::SessionRename as Method>::Response, RpcError> {
    let host = shared.host();
    let session = parse_field("session", &params.session, SessionUri::parse)?;
    let summary = host
        .rename_session(&session, &params.title)
        .await
        .map_err(|e| host_error(&e))?;
    Ok(wire::SessionRenameResponse {
        summary: summary.into(),
    })
}

async fn session_mark(
    shared: &Shared,
    params: <wire::SessionMark as Method>::Params,
) -> Result<<wire::SessionMark as Method>::Response, RpcError> {
    let session = parse_field("session", &params.session, SessionUri::parse)?;
    let summary = shared
        .host()
        .mark_session(&session, params.pinned, params.archived)
        .await
        .map_err(|e| host_error(&e))?;
    Ok(wire::SessionRenameResponse {
        summary: summary.into(),
    })
}

async fn harness_start(
    shared: &Shared,
    params: <wire::HarnessStart as Method>::Params,
) -> Result<<wire::HarnessStart as Method>::Response, RpcError> {
    let host = shared.host();
    let provider = parse_field("harness", &params.harness, HarnessId::parse)?;
    host.start_harness(&provider)
        .await
        .map_err(|e| host_error(&e))?;
    let harness = host
        .descriptors()
        .into_iter()
        .find(|descriptor| descriptor.id == provider)
        .map(Into::into)
        .ok_or_else(|| internal("the started harness is not registered"))?;
    Ok(wire::HarnessStartResponse { harness })
}

fn server_info(shared: &Shared) -> wire::InitializeResponse {
    let backend = &shared.backend;
    wire::InitializeResponse {
        server_info: wire::ServerInfo {
            name: "hearth".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        protocol_version: wire::PROTOCOL_VERSION.into(),
        harnesses: backend
            .host
            .descriptors()
            .into_iter()
            .map(Into::into)
            .collect(),
        default_harness: backend.default_provider.as_ref().map(ToString::to_string),
        default_provider: backend.default_provider.as_ref().map(ToString::to_string),
        features: wire::ServerFeatures {
            proposals: backend.approvals.is_some(),
            audit: backend.approvals.is_some(),
            mcp: backend.toolbox.is_some(),
        },
    }
}
