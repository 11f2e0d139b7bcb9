//! The trash's statements both databases share (numbered `$N` parameters): listing it,
//! moving a project into it and taking an item out. Moving a session in and emptying it
//! stay each database's own (they erase inside each one's write transaction).

use hearth_core::now;

use crate::codec::to_millis;
use crate::error::{StoreError, StoreResult};
use crate::postgres::PgStore;
use crate::rows::decode_trash_item;
use crate::sqlite::SqliteStore;
use crate::trash::{TrashItem, TrashKind};

/// Every item deleted at or before `$1`, newest deletion first.
const TRASH_ITEMS: &str =
    "SELECT 'session' AS kind, uri AS id, title, deleted_at, owner, team FROM sessions
      WHERE trashed = 1 AND deleted_at <= $1
     UNION ALL
     SELECT 'project' AS kind, id, name AS title, deleted_at, owner, team FROM projects
      WHERE trashed = 1 AND deleted_at <= $1
     ORDER BY deleted_at DESC, id";

macro_rules! trash_statements {
    ($store:ty) => {
        impl $store {
            /// Moves a live project to the trash. Returns whether there was one.
            pub(crate) async fn trash_project_impl(&self, id: &str) -> StoreResult<bool> {
                let done = sqlx::query(
                    "UPDATE projects SET deleted_at = $1, trashed = 1
                     WHERE id = $2 AND deleted_at IS NULL",
                )
                .bind(to_millis(&now()))
                .bind(id)
                .execute(&self.pool)
                .await
                .map_err(|e| self.error(e))?;
                Ok(done.rows_affected() > 0)
            }

            /// Every item in the trash, newest deletion first.
            pub(crate) async fn trash_items_impl(&self) -> StoreResult<Vec<TrashItem>> {
                self.trash_items_before(i64::MAX).await
            }

            /// The items deleted at or before `before` (milliseconds).
            pub(crate) async fn trash_items_before(
                &self,
                before: i64,
            ) -> StoreResult<Vec<TrashItem>> {
                let rows = sqlx::query(TRASH_ITEMS)
                    .bind(before)
                    .fetch_all(&self.pool)
                    .await
                    .map_err(|e| self.error(e))?;
                rows.iter().map(decode_trash_item).collect()
            }

            /// Takes an item out of the trash. Fails with `NotFound` when it is not in the
            /// trash, and with a conflict when a project's folder now belongs to another
            /// project.
            pub(crate) async fn restore_impl(&self, kind: TrashKind, id: &str) -> StoreResult<()> {
                let sql = match kind {
                    TrashKind::Session => {
                        "UPDATE sessions SET deleted_at = NULL, trashed = 0
                         WHERE uri = $1 AND trashed = 1"
                    }
                    TrashKind::Project => {
                        "UPDATE projects SET deleted_at = NULL, trashed = 0
                         WHERE id = $1 AND trashed = 1"
                    }
                };
                let done = sqlx::query(sql)
                    .bind(id)
                    .execute(&self.pool)
                    .await
                    .map_err(|error| {
                        self.unique_conflict(error, "a live project in the folder of project", id)
                    })?;
                if done.rows_affected() == 0 {
                    return Err(StoreError::NotFound {
                        what: match kind {
                            TrashKind::Session => "session in the trash",
                            TrashKind::Project => "project in the trash",
                        },
                        key: id.to_owned(),
                    });
                }
                Ok(())
            }
        }
    };
}

trash_statements!(SqliteStore);
trash_statements!(PgStore);
