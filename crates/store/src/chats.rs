//! The chat catalog: chats of a session, provider data, drafts, chat conversations.

use hearth_core::{ChatUri, SessionUri, now};

use crate::codec::to_millis;
use crate::erase::{ProposalOwner, erase_proposals};
use crate::error::{StoreError, StoreResult};
pub(crate) use crate::rows::decode_chat;
use crate::sqlite::SqliteStore;
use crate::store::ChatRecord;

impl SqliteStore {
    pub(crate) async fn chats_impl(&self, session: &SessionUri) -> StoreResult<Vec<ChatRecord>> {
        let rows = sqlx::query(
            "SELECT c.uri, c.origin, c.title, c.model, c.provider_data, c.backing, c.draft, c.queued, c.created_at, c.updated_at
             FROM chats c JOIN sessions s ON s.id = c.session_id
             WHERE s.uri = ? AND s.deleted_at IS NULL
             ORDER BY c.position",
        )
        .bind(session.to_string())
        .fetch_all(&self.pool)
        .await
        .map_err(|e| self.error(e))?;
        rows.iter().map(decode_chat).collect()
    }

    pub(crate) async fn insert_chat_impl(&self, chat: &ChatRecord) -> StoreResult<()> {
        let session = chat.summary.uri.session();
        let mut connection = self.pool.acquire().await.map_err(|e| self.error(e))?;
        let mut transaction = sqlx::Connection::begin_with(&mut *connection, "BEGIN IMMEDIATE")
            .await
            .map_err(|e| self.error(e))?;
        let row: Option<(i64, i64)> = sqlx::query_as(
            "SELECT s.id, COALESCE((SELECT MAX(position) FROM chats WHERE session_id = s.id), -1) + 1
             FROM sessions s WHERE s.uri = ? AND s.deleted_at IS NULL",
        )
        .bind(session.to_string())
        .fetch_optional(&mut *transaction)
        .await
        .map_err(|e| self.error(e))?;
        let Some((session_id, position)) = row else {
            return Err(StoreError::NotFound {
                what: "session",
                key: session.to_string(),
            });
        };
        Self::insert_chat_row(&mut transaction, session_id, position, chat)
            .await
            .map_err(|e| self.unique_conflict(e, "chat", &chat.summary.uri.to_string()))?;
        Self::touch_session(
            &mut transaction,
            &session,
            to_millis(&chat.summary.updated_at),
        )
        .await
        .map_err(|e| self.error(e))?;
        transaction.commit().await.map_err(|e| self.error(e))
    }

    /// Deletes a chat with its turns, draft and provider data, erases its proposals'
    /// text, then erases what was removed (see `erase`).
    pub(crate) async fn delete_chat_impl(&self, chat: &ChatUri) -> StoreResult<()> {
        let mut connection = self.pool.acquire().await.map_err(|e| self.error(e))?;
        let mut transaction = sqlx::Connection::begin_with(&mut *connection, "BEGIN IMMEDIATE")
            .await
            .map_err(|e| self.error(e))?;
        let deleted = sqlx::query("DELETE FROM chats WHERE uri = ?")
            .bind(chat.to_string())
            .execute(&mut *transaction)
            .await
            .map_err(|e| self.error(e))?
            .rows_affected();
        erase_proposals(
            &mut transaction,
            ProposalOwner::Chat(chat),
            to_millis(&now()),
        )
        .await
        .map_err(|e| self.error(e))?;
        transaction.commit().await.map_err(|e| self.error(e))?;
        drop(connection);
        if deleted > 0 {
            self.erase_removed().await?;
        }
        Ok(())
    }
}

/// `NotFound` for the chat when an update changed no row.
pub(crate) fn expect_row(affected: u64, what: &'static str, key: &ChatUri) -> StoreResult<()> {
    if affected == 0 {
        Err(StoreError::NotFound {
            what,
            key: key.to_string(),
        })
    } else {
        Ok(())
    }
}
