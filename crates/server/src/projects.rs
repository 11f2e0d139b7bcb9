//! `project/*`: the projects of the server's data directory, through the same registry
//! the CLI uses, converted to the wire here.

use std::path::Path;

use hearth_projects::context::ContextSource;
use hearth_projects::{
    Consent, Project, ProjectError, Projects, Review, ReviewReason, TrustDigest,
};
use hearth_protocol::{self as wire, ErrorKind, RpcError};

use crate::access::Access;
use crate::backend::Shared;
use crate::dispatch::{MethodTable, route};
use crate::edge::unavailable;
use hearth_protocol::Method;

/// The error response for a project failure.
pub(crate) fn project_error(error: &ProjectError) -> RpcError {
    let kind = match error {
        ProjectError::Unknown(_) => ErrorKind::NotFound,
        ProjectError::Missing { .. } => ErrorKind::Gone,
        ProjectError::NoProjectFile { .. }
        | ProjectError::Malformed { .. }
        | ProjectError::Ambiguous { .. }
        | ProjectError::OtherProject { .. }
        | ProjectError::Invalid(_) => ErrorKind::InvalidParams,
        // The file asks for trust not given, or changed since it was shown: look again.
        ProjectError::NeedsTrust(_) | ProjectError::ChangedSinceShown(_) => ErrorKind::Conflict,
        ProjectError::Io { .. } | ProjectError::Store(_) => ErrorKind::Internal,
    };
    RpcError::new(kind, error.to_string(), false)
}

/// The projects, or the error saying this server has none.
pub(crate) fn registry(projects: Option<&Projects>) -> Result<&Projects, RpcError> {
    projects.ok_or_else(|| unavailable("projects are not available in this server"))
}

fn source(source: &ContextSource) -> wire::ProjectSource {
    wire::ProjectSource {
        kind: source.kind().to_owned(),
        target: source.target(),
    }
}

/// A project on the wire.
pub(crate) fn to_wire(project: &Project) -> wire::Project {
    let record = &project.record;
    let (state, problem) = match &project.file {
        Ok(_) if project.review.is_some() => (
            wire::ProjectState::NeedsTrust,
            project
                .review
                .as_ref()
                .map(|review| ProjectError::NeedsTrust(Box::new(review.clone())).to_string()),
        ),
        Ok(_) => (wire::ProjectState::Ready, None),
        Err(error @ ProjectError::Missing { .. }) => {
            (wire::ProjectState::Missing, Some(error.to_string()))
        }
        Err(error) => (wire::ProjectState::Unreadable, Some(error.to_string())),
    };
    let file = project.file.as_ref().ok();
    wire::Project {
        id: record.id.to_string(),
        name: record.name.clone(),
        folder: record.folder.display().to_string(),
        state,
        problem,
        description: file.and_then(|file| file.description.clone()),
        agent: file.and_then(|file| file.agent.clone()),
        provider: file.and_then(|file| file.provider.clone()),
        model: file.and_then(|file| file.model.clone()),
        sources: file
            .map(|file| file.sources.iter().map(source).collect())
            .unwrap_or_default(),
        instructions: file
            .map(|file| file.instructions.clone())
            .unwrap_or_default(),
        review: project.review.as_ref().map(review),
        created_at: record.created_at,
        updated_at: record.updated_at,
    }
}

/// A project by key, on the wire.
pub(crate) async fn get(projects: &Projects, key: &str) -> Result<wire::Project, RpcError> {
    let record = projects.find(key).await.map_err(|e| project_error(&e))?;
    let project = projects
        .get(&record.id)
        .await
        .map_err(|e| project_error(&e))?;
    Ok(to_wire(&project))
}

/// An absolute folder from the wire.
pub(crate) fn folder(text: &str) -> Result<&Path, RpcError> {
    let path = Path::new(text);
    if path.is_absolute() {
        Ok(path)
    } else {
        Err(RpcError::new(
            ErrorKind::InvalidParams,
            format!("`{text}` is not an absolute path; give the folder's full path"),
            false,
        ))
    }
}

/// What a project's file gives its agents, on the wire.
pub(crate) fn review(review: &Review) -> wire::ProjectReview {
    wire::ProjectReview {
        reason: match review.reason {
            ReviewReason::Adopt => wire::ProjectReviewReason::Adopt,
            ReviewReason::Changed => wire::ProjectReviewReason::Changed,
            ReviewReason::Unrecorded => wire::ProjectReviewReason::Unrecorded,
        },
        id: review.id.to_string(),
        name: review.name.clone(),
        folder: review.folder.display().to_string(),
        description: review.description.clone(),
        instructions: review.instructions.clone(),
        outside_sources: review
            .outside
            .iter()
            .map(|outside| wire::ProjectOutsideSource {
                kind: outside.source.kind().to_owned(),
                target: outside.source.target(),
                reaches: outside
                    .reaches
                    .iter()
                    .map(|path| path.display().to_string())
                    .collect(),
            })
            .collect(),
        web_sources: review.web.iter().map(source).collect(),
        inside_sources: review.inside as u64,
        digest: review.digest.to_string(),
    }
}

/// The user's consent from the wire: `trust`, bound to what they saw by
/// `reviewDigest`.
pub(crate) fn consent(trust: bool, review_digest: Option<String>) -> Result<Consent, RpcError> {
    match (trust, review_digest) {
        (false, None) => Ok(Consent::Ask),
        (true, None) => Ok(Consent::Given),
        (true, Some(digest)) => Ok(Consent::Reviewed(TrustDigest::new(digest))),
        (false, Some(_)) => Err(RpcError::new(
            ErrorKind::InvalidParams,
            "`reviewDigest` binds the user's trust to what they saw; send it with `trust: true`",
            false,
        )),
    }
}

/// `project/create`: a new project, an adoption the user trusts, or the review to
/// show them.
pub(crate) async fn create(
    projects: &Projects,
    params: wire::ProjectCreateParams,
) -> Result<wire::ProjectCreateResponse, RpcError> {
    let folder = folder(&params.folder)?;
    let consent = consent(params.trust, params.review_digest)?;
    let created = match projects
        .create(folder, &params.name, params.description, consent)
        .await
    {
        Ok(created) => created,
        Err(ProjectError::NeedsTrust(found)) => {
            return Ok(wire::ProjectCreateResponse::NeedsTrust {
                review: review(&found),
            });
        }
        Err(error) => return Err(project_error(&error)),
    };
    let project = get(projects, created.record.id.as_str()).await?;
    Ok(wire::ProjectCreateResponse::Created {
        project: Box::new(project),
        adopted: created.adopted,
    })
}

/// `project/trust`: the user accepts a project's file as they saw it (or as it is).
pub(crate) async fn trust(
    projects: &Projects,
    params: wire::ProjectTrustParams,
) -> Result<wire::ProjectResponse, RpcError> {
    let consent = consent(true, params.review_digest)?;
    let (record, _) = projects
        .trust(&params.project, consent)
        .await
        .map_err(|e| project_error(&e))?;
    let project = get(projects, record.id.as_str()).await?;
    Ok(wire::ProjectResponse { project })
}

/// The projects methods.
pub(crate) fn register(table: &mut MethodTable) {
    route!(table, wire::ProjectList => project_list, narrowed);
    route!(table, wire::ProjectGet => project_get, Access::Project("project"));
    route!(table, wire::ProjectCreate => project_create, Access::Operator("making a folder of the server a project"));
    route!(table, wire::ProjectTrust => project_trust, Access::Project("project"));
    route!(table, wire::ProjectRename => project_rename, Access::Project("project"));
    route!(table, wire::ProjectDelete => project_delete, Access::Project("project"));
    route!(table, wire::ProjectAddSource => project_add_source, Access::Operator("adding a context source (it may name a folder of the server)"));
    route!(table, wire::ProjectRemoveSource => project_remove_source, Access::Project("project"));
    route!(table, wire::ProjectRelink => project_relink, Access::Operator("pointing a project at another folder of the server"));
    route!(table, wire::ProjectUpdate => project_update, Access::Project("project"));
}

async fn project_list(
    shared: &Shared,
    caller: &crate::access::Principal,
    _params: <wire::ProjectList as Method>::Params,
) -> Result<<wire::ProjectList as Method>::Response, RpcError> {
    let projects = registry(shared.backend.projects.as_ref())?;
    let mut list = projects.list().await.map_err(|e| project_error(&e))?;
    if let Some(user) = caller.viewer() {
        let visible = crate::access::visible_projects(shared, user).await?;
        list.retain(|project| visible.contains(&project.record.id));
    }
    Ok(wire::ProjectListResponse {
        projects: list.iter().map(crate::projects::to_wire).collect(),
    })
}

async fn project_get(
    shared: &Shared,
    params: <wire::ProjectGet as Method>::Params,
) -> Result<<wire::ProjectGet as Method>::Response, RpcError> {
    let projects = registry(shared.backend.projects.as_ref())?;
    let project = crate::projects::get(projects, &params.project).await?;
    Ok(wire::ProjectResponse { project })
}

async fn project_create(
    shared: &Shared,
    params: <wire::ProjectCreate as Method>::Params,
) -> Result<<wire::ProjectCreate as Method>::Response, RpcError> {
    let projects = registry(shared.backend.projects.as_ref())?;
    crate::projects::create(projects, params).await
}

async fn project_trust(
    shared: &Shared,
    params: <wire::ProjectTrust as Method>::Params,
) -> Result<<wire::ProjectTrust as Method>::Response, RpcError> {
    let projects = registry(shared.backend.projects.as_ref())?;
    crate::projects::trust(projects, params).await
}

async fn project_rename(
    shared: &Shared,
    params: <wire::ProjectRename as Method>::Params,
) -> Result<<wire::ProjectRename as Method>::Response, RpcError> {
    let projects = registry(shared.backend.projects.as_ref())?;
    let record = projects
        .rename(&params.project, &params.name)
        .await
        .map_err(|e| project_error(&e))?;
    let project = crate::projects::get(projects, record.id.as_str()).await?;
    Ok(wire::ProjectResponse { project })
}

async fn project_delete(
    shared: &Shared,
    params: <wire::ProjectDelete as Method>::Params,
) -> Result<<wire::ProjectDelete as Method>::Response, RpcError> {
    let projects = registry(shared.backend.projects.as_ref())?;
    let (record, mirror_removed) = projects
        .delete(&params.project)
        .await
        .map_err(|e| project_error(&e))?;
    Ok(wire::ProjectDeleteResponse {
        id: record.id.to_string(),
        mirror_removed,
    })
}

async fn project_add_source(
    shared: &Shared,
    params: <wire::ProjectAddSource as Method>::Params,
) -> Result<<wire::ProjectAddSource as Method>::Response, RpcError> {
    let projects = registry(shared.backend.projects.as_ref())?;
    let record = projects
        .find(&params.project)
        .await
        .map_err(|e| project_error(&e))?;
    let source = hearth_projects::context::ContextSource::parse(&params.source, &record.folder);
    projects
        .add_source(record.id.as_str(), source)
        .await
        .map_err(|e| project_error(&e))?;
    let project = crate::projects::get(projects, record.id.as_str()).await?;
    Ok(wire::ProjectResponse { project })
}

async fn project_remove_source(
    shared: &Shared,
    params: <wire::ProjectRemoveSource as Method>::Params,
) -> Result<<wire::ProjectRemoveSource as Method>::Response, RpcError> {
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
}

async fn project_relink(
    shared: &Shared,
    params: <wire::ProjectRelink as Method>::Params,
) -> Result<<wire::ProjectRelink as Method>::Response, RpcError> {
    let projects = registry(shared.backend.projects.as_ref())?;
    let folder = crate::projects::folder(&params.folder)?;
    let record = projects
        .relink(&params.project, folder)
        .await
        .map_err(|e| project_error(&e))?
        .record;
    let project = crate::projects::get(projects, record.id.as_str()).await?;
    Ok(wire::ProjectResponse { project })
}

async fn project_update(
    shared: &Shared,
    params: <wire::ProjectUpdate as Method>::Params,
) -> Result<<wire::ProjectUpdate as Method>::Response, RpcError> {
    let projects = registry(shared.backend.projects.as_ref())?;
    if let Some(agent) = params.default_agent.as_deref().map(str::trim)
        && !agent.is_empty()
        && shared.host().agent(agent).is_none()
    {
        let known: Vec<String> = shared
            .host()
            .descriptors()
            .into_iter()
            .map(|descriptor| descriptor.id.to_string())
            .collect();
        return Err(RpcError::new(
            ErrorKind::InvalidParams,
            format!(
                "no agent `{agent}` in this server; the agents are {}",
                known.join(", ")
            ),
            false,
        ));
    }
    let changes = hearth_projects::ProjectChanges {
        description: params.description,
        instructions: params.instructions,
        agent: params.default_agent,
        model: params.default_model,
    };
    let record = projects
        .update(&params.project, changes)
        .await
        .map_err(|e| project_error(&e))?;
    let project = crate::projects::get(projects, record.id.as_str()).await?;
    Ok(wire::ProjectResponse { project })
}
