//! Reading a chat's turns, written once for both databases (numbered parameters, and
//! `string_agg`, which SQLite and PostgreSQL share). A body is read as bytes (the store's
//! `BODY_BYTES`), so that one that is not even text still reads as an unreadable turn.
//! Writing turns stays each database's own: each numbers a chat's turns under its own
//! lock.

use hearth_core::{ChatUri, Turn, TurnId};
use sqlx::Row;

use crate::codec::from_json;
use crate::error::{StoreError, StoreResult};
use crate::postgres::PgStore;
use crate::sqlite::SqliteStore;
use crate::store::TurnPage;
use crate::turns::{StoredTurn, UnreadRow, read_turn};

macro_rules! turn_statements {
    ($store:ty, $row:ty, $connection:ty) => {
        impl $store {
            /// The chat's row id; with `lock`, locked for this transaction where the
            /// database locks rows (the store's `FOR_UPDATE`), so that one chat's turns are
            /// numbered by one writer at a time.
            pub(crate) async fn chat_id(
                &self,
                connection: &mut $connection,
                chat: &ChatUri,
                lock: bool,
            ) -> StoreResult<i64> {
                let lock = if lock { Self::FOR_UPDATE } else { "" };
                let sql = format!("SELECT id FROM chats WHERE uri = $1{lock}");
                sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                    .bind(chat.to_string())
                    .fetch_optional(&mut *connection)
                    .await
                    .map_err(|e| self.error(e))?
                    .ok_or_else(|| StoreError::NotFound {
                        what: "chat",
                        key: chat.to_string(),
                    })
            }

            /// A chat's turns as one JSON array the database joins; read one by one (each
            /// that cannot be read becomes an unreadable turn) when the array does not
            /// decode.
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
                    Err(_) => self.turns_one_by_one(chat).await,
                }
            }

            async fn turns_one_by_one(&self, chat: &ChatUri) -> StoreResult<Vec<Turn>> {
                let sql = format!(
                    "SELECT seq, turn_id, {} AS body, started_at FROM turns
                     WHERE chat_id = (SELECT id FROM chats WHERE uri = $1) ORDER BY seq",
                    Self::BODY_BYTES
                );
                let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
                    .bind(chat.to_string())
                    .fetch_all(&self.pool)
                    .await
                    .map_err(|e| self.error(e))?;
                rows.iter()
                    .map(|row| Ok(read_turn(chat, &Self::unread_row(chat, row)?)))
                    .collect()
            }

            /// A page of a chat's turns: the `limit` just before `before` (the newest
            /// when absent), oldest first. Reads `limit + 1` rows by the
            /// `(chat_id, seq)` key, however long the chat is; a turn that cannot be read
            /// is in its place as an unreadable turn.
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
                    Some(turn) => sqlx::query_scalar(
                        "SELECT seq FROM turns WHERE chat_id = $1 AND turn_id = $2",
                    )
                    .bind(chat_id)
                    .bind(turn.as_str())
                    .fetch_optional(&mut *connection)
                    .await
                    .map_err(|e| self.error(e))?
                    .ok_or_else(|| StoreError::NotFound {
                        what: "turn",
                        key: turn.to_string(),
                    })?,
                };
                let sql = format!(
                    "SELECT seq, turn_id, {} AS body, started_at FROM turns
                     WHERE chat_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3",
                    Self::BODY_BYTES
                );
                let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
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
                    .map(|row| Ok(read_turn(chat, &Self::unread_row(chat, row)?)))
                    .collect::<StoreResult<Vec<_>>>()?;
                Ok(TurnPage { turns, has_more })
            }

            /// A stored turn's columns, each that cannot be read left empty (its
            /// position must be there).
            fn unread_row(chat: &ChatUri, row: &$row) -> StoreResult<UnreadRow> {
                let optional =
                    |column: &str| row.try_get::<Option<String>, _>(column).ok().flatten();
                Ok(UnreadRow {
                    seq: row.try_get("seq").map_err(|error| StoreError::Decode {
                        what: "turn",
                        detail: format!("{error} (chat {chat})"),
                    })?,
                    turn_id: optional("turn_id").unwrap_or_default(),
                    body: row
                        .try_get::<Option<Vec<u8>>, _>("body")
                        .ok()
                        .flatten()
                        .unwrap_or_default(),
                    started_at: row
                        .try_get::<Option<i64>, _>("started_at")
                        .ok()
                        .flatten()
                        .unwrap_or_default(),
                })
            }
        }
    };
}

turn_statements!(SqliteStore, sqlx::sqlite::SqliteRow, sqlx::SqliteConnection);
turn_statements!(PgStore, sqlx::postgres::PgRow, sqlx::PgConnection);
