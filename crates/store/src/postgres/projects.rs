//! The project registry on PostgreSQL (see the SQLite store's `projects`): its own
//! listing order only; the other statements are `project_statements`.

use std::path::Path;

use futures::future::BoxFuture;
use hearth_core::ProjectId;

use super::PgStore;
use crate::error::StoreResult;
use crate::project_statements::PROJECT_COLUMNS;
use crate::projects::{ProjectRecord, ProjectStore};
use crate::rows::decode_project;

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
}

crate::projects::project_store_by_impls!(PgStore);
