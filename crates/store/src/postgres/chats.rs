//! The chat catalog on PostgreSQL: chats of a session, provider data, drafts, queues and
//! the provider conversations behind chats.

use hearth_core::{ChatUri, SessionUri, now};

use super::PgStore;
use crate::codec::to_millis;
use crate::erase::ProposalOwner;
use crate::error::{StoreError, StoreResult};
use crate::rows::{CHAT_COLUMNS, decode_chat};
use crate::store::ChatRecord;

impl PgStore {
    pub(crate) async fn chats_impl(&self, session: &SessionUri) -> StoreResult<Vec<ChatRecord>> {
        let sql = format!(
            "SELECT {CHAT_COLUMNS}
             FROM chats c JOIN sessions s ON s.id = c.session_id
             WHERE s.uri = $1 AND s.deleted_at IS NULL
             ORDER BY c.position"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(session.to_string())
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        rows.iter().map(decode_chat).collect()
    }

    pub(crate) async fn insert_chat_impl(&self, chat: &ChatRecord) -> StoreResult<()> {
        let session = chat.summary.uri.session();
        let mut transaction = self.pool.begin().await.map_err(|e| self.error(e))?;
        // The session's row lock orders chats added to one session at once.
        let session_id: Option<i64> = sqlx::query_scalar(
            "SELECT id FROM sessions WHERE uri = $1 AND deleted_at IS NULL FOR UPDATE",
        )
        .bind(session.to_string())
        .fetch_optional(&mut *transaction)
        .await
        .map_err(|e| self.error(e))?;
        let Some(session_id) = session_id else {
            return Err(StoreError::NotFound {
                what: "session",
                key: session.to_string(),
            });
        };
        let position: i64 = sqlx::query_scalar(
            "SELECT COALESCE(MAX(position), -1) + 1 FROM chats WHERE session_id = $1",
        )
        .bind(session_id)
        .fetch_one(&mut *transaction)
        .await
        .map_err(|e| self.error(e))?;
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

    pub(crate) async fn delete_chat_impl(&self, chat: &ChatUri) -> StoreResult<()> {
        let mut transaction = self.pool.begin().await.map_err(|e| self.error(e))?;
        sqlx::query("DELETE FROM chats WHERE uri = $1")
            .bind(chat.to_string())
            .execute(&mut *transaction)
            .await
            .map_err(|e| self.error(e))?;
        Self::erase_proposals(
            &mut transaction,
            ProposalOwner::Chat(chat),
            to_millis(&now()),
        )
        .await
        .map_err(|e| self.error(e))?;
        transaction.commit().await.map_err(|e| self.error(e))
    }
}
