//! The session registry on PostgreSQL: create, discover, list, update, delete, trash,
//! and lookups by id prefix.

use hearth_core::{CHAT_SCHEME, DEFAULT_CHAT_ID, SessionUri, Timestamp, now};

use super::PgStore;
use crate::codec::{from_millis, parse_id, to_millis};
use crate::error::{StoreError, StoreResult};
use crate::prefixes::{limit, valid_prefix};
use crate::rows::{CHAT_COLUMNS, decode_chat};
use crate::store::{ChatRecord, NewSession, Registration};
use crate::stores::Change;
use crate::trash::{Removal, TrashItem, TrashKind};
use crate::{ERASED_TEXT, erase::ProposalOwner};

/// Whether a session holds anything a user made (see the SQLite store's rule).
const SESSION_IS_USED: &str = "SELECT provenance = 'external'
        OR EXISTS (SELECT 1 FROM chats c JOIN turns t ON t.chat_id = c.id WHERE c.session_id = $1)
        OR EXISTS (SELECT 1 FROM chats WHERE session_id = $1
                   AND (COALESCE(draft, '') <> '' OR queued IS NOT NULL))
     FROM sessions WHERE id = $1";

impl PgStore {
    pub(crate) async fn create_session_impl(&self, session: &NewSession) -> StoreResult<()> {
        let uri = session.summary.uri.to_string();
        let mut transaction = self.pool.begin().await.map_err(|e| self.error(e))?;
        let live: Option<(Option<i64>, i64)> =
            sqlx::query_as("SELECT deleted_at, trashed FROM sessions WHERE uri = $1 FOR UPDATE")
                .bind(&uri)
                .fetch_optional(&mut *transaction)
                .await
                .map_err(|e| self.error(e))?;
        match live {
            Some((None, _)) => {
                return Err(StoreError::Conflict(format!(
                    "session {uri} already exists"
                )));
            }
            Some((Some(_), 1)) => {
                return Err(StoreError::Conflict(format!(
                    "session {uri} is in the trash; restore it with `hearth trash restore`"
                )));
            }
            Some((Some(_), _)) => {
                sqlx::query("DELETE FROM sessions WHERE uri = $1")
                    .bind(&uri)
                    .execute(&mut *transaction)
                    .await
                    .map_err(|e| self.error(e))?;
            }
            None => {}
        }
        Self::insert_session_rows(&mut transaction, session)
            .await
            .map_err(|e| self.unique_conflict(e, "session", &uri))?;
        Self::announce(
            &mut transaction,
            &Change::Session(session.summary.uri.clone()),
        )
        .await
        .map_err(|e| self.error(e))?;
        transaction.commit().await.map_err(|e| self.error(e))
    }

    pub(crate) async fn register_discovered_impl(
        &self,
        session: &NewSession,
    ) -> StoreResult<Registration> {
        let uri = session.summary.uri.to_string();
        let mut transaction = self.pool.begin().await.map_err(|e| self.error(e))?;
        let existing: Option<Option<i64>> =
            sqlx::query_scalar("SELECT deleted_at FROM sessions WHERE uri = $1")
                .bind(&uri)
                .fetch_optional(&mut *transaction)
                .await
                .map_err(|e| self.error(e))?;
        let outcome = match existing {
            Some(Some(_)) => Registration::Tombstoned,
            Some(None) => Registration::AlreadyKnown,
            None => match Self::insert_session_rows(&mut transaction, session).await {
                Ok(()) => {
                    Self::announce(
                        &mut transaction,
                        &Change::Session(session.summary.uri.clone()),
                    )
                    .await
                    .map_err(|e| self.error(e))?;
                    Registration::Added
                }
                // Another node registered it meanwhile.
                Err(sqlx::Error::Database(db)) if db.is_unique_violation() => {
                    return Ok(Registration::AlreadyKnown);
                }
                Err(error) => return Err(self.error(error)),
            },
        };
        transaction.commit().await.map_err(|e| self.error(e))?;
        Ok(outcome)
    }

    pub(crate) async fn delete_session_impl(&self, uri: &SessionUri) -> StoreResult<bool> {
        let mut transaction = self.pool.begin().await.map_err(|e| self.error(e))?;
        let id: Option<i64> = sqlx::query_scalar(
            "SELECT id FROM sessions WHERE uri = $1 AND deleted_at IS NULL FOR UPDATE",
        )
        .bind(uri.to_string())
        .fetch_optional(&mut *transaction)
        .await
        .map_err(|e| self.error(e))?;
        let Some(id) = id else {
            return Ok(false);
        };
        Self::erase_session_rows(&mut transaction, id, uri, to_millis(&now()))
            .await
            .map_err(|e| self.error(e))?;
        transaction.commit().await.map_err(|e| self.error(e))?;
        Ok(true)
    }

    /// Removes a session's content, leaving a tombstone deleted at `at` (inside the
    /// deletion's transaction).
    pub(crate) async fn erase_session_rows(
        connection: &mut sqlx::PgConnection,
        id: i64,
        uri: &SessionUri,
        at: i64,
    ) -> Result<(), sqlx::Error> {
        sqlx::query("DELETE FROM chats WHERE session_id = $1")
            .bind(id)
            .execute(&mut *connection)
            .await?;
        sqlx::query(
            "UPDATE sessions SET deleted_at = COALESCE(deleted_at, $1), trashed = 0, title = NULL,
                    model = NULL, project_id = NULL, working_directories = NULL
             WHERE id = $2",
        )
        .bind(at)
        .bind(id)
        .execute(&mut *connection)
        .await?;
        Self::erase_proposals(connection, ProposalOwner::Session(uri), at).await?;
        Ok(())
    }

    /// Erases the text of proposals staged in a deleted session or chat (see the SQLite
    /// store's `erase_proposals`).
    pub(crate) async fn erase_proposals(
        connection: &mut sqlx::PgConnection,
        owner: ProposalOwner<'_>,
        at: i64,
    ) -> Result<u64, sqlx::Error> {
        let (column, uri) = match owner {
            ProposalOwner::Session(session) => ("session_uri", session.to_string()),
            ProposalOwner::Chat(chat) => ("chat_uri", chat.to_string()),
        };
        let sql = format!(
            "UPDATE proposals SET summary = $1, diff = $1, payload = $1,
                    reason = CASE WHEN reason IS NULL THEN NULL ELSE $1 END,
                    outcome = CASE WHEN outcome IS NULL THEN NULL ELSE $1 END,
                    error = CASE WHEN error IS NULL THEN NULL ELSE $1 END,
                    status = CASE WHEN status IN ('pending', 'approved') THEN 'expired' ELSE status END,
                    updated_at = GREATEST(updated_at, $2)
             WHERE {column} = $3"
        );
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(ERASED_TEXT)
            .bind(at)
            .bind(uri)
            .execute(&mut *connection)
            .await
            .map(|result| result.rows_affected())
    }

    pub(crate) async fn trash_session_impl(&self, uri: &SessionUri) -> StoreResult<Removal> {
        let mut transaction = self.pool.begin().await.map_err(|e| self.error(e))?;
        let id: Option<i64> = sqlx::query_scalar(
            "SELECT id FROM sessions WHERE uri = $1 AND deleted_at IS NULL FOR UPDATE",
        )
        .bind(uri.to_string())
        .fetch_optional(&mut *transaction)
        .await
        .map_err(|e| self.error(e))?;
        let Some(id) = id else {
            return Ok(Removal::Missing);
        };
        let used: bool = sqlx::query_scalar(SESSION_IS_USED)
            .bind(id)
            .fetch_one(&mut *transaction)
            .await
            .map_err(|e| self.error(e))?;
        let at = to_millis(&now());
        let removal = if used {
            sqlx::query("UPDATE sessions SET deleted_at = $1, trashed = 1 WHERE id = $2")
                .bind(at)
                .bind(id)
                .execute(&mut *transaction)
                .await
                .map_err(|e| self.error(e))?;
            Removal::Trashed
        } else {
            Self::erase_session_rows(&mut transaction, id, uri, at)
                .await
                .map_err(|e| self.error(e))?;
            Removal::Erased
        };
        transaction.commit().await.map_err(|e| self.error(e))?;
        Ok(removal)
    }

    pub(crate) async fn empty_trash_impl(
        &self,
        before: Option<Timestamp>,
    ) -> StoreResult<Vec<TrashItem>> {
        let before = before.as_ref().map_or(i64::MAX, to_millis);
        let items = self.trash_items_before(before).await?;
        if items.is_empty() {
            return Ok(items);
        }
        let mut transaction = self.pool.begin().await.map_err(|e| self.error(e))?;
        let mut erased = Vec::with_capacity(items.len());
        for item in items {
            if self.erase_item(&mut transaction, &item).await? {
                erased.push(item);
            }
        }
        transaction.commit().await.map_err(|e| self.error(e))?;
        Ok(erased)
    }

    async fn erase_item(
        &self,
        connection: &mut sqlx::PgConnection,
        item: &TrashItem,
    ) -> StoreResult<bool> {
        match item.kind {
            TrashKind::Session => {
                let id: Option<i64> = sqlx::query_scalar(
                    "SELECT id FROM sessions WHERE uri = $1 AND trashed = 1 FOR UPDATE",
                )
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

    pub(crate) async fn chats_with_id_prefix_impl(
        &self,
        prefix: &str,
        max: u32,
    ) -> StoreResult<Vec<ChatRecord>> {
        if !valid_prefix(prefix) {
            return Ok(Vec::new());
        }
        // A chat URI has exactly two `/`: the chat id is what follows the second.
        let sql = format!(
            "SELECT {CHAT_COLUMNS}
             FROM chats c JOIN sessions s ON s.id = c.session_id
             WHERE split_part(c.uri, '/', 3) LIKE $1 ESCAPE '\\' AND split_part(c.uri, '/', 3) <> $2
               AND starts_with(c.uri, $3) AND s.deleted_at IS NULL
             ORDER BY c.updated_at DESC LIMIT $4"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(format!("{}%", prefix.replace('_', "\\_")))
            .bind(DEFAULT_CHAT_ID)
            .bind(CHAT_SCHEME)
            .bind(limit(max))
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        rows.iter().map(decode_chat).collect()
    }

    pub(crate) async fn proposals_changed_after_impl(
        &self,
        after: Timestamp,
    ) -> StoreResult<Vec<(String, Timestamp)>> {
        let rows: Vec<(String, i64)> = sqlx::query_as(
            "SELECT id, updated_at FROM proposals WHERE updated_at >= $1
             ORDER BY updated_at LIMIT 500",
        )
        .bind(to_millis(&after))
        .fetch_all(&self.pool)
        .await
        .map_err(|e| self.error(e))?;
        rows.into_iter()
            .map(|(id, at)| Ok((id, from_millis(at)?)))
            .collect()
    }
}
