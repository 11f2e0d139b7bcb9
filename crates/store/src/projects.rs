//! The project registry: which projects exist and where each folder was last seen. What a
//! project is (its `project.md`, instructions and sources) is hearth-projects' business;
//! the store keeps the id, the folder and the name shown in lists, and a tombstone when
//! the project is deleted.

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use hearth_core::{ProjectId, Timestamp};

use crate::error::{StoreError, StoreResult};
use crate::rows::decode_project as decode;
use crate::sqlite::SqliteStore;

/// A registered project.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectRecord {
    /// Its id (also in its `project.md`).
    pub id: ProjectId,
    /// The folder holding its `project.md`, where it was last seen.
    pub folder: PathBuf,
    /// Its name, as last read from `project.md`.
    pub name: String,
    /// When it was registered.
    pub created_at: Timestamp,
    /// When its folder or name last changed.
    pub updated_at: Timestamp,
    /// The digest of what its `project.md` gives agents, as the user last trusted it
    /// (hearth-projects computes it; opaque here). `None`: never recorded.
    pub trusted_digest: Option<String>,
}

/// The project registry.
pub trait ProjectStore: Send + Sync {
    /// Registers a project. Fails with a conflict when the id or the folder is taken.
    fn insert_project<'a>(&'a self, project: &'a ProjectRecord) -> BoxFuture<'a, StoreResult<()>>;

    /// A live project by id.
    fn project<'a>(
        &'a self,
        id: &'a ProjectId,
    ) -> BoxFuture<'a, StoreResult<Option<ProjectRecord>>>;

    /// Whether a project with this id was deleted.
    fn is_project_deleted<'a>(&'a self, id: &'a ProjectId) -> BoxFuture<'a, StoreResult<bool>>;

    /// Every live project, by name.
    fn projects(&self) -> BoxFuture<'_, StoreResult<Vec<ProjectRecord>>>;

    /// Records a project's new folder or name (not its trusted digest: see
    /// [`ProjectStore::trust_project`]). Fails with `NotFound` for an unknown or deleted
    /// project, with a conflict when another project has the folder.
    fn update_project<'a>(&'a self, project: &'a ProjectRecord) -> BoxFuture<'a, StoreResult<()>>;

    /// Records that a live project's folder moved from `from` to `project.folder` (its
    /// name as read there too), and moves the working directories of its sessions that
    /// were in `from` or under it along, in one transaction: a continued session works
    /// in the new folder. Returns how many sessions moved. Fails like
    /// [`ProjectStore::update_project`].
    fn relink_project<'a>(
        &'a self,
        project: &'a ProjectRecord,
        from: &'a Path,
    ) -> BoxFuture<'a, StoreResult<usize>>;

    /// The digest the user had trusted of a deleted project's file (kept with its
    /// tombstone); `None` when the project is not deleted or none was recorded.
    fn deleted_project_digest<'a>(
        &'a self,
        id: &'a ProjectId,
    ) -> BoxFuture<'a, StoreResult<Option<String>>>;

    /// Records the digest the user trusted of a live project's file. Fails with
    /// `NotFound` for an unknown or deleted project.
    fn trust_project<'a>(
        &'a self,
        id: &'a ProjectId,
        digest: &'a str,
    ) -> BoxFuture<'a, StoreResult<()>>;

    /// Deletes a project: moves it to the trash, keeping its id, folder, name and the
    /// digest the user trusted, until the trash is emptied (then a tombstone of its id
    /// and digest stays). Returns whether it existed.
    fn delete_project<'a>(&'a self, id: &'a ProjectId) -> BoxFuture<'a, StoreResult<bool>>;
}

/// A project folder as stored: UTF-8 text, or an error naming it.
pub(crate) fn folder_text(folder: &Path) -> StoreResult<&str> {
    folder.to_str().ok_or_else(|| StoreError::Decode {
        what: "project folder",
        detail: format!("{} is not valid UTF-8", folder.display()),
    })
}

impl SqliteStore {
    async fn projects_impl(&self) -> StoreResult<Vec<ProjectRecord>> {
        let rows = sqlx::query(
            "SELECT id, folder, name, created_at, updated_at, trusted_digest FROM projects WHERE deleted_at IS NULL ORDER BY name COLLATE NOCASE, id",
        )
        .fetch_all(self.pool())
        .await
        .map_err(|error| self.error(error))?;
        rows.iter().map(decode).collect()
    }
}

project_store_by_impls!(SqliteStore);

/// Implements [`ProjectStore`] for a store type by its methods of the same names with `_impl`
/// (see `project_statements`). The names it uses are resolved where it is invoked.
macro_rules! project_store_by_impls {
    ($store:ty) => {
        impl ProjectStore for $store {
            fn insert_project<'a>(
                &'a self,
                project: &'a ProjectRecord,
            ) -> BoxFuture<'a, StoreResult<()>> {
                Box::pin(self.insert_project_impl(project))
            }

            fn project<'a>(
                &'a self,
                id: &'a ProjectId,
            ) -> BoxFuture<'a, StoreResult<Option<ProjectRecord>>> {
                Box::pin(self.project_impl(id))
            }

            fn is_project_deleted<'a>(
                &'a self,
                id: &'a ProjectId,
            ) -> BoxFuture<'a, StoreResult<bool>> {
                Box::pin(self.is_project_deleted_impl(id))
            }

            fn projects(&self) -> BoxFuture<'_, StoreResult<Vec<ProjectRecord>>> {
                Box::pin(self.projects_impl())
            }

            fn update_project<'a>(
                &'a self,
                project: &'a ProjectRecord,
            ) -> BoxFuture<'a, StoreResult<()>> {
                Box::pin(self.update_project_impl(project))
            }

            fn trust_project<'a>(
                &'a self,
                id: &'a ProjectId,
                digest: &'a str,
            ) -> BoxFuture<'a, StoreResult<()>> {
                Box::pin(self.trust_project_impl(id, digest))
            }

            fn delete_project<'a>(&'a self, id: &'a ProjectId) -> BoxFuture<'a, StoreResult<bool>> {
                Box::pin(self.trash_project_impl(id.as_str()))
            }

            fn relink_project<'a>(
                &'a self,
                project: &'a ProjectRecord,
                from: &'a Path,
            ) -> BoxFuture<'a, StoreResult<usize>> {
                Box::pin(self.relink_project_impl(project, from))
            }

            fn deleted_project_digest<'a>(
                &'a self,
                id: &'a ProjectId,
            ) -> BoxFuture<'a, StoreResult<Option<String>>> {
                Box::pin(self.deleted_project_digest_impl(id))
            }
        }
    };
}
pub(crate) use project_store_by_impls;
