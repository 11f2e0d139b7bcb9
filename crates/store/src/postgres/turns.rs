//! Turns on PostgreSQL: the durable insert of the user's message, checkpoints, reads and
//! copies for forks — stored as the same JSON bodies as in SQLite.

use hearth_core::{ChatUri, Turn, TurnId, now};
use sqlx::Row;
use sqlx::postgres::PgRow;

use super::PgStore;
use crate::codec::{from_json, to_millis};
use crate::error::{StoreError, StoreResult};
use crate::store::TurnPage;
use crate::stores::Change;
use crate::turns::{StoredTurn, UnreadRow, decode_body, encode_body, unreadable_turn};

impl PgStore {
    /// The chat's row id, locked for this transaction when `lock` is set (so one chat's
    /// turns are numbered by one writer at a time).
    async fn chat_id(
        &self,
        connection: &mut sqlx::PgConnection,
        chat: &ChatUri,
        lock: bool,
    ) -> StoreResult<i64> {
        let sql = if lock {
            "SELECT id FROM chats WHERE uri = $1 FOR UPDATE"
        } else {
            "SELECT id FROM chats WHERE uri = $1"
        };
        sqlx::query_scalar(sql)
            .bind(chat.to_string())
            .fetch_optional(&mut *connection)
            .await
            .map_err(|e| self.error(e))?
            .ok_or_else(|| StoreError::NotFound {
                what: "chat",
                key: chat.to_string(),
            })
    }

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

    /// A chat's turns as one JSON array the server joins; read one by one (each that
    /// cannot be read becomes an unreadable turn) when the array does not decode.
    pub(crate) async fn turns_impl(&self, chat: &ChatUri) -> StoreResult<Vec<Turn>> {
        let array: Option<String> = sqlx::query_scalar(
            "SELECT '[' || COALESCE(string_agg(body, ',' ORDER BY seq), '') || ']'
             FROM turns WHERE chat_id = (SELECT id FROM chats WHERE uri = $1)",
        )
        .bind(chat.to_string())
        .fetch_one(&self.pool)
        .await
        .map_err(|e| self.error(e))?;
        let whole = from_json::<Vec<StoredTurn>>("turns", array.as_deref().unwrap_or("[]"))
            .and_then(|stored| stored.into_iter().map(StoredTurn::into_turn).collect());
        match whole {
            Ok(turns) => Ok(turns),
            Err(_) => {
                let rows = sqlx::query(
                    "SELECT seq, turn_id, body, started_at
                     FROM turns WHERE chat_id = (SELECT id FROM chats WHERE uri = $1) ORDER BY seq",
                )
                .bind(chat.to_string())
                .fetch_all(&self.pool)
                .await
                .map_err(|e| self.error(e))?;
                rows.iter().map(|row| read_turn(chat, row)).collect()
            }
        }
    }

    pub(crate) async fn turn_page_impl(
        &self,
        chat: &ChatUri,
        before: Option<&TurnId>,
        limit: u32,
    ) -> StoreResult<TurnPage> {
        let mut connection = self.pool.acquire().await.map_err(|e| self.error(e))?;
        let chat_id = self.chat_id(&mut connection, chat, false).await?;
        let below = match before {
            None => i64::MAX,
            Some(turn) => {
                sqlx::query_scalar("SELECT seq FROM turns WHERE chat_id = $1 AND turn_id = $2")
                    .bind(chat_id)
                    .bind(turn.as_str())
                    .fetch_optional(&mut *connection)
                    .await
                    .map_err(|e| self.error(e))?
                    .ok_or_else(|| StoreError::NotFound {
                        what: "turn",
                        key: turn.to_string(),
                    })?
            }
        };
        let rows = sqlx::query(
            "SELECT seq, turn_id, body, started_at
             FROM turns WHERE chat_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3",
        )
        .bind(chat_id)
        .bind(below)
        .bind(i64::from(limit) + 1)
        .fetch_all(&mut *connection)
        .await
        .map_err(|e| self.error(e))?;
        let has_more = rows.len() > limit as usize;
        let turns = rows
            .iter()
            .take(limit as usize)
            .rev()
            .map(|row| read_turn(chat, row))
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(TurnPage { turns, has_more })
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

/// One stored turn, or an unreadable turn in its place.
fn read_turn(chat: &ChatUri, row: &PgRow) -> StoreResult<Turn> {
    let row = UnreadRow {
        seq: row.try_get("seq").map_err(|error| StoreError::Decode {
            what: "turn",
            detail: format!("{error} (chat {chat})"),
        })?,
        turn_id: row
            .try_get::<Option<String>, _>("turn_id")
            .ok()
            .flatten()
            .unwrap_or_default(),
        body: row
            .try_get::<Option<String>, _>("body")
            .ok()
            .flatten()
            .unwrap_or_default()
            .into_bytes(),
        started_at: row
            .try_get::<Option<i64>, _>("started_at")
            .ok()
            .flatten()
            .unwrap_or_default(),
    };
    Ok(decode_body(&row.body).unwrap_or_else(|reason| {
        tracing::warn!(%chat, turn = %row.turn_id, seq = row.seq, "a stored turn could not be read: {reason}");
        unreadable_turn(chat, &row, &reason)
    }))
}
