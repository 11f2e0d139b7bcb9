//! `project/*`: the projects of the server's data directory, through the same registry
//! the CLI uses, converted to the wire here.

use std::path::Path;

use hearth_projects::context::ContextSource;
use hearth_projects::{Project, ProjectError, Projects};
use hearth_protocol::{self as wire, ErrorKind, RpcError};

use crate::edge::unavailable;

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
