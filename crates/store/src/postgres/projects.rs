//! The project registry on PostgreSQL (see the SQLite store's `projects`): the same
//! statements; a relink locks the sessions it moves, since PostgreSQL's writers do not
//! hold one lock for the whole database.

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use hearth_core::ProjectId;
use sqlx::Row;

use super::PgStore;
use crate::codec::to_millis;
use crate::error::{StoreError, StoreResult};
use crate::project_statements::PROJECT_COLUMNS;
use crate::projects::{ProjectRecord, ProjectStore, folder_text};
use crate::rows::decode_project;
use crate::sessions::{decode_directories, encode_directories};

impl PgStore {
    async fn projects_impl(&self) -> StoreResult<Vec<ProjectRecord>> {
        // SQLite's `COLLATE NOCASE` then byte order: letters' case folded, then bytes.
        let sql = format!(
            "SELECT {PROJECT_COLUMNS} FROM projects WHERE deleted_at IS NULL
             ORDER BY lower(name) COLLATE \"C\", id COLLATE \"C\""
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_all(&self.pool)
            .await
            .map_err(|error| self.error(error))?;
        rows.iter().map(decode_project).collect()
    }

    /// Records a live project's folder and name on `connection`; `NotFound` when there is
    /// none, a conflict when another live project has the folder.
    async fn set_folder(
        &self,
        connection: &mut sqlx::PgConnection,
        project: &ProjectRecord,
    ) -> StoreResult<()> {
        let done = sqlx::query(
            "UPDATE projects SET folder = $1, name = $2, updated_at = $3 WHERE id = $4 AND deleted_at IS NULL",
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

    async fn update_project_impl(&self, project: &ProjectRecord) -> StoreResult<()> {
        let mut connection = self.pool.acquire().await.map_err(|e| self.error(e))?;
        self.set_folder(&mut connection, project).await
    }

    async fn relink_project_impl(
        &self,
        project: &ProjectRecord,
        from: &Path,
    ) -> StoreResult<usize> {
        let mut transaction = self.pool.begin().await.map_err(|e| self.error(e))?;
        self.set_folder(&mut transaction, project).await?;
        // Locked, so that a session's directories changed meanwhile are not overwritten
        // with what they were before.
        let rows = sqlx::query(
            "SELECT uri, working_directories FROM sessions
             WHERE project_id = $1 AND deleted_at IS NULL AND working_directories IS NOT NULL
             FOR UPDATE",
        )
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
}

crate::projects::project_store_by_impls!(PgStore);
