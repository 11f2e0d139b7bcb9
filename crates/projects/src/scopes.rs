//! Projects as the host's scopes: a project session works in the project's folder (plus
//! the folders it lists as sources), its turns carry the project's instructions, and its
//! first prompt gets the `<project_context>` block. A project that was deleted, whose
//! folder is gone, or whose `project.md` changed since the user trusted it takes no new
//! sessions or turns; what was said stays readable.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use futures::FutureExt;
use futures::future::BoxFuture;
use hearth_core::{Customizations, ProjectId, Scope, ScopeTurn, ScopeUnavailable, Scopes};

use crate::context::{ContextSource, MaterializeOptions, Materializer, ProjectRef, signature};
use crate::error::ProjectError;
use crate::mirror::{MIRROR_FILE, MirrorOutcome, sync_mirror};
use crate::policy::compose_instructions;
use crate::project_file::ProjectFile;
use crate::registry::Projects;

/// [`Scopes`] over Hearth's projects.
pub struct ProjectScopes {
    projects: Projects,
    materializer: Option<Materializer>,
    /// The source signature each project's context was last warmed for.
    warmed: Mutex<HashMap<ProjectId, String>>,
}

impl ProjectScopes {
    /// Scopes over `projects`; `materializer` prepares context sources (without one, a
    /// project's first prompt gets no context block).
    pub fn new(projects: Projects, materializer: Option<Materializer>) -> Self {
        Self {
            projects,
            materializer,
            warmed: Mutex::new(HashMap::new()),
        }
    }

    /// Starts preparing a project's context in the background when its sources changed
    /// since it was last prepared here, so that the first prompt finds it ready. (The
    /// first prompt waits for what is still converting: the cache's per-source lock
    /// makes it wait for the same work instead of doing it twice.)
    fn warm(&self, id: &ProjectId, folder: PathBuf, sources: &[ContextSource]) {
        let Some(materializer) = &self.materializer else {
            return;
        };
        if sources.is_empty() {
            return;
        }
        let wanted = signature(sources);
        {
            let mut warmed = self
                .warmed
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if warmed.get(id) == Some(&wanted) {
                return;
            }
            warmed.insert(id.clone(), wanted);
        }
        let materializer = materializer.clone();
        let project = ProjectRef {
            id: id.to_string(),
            folder,
        };
        let sources = sources.to_vec();
        tokio::spawn(async move {
            let manifest = materializer
                .materialize(&project, &sources, MaterializeOptions::default())
                .await;
            tracing::debug!(project = %project.id, counts = ?manifest.counts(), "project context warmed");
        });
    }

    /// The project's folder and file, when it may act: readable, and trusted as it is
    /// (a file changed since the user trusted it gives no instructions, directories or
    /// context until they look at it again).
    async fn open(&self, id: &ProjectId) -> Result<(PathBuf, ProjectFile), ScopeUnavailable> {
        let project = self.projects.get(id).await.map_err(unavailable)?;
        if let Some(review) = project.review {
            return Err(ScopeUnavailable(
                ProjectError::NeedsTrust(Box::new(review)).to_string(),
            ));
        }
        let folder = project.record.folder.clone();
        let file = project.file.map_err(unavailable)?;
        Ok((folder, file))
    }
}

fn unavailable(error: ProjectError) -> ScopeUnavailable {
    ScopeUnavailable(format!(
        "this session's project takes no new turns: {error}"
    ))
}

/// The folders a project's sources name, resolved against its folder; the project's
/// folder first.
pub fn session_folders(folder: &std::path::Path, sources: &[ContextSource]) -> Vec<PathBuf> {
    let mut folders = vec![folder.to_path_buf()];
    for source in sources {
        if let ContextSource::Folder { path } = source.resolved(folder) {
            let path = path.canonicalize().unwrap_or(path);
            if !path.starts_with(folder) && !folders.contains(&path) {
                folders.push(path);
            }
        }
    }
    folders
}

impl Scopes for ProjectScopes {
    fn session_directories<'a>(
        &'a self,
        scope: &'a Scope,
    ) -> BoxFuture<'a, Result<Option<Vec<PathBuf>>, ScopeUnavailable>> {
        async move {
            let Some(id) = scope.project_id() else {
                return Ok(None);
            };
            let (folder, file) = self.open(id).await?;
            self.warm(id, folder.clone(), &file.sources);
            let mut folders = session_folders(&folder, &file.sources);
            // Agents read the snapshots of the project's sources where the cache keeps
            // them, so the cache is one of the session's directories.
            if let Some(materializer) = &self.materializer
                && !file.sources.is_empty()
            {
                let cache = materializer.cache().root();
                // In Hearth's data directory: private, like everything there.
                match hearth_config::create_private_dir(cache) {
                    Ok(()) => {
                        folders.push(cache.canonicalize().unwrap_or_else(|_| cache.to_path_buf()))
                    }
                    Err(error) => tracing::warn!(
                        cache = %cache.display(),
                        %error,
                        "the context cache cannot be made; agents will not read snapshots"
                    ),
                }
            }
            Ok(Some(folders))
        }
        .boxed()
    }

    fn prepare_turn<'a>(
        &'a self,
        scope: &'a Scope,
    ) -> BoxFuture<'a, Result<ScopeTurn, ScopeUnavailable>> {
        async move {
            let Some(id) = scope.project_id() else {
                return Ok(ScopeTurn::default());
            };
            let (folder, file) = self.open(id).await?;
            let instructions = compose_instructions(&file);
            let agents_file = match sync_mirror(&folder, &instructions) {
                Ok(MirrorOutcome::Written | MirrorOutcome::Unchanged) => {
                    Some(folder.join(MIRROR_FILE))
                }
                Ok(MirrorOutcome::YieldedToUser) => None,
                Err(error) => {
                    tracing::warn!(project = %id, %error, "could not update the project's AGENTS.md");
                    None
                }
            };
            Ok(ScopeTurn {
                customizations: Some(Customizations {
                    instructions: Some(instructions),
                    enabled_tools: Vec::new(),
                    agents_file,
                }),
            })
        }
        .boxed()
    }

    fn first_prompt_context<'a>(&'a self, scope: &'a Scope) -> BoxFuture<'a, Option<String>> {
        async move {
            let id = scope.project_id()?;
            let materializer = self.materializer.as_ref()?;
            let (folder, file) = self.open(id).await.ok()?;
            if file.sources.is_empty() {
                return None;
            }
            let project = ProjectRef {
                id: id.to_string(),
                folder,
            };
            let manifest = materializer
                .materialize(&project, &file.sources, MaterializeOptions::default())
                .await;
            let block = manifest.render();
            (!block.is_empty()).then_some(block)
        }
        .boxed()
    }
}
