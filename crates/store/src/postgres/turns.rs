//! Turns on PostgreSQL: the durable insert of the user's message, checkpoints and copies
//! for forks (reads are `turn_statements`), stored as the same JSON bodies as in SQLite.

use hearth_core::{ChatUri, Turn, TurnId, now};

use super::PgStore;
use crate::codec::to_millis;
use crate::error::{StoreError, StoreResult};
use crate::stores::Change;
use crate::turns::encode_body;

impl PgStore {
    pub(crate) async fn insert_turn_impl(&self, chat: &ChatUri, turn: &Turn) -> StoreResult<()> {
        let body = encode_body(turn)?;
        let mut transaction = self.pool.begin().await.map_err(|e| self.error(e))?;
        let chat_id = self.chat_id(&mut transaction, chat, true).await?;
        let started_at = to_millis(&turn.started_at);
        sqlx::query(
            "INSERT INTO turns (chat_id, seq, turn_id, running, body, started_at, checkpointed_at)
             VALUES ($1, COALESCE((SELECT MAX(seq) FROM turns WHERE chat_id = $1), 0) + 1, $2, $3, $4, $5, $6)",
        )
        .bind(chat_id)
        .bind(turn.id.as_str())
        .bind(i64::from(turn.stop_reason.is_none()))
        .bind(&body)
        .bind(started_at)
        .bind(to_millis(&now()))
        .execute(&mut *transaction)
        .await
        .map_err(|e| self.unique_conflict(e, "turn", turn.id.as_str()))?;
        sqlx::query("UPDATE chats SET updated_at = GREATEST(updated_at, $1) WHERE id = $2")
            .bind(started_at)
            .bind(chat_id)
            .execute(&mut *transaction)
            .await
            .map_err(|e| self.error(e))?;
        Self::touch_session(&mut transaction, chat.session_ref(), started_at)
            .await
            .map_err(|e| self.error(e))?;
        Self::announce(&mut transaction, &Change::Turn(chat.clone()))
            .await
            .map_err(|e| self.error(e))?;
        transaction.commit().await.map_err(|e| self.error(e))
    }

    pub(crate) async fn save_turn_impl(&self, chat: &ChatUri, turn: &Turn) -> StoreResult<()> {
        let body = encode_body(turn)?;
        // One statement: the save, announced to every node when it commits.
        let saved: Option<i32> = sqlx::query_scalar(
            "WITH saved AS (
                 UPDATE turns SET running = $1, body = $2, checkpointed_at = $3
                 WHERE chat_id = (SELECT id FROM chats WHERE uri = $4) AND turn_id = $5
                 RETURNING 1
             )
             SELECT 1 FROM saved, pg_notify($6, $7)",
        )
        .bind(i64::from(turn.stop_reason.is_none()))
        .bind(&body)
        .bind(to_millis(&now()))
        .bind(chat.to_string())
        .bind(turn.id.as_str())
        .bind(super::changes::CHANNEL)
        .bind(super::changes::payload(&Change::Turn(chat.clone())))
        .fetch_optional(&self.relaxed)
        .await
        .map_err(|e| self.error(e))?;
        if saved.is_none() {
            return Err(StoreError::NotFound {
                what: "turn",
                key: turn.id.to_string(),
            });
        }
        Ok(())
    }

    pub(crate) async fn copy_turns_impl(
        &self,
        from: &ChatUri,
        to: &ChatUri,
        through: &TurnId,
    ) -> StoreResult<usize> {
        let mut transaction = self.pool.begin().await.map_err(|e| self.error(e))?;
        let missing = || StoreError::NotFound {
            what: "chat",
            key: format!("{from} or {to}"),
        };
        let source = self
            .chat_id(&mut transaction, from, false)
            .await
            .map_err(|_| missing())?;
        let target = self
            .chat_id(&mut transaction, to, true)
            .await
            .map_err(|_| missing())?;
        let last: Option<i64> =
            sqlx::query_scalar("SELECT seq FROM turns WHERE chat_id = $1 AND turn_id = $2")
                .bind(source)
                .bind(through.as_str())
                .fetch_optional(&mut *transaction)
                .await
                .map_err(|e| self.error(e))?;
        let Some(last) = last else {
            return Err(StoreError::NotFound {
                what: "turn",
                key: through.to_string(),
            });
        };
        let copied = sqlx::query(
            "INSERT INTO turns (chat_id, seq, turn_id, running, body, started_at, checkpointed_at)
             SELECT $1, seq, turn_id, 0,
                    CASE WHEN running <> 0
                         THEN jsonb_set(body::jsonb, '{stop_reason}', '\"incomplete\"')::text
                         ELSE body END,
                    started_at, checkpointed_at
             FROM turns WHERE chat_id = $2 AND seq <= $3 ORDER BY seq",
        )
        .bind(target)
        .bind(source)
        .bind(last)
        .execute(&mut *transaction)
        .await
        .map_err(|e| self.error(e))?
        .rows_affected();
        transaction.commit().await.map_err(|e| self.error(e))?;
        Ok(usize::try_from(copied).unwrap_or(usize::MAX))
    }
}
