//! The trash: sessions and projects the user deleted, kept restorable until the trash is
//! emptied. A trashed row has `deleted_at` set, as a tombstone has, so every other query
//! already treats it as deleted (lists, lookups, search, discovery); `trashed` = 1 says
//! its content is still there. Emptying erases a session as deleting used to (see
//! `erase`), and leaves a project a tombstone without folder or name.

use hearth_core::{SessionUri, Timestamp, now};

use crate::codec::{parse_id, to_millis};
use crate::error::StoreResult;
use crate::sqlite::SqliteStore;

/// What deleting a session did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Removal {
    /// It went to the trash, restorable until the trash is emptied.
    Trashed,
    /// It was never used (no turn, no draft, no queued message) and was erased at once.
    Erased,
    /// No live session has this URI.
    Missing,
}

/// What a trash item is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TrashKind {
    /// A session with its chats and turns.
    Session,
    /// A project's registry entry (its folder and sessions are not part of it).
    Project,
}

impl TrashKind {
    /// The kind as the protocol and the command line name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Session => "session",
            Self::Project => "project",
        }
    }

    /// The kind named `text` (`session` or `project`).
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "session" => Some(Self::Session),
            "project" => Some(Self::Project),
            _ => None,
        }
    }
}

/// A session or project in the trash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrashItem {
    /// Session or project.
    pub kind: TrashKind,
    /// The session's URI or the project's id.
    pub id: String,
    /// The session's title or the project's name.
    pub title: Option<String>,
    /// When it was deleted.
    pub deleted_at: Timestamp,
    /// On a team server, the user it belongs to (and the team it is shared with).
    pub owner: Option<hearth_core::Owner>,
}

/// Whether a session holds anything a user made: a turn, a draft, a queued message; or
/// is an agent's own conversation found by discovery (its content lives with the agent,
/// and its row keeps discovery from listing it again).
const SESSION_IS_USED: &str = "SELECT provenance = 'external'
        OR EXISTS (SELECT 1 FROM chats c JOIN turns t ON t.chat_id = c.id WHERE c.session_id = ?1)
        OR EXISTS (SELECT 1 FROM chats WHERE session_id = ?1
                   AND (COALESCE(draft, '') != '' OR queued IS NOT NULL))
     FROM sessions WHERE id = ?1";

impl SqliteStore {
    /// Moves a live session to the trash, or erases it when it was never used.
    pub(crate) async fn trash_session_impl(&self, uri: &SessionUri) -> StoreResult<Removal> {
        let mut deletion = self.begin_deletion().await?;
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
            sqlx::query("UPDATE sessions SET deleted_at = ?, trashed = 1 WHERE id = ?")
                .bind(at)
                .bind(id)
                .execute(&mut *deletion)
                .await
                .map_err(|e| self.error(e))?;
            deletion.commit().await.map_err(|e| self.error(e))?;
            return Ok(Removal::Trashed);
        }
        self.erase_session(deletion, id, uri, at).await?;
        Ok(Removal::Erased)
    }

    /// Erases every item deleted at or before `before` (every item when `None`), in one
    /// transaction, then what was removed (see `erase`). Returns the items erased.
    pub(crate) async fn empty_trash_impl(
        &self,
        before: Option<Timestamp>,
    ) -> StoreResult<Vec<TrashItem>> {
        let before = before.as_ref().map_or(i64::MAX, to_millis);
        let items = self.trash_items_before(before).await?;
        if items.is_empty() {
            return Ok(items);
        }
        let mut deletion = self.begin_deletion().await?;
        let mut erased = Vec::with_capacity(items.len());
        for item in items {
            if self.erase_item(&mut deletion, &item).await? {
                erased.push(item);
            }
        }
        self.commit_deletion(deletion).await?;
        Ok(erased)
    }

    /// Erases one item if it is still in the trash (inside `empty_trash`'s transaction).
    async fn erase_item(
        &self,
        transaction: &mut sqlx::SqliteConnection,
        item: &TrashItem,
    ) -> StoreResult<bool> {
        match item.kind {
            TrashKind::Session => {
                let id: Option<i64> =
                    sqlx::query_scalar("SELECT id FROM sessions WHERE uri = ? AND trashed = 1")
                        .bind(&item.id)
                        .fetch_optional(&mut *transaction)
                        .await
                        .map_err(|e| self.error(e))?;
                let Some(id) = id else {
                    return Ok(false);
                };
                let uri = parse_id("session uri", &item.id, SessionUri::parse)?;
                let at = to_millis(&item.deleted_at);
                Self::erase_session_rows(transaction, id, &uri, at)
                    .await
                    .map_err(|e| self.error(e))?;
                Ok(true)
            }
            TrashKind::Project => {
                let done = sqlx::query(
                    "UPDATE projects SET folder = NULL, name = NULL, trashed = 0
                     WHERE id = ? AND trashed = 1",
                )
                .bind(&item.id)
                .execute(&mut *transaction)
                .await
                .map_err(|e| self.error(e))?;
                Ok(done.rows_affected() > 0)
            }
        }
    }
}
