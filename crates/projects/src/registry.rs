//! The projects Hearth knows: made, listed, found by name or id, renamed, re-linked
//! after their folder moved, their sources edited, and deleted. Each operation keeps
//! `project.md` (the source of truth), the registry (where each folder is) and the
//! `AGENTS.md` mirror in step.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hearth_core::{ProjectId, now};
use hearth_store::{ProjectRecord, ProjectStore};

use crate::context::ContextSource;
use crate::error::{ProjectError, ProjectResult};
use crate::mirror::{MirrorOutcome, remove_mirror, sync_mirror};
use crate::policy::compose_instructions;
use crate::project_file::{PROJECT_FILE, ProjectFile};

/// A project as found: its registry entry and, when its folder is there, its file.
#[derive(Debug)]
pub struct Project {
    /// What the registry remembers.
    pub record: ProjectRecord,
    /// Its `project.md`, or why it could not be read (e.g. [`ProjectError::Missing`]).
    pub file: ProjectResult<ProjectFile>,
}

/// What making a project did.
#[derive(Debug)]
pub struct Created {
    /// The project.
    pub record: ProjectRecord,
    /// Whether an existing `project.md` was adopted instead of a new one written.
    pub adopted: bool,
    /// What became of the `AGENTS.md` mirror.
    pub mirror: MirrorOutcome,
}

/// The projects Hearth knows, over the registry in its store.
#[derive(Clone)]
pub struct Projects {
    store: Arc<dyn ProjectStore>,
}

impl Projects {
    /// The projects registered in `store`.
    pub fn new(store: Arc<dyn ProjectStore>) -> Self {
        Self { store }
    }

    /// Makes `folder` a project called `name` (creating the folder if needed), or adopts
    /// the project whose `project.md` the folder already holds.
    pub async fn create(
        &self,
        folder: &Path,
        name: &str,
        description: Option<String>,
    ) -> ProjectResult<Created> {
        let folder = absolute(folder)?;
        let name = name.trim();
        if name.is_empty() {
            return Err(ProjectError::Invalid("a project needs a name".into()));
        }
        if folder.exists() && !folder.is_dir() {
            return Err(ProjectError::Invalid(format!(
                "{} is a file, not a folder; give a folder for the project",
                folder.display()
            )));
        }
        std::fs::create_dir_all(&folder).map_err(|source| ProjectError::Io {
            path: folder.clone(),
            source,
        })?;
        let (file, adopted) = match ProjectFile::read(&folder) {
            Ok(found) => {
                if let Some(known) = self.store.project(&found.id).await? {
                    return Err(ProjectError::Invalid(format!(
                        "{} is already project `{}` ({})",
                        folder.display(),
                        known.name,
                        known.id
                    )));
                }
                if self.store.is_project_deleted(&found.id).await? {
                    return Err(ProjectError::Invalid(format!(
                        "{} holds project {}, which was deleted; remove its {PROJECT_FILE} to make a new project there",
                        folder.display(),
                        found.id
                    )));
                }
                (found, true)
            }
            Err(ProjectError::NoProjectFile { .. }) => {
                let mut file = ProjectFile::new(name);
                file.description = description;
                file.write(&folder)?;
                (file, false)
            }
            Err(error) => return Err(error),
        };
        let at = now();
        let record = ProjectRecord {
            id: file.id.clone(),
            folder: folder.clone(),
            name: file.name.clone(),
            created_at: at,
            updated_at: at,
        };
        self.store.insert_project(&record).await?;
        let mirror = sync_mirror(&folder, &compose_instructions(&file))?;
        Ok(Created {
            record,
            adopted,
            mirror,
        })
    }

    /// Every project, each with its file or why it cannot be read.
    pub async fn list(&self) -> ProjectResult<Vec<Project>> {
        let records = self.store.projects().await?;
        Ok(records.into_iter().map(load).collect())
    }

    /// The project with this id, or whose name or id starts with `key` (a unique match;
    /// an exact id or name wins).
    pub async fn find(&self, key: &str) -> ProjectResult<ProjectRecord> {
        let key = key.trim();
        if let Ok(id) = ProjectId::parse(key)
            && let Some(record) = self.store.project(&id).await?
        {
            return Ok(record);
        }
        let records = self.store.projects().await?;
        let exact: Vec<&ProjectRecord> = records
            .iter()
            .filter(|record| record.name.eq_ignore_ascii_case(key))
            .collect();
        let matches: Vec<&ProjectRecord> = if exact.is_empty() {
            records
                .iter()
                .filter(|record| !key.is_empty() && record.id.as_str().starts_with(key))
                .collect()
        } else {
            exact
        };
        match matches.as_slice() {
            [] => Err(ProjectError::Unknown(key.to_owned())),
            [record] => Ok((*record).clone()),
            several => Err(ProjectError::Ambiguous {
                key: key.to_owned(),
                matches: several
                    .iter()
                    .map(|record| format!("`{}` {}", record.name, record.id))
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    /// A project by id, with its file read.
    pub async fn get(&self, id: &ProjectId) -> ProjectResult<Project> {
        match self.store.project(id).await? {
            Some(record) => Ok(load(record)),
            None if self.store.is_project_deleted(id).await? => {
                Err(ProjectError::Invalid(format!(
                    "project {id} was deleted; its sessions stay readable, and new ones go in another project or the global scope"
                )))
            }
            None => Err(ProjectError::Unknown(id.to_string())),
        }
    }

    /// A project by key, whose file must be readable.
    pub async fn open(&self, key: &str) -> ProjectResult<(ProjectRecord, ProjectFile)> {
        let record = self.find(key).await?;
        let project = load(record);
        let file = project.file?;
        Ok((project.record, file))
    }

    /// Renames a project (its `project.md`, the registry and the mirror).
    pub async fn rename(&self, key: &str, name: &str) -> ProjectResult<ProjectRecord> {
        let name = name.trim();
        if name.is_empty() {
            return Err(ProjectError::Invalid("a project needs a name".into()));
        }
        self.edit(key, |file| {
            file.name = name.to_owned();
            Ok(())
        })
        .await
    }

    /// Adds a context source (no effect when the project has it already).
    pub async fn add_source(
        &self,
        key: &str,
        source: ContextSource,
    ) -> ProjectResult<ProjectRecord> {
        self.edit(key, |file| {
            if !file.sources.contains(&source) {
                file.sources.push(source);
            }
            Ok(())
        })
        .await
    }

    /// Removes a context source, given as written in the project (a URL, a path or a
    /// pattern) or by its number in `projects show` (from 1).
    pub async fn remove_source(&self, key: &str, which: &str) -> ProjectResult<ContextSource> {
        let mut removed = None;
        let which = which.trim();
        self.edit(key, |file| {
            let position = match which.parse::<usize>() {
                Ok(number) if (1..=file.sources.len()).contains(&number) => Some(number - 1),
                _ => file
                    .sources
                    .iter()
                    .position(|source| source.target() == which || source.to_string() == which),
            };
            let Some(position) = position else {
                return Err(ProjectError::Invalid(format!(
                    "project `{}` has no source `{which}`; `hearth projects show {}` lists them",
                    file.name, file.id
                )));
            };
            removed = Some(file.sources.remove(position));
            Ok(())
        })
        .await?;
        removed.ok_or_else(|| ProjectError::Invalid(format!("no source `{which}`")))
    }

    /// Points a project whose folder moved at its new folder, which must hold the same
    /// project's `project.md`.
    pub async fn relink(&self, key: &str, folder: &Path) -> ProjectResult<ProjectRecord> {
        let mut record = self.find(key).await?;
        let folder = absolute(folder)?;
        let file = ProjectFile::read(&folder)?;
        if file.id != record.id {
            return Err(ProjectError::OtherProject {
                folder,
                expected: record.id.to_string(),
                found: file.id.to_string(),
            });
        }
        record.folder = folder;
        record.name = file.name.clone();
        record.updated_at = now();
        self.store.update_project(&record).await?;
        sync_mirror(&record.folder, &compose_instructions(&file))?;
        Ok(record)
    }

    /// Deletes a project from Hearth: its mirror is removed if it still carries Hearth's
    /// marker, its registry entry becomes a tombstone. Its folder, `project.md` and
    /// sessions stay; the sessions take no new turns.
    pub async fn delete(&self, key: &str) -> ProjectResult<(ProjectRecord, bool)> {
        let record = self.find(key).await?;
        let mirror_removed = if record.folder.is_dir() {
            remove_mirror(&record.folder)?
        } else {
            false
        };
        self.store.delete_project(&record.id).await?;
        Ok((record, mirror_removed))
    }

    /// Reads, changes and writes a project's file, then the registry and the mirror.
    async fn edit(
        &self,
        key: &str,
        change: impl FnOnce(&mut ProjectFile) -> ProjectResult<()>,
    ) -> ProjectResult<ProjectRecord> {
        let (mut record, mut file) = self.open(key).await?;
        change(&mut file)?;
        file.write(&record.folder)?;
        if record.name != file.name {
            record.name = file.name.clone();
            record.updated_at = now();
            self.store.update_project(&record).await?;
        }
        sync_mirror(&record.folder, &compose_instructions(&file))?;
        Ok(record)
    }
}

/// Reads a registered project's file, checking that it is still the same project.
fn load(record: ProjectRecord) -> Project {
    let file = if record.folder.is_dir() {
        ProjectFile::read(&record.folder).and_then(|file| {
            if file.id == record.id {
                Ok(file)
            } else {
                Err(ProjectError::OtherProject {
                    folder: record.folder.clone(),
                    expected: record.id.to_string(),
                    found: file.id.to_string(),
                })
            }
        })
    } else {
        Err(ProjectError::Missing {
            id: record.id.to_string(),
            name: record.name.clone(),
            folder: record.folder.clone(),
        })
    };
    let file = match file {
        Err(ProjectError::NoProjectFile { .. }) => Err(ProjectError::Missing {
            id: record.id.to_string(),
            name: record.name.clone(),
            folder: record.folder.join(PROJECT_FILE),
        }),
        other => other,
    };
    Project { record, file }
}

/// An absolute, normalized form of a folder path (without resolving symbolic links of a
/// folder that does not exist yet).
fn absolute(folder: &Path) -> ProjectResult<PathBuf> {
    let joined = if folder.is_absolute() {
        folder.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|source| ProjectError::Io {
                path: folder.to_path_buf(),
                source,
            })?
            .join(folder)
    };
    Ok(match joined.canonicalize() {
        Ok(resolved) => resolved,
        Err(_) => joined
            .components()
            .fold(PathBuf::new(), |mut path, component| {
                match component {
                    std::path::Component::ParentDir => {
                        path.pop();
                    }
                    std::path::Component::CurDir => {}
                    other => path.push(other),
                }
                path
            }),
    })
}
