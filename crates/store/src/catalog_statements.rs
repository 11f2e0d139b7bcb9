//! Sessions and chats made and removed, written once for both databases (numbered `$N`
//! parameters). Each write runs in the store's `write_transaction`, holds the rows it
//! reads and writes back (`FOR_UPDATE`), is announced to other nodes where the database
//! announces changes (`announce`), and a deletion ends with the store's `commit_deletion`
//! (on SQLite, it also erases what was removed: see `erase`).

use hearth_core::{ChatUri, SessionUri, now};

use crate::codec::to_millis;
use crate::erase::ProposalOwner;
use crate::error::{StoreError, StoreResult};
use crate::postgres::PgStore;
use crate::rows::{CHAT_COLUMNS, decode_chat};
use crate::sqlite::SqliteStore;
use crate::store::{ChatRecord, NewSession, Registration};
use crate::stores::Change;

macro_rules! catalog_statements {
    ($store:ty) => {
        impl $store {
            /// Creates a session with its default chat. Refuses a live session or one in
            /// the trash with the same URI; clears a tombstone of it.
            pub(crate) async fn create_session_impl(
                &self,
                session: &NewSession,
            ) -> StoreResult<()> {
                let uri = session.summary.uri.to_string();
                let mut transaction = self.write_transaction().await?;
                let sql = format!(
                    "SELECT deleted_at, trashed FROM sessions WHERE uri = $1{}",
                    Self::FOR_UPDATE
                );
                let live: Option<(Option<i64>, i64)> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
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
                    // A session in the trash is kept until the trash is emptied.
                    Some((Some(_), 1)) => {
                        return Err(StoreError::Conflict(format!(
                            "session {uri} is in the trash; restore it with `hearth trash restore`"
                        )));
                    }
                    // An explicit create clears a tombstone of the same URI.
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

            /// Registers a session an agent made, unless it is known (or was deleted).
            pub(crate) async fn register_discovered_impl(
                &self,
                session: &NewSession,
            ) -> StoreResult<Registration> {
                let mut transaction = self.write_transaction().await?;
                let existing: Option<Option<i64>> =
                    sqlx::query_scalar("SELECT deleted_at FROM sessions WHERE uri = $1")
                        .bind(session.summary.uri.to_string())
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

            /// Erases a live session, leaving a tombstone. Returns whether there was one.
            pub(crate) async fn delete_session_impl(&self, uri: &SessionUri) -> StoreResult<bool> {
                let mut deletion = self.write_transaction().await?;
                let Some(id) = self.live_session_id(&mut deletion, uri).await? else {
                    return Ok(false);
                };
                Self::erase_session_rows(&mut deletion, id, uri, to_millis(&now()))
                    .await
                    .map_err(|e| self.error(e))?;
                self.commit_deletion(deletion).await?;
                Ok(true)
            }

            /// A session's chats, in their order.
            pub(crate) async fn chats_impl(
                &self,
                session: &SessionUri,
            ) -> StoreResult<Vec<ChatRecord>> {
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

            /// Adds a chat after its session's others.
            pub(crate) async fn insert_chat_impl(&self, chat: &ChatRecord) -> StoreResult<()> {
                let session = chat.summary.uri.session();
                let mut transaction = self.write_transaction().await?;
                // The session's row lock orders chats added to one session at once.
                let Some(session_id) = self.live_session_id(&mut transaction, &session).await?
                else {
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

            /// Deletes a chat with its turns, draft and provider data, and erases its
            /// proposals' text.
            pub(crate) async fn delete_chat_impl(&self, chat: &ChatUri) -> StoreResult<()> {
                let mut deletion = self.write_transaction().await?;
                let deleted = sqlx::query("DELETE FROM chats WHERE uri = $1")
                    .bind(chat.to_string())
                    .execute(&mut *deletion)
                    .await
                    .map_err(|e| self.error(e))?
                    .rows_affected();
                Self::erase_proposals(&mut deletion, ProposalOwner::Chat(chat), to_millis(&now()))
                    .await
                    .map_err(|e| self.error(e))?;
                if deleted == 0 {
                    return deletion.commit().await.map_err(|e| self.error(e));
                }
                self.commit_deletion(deletion).await
            }
        }
    };
}

catalog_statements!(SqliteStore);
catalog_statements!(PgStore);
