//! Turns: durable insert of the user's message, checkpoints while the response streams,
//! the final save, reads, and copies for forks.

use hearth_core::{ChatUri, ResponsePart, StopReason, Turn, TurnId, Usage, UserMessage, now};
use sqlx::sqlite::SqliteRow;
use sqlx::{Connection, Row};

use crate::codec::{from_json, from_millis, parse_id, to_json, to_millis};
use crate::error::{StoreError, StoreResult};
use crate::sqlite::SqliteStore;

fn decode_turn(row: &SqliteRow) -> StoreResult<Turn> {
    let get = |error: sqlx::Error| StoreError::Decode {
        what: "turn",
        detail: error.to_string(),
    };
    let turn_id: String = row.try_get("turn_id").map_err(get)?;
    let user: String = row.try_get("user_message").map_err(get)?;
    let parts: String = row.try_get("parts").map_err(get)?;
    let usage: Option<String> = row.try_get("usage").map_err(get)?;
    let stop_reason: Option<String> = row.try_get("stop_reason").map_err(get)?;
    let completed_at: Option<i64> = row.try_get("completed_at").map_err(get)?;
    Ok(Turn {
        id: parse_id("turn id", &turn_id, TurnId::parse)?,
        user: from_json::<UserMessage>("user message", &user)?,
        parts: from_json::<Vec<ResponsePart>>("response parts", &parts)?,
        usage: usage
            .map(|text| from_json::<Usage>("usage", &text))
            .transpose()?,
        stop_reason: stop_reason
            .map(|text| from_json::<StopReason>("stop reason", &text))
            .transpose()?,
        started_at: from_millis(row.try_get("started_at").map_err(get)?)?,
        completed_at: completed_at.map(from_millis).transpose()?,
    })
}

struct EncodedTurn {
    user: String,
    parts: String,
    usage: Option<String>,
    stop_reason: Option<String>,
}

fn encode_turn(turn: &Turn) -> StoreResult<EncodedTurn> {
    Ok(EncodedTurn {
        user: to_json("user message", &turn.user)?,
        parts: to_json("response parts", &turn.parts)?,
        usage: turn
            .usage
            .as_ref()
            .map(|usage| to_json("usage", usage))
            .transpose()?,
        stop_reason: turn
            .stop_reason
            .as_ref()
            .map(|reason| to_json("stop reason", reason))
            .transpose()?,
    })
}

const TURN_COLUMNS: &str =
    "t.turn_id, t.user_message, t.parts, t.usage, t.stop_reason, t.started_at, t.completed_at";

impl SqliteStore {
    pub(crate) async fn insert_turn_impl(&self, chat: &ChatUri, turn: &Turn) -> StoreResult<()> {
        let encoded = encode_turn(turn)?;
        let mut connection = self.pool.acquire().await.map_err(|e| self.error(e))?;
        let mut transaction = connection
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(|e| self.error(e))?;
        let chat_id: Option<i64> = sqlx::query_scalar("SELECT id FROM chats WHERE uri = ?")
            .bind(chat.to_string())
            .fetch_optional(&mut *transaction)
            .await
            .map_err(|e| self.error(e))?;
        let Some(chat_id) = chat_id else {
            return Err(StoreError::NotFound {
                what: "chat",
                key: chat.to_string(),
            });
        };
        let started_at = to_millis(&turn.started_at);
        sqlx::query(
            "INSERT INTO turns (chat_id, seq, turn_id, user_message, parts, usage, stop_reason, started_at, completed_at, checkpointed_at)
             VALUES (?1, COALESCE((SELECT MAX(seq) FROM turns WHERE chat_id = ?1), 0) + 1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )
        .bind(chat_id)
        .bind(turn.id.as_str())
        .bind(&encoded.user)
        .bind(&encoded.parts)
        .bind(encoded.usage.as_deref())
        .bind(encoded.stop_reason.as_deref())
        .bind(started_at)
        .bind(turn.completed_at.as_ref().map(to_millis))
        .bind(to_millis(&now()))
        .execute(&mut *transaction)
        .await
        .map_err(|e| self.unique_conflict(e, "turn", turn.id.as_str()))?;
        sqlx::query("UPDATE chats SET updated_at = MAX(updated_at, ?) WHERE id = ?")
            .bind(started_at)
            .bind(chat_id)
            .execute(&mut *transaction)
            .await
            .map_err(|e| self.error(e))?;
        Self::touch_session(&mut transaction, chat.session_ref(), started_at)
            .await
            .map_err(|e| self.error(e))?;
        transaction.commit().await.map_err(|e| self.error(e))
    }

    pub(crate) async fn save_turn_impl(&self, chat: &ChatUri, turn: &Turn) -> StoreResult<()> {
        let encoded = encode_turn(turn)?;
        let result = sqlx::query(
            "UPDATE turns SET parts = ?, usage = ?, stop_reason = ?, completed_at = ?, checkpointed_at = ?
             WHERE chat_id = (SELECT id FROM chats WHERE uri = ?) AND turn_id = ?",
        )
        .bind(&encoded.parts)
        .bind(encoded.usage.as_deref())
        .bind(encoded.stop_reason.as_deref())
        .bind(turn.completed_at.as_ref().map(to_millis))
        .bind(to_millis(&now()))
        .bind(chat.to_string())
        .bind(turn.id.as_str())
        .execute(&self.pool)
        .await
        .map_err(|e| self.error(e))?;
        if result.rows_affected() == 0 {
            // The chat was disposed or its session deleted while the turn ran.
            return Err(StoreError::NotFound {
                what: "turn",
                key: turn.id.to_string(),
            });
        }
        Ok(())
    }

    pub(crate) async fn turns_impl(&self, chat: &ChatUri) -> StoreResult<Vec<Turn>> {
        let sql = format!(
            "SELECT {TURN_COLUMNS} FROM turns t WHERE t.chat_id = (SELECT id FROM chats WHERE uri = ?) ORDER BY t.seq"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(chat.to_string())
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        rows.iter().map(decode_turn).collect()
    }

    pub(crate) async fn copy_turns_impl(
        &self,
        from: &ChatUri,
        to: &ChatUri,
        through: &TurnId,
    ) -> StoreResult<usize> {
        let mut connection = self.pool.acquire().await.map_err(|e| self.error(e))?;
        let mut transaction = connection
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(|e| self.error(e))?;
        let ids: Option<(Option<i64>, Option<i64>)> = sqlx::query_as(
            "SELECT (SELECT id FROM chats WHERE uri = ?), (SELECT id FROM chats WHERE uri = ?)",
        )
        .bind(from.to_string())
        .bind(to.to_string())
        .fetch_optional(&mut *transaction)
        .await
        .map_err(|e| self.error(e))?;
        let Some((Some(source), Some(target))) = ids else {
            return Err(StoreError::NotFound {
                what: "chat",
                key: format!("{from} or {to}"),
            });
        };
        let last: Option<i64> =
            sqlx::query_scalar("SELECT seq FROM turns WHERE chat_id = ? AND turn_id = ?")
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
            "INSERT INTO turns (chat_id, seq, turn_id, user_message, parts, usage, stop_reason, started_at, completed_at, checkpointed_at)
             SELECT ?, seq, turn_id, user_message, parts, usage,
                    COALESCE(stop_reason, '\"incomplete\"'), started_at, completed_at, checkpointed_at
             FROM turns WHERE chat_id = ? AND seq <= ? ORDER BY seq",
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
