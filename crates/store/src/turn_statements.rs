//! A chat's turns, read and written by statements written once for both databases
//! (numbered parameters, and `string_agg`, which SQLite and PostgreSQL share). A body is
//! read as bytes (the store's `BODY_BYTES`), so that one that is not even text still reads
//! as an unreadable turn. A write numbers a chat's turns inside the store's
//! `write_transaction`, holding the chat's row (`FOR_UPDATE`), and is announced to other
//! nodes where the database announces changes (`announce`, `announcing`).

use hearth_core::{ChatUri, Turn, TurnId, now};
use sqlx::Row;

use crate::codec::{from_json, limit_clause, to_millis};
use crate::error::{StoreError, StoreResult};
use crate::postgres::PgStore;
use crate::sqlite::SqliteStore;
use crate::store::TurnPage;
use crate::stores::Change;
use crate::turns::{StoredTurn, UnreadRow, encode_body, read_turn};

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

            /// Stores the user's message of a new turn (its response still to come) as the
            /// chat's next turn, durably.
            pub(crate) async fn insert_turn_impl(&self, chat: &ChatUri, turn: &Turn) -> StoreResult<()> {
                let body = encode_body(turn)?;
                let mut transaction = self.write_transaction().await?;
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
                sqlx::query(
                    "UPDATE chats SET updated_at = CASE WHEN updated_at > $1 THEN updated_at ELSE $1 END
                     WHERE id = $2",
                )
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

            /// Saves a turn's progress or its end, in one statement (announced in it where
            /// the database announces), on the pool whose writes need not be flushed
            /// before they return.
            pub(crate) async fn save_turn_impl(&self, chat: &ChatUri, turn: &Turn) -> StoreResult<()> {
                let body = encode_body(turn)?;
                let (sql, announcement) = Self::announcing(
                    "UPDATE turns SET running = $1, body = $2, checkpointed_at = $3
                     WHERE chat_id = (SELECT id FROM chats WHERE uri = $4) AND turn_id = $5
                     RETURNING 1",
                    6,
                    &Change::Turn(chat.clone()),
                );
                let mut statement = sqlx::query(sqlx::AssertSqlSafe(sql))
                    .bind(i64::from(turn.stop_reason.is_none()))
                    .bind(body)
                    .bind(to_millis(&now()))
                    .bind(chat.to_string())
                    .bind(turn.id.as_str().to_owned());
                for parameter in announcement {
                    statement = statement.bind(parameter);
                }
                let saved = statement
                    .fetch_optional(&self.relaxed)
                    .await
                    .map_err(|e| self.error(e))?;
                if saved.is_none() {
                    // The chat was disposed or its session deleted while the turn ran.
                    return Err(StoreError::NotFound {
                        what: "turn",
                        key: turn.id.to_string(),
                    });
                }
                Ok(())
            }

            /// Copies `from`'s turns up to `through` into `to` (a fork), each still
            /// running stored as ended `incomplete`; how many were copied.
            pub(crate) async fn copy_turns_impl(
                &self,
                from: &ChatUri,
                to: &ChatUri,
                through: &TurnId,
            ) -> StoreResult<usize> {
                let mut transaction = self.write_transaction().await?;
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
                let last: i64 =
                    sqlx::query_scalar("SELECT seq FROM turns WHERE chat_id = $1 AND turn_id = $2")
                        .bind(source)
                        .bind(through.as_str())
                        .fetch_optional(&mut *transaction)
                        .await
                        .map_err(|e| self.error(e))?
                        .ok_or_else(|| StoreError::NotFound {
                            what: "turn",
                            key: through.to_string(),
                        })?;
                let sql = format!(
                    "INSERT INTO turns (chat_id, seq, turn_id, running, body, started_at, checkpointed_at)
                     SELECT $1, seq, turn_id, 0,
                            CASE WHEN running <> 0 THEN {} ELSE body END,
                            started_at, checkpointed_at
                     FROM turns WHERE chat_id = $2 AND seq <= $3 ORDER BY seq",
                    Self::INCOMPLETE_BODY
                );
                let copied = sqlx::query(sqlx::AssertSqlSafe(sql))
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
                     WHERE chat_id = $1 AND seq < $2 ORDER BY seq DESC{}",
                    Self::BODY_BYTES,
                    limit_clause(i64::from(limit) + 1)
                );
                let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
                    .bind(chat_id)
                    .bind(below)
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
