//! Request dispatch: each method's params parsed into domain values, the host called,
//! the result converted to the wire. `subscribe` and `unsubscribe` belong to a
//! connection and are handled there.

use std::future::Future;

use hearth_core::{
    ChatUri, PermissionAnswer, ProjectId, ProviderId, Scope, SessionUri, TurnId, UriError,
};
use hearth_host::{NewSessionRequest, PageEnd};
use hearth_protocol::{
    self as wire, AuditList, ChatAbort, ChatAbortResponse, ChatCreate, ChatCreateResponse,
    ChatDispose, ChatDisposeResponse, ChatQueue, ChatQueueResponse, ChatResolve,
    ChatResolveResponse, ChatSend, ChatSendResponse, ChatSetDraft, ChatSetDraftResponse,
    ChatSetModel, ChatSetModelResponse, ChatSetQueue, ChatSetQueueResponse, ClientMethod,
    ErrorKind, HarnessStart, HarnessStartResponse, Initialize, InitializeResponse, Method,
    PROTOCOL_VERSION, PermissionGrants, PermissionGrantsResponse, PermissionList,
    PermissionListResponse, PermissionRespond, PermissionRespondResponse, PermissionRevokeGrant,
    PermissionRevokeGrantResponse, ProposalApprove, ProposalList, ProposalReject, ProviderList,
    ProviderTest, RequestId, RpcError, ScopeFilter, ServerFeatures, ServerInfo, SessionCreate,
    SessionCreateResponse, SessionDispose, SessionDisposeResponse, SessionFork, SessionList,
    SessionListResponse, error_text, response_text,
};
use hearth_store::SessionQuery;
use serde_json::Value;

use crate::backend::Shared;
use crate::edge::{host_error, internal, invalid_params, unavailable};
use crate::projects::{project_error, registry};
use crate::providers::{list_providers, test_providers};

/// Parses a method's params; absent params read as `{}`.
pub(crate) fn parse_params<P: serde::de::DeserializeOwned>(params: Value) -> Result<P, RpcError> {
    let params = if params.is_null() {
        Value::Object(serde_json::Map::new())
    } else {
        params
    };
    serde_json::from_value(params).map_err(|error| {
        RpcError::new(
            ErrorKind::InvalidParams,
            format!("invalid params: {error}"),
            false,
        )
    })
}

/// Turns in a `chat/turns` page when the client names no limit.
pub(crate) const DEFAULT_TURN_PAGE: u32 = 50;
/// The most turns one page or one subscribe snapshot may ask for.
pub(crate) const MAX_TURN_PAGE: u32 = 200;

/// A page size: `default` when absent, refused outside 1..=[`MAX_TURN_PAGE`].
pub(crate) fn page_limit(
    field: &'static str,
    limit: Option<u32>,
    default: u32,
) -> Result<u32, RpcError> {
    match limit.unwrap_or(default) {
        limit @ 1..=MAX_TURN_PAGE => Ok(limit),
        other => Err(RpcError::new(
            ErrorKind::InvalidParams,
            format!("`{field}` is {other}; it must be between 1 and {MAX_TURN_PAGE}"),
            false,
        )),
    }
}

/// Parses a URI or id parameter, naming it when it does not parse.
pub(crate) fn parse_field<T>(
    field: &'static str,
    text: &str,
    parse: impl FnOnce(&str) -> Result<T, UriError>,
) -> Result<T, RpcError> {
    parse(text).map_err(|source| invalid_params(&wire::ProtocolError::Uri { field, source }))
}

/// Runs a typed handler and encodes its response or error.
pub(crate) async fn respond<M, F, Fut>(id: RequestId, params: Value, handler: F) -> String
where
    M: Method,
    F: FnOnce(M::Params) -> Fut,
    Fut: Future<Output = Result<M::Response, RpcError>>,
{
    let result = match parse_params::<M::Params>(params) {
        Ok(params) => handler(params).await,
        Err(error) => Err(error),
    };
    match result {
        Ok(response) => response_text(id.clone(), &response)
            .unwrap_or_else(|error| error_text(Some(id), internal(error))),
        Err(error) => error_text(Some(id), error),
    }
}

/// Answers a request that needs no connection state.
pub(crate) async fn call(
    shared: &Shared,
    method: ClientMethod,
    id: RequestId,
    params: Value,
) -> String {
    let host = shared.host();
    match method {
        ClientMethod::Initialize => {
            respond::<Initialize, _, _>(id, params, |_| async { Ok(initialize(shared)) }).await
        }
        ClientMethod::SessionList => {
            respond::<SessionList, _, _>(id, params, |params| async move {
                let scope = match params.scope.unwrap_or_default() {
                    ScopeFilter::Any => hearth_store::ScopeFilter::Any,
                    ScopeFilter::Global => hearth_store::ScopeFilter::Global,
                    ScopeFilter::Project { project_id } => hearth_store::ScopeFilter::Project(
                        parse_field("projectId", &project_id, ProjectId::parse)?,
                    ),
                };
                let provider = params
                    .provider
                    .as_deref()
                    .map(|provider| parse_field("provider", provider, ProviderId::parse))
                    .transpose()?;
                let query = SessionQuery {
                    scope,
                    provider,
                    provenance: params.provenance.map(Into::into),
                    cursor: params.cursor,
                    limit: params.limit.unwrap_or(50),
                };
                let page = host
                    .list_sessions(&query)
                    .await
                    .map_err(|e| host_error(&e))?;
                Ok(SessionListResponse {
                    sessions: page.sessions.into_iter().map(Into::into).collect(),
                    next_cursor: page.next_cursor,
                })
            })
            .await
        }
        ClientMethod::SessionCreate => {
            respond::<SessionCreate, _, _>(id, params, |mut params| async move {
                // A project's sessions use its default agent or provider and model.
                if let (Some(project), Some(projects)) = (
                    params.project_id.as_deref(),
                    shared.backend.projects.as_ref(),
                ) && let Ok((_, file)) = projects.open(project).await
                {
                    if params.provider.is_none() {
                        params.provider = file.agent.clone().or(file.provider.clone());
                    }
                    if params.model.is_none() {
                        params.model = file.model;
                    }
                }
                let provider = match params.provider.as_deref() {
                    Some(provider) => parse_field("provider", provider, ProviderId::parse)?,
                    None => shared.backend.default_provider.clone().ok_or_else(|| {
                        RpcError::new(
                            ErrorKind::InvalidParams,
                            "no `provider` given and the server has no default provider",
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
                };
                let uri = host
                    .create_session(request)
                    .await
                    .map_err(|e| host_error(&e))?;
                let session = host.session(&uri).await.map_err(|e| host_error(&e))?;
                Ok(SessionCreateResponse {
                    session: session.into(),
                })
            })
            .await
        }
        ClientMethod::SessionDispose => {
            respond::<SessionDispose, _, _>(id, params, |params| async move {
                let session = parse_field("session", &params.session, SessionUri::parse)?;
                host.delete_session(&session)
                    .await
                    .map_err(|e| host_error(&e))?;
                Ok(SessionDisposeResponse {})
            })
            .await
        }
        ClientMethod::SessionFork => {
            respond::<SessionFork, _, _>(id, params, |params| async move {
                let source = parse_field("session", &params.session, SessionUri::parse)?;
                let turn_id = parse_field("turnId", &params.turn_id, TurnId::parse)?;
                let uri = host
                    .fork_session(&source, &turn_id)
                    .await
                    .map_err(|e| host_error(&e))?;
                let session = host.session(&uri).await.map_err(|e| host_error(&e))?;
                Ok(SessionCreateResponse {
                    session: session.into(),
                })
            })
            .await
        }
        ClientMethod::SessionRename => {
            respond::<wire::SessionRename, _, _>(id, params, |params| async move {
                let session = parse_field("session", &params.session, SessionUri::parse)?;
                let summary = host
                    .rename_session(&session, &params.title)
                    .await
                    .map_err(|e| host_error(&e))?;
                Ok(wire::SessionRenameResponse {
                    summary: summary.into(),
                })
            })
            .await
        }
        ClientMethod::ChatCreate => {
            respond::<ChatCreate, _, _>(id, params, |params| async move {
                let session = parse_field("session", &params.session, SessionUri::parse)?;
                let seed =
                    hearth_core::ChatSeed::try_from(params.seed).map_err(|e| invalid_params(&e))?;
                let chat = host
                    .create_chat(&session, seed)
                    .await
                    .map_err(|e| host_error(&e))?;
                let state = host.chat(&chat).await.map_err(|e| host_error(&e))?;
                Ok(ChatCreateResponse {
                    chat: state.summary.into(),
                })
            })
            .await
        }
        ClientMethod::ChatDispose => {
            respond::<ChatDispose, _, _>(id, params, |params| async move {
                let chat = parse_field("chat", &params.chat, ChatUri::parse)?;
                host.dispose_chat(&chat).await.map_err(|e| host_error(&e))?;
                Ok(ChatDisposeResponse {})
            })
            .await
        }
        ClientMethod::ChatSend => {
            respond::<ChatSend, _, _>(id, params, |params| async move {
                let chat = parse_field("chat", &params.chat, ChatUri::parse)?;
                let turn_id = host
                    .send(&chat, params.message.into())
                    .await
                    .map_err(|e| host_error(&e))?;
                Ok(ChatSendResponse {
                    turn_id: turn_id.to_string(),
                })
            })
            .await
        }
        ClientMethod::ChatQueue => {
            respond::<ChatQueue, _, _>(id, params, |params| async move {
                let chat = parse_field("chat", &params.chat, ChatUri::parse)?;
                let turn_id = host
                    .queue_message(&chat, params.message.into())
                    .await
                    .map_err(|e| host_error(&e))?;
                Ok(ChatQueueResponse {
                    turn_id: turn_id.map(|id| id.to_string()),
                })
            })
            .await
        }
        ClientMethod::ChatSetQueue => {
            respond::<ChatSetQueue, _, _>(id, params, |params| async move {
                let chat = parse_field("chat", &params.chat, ChatUri::parse)?;
                host.set_queue(&chat, params.queued)
                    .await
                    .map_err(|e| host_error(&e))?;
                Ok(ChatSetQueueResponse {})
            })
            .await
        }
        ClientMethod::ChatAbort => {
            respond::<ChatAbort, _, _>(id, params, |params| async move {
                let chat = parse_field("chat", &params.chat, ChatUri::parse)?;
                let aborted = host.abort(&chat).await.map_err(|e| host_error(&e))?;
                Ok(ChatAbortResponse { aborted })
            })
            .await
        }
        ClientMethod::ChatSetModel => {
            respond::<ChatSetModel, _, _>(id, params, |params| async move {
                let chat = parse_field("chat", &params.chat, ChatUri::parse)?;
                host.set_model(&chat, params.model)
                    .await
                    .map_err(|e| host_error(&e))?;
                Ok(ChatSetModelResponse {})
            })
            .await
        }
        ClientMethod::ChatSetDraft => {
            respond::<ChatSetDraft, _, _>(id, params, |params| async move {
                let chat = parse_field("chat", &params.chat, ChatUri::parse)?;
                host.set_draft(&chat, params.draft)
                    .await
                    .map_err(|e| host_error(&e))?;
                Ok(ChatSetDraftResponse {})
            })
            .await
        }
        ClientMethod::ChatResolve => {
            respond::<ChatResolve, _, _>(id, params, |params| async move {
                let chat = parse_field("chat", &params.chat, ChatUri::parse)?;
                host.resolve_chat(&chat).await.map_err(|e| host_error(&e))?;
                let state = host.chat(&chat).await.map_err(|e| host_error(&e))?;
                Ok(ChatResolveResponse { chat: state.into() })
            })
            .await
        }
        ClientMethod::ChatTurns => {
            respond::<wire::ChatTurns, _, _>(id, params, |params| async move {
                let chat = parse_field("chat", &params.chat, ChatUri::parse)?;
                let before = params
                    .before
                    .as_deref()
                    .map(|turn| parse_field("before", turn, TurnId::parse))
                    .transpose()?;
                let limit = page_limit("limit", params.limit, DEFAULT_TURN_PAGE)?;
                let end = before.as_ref().map_or(PageEnd::Latest, PageEnd::Before);
                let page = host
                    .turn_page(&chat, end, limit)
                    .await
                    .map_err(|e| host_error(&e))?;
                Ok(wire::ChatTurnsResponse {
                    turns: page.turns.into_iter().map(Into::into).collect(),
                    has_more: page.has_more,
                })
            })
            .await
        }
        ClientMethod::PermissionRespond => {
            respond::<PermissionRespond, _, _>(id, params, |params| async move {
                let chat = parse_field("chat", &params.chat, ChatUri::parse)?;
                let answer = PermissionAnswer {
                    option_id: params.option_id,
                    via: "server".to_owned(),
                };
                host.respond_permission(&chat, &params.request_id, &answer)
                    .await
                    .map_err(|e| host_error(&e))?;
                Ok(PermissionRespondResponse {})
            })
            .await
        }
        ClientMethod::PermissionList => {
            respond::<PermissionList, _, _>(id, params, |_| async move {
                let permissions = host
                    .pending_permissions()
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
                Ok(PermissionListResponse { permissions })
            })
            .await
        }
        ClientMethod::PermissionGrants => {
            respond::<PermissionGrants, _, _>(id, params, |_| async move {
                let grants = host
                    .permission_grants()
                    .into_iter()
                    .map(|grant| wire::PermissionGrant {
                        id: grant.id,
                        chat: grant.chat.to_string(),
                        scope: grant.scope,
                        allowed: grant.allowed,
                    })
                    .collect();
                Ok(PermissionGrantsResponse { grants })
            })
            .await
        }
        ClientMethod::PermissionRevokeGrant => {
            respond::<PermissionRevokeGrant, _, _>(id, params, |params| async move {
                Ok(PermissionRevokeGrantResponse {
                    revoked: host.revoke_permission_grant(&params.grant),
                })
            })
            .await
        }
        ClientMethod::HarnessStart => {
            respond::<HarnessStart, _, _>(id, params, |params| async move {
                let provider = parse_field("provider", &params.provider, ProviderId::parse)?;
                host.start_harness(&provider)
                    .await
                    .map_err(|e| host_error(&e))?;
                let harness = host
                    .descriptors()
                    .into_iter()
                    .find(|descriptor| descriptor.id == provider)
                    .map(Into::into)
                    .ok_or_else(|| internal("the started harness is not registered"))?;
                Ok(HarnessStartResponse { harness })
            })
            .await
        }
        ClientMethod::ProviderList => {
            respond::<ProviderList, _, _>(id, params, |_| async {
                Ok(list_providers(&shared.backend.config).await)
            })
            .await
        }
        ClientMethod::ProviderTest => {
            respond::<ProviderTest, _, _>(id, params, |params| async move {
                test_providers(&shared.backend.config, params.provider.as_deref()).await
            })
            .await
        }
        ClientMethod::ProposalList => {
            respond::<ProposalList, _, _>(id, params, |params| async move {
                approvals(shared)?.list(params).await
            })
            .await
        }
        ClientMethod::ProposalApprove => {
            respond::<ProposalApprove, _, _>(id, params, |params| async move {
                approvals(shared)?.approve(params).await
            })
            .await
        }
        ClientMethod::ProposalReject => {
            respond::<ProposalReject, _, _>(id, params, |params| async move {
                approvals(shared)?.reject(params).await
            })
            .await
        }
        ClientMethod::AuditList => {
            respond::<AuditList, _, _>(id, params, |params| async move {
                approvals(shared)?.audit(params).await
            })
            .await
        }
        ClientMethod::AuditVerify => {
            respond::<wire::AuditVerify, _, _>(id, params, |params| async move {
                approvals(shared)?.verify(params).await
            })
            .await
        }
        ClientMethod::ProjectList => {
            respond::<wire::ProjectList, _, _>(id, params, |_| async move {
                let projects = registry(shared.backend.projects.as_ref())?;
                let list = projects.list().await.map_err(|e| project_error(&e))?;
                Ok(wire::ProjectListResponse {
                    projects: list.iter().map(crate::projects::to_wire).collect(),
                })
            })
            .await
        }
        ClientMethod::ProjectGet => {
            respond::<wire::ProjectGet, _, _>(id, params, |params| async move {
                let projects = registry(shared.backend.projects.as_ref())?;
                let project = crate::projects::get(projects, &params.project).await?;
                Ok(wire::ProjectResponse { project })
            })
            .await
        }
        ClientMethod::ProjectCreate => {
            respond::<wire::ProjectCreate, _, _>(id, params, |params| async move {
                let projects = registry(shared.backend.projects.as_ref())?;
                crate::projects::create(projects, params).await
            })
            .await
        }
        ClientMethod::ProjectTrust => {
            respond::<wire::ProjectTrust, _, _>(id, params, |params| async move {
                let projects = registry(shared.backend.projects.as_ref())?;
                crate::projects::trust(projects, params).await
            })
            .await
        }
        ClientMethod::ProjectRename => {
            respond::<wire::ProjectRename, _, _>(id, params, |params| async move {
                let projects = registry(shared.backend.projects.as_ref())?;
                let record = projects
                    .rename(&params.project, &params.name)
                    .await
                    .map_err(|e| project_error(&e))?;
                let project = crate::projects::get(projects, record.id.as_str()).await?;
                Ok(wire::ProjectResponse { project })
            })
            .await
        }
        ClientMethod::ProjectDelete => {
            respond::<wire::ProjectDelete, _, _>(id, params, |params| async move {
                let projects = registry(shared.backend.projects.as_ref())?;
                let (record, mirror_removed) = projects
                    .delete(&params.project)
                    .await
                    .map_err(|e| project_error(&e))?;
                Ok(wire::ProjectDeleteResponse {
                    id: record.id.to_string(),
                    mirror_removed,
                })
            })
            .await
        }
        ClientMethod::ProjectAddSource => {
            respond::<wire::ProjectAddSource, _, _>(id, params, |params| async move {
                let projects = registry(shared.backend.projects.as_ref())?;
                let record = projects
                    .find(&params.project)
                    .await
                    .map_err(|e| project_error(&e))?;
                let source =
                    hearth_projects::context::ContextSource::parse(&params.source, &record.folder);
                projects
                    .add_source(record.id.as_str(), source)
                    .await
                    .map_err(|e| project_error(&e))?;
                let project = crate::projects::get(projects, record.id.as_str()).await?;
                Ok(wire::ProjectResponse { project })
            })
            .await
        }
        ClientMethod::ProjectRemoveSource => {
            respond::<wire::ProjectRemoveSource, _, _>(id, params, |params| async move {
                let projects = registry(shared.backend.projects.as_ref())?;
                let record = projects
                    .find(&params.project)
                    .await
                    .map_err(|e| project_error(&e))?;
                projects
                    .remove_source(record.id.as_str(), &params.source)
                    .await
                    .map_err(|e| project_error(&e))?;
                let project = crate::projects::get(projects, record.id.as_str()).await?;
                Ok(wire::ProjectResponse { project })
            })
            .await
        }
        ClientMethod::ProjectRelink => {
            respond::<wire::ProjectRelink, _, _>(id, params, |params| async move {
                let projects = registry(shared.backend.projects.as_ref())?;
                let folder = crate::projects::folder(&params.folder)?;
                let record = projects
                    .relink(&params.project, folder)
                    .await
                    .map_err(|e| project_error(&e))?;
                let project = crate::projects::get(projects, record.id.as_str()).await?;
                Ok(wire::ProjectResponse { project })
            })
            .await
        }
        ClientMethod::CalendarList => {
            respond::<wire::CalendarList, _, _>(id, params, |_| async move {
                Ok(crate::calendar::list(calendars(shared)?, &shared.backend.config).await)
            })
            .await
        }
        ClientMethod::CalendarEvents => {
            respond::<wire::CalendarEvents, _, _>(id, params, |params| async move {
                crate::calendar::events(
                    calendars(shared)?,
                    shared.backend.approvals.as_deref(),
                    params,
                )
                .await
            })
            .await
        }
        ClientMethod::Subscribe | ClientMethod::Unsubscribe => error_text(
            Some(id),
            RpcError::new(
                ErrorKind::Unsupported,
                format!(
                    "`{}` needs a streaming connection: use the WebSocket at /rpc or `hearth app-server --stdio`",
                    method.name()
                ),
                false,
            ),
        ),
    }
}

fn approvals(shared: &Shared) -> Result<&dyn crate::approvals::Approvals, RpcError> {
    shared.backend.approvals.as_deref().ok_or_else(|| {
        unavailable(
            "proposals and the audit log are not available in this server (the tool registry is not running)",
        )
    })
}

fn calendars(shared: &Shared) -> Result<&hearth_calendar::Calendars, RpcError> {
    shared.backend.calendars.as_ref().ok_or_else(|| {
        unavailable("the calendars are not available in this server (it was started without them)")
    })
}

fn initialize(shared: &Shared) -> InitializeResponse {
    let backend = &shared.backend;
    InitializeResponse {
        server_info: ServerInfo {
            name: "hearth".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        protocol_version: PROTOCOL_VERSION.into(),
        harnesses: backend
            .host
            .descriptors()
            .into_iter()
            .map(Into::into)
            .collect(),
        default_provider: backend.default_provider.as_ref().map(ToString::to_string),
        features: ServerFeatures {
            proposals: backend.approvals.is_some(),
            audit: backend.approvals.is_some(),
            mcp: backend.toolbox.is_some(),
        },
    }
}
