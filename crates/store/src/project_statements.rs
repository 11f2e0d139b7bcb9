//! The projects' statements both databases share (numbered `$N` parameters). Only
//! listing (each database's case-folding order) stays each database's own, and a relink
//! locks the sessions it moves where the database's writers do not hold one lock for the
//! whole database (the store's `FOR_UPDATE`).

use std::path::{Path, PathBuf};

use hearth_core::ProjectId;
use sqlx::Row;

use crate::codec::to_millis;
use crate::error::{StoreError, StoreResult};
use crate::postgres::PgStore;
use crate::projects::{ProjectRecord, folder_text};
use crate::rows::decode_project;
use crate::sessions::{decode_directories, encode_directories};
use crate::sqlite::SqliteStore;

/// A project's columns, in the order rows are decoded.
pub(crate) const PROJECT_COLUMNS: &str = "id, folder, name, created_at, updated_at, trusted_digest";

macro_rules! project_statements {
    ($store:ty, $connection:ty) => {
        impl $store {
            /// Records a live project's folder and name on `connection`; `NotFound` when
            /// there is none, a conflict when another live project has the folder.
            async fn set_folder(
                &self,
                connection: &mut $connection,
                project: &ProjectRecord,
            ) -> StoreResult<()> {
                let done = sqlx::query(
                    "UPDATE projects SET folder = $1, name = $2, updated_at = $3
                     WHERE id = $4 AND deleted_at IS NULL",
                )
                .bind(folder_text(&project.folder)?)
                .bind(&project.name)
                .bind(to_millis(&project.updated_at))
                .bind(project.id.as_str())
                .execute(&mut *connection)
                .await
                .map_err(|error| {
                    self.unique_conflict(
                        error,
                        "a project in folder",
                        &project.folder.display().to_string(),
                    )
                })?;
                if done.rows_affected() == 0 {
                    return Err(StoreError::NotFound {
                        what: "project",
                        key: project.id.to_string(),
                    });
                }
                Ok(())
            }

            pub(crate) async fn update_project_impl(
                &self,
                project: &ProjectRecord,
            ) -> StoreResult<()> {
                let mut connection = self.pool.acquire().await.map_err(|e| self.error(e))?;
                self.set_folder(&mut connection, project).await
            }

            /// Moves a project to its new folder, and its sessions' working directories
            /// under `from` with it; how many sessions moved.
            pub(crate) async fn relink_project_impl(
                &self,
                project: &ProjectRecord,
                from: &Path,
            ) -> StoreResult<usize> {
                let mut transaction = self.write_transaction().await?;
                self.set_folder(&mut transaction, project).await?;
                // Locked, so that a session's directories changed meanwhile are not
                // overwritten with what they were before.
                let sql = format!(
                    "SELECT uri, working_directories FROM sessions
                     WHERE project_id = $1 AND deleted_at IS NULL
                       AND working_directories IS NOT NULL{}",
                    Self::FOR_UPDATE
                );
                let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
                    .bind(project.id.as_str())
                    .fetch_all(&mut *transaction)
                    .await
                    .map_err(|error| self.error(error))?;
                let mut moved = 0;
                for row in rows {
                    let uri: String = row.try_get("uri").map_err(|error| self.error(error))?;
                    let directories = decode_directories(
                        row.try_get("working_directories")
                            .map_err(|error| self.error(error))?,
                    )?;
                    let relinked: Vec<PathBuf> = directories
                        .iter()
                        .map(|directory| match directory.strip_prefix(from) {
                            Ok(rest) if rest.as_os_str().is_empty() => project.folder.clone(),
                            Ok(rest) => project.folder.join(rest),
                            Err(_) => directory.clone(),
                        })
                        .collect();
                    if relinked == directories {
                        continue;
                    }
                    sqlx::query("UPDATE sessions SET working_directories = $1 WHERE uri = $2")
                        .bind(encode_directories(&relinked))
                        .bind(&uri)
                        .execute(&mut *transaction)
                        .await
                        .map_err(|error| self.error(error))?;
                    moved += 1;
                }
                transaction
                    .commit()
                    .await
                    .map_err(|error| self.error(error))?;
                Ok(moved)
            }

            pub(crate) async fn insert_project_impl(
                &self,
                project: &ProjectRecord,
            ) -> StoreResult<()> {
                let sql = format!(
                    "INSERT INTO projects ({PROJECT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)"
                );
                sqlx::query(sqlx::AssertSqlSafe(sql))
                    .bind(project.id.as_str())
                    .bind(folder_text(&project.folder)?)
                    .bind(&project.name)
                    .bind(to_millis(&project.created_at))
                    .bind(to_millis(&project.updated_at))
                    .bind(project.trusted_digest.as_deref())
                    .execute(&self.pool)
                    .await
                    .map_err(|error| {
                        self.unique_conflict(
                            error,
                            "a project with this id or folder",
                            &project.folder.display().to_string(),
                        )
                    })?;
                Ok(())
            }
            pub(crate) async fn project_impl(
                &self,
                id: &ProjectId,
            ) -> StoreResult<Option<ProjectRecord>> {
                let sql = format!(
                    "SELECT {PROJECT_COLUMNS} FROM projects WHERE id = $1 AND deleted_at IS NULL"
                );
                let row = sqlx::query(sqlx::AssertSqlSafe(sql))
                    .bind(id.as_str())
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(|error| self.error(error))?;
                row.as_ref().map(decode_project).transpose()
            }
            pub(crate) async fn is_project_deleted_impl(
                &self,
                id: &ProjectId,
            ) -> StoreResult<bool> {
                let row =
                    sqlx::query("SELECT 1 FROM projects WHERE id = $1 AND deleted_at IS NOT NULL")
                        .bind(id.as_str())
                        .fetch_optional(&self.pool)
                        .await
                        .map_err(|error| self.error(error))?;
                Ok(row.is_some())
            }
            pub(crate) async fn deleted_project_digest_impl(
                &self,
                id: &ProjectId,
            ) -> StoreResult<Option<String>> {
                let digest: Option<Option<String>> = sqlx::query_scalar(
                    "SELECT trusted_digest FROM projects WHERE id = $1 AND deleted_at IS NOT NULL",
                )
                .bind(id.as_str())
                .fetch_optional(&self.pool)
                .await
                .map_err(|error| self.error(error))?;
                Ok(digest.flatten())
            }
            pub(crate) async fn trust_project_impl(
                &self,
                id: &ProjectId,
                digest: &str,
            ) -> StoreResult<()> {
                let done = sqlx::query(
                    "UPDATE projects SET trusted_digest = $1 WHERE id = $2 AND deleted_at IS NULL",
                )
                .bind(digest)
                .bind(id.as_str())
                .execute(&self.pool)
                .await
                .map_err(|error| self.error(error))?;
                if done.rows_affected() == 0 {
                    return Err(StoreError::NotFound {
                        what: "project",
                        key: id.to_string(),
                    });
                }
                Ok(())
            }
        }
    };
}

project_statements!(SqliteStore, sqlx::SqliteConnection);
project_statements!(PgStore, sqlx::PgConnection);
