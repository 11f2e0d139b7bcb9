//! `project/context` and `project/retrySource`: where a trusted project's context
//! sources stand, read from the context cache without converting anything, and
//! preparing them on the user's word.
//!
//! 1. Asking where the sources stand starts preparing those not prepared yet (in the
//!    background; two preparations of one source share the cache's per-source lock,
//!    so nothing is fetched twice).
//! 2. A source is `materializing` while a preparation of its project runs here and its
//!    snapshot is not there yet; `failed` while its failure marker still applies (or
//!    it cannot be checked at all); `ready` when its snapshot matches it.
//! 3. `wait` answers once the preparations under way ended: a page learns the outcome
//!    from the answer, never by asking again and again.
//! 4. A retry prepares one source even though it failed before, and answers when done.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use hearth_projects::Projects;
use hearth_projects::context::{
    CacheState, ContextSource, MaterializeOptions, Materializer, ProjectRef, SourceCacheStatus,
};
use hearth_protocol::{self as wire, ErrorKind, Method, RpcError};
use hearth_store::ProjectRecord;
use tokio::sync::watch;

use crate::access::Access;
use crate::backend::Shared;
use crate::dispatch::{MethodTable, route};
use crate::edge::unavailable;
use crate::projects::{project_error, registry};

/// The preparations running in this server, counted per project.
#[derive(Default)]
pub(crate) struct ContextRuns {
    counts: Mutex<HashMap<String, watch::Sender<usize>>>,
}

/// One preparation of a project, counted until dropped (on every path, panics too).
struct Running(watch::Sender<usize>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.send_modify(|count| *count = count.saturating_sub(1));
    }
}

impl ContextRuns {
    fn sender(&self, project: &str) -> watch::Sender<usize> {
        self.counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(project.to_owned())
            .or_insert_with(|| watch::channel(0).0)
            .clone()
    }

    /// Counts a preparation of `project` until the returned guard is dropped.
    fn start(&self, project: &str) -> Running {
        let sender = self.sender(project);
        sender.send_modify(|count| *count += 1);
        Running(sender)
    }

    /// Whether a preparation of `project` runs.
    fn running(&self, project: &str) -> bool {
        *self.sender(project).borrow() > 0
    }

    /// Waits until no preparation of `project` runs.
    async fn idle(&self, project: &str) {
        let mut receiver = self.sender(project).subscribe();
        if receiver.wait_for(|count| *count == 0).await.is_err() {
            tracing::debug!(project, "the preparation count of a project closed");
        }
    }
}

/// The projects methods about context.
pub(crate) fn register(table: &mut MethodTable) {
    route!(table, wire::ProjectContext => project_context, Access::Project("project"));
    route!(table, wire::ProjectRetrySource => project_retry_source, Access::Project("project"));
}

fn materializer(shared: &Shared) -> Result<&Materializer, RpcError> {
    shared
        .backend
        .materializer
        .as_ref()
        .ok_or_else(|| unavailable("preparing project context is not available in this server"))
}

/// A trusted project, its sources and the reference the cache knows it by.
async fn open(
    projects: &Projects,
    key: &str,
) -> Result<(ProjectRecord, Vec<ContextSource>, ProjectRef), RpcError> {
    // Converting the sources a project.md names is acting on it: only once trusted.
    let (record, file) = projects
        .open_trusted(key)
        .await
        .map_err(|e| project_error(&e))?;
    let reference = ProjectRef {
        id: record.id.to_string(),
        folder: record.folder.clone(),
    };
    Ok((record, file.sources, reference))
}

async fn project_context(
    shared: &Shared,
    params: <wire::ProjectContext as Method>::Params,
) -> Result<<wire::ProjectContext as Method>::Response, RpcError> {
    let projects = registry(shared.backend.projects.as_ref())?;
    let materializer = materializer(shared)?;
    let (_, sources, reference) = open(projects, &params.project).await?;
    let runs = &shared.context_runs;
    let mut statuses = materializer.cache().status(&reference, &sources).await;
    if !runs.running(&reference.id) && statuses.iter().any(unprepared) {
        let running = runs.start(&reference.id);
        let materializer = materializer.clone();
        let (reference, sources) = (reference.clone(), sources.clone());
        tokio::spawn(async move {
            let manifest = materializer
                .materialize(&reference, &sources, MaterializeOptions::default())
                .await;
            tracing::debug!(project = %reference.id, counts = ?manifest.counts(), "project context prepared");
            drop(running);
        });
    }
    if params.wait {
        runs.idle(&reference.id).await;
        statuses = materializer.cache().status(&reference, &sources).await;
    }
    Ok(response(
        &reference.id,
        &statuses,
        runs.running(&reference.id),
    ))
}

async fn project_retry_source(
    shared: &Shared,
    params: <wire::ProjectRetrySource as Method>::Params,
) -> Result<<wire::ProjectRetrySource as Method>::Response, RpcError> {
    let projects = registry(shared.backend.projects.as_ref())?;
    let materializer = materializer(shared)?;
    let (record, sources, reference) = open(projects, &params.project).await?;
    let statuses = materializer.cache().status(&reference, &sources).await;
    let wanted = params.source.trim();
    let Some(source) = statuses
        .iter()
        .map(|status| &status.source)
        .find(|source| source.target() == wanted || source.to_string() == wanted)
        .cloned()
    else {
        return Err(RpcError::new(
            ErrorKind::InvalidParams,
            format!(
                "project `{}` has no source `{wanted}`; `project/context` lists them",
                record.name
            ),
            false,
        ));
    };
    {
        let _running = shared.context_runs.start(&reference.id);
        let manifest = materializer
            .materialize(
                &reference,
                std::slice::from_ref(&source),
                MaterializeOptions { retry_failed: true },
            )
            .await;
        tracing::debug!(project = %reference.id, counts = ?manifest.counts(), "project source retried");
    }
    let statuses = materializer.cache().status(&reference, &sources).await;
    Ok(response(
        &reference.id,
        &statuses,
        shared.context_runs.running(&reference.id),
    ))
}

/// Whether a source waits for its first (or a new) conversion.
fn unprepared(status: &SourceCacheStatus) -> bool {
    let failed = status
        .failure
        .as_ref()
        .is_some_and(|failure| failure.current);
    !failed
        && matches!(
            status.state,
            CacheState::Missing { .. } | CacheState::Cached { fresh: false, .. }
        )
}

/// Where each source stands, by the rules at the top of this module.
fn response(
    project_id: &str,
    statuses: &[SourceCacheStatus],
    running: bool,
) -> wire::ProjectContextResponse {
    let sources: Vec<wire::ProjectSourceStatus> = statuses
        .iter()
        .map(|status| source_status(status, running))
        .collect();
    let failed = sources
        .iter()
        .filter(|source| source.state == wire::ProjectSourceState::Failed)
        .count();
    wire::ProjectContextResponse {
        project_id: project_id.to_owned(),
        materializing: sources
            .iter()
            .any(|source| source.state == wire::ProjectSourceState::Materializing),
        failed: u64::try_from(failed).unwrap_or(u64::MAX),
        sources,
    }
}

fn source_status(status: &SourceCacheStatus, running: bool) -> wire::ProjectSourceStatus {
    use wire::ProjectSourceState as State;
    let current_failure = status.failure.as_ref().filter(|failure| failure.current);
    let (state, error, title) = match (current_failure, &status.state) {
        (Some(failure), _) => (State::Failed, Some(failure.error.clone()), None),
        (
            None,
            CacheState::Cached {
                fresh: true, title, ..
            },
        ) => (State::Ready, None, title.clone()),
        (None, CacheState::Directory { .. } | CacheState::Expanded { .. }) => {
            (State::Ready, None, None)
        }
        (None, CacheState::Cached { fresh: false, .. } | CacheState::Missing { .. }) => (
            if running {
                State::Materializing
            } else {
                State::Pending
            },
            None,
            None,
        ),
        (None, CacheState::Unavailable { reason }) => (State::Failed, Some(reason.clone()), None),
    };
    wire::ProjectSourceStatus {
        kind: status.source.kind().to_owned(),
        target: status.source.target(),
        state,
        error,
        title,
    }
}
