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
use crate::trust::{Consent, Review, ReviewReason, TrustDigest};

/// A project as found: its registry entry and, when its folder is there, its file.
#[derive(Debug)]
pub struct Project {
    /// What the registry remembers.
    pub record: ProjectRecord,
    /// Its `project.md`, or why it could not be read (e.g. [`ProjectError::Missing`]).
    pub file: ProjectResult<ProjectFile>,
    /// What the user must look at before the project takes new turns: its file changed
    /// since they trusted it, or was never trusted. `None` when it may act (or its file
    /// cannot be read).
    pub review: Option<Review>,
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

/// What re-linking a project did.
#[derive(Debug)]
pub struct Relinked {
    /// The project, at its new folder.
    pub record: ProjectRecord,
    /// How many of its sessions now work in the new folder.
    pub sessions_moved: usize,
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
    /// the project whose `project.md` the folder already holds — only with the user's
    /// `consent` to what that file asks ([`ProjectError::NeedsTrust`] carries the
    /// [`Review`] to show when it is [`Consent::Ask`]). A new project needs no consent:
    /// Hearth writes its file.
    pub async fn create(
        &self,
        folder: &Path,
        name: &str,
        description: Option<String>,
        consent: Consent,
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
        let (file, digest, adopted) = match ProjectFile::read(&folder) {
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
                    let (file, digest) = self
                        .renew(&folder, found, name, description, consent)
                        .await?;
                    return self.register(folder, file, digest, false).await;
                }
                self.check_name_free(&found.name, None).await?;
                let review = Review::new(ReviewReason::Adopt, &folder, &found);
                match consent {
                    Consent::Ask => return Err(ProjectError::NeedsTrust(Box::new(review))),
                    Consent::Reviewed(seen) if seen != review.digest => {
                        return Err(ProjectError::ChangedSinceShown(Box::new(review)));
                    }
                    Consent::Given | Consent::Reviewed(_) => {}
                }
                (found, review.digest, true)
            }
            Err(ProjectError::NoProjectFile { .. }) => {
                self.check_name_free(name, None).await?;
                let mut file = ProjectFile::new(name);
                file.description = description;
                file.write(&folder)?;
                let digest = Review::new(ReviewReason::Changed, &folder, &file).digest;
                (file, digest, false)
            }
            Err(error) => return Err(error),
        };
        self.register(folder, file, digest, adopted).await
    }

    /// A new project in a folder whose `project.md` belongs to a deleted project: the
    /// file keeps its instructions and sources, gets a new id and the name given (the
    /// deleted project's sessions stay with it, readable). What it gives agents needs
    /// the user's consent as an adoption does, unless it is what they had trusted
    /// before the deletion or asks nothing.
    async fn renew(
        &self,
        folder: &Path,
        mut file: ProjectFile,
        name: &str,
        description: Option<String>,
        consent: Consent,
    ) -> ProjectResult<(ProjectFile, TrustDigest)> {
        let trusted = self.store.deleted_project_digest(&file.id).await?;
        self.check_name_free(name, None).await?;
        file.id = ProjectId::generate();
        file.name = name.to_owned();
        if description.is_some() {
            file.description = description;
        }
        let review = Review::new(ReviewReason::Adopt, folder, &file);
        let seen_before = trusted.as_deref() == Some(review.digest.as_str());
        if !seen_before && review.asks_anything() {
            match consent {
                Consent::Ask => return Err(ProjectError::NeedsTrust(Box::new(review))),
                Consent::Reviewed(seen) if seen != review.digest => {
                    return Err(ProjectError::ChangedSinceShown(Box::new(review)));
                }
                Consent::Given | Consent::Reviewed(_) => {}
            }
        }
        file.write(folder)?;
        Ok((file, review.digest))
    }

    /// Fails when another live project is called `name` (names are matched as `find`
    /// matches them: ignoring case), naming its folder.
    async fn check_name_free(&self, name: &str, except: Option<&ProjectId>) -> ProjectResult<()> {
        let taken =
            self.store.projects().await?.into_iter().find(|record| {
                record.name.eq_ignore_ascii_case(name) && Some(&record.id) != except
            });
        match taken {
            Some(other) => Err(ProjectError::Invalid(format!(
                "a project called `{}` already exists ({}, in {}); choose another name, or rename that one with `hearth projects rename {} NEW-NAME`",
                other.name,
                other.id,
                other.folder.display(),
                other.id
            ))),
            None => Ok(()),
        }
    }

    /// Registers a project whose file is written, and mirrors its instructions.
    async fn register(
        &self,
        folder: PathBuf,
        file: ProjectFile,
        digest: TrustDigest,
        adopted: bool,
    ) -> ProjectResult<Created> {
        let at = now();
        let record = ProjectRecord {
            id: file.id.clone(),
            folder: folder.clone(),
            name: file.name.clone(),
            created_at: at,
            updated_at: at,
            trusted_digest: Some(digest.as_str().to_owned()),
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

    /// A project by key, whose file must be readable (trusted or not: for reading it
    /// and for the user's own changes).
    pub async fn open(&self, key: &str) -> ProjectResult<(ProjectRecord, ProjectFile)> {
        let record = self.find(key).await?;
        let project = load(record);
        let file = project.file?;
        Ok((project.record, file))
    }

    /// A project by key that may act: its file readable and trusted as it is
    /// ([`ProjectError::NeedsTrust`] otherwise). For what starts sessions or converts
    /// its sources.
    pub async fn open_trusted(&self, key: &str) -> ProjectResult<(ProjectRecord, ProjectFile)> {
        let record = self.find(key).await?;
        let project = load(record);
        if let Some(review) = project.review {
            return Err(ProjectError::NeedsTrust(Box::new(review)));
        }
        let file = project.file?;
        Ok((project.record, file))
    }

    /// Trusts a project's file as it is now ([`Consent::Given`]) or as the user saw it
    /// ([`Consent::Reviewed`]); with [`Consent::Ask`], fails with the review when there
    /// is something to trust. Returns the review trusted, `None` when the project needed
    /// no trust.
    pub async fn trust(
        &self,
        key: &str,
        consent: Consent,
    ) -> ProjectResult<(ProjectRecord, Option<Review>)> {
        let Project {
            mut record,
            file,
            review,
        } = load(self.find(key).await?);
        file?;
        let Some(review) = review else {
            return Ok((record, None));
        };
        match consent {
            Consent::Ask => return Err(ProjectError::NeedsTrust(Box::new(review))),
            Consent::Reviewed(seen) if seen != review.digest => {
                return Err(ProjectError::ChangedSinceShown(Box::new(review)));
            }
            Consent::Given | Consent::Reviewed(_) => {}
        }
        self.store
            .trust_project(&record.id, review.digest.as_str())
            .await?;
        record.trusted_digest = Some(review.digest.as_str().to_owned());
        Ok((record, Some(review)))
    }

    /// Renames a project (its `project.md`, the registry and the mirror).
    pub async fn rename(&self, key: &str, name: &str) -> ProjectResult<ProjectRecord> {
        let name = name.trim();
        if name.is_empty() {
            return Err(ProjectError::Invalid("a project needs a name".into()));
        }
        let record = self.find(key).await?;
        self.check_name_free(name, Some(&record.id)).await?;
        self.edit(record.id.as_str(), |file| {
            file.name = name.to_owned();
            Ok(())
        })
        .await
    }

    /// Changes a project's settings as the user asked ([`ProjectChanges`]); a trusted
    /// project stays trusted, and its mirror follows its instructions.
    pub async fn update(&self, key: &str, changes: ProjectChanges) -> ProjectResult<ProjectRecord> {
        let cleared = |text: String| {
            let text = text.trim().to_owned();
            (!text.is_empty()).then_some(text)
        };
        self.edit(key, |file| {
            if let Some(description) = changes.description {
                file.description = cleared(description);
            }
            if let Some(instructions) = changes.instructions {
                let instructions = instructions.trim();
                file.instructions = if instructions.is_empty() {
                    String::new()
                } else {
                    format!("{instructions}\n")
                };
            }
            if let Some(agent) = changes.agent {
                file.agent = cleared(agent);
            }
            if let Some(model) = changes.model {
                file.model = cleared(model);
            }
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
    /// project's `project.md`. Its sessions move along: those that worked in the old
    /// folder (or under it) work in the new one, so continuing one goes on with the
    /// conversation where the project now is.
    pub async fn relink(&self, key: &str, folder: &Path) -> ProjectResult<Relinked> {
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
        self.check_name_free(&file.name, Some(&record.id)).await?;
        let from = std::mem::replace(&mut record.folder, folder);
        record.name = file.name.clone();
        record.updated_at = now();
        let sessions_moved = self.store.relink_project(&record, &from).await?;
        if pending_review(&record, &file).is_none() {
            sync_mirror(&record.folder, &compose_instructions(&file))?;
        }
        Ok(Relinked {
            record,
            sessions_moved,
        })
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
        let record = self.find(key).await?;
        let project = load(record);
        // The user's own change keeps a trusted project trusted; it does not vouch for
        // a file that was waiting for their look.
        let trusted = project.review.is_none();
        let mut record = project.record;
        let mut file = project.file?;
        change(&mut file)?;
        file.write(&record.folder)?;
        if record.name != file.name {
            record.name = file.name.clone();
            record.updated_at = now();
            self.store.update_project(&record).await?;
        }
        if trusted {
            let digest = Review::new(ReviewReason::Changed, &record.folder, &file).digest;
            if record.trusted_digest.as_deref() != Some(digest.as_str()) {
                self.store
                    .trust_project(&record.id, digest.as_str())
                    .await?;
                record.trusted_digest = Some(digest.as_str().to_owned());
            }
            // Instructions not yet trusted wait for the user's look before reaching
            // the mirror.
            sync_mirror(&record.folder, &compose_instructions(&file))?;
        }
        Ok(record)
    }
}

/// The user's changes to a project's settings: a field left `None` stays as it is, an
/// empty (or blank) text clears it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProjectChanges {
    /// A line about it.
    pub description: Option<String>,
    /// Its instructions (the body of `project.md`).
    pub instructions: Option<String>,
    /// The agent its new sessions use.
    pub agent: Option<String>,
    /// The model its new sessions use.
    pub model: Option<String>,
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
    let review = file
        .as_ref()
        .ok()
        .and_then(|file| pending_review(&record, file));
    Project {
        record,
        file,
        review,
    }
}

/// What the user must look at before `file` acts: `None` when it matches what they
/// trusted, or asks nothing.
fn pending_review(record: &ProjectRecord, file: &ProjectFile) -> Option<Review> {
    let reason = match record.trusted_digest {
        Some(_) => ReviewReason::Changed,
        None => ReviewReason::Unrecorded,
    };
    let review = Review::new(reason, &record.folder, file);
    let trusted = record.trusted_digest.as_deref() == Some(review.digest.as_str());
    (!trusted && review.asks_anything()).then_some(review)
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
