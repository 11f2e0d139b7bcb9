//! The trash's statements, written once for both databases (numbered `$N` parameters):
//! listing it, moving a session or a project into it, taking an item out, and emptying it
//! (which erases inside the store's write transaction and ends with its
//! `commit_deletion`, see `erase`).

use hearth_core::{SessionUri, Timestamp, now};

use crate::codec::{parse_id, to_millis};
use crate::error::{StoreError, StoreResult};
use crate::postgres::PgStore;
use crate::rows::decode_trash_item;
use crate::sqlite::SqliteStore;
use crate::trash::{Removal, TrashItem, TrashKind};

/// Whether session `$1` holds anything a user made: a turn, a draft, a queued message; or
/// is an agent's own conversation found by discovery (its content lives with the agent,
/// and its row keeps discovery from listing it again).
const SESSION_IS_USED: &str = "SELECT provenance = 'external'
        OR EXISTS (SELECT 1 FROM chats c JOIN turns t ON t.chat_id = c.id WHERE c.session_id = $1)
        OR EXISTS (SELECT 1 FROM chats WHERE session_id = $1
                   AND (COALESCE(draft, '') <> '' OR queued IS NOT NULL))
     FROM sessions WHERE id = $1";

/// Every item deleted at or before `$1`, newest deletion first.
const TRASH_ITEMS: &str =
    "SELECT 'session' AS kind, uri AS id, title, deleted_at, owner, team FROM sessions
      WHERE trashed = 1 AND deleted_at <= $1
     UNION ALL
     SELECT 'project' AS kind, id, name AS title, deleted_at, owner, team FROM projects
      WHERE trashed = 1 AND deleted_at <= $1
     ORDER BY deleted_at DESC, id";

macro_rules! trash_statements {
    ($store:ty, $connection:ty) => {
        impl $store {
            /// Moves a live session to the trash, or erases it when it was never used.
            pub(crate) async fn trash_session_impl(
                &self,
                uri: &SessionUri,
            ) -> StoreResult<Removal> {
                let mut deletion = self.write_transaction().await?;
                let Some(id) = self.live_session_id(&mut deletion, uri).await? else {
                    return Ok(Removal::Missing);
                };
                let used: bool = sqlx::query_scalar(SESSION_IS_USED)
                    .bind(id)
                    .fetch_one(&mut *deletion)
                    .await
                    .map_err(|e| self.error(e))?;
                let at = to_millis(&now());
                if used {
                    sqlx::query("UPDATE sessions SET deleted_at = $1, trashed = 1 WHERE id = $2")
                        .bind(at)
                        .bind(id)
                        .execute(&mut *deletion)
                        .await
                        .map_err(|e| self.error(e))?;
                    deletion.commit().await.map_err(|e| self.error(e))?;
                    return Ok(Removal::Trashed);
                }
                Self::erase_session_rows(&mut deletion, id, uri, at)
                    .await
                    .map_err(|e| self.error(e))?;
                self.commit_deletion(deletion).await?;
                Ok(Removal::Erased)
            }

            /// Erases every item deleted at or before `before` (every item when `None`),
            /// in one transaction. Returns the items erased.
            pub(crate) async fn empty_trash_impl(
                &self,
                before: Option<Timestamp>,
            ) -> StoreResult<Vec<TrashItem>> {
                let before = before.as_ref().map_or(i64::MAX, to_millis);
                let items = self.trash_items_before(before).await?;
                if items.is_empty() {
                    return Ok(items);
                }
                let mut deletion = self.write_transaction().await?;
                let mut erased = Vec::with_capacity(items.len());
                for item in items {
                    if self.erase_item(&mut deletion, &item).await? {
                        erased.push(item);
                    }
                }
                self.commit_deletion(deletion).await?;
                Ok(erased)
            }

            /// Erases one item if it is still in the trash (inside `empty_trash`'s
            /// transaction).
            async fn erase_item(
                &self,
                connection: &mut $connection,
                item: &TrashItem,
            ) -> StoreResult<bool> {
                match item.kind {
                    TrashKind::Session => {
                        let sql = format!(
                            "SELECT id FROM sessions WHERE uri = $1 AND trashed = 1{}",
                            Self::FOR_UPDATE
                        );
                        let id: Option<i64> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                            .bind(&item.id)
                            .fetch_optional(&mut *connection)
                            .await
                            .map_err(|e| self.error(e))?;
                        let Some(id) = id else {
                            return Ok(false);
                        };
                        let uri = parse_id("session uri", &item.id, SessionUri::parse)?;
                        Self::erase_session_rows(connection, id, &uri, to_millis(&item.deleted_at))
                            .await
                            .map_err(|e| self.error(e))?;
                        Ok(true)
                    }
                    TrashKind::Project => {
                        let done = sqlx::query(
                            "UPDATE projects SET folder = NULL, name = NULL, trashed = 0
                             WHERE id = $1 AND trashed = 1",
                        )
                        .bind(&item.id)
                        .execute(&mut *connection)
                        .await
                        .map_err(|e| self.error(e))?;
                        Ok(done.rows_affected() > 0)
                    }
                }
            }

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

trash_statements!(SqliteStore, sqlx::SqliteConnection);
trash_statements!(PgStore, sqlx::PgConnection);
