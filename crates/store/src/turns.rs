//! Turns: durable insert of the user's message, checkpoints while the response streams,
//! the final save, and copies for forks (reads, for both databases, are
//! `turn_statements`). A stored turn that cannot be read back
//! is read as an unreadable turn (see [`unreadable_turn`]), never as a failure of its chat.

use hearth_core::{ChatUri, ResponsePart, StopReason, Turn, TurnId, Usage, UserMessage, now};
use sqlx::Connection;

use crate::codec::{from_millis, to_json, to_millis};
use crate::error::{StoreError, StoreResult};
use crate::sqlite::SqliteStore;

/// A turn as stored in its `body` column (times in milliseconds).
#[derive(serde::Serialize)]
struct TurnBody<'a> {
    id: &'a TurnId,
    user: &'a UserMessage,
    parts: &'a [ResponsePart],
    usage: &'a Option<Usage>,
    stop_reason: &'a Option<StopReason>,
    started_at: i64,
    completed_at: Option<i64>,
}

/// A turn read back from its `body`.
#[derive(serde::Deserialize)]
pub(crate) struct StoredTurn {
    id: TurnId,
    user: UserMessage,
    parts: Vec<ResponsePart>,
    usage: Option<Usage>,
    stop_reason: Option<StopReason>,
    started_at: i64,
    completed_at: Option<i64>,
}

impl StoredTurn {
    pub(crate) fn into_turn(self) -> StoreResult<Turn> {
        Ok(Turn {
            id: self.id,
            user: self.user,
            parts: self.parts,
            usage: self.usage,
            stop_reason: self.stop_reason,
            started_at: from_millis(self.started_at)?,
            completed_at: self.completed_at.map(from_millis).transpose()?,
        })
    }
}

/// What is shown in place of a stored turn that cannot be read: the turn (its id when
/// that can be read, and the user's message when that part decodes) ending in an error
/// that names the chat, the turn and what is wrong with it. Harnesses never see it: they
/// build the model's history from their own provider data, not from stored turns.
pub(crate) fn unreadable_turn(chat: &ChatUri, row: &UnreadRow, reason: &str) -> Turn {
    let id = TurnId::parse(&row.turn_id).unwrap_or_else(|_| TurnId::generate());
    let user = serde_json::from_slice::<serde_json::Value>(&row.body)
        .ok()
        .and_then(|mut body| serde_json::from_value(body.get_mut("user")?.take()).ok())
        .unwrap_or_default();
    let started_at = from_millis(row.started_at).unwrap_or_default();
    Turn {
        id,
        user,
        parts: vec![ResponsePart::Error {
            message: format!(
                "this turn could not be read: {reason} (chat {chat}, turn `{}`, position {}); the chat's other turns are intact — restore the database from a backup to recover it",
                row.turn_id, row.seq
            ),
        }],
        usage: None,
        stop_reason: Some(StopReason::Error),
        started_at,
        completed_at: None,
    }
}

/// A stored turn's columns, read one by one after the chat's turns failed to read as a
/// whole.
pub(crate) struct UnreadRow {
    pub(crate) seq: i64,
    pub(crate) turn_id: String,
    pub(crate) body: Vec<u8>,
    pub(crate) started_at: i64,
}

pub(crate) fn decode_body(body: &[u8]) -> Result<Turn, String> {
    let stored: StoredTurn = serde_json::from_slice(body)
        .map_err(|error| format!("its stored form is invalid ({error})"))?;
    stored
        .into_turn()
        .map_err(|error| format!("its stored form is invalid ({error})"))
}

/// A stored turn, or an unreadable turn in its place (with a warning in the log).
pub(crate) fn read_turn(chat: &ChatUri, row: &UnreadRow) -> Turn {
    decode_body(&row.body).unwrap_or_else(|reason| {
        tracing::warn!(%chat, turn = %row.turn_id, seq = row.seq, "a stored turn could not be read: {reason}");
        unreadable_turn(chat, row, &reason)
    })
}

pub(crate) fn encode_body(turn: &Turn) -> StoreResult<String> {
    to_json(
        "turn",
        &TurnBody {
            id: &turn.id,
            user: &turn.user,
            parts: &turn.parts,
            usage: &turn.usage,
            stop_reason: &turn.stop_reason,
            started_at: to_millis(&turn.started_at),
            completed_at: turn.completed_at.as_ref().map(to_millis),
        },
    )
}

impl SqliteStore {
    pub(crate) async fn insert_turn_impl(&self, chat: &ChatUri, turn: &Turn) -> StoreResult<()> {
        let body = encode_body(turn)?;
        let mut connection = self.pool.acquire().await.map_err(|e| self.error(e))?;
        let mut transaction = connection
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(|e| self.error(e))?;
        let chat_id = self.chat_id(&mut transaction, chat, true).await?;
        let started_at = to_millis(&turn.started_at);
        sqlx::query(
            "INSERT INTO turns (chat_id, seq, turn_id, running, body, started_at, checkpointed_at)
             VALUES (?1, COALESCE((SELECT MAX(seq) FROM turns WHERE chat_id = ?1), 0) + 1, ?2, ?3, ?4, ?5, ?6)",
        )
        .bind(chat_id)
        .bind(turn.id.as_str())
        .bind(turn.stop_reason.is_none())
        .bind(&body)
        .bind(started_at)
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
        let body = encode_body(turn)?;
        let result = sqlx::query(
            "UPDATE turns SET running = ?, body = ?, checkpointed_at = ?
             WHERE chat_id = (SELECT id FROM chats WHERE uri = ?) AND turn_id = ?",
        )
        .bind(turn.stop_reason.is_none())
        .bind(&body)
        .bind(to_millis(&now()))
        .bind(chat.to_string())
        .bind(turn.id.as_str())
        .execute(&self.relaxed)
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

    /// Reads a chat's turns as one JSON array SQLite joins from the stored bodies: a
    /// single row crosses into Rust however many turns the chat has. When that fails to
    /// decode, the turns are read one by one and each that cannot be read becomes an
    /// unreadable turn in its place.
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
            "INSERT INTO turns (chat_id, seq, turn_id, running, body, started_at, checkpointed_at)
             SELECT ?, seq, turn_id, 0,
                    CASE WHEN running THEN json_set(body, '$.stop_reason', 'incomplete') ELSE body END,
                    started_at, checkpointed_at
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
