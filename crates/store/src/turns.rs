//! Turns as stored: the JSON body of each (the statements that write and read them, for
//! both databases, are `turn_statements`). A stored turn that cannot be read back
//! is read as an unreadable turn (see [`unreadable_turn`]), never as a failure of its chat.

use hearth_core::{ChatUri, ResponsePart, StopReason, Turn, TurnId, Usage, UserMessage};

use crate::codec::{from_millis, to_json, to_millis};
use crate::error::StoreResult;

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
