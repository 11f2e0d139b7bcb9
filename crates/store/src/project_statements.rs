//! The projects' statements both databases share (numbered `$N` parameters). Listing
//! (each database's case-folding order), updating and relinking (each one's locks) stay
//! each database's own.

use hearth_core::ProjectId;

use crate::codec::to_millis;
use crate::error::{StoreError, StoreResult};
use crate::postgres::PgStore;
use crate::projects::{ProjectRecord, folder_text};
use crate::rows::decode_project;
use crate::sqlite::SqliteStore;

/// A project's columns, in the order rows are decoded.
pub(crate) const PROJECT_COLUMNS: &str = "id, folder, name, created_at, updated_at, trusted_digest";

macro_rules! project_statements {
    ($store:ty) => {
        impl $store {
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

project_statements!(SqliteStore);
project_statements!(PgStore);
