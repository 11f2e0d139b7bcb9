//! Erasing what a deletion removes, so that it cannot be read back from the database file
//! or its write-ahead log: every connection runs with `secure_delete` (removed rows are
//! overwritten with zeros, not left in free space), a deleted session's or chat's
//! proposals lose their text, and each deletion ends with a checkpoint that copies the
//! log into the file and truncates it (the log still holds the pages as they were before
//! the deletion until then). Content removed before this version did not overwrite its
//! free space: the first deletion after upgrading rebuilds the file once (`VACUUM`).
//! On PostgreSQL, a deletion removes the rows and erases the proposals' text the same way;
//! the server reclaims the space.

use hearth_core::{ChatUri, SessionUri};

use crate::error::StoreResult;
use crate::postgres::PgStore;
use crate::sqlite::SqliteStore;

/// What an erased proposal's summary, diff and payload (and its reason, outcome or error,
/// where it had one) read afterwards.
pub const ERASED_TEXT: &str = "(erased with its session)";

/// The chore migration 7 leaves for the first deletion: rebuild the file once.
const SCRUB_CHORE: &str = "scrub_free_space";

/// Whose proposals to erase.
pub(crate) enum ProposalOwner<'a> {
    /// Every proposal staged in the session.
    Session(&'a SessionUri),
    /// Every proposal staged in one chat.
    Chat(&'a ChatUri),
}

/// The statements of a deletion both databases share (numbered `$N` parameters), run
/// inside its write transaction, on its connection (`$connection`).
macro_rules! erase_statements {
    ($store:ty, $connection:ty) => {
        impl $store {
            /// The row id of the live (not deleted, not trashed) session `uri`, held for
            /// the transaction where the database locks rows.
            pub(crate) async fn live_session_id(
                &self,
                connection: &mut $connection,
                uri: &SessionUri,
            ) -> StoreResult<Option<i64>> {
                let sql = format!(
                    "SELECT id FROM sessions WHERE uri = $1 AND deleted_at IS NULL{}",
                    Self::FOR_UPDATE
                );
                sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                    .bind(uri.to_string())
                    .fetch_optional(&mut *connection)
                    .await
                    .map_err(|e| self.error(e))
            }

            /// Removes a session's content — chats, turns, drafts, provider data, title
            /// and the other descriptions, its proposals' text — leaving a tombstone
            /// deleted at `at` (the store's `commit_deletion` follows).
            pub(crate) async fn erase_session_rows(
                connection: &mut $connection,
                id: i64,
                uri: &SessionUri,
                at: i64,
            ) -> Result<(), sqlx::Error> {
                sqlx::query("DELETE FROM chats WHERE session_id = $1")
                    .bind(id)
                    .execute(&mut *connection)
                    .await?;
                sqlx::query(
                    "UPDATE sessions SET deleted_at = COALESCE(deleted_at, $1), trashed = 0, title = NULL,
                            model = NULL, project_id = NULL, working_directories = NULL
                     WHERE id = $2",
                )
                .bind(at)
                .bind(id)
                .execute(&mut *connection)
                .await?;
                Self::erase_proposals(connection, ProposalOwner::Session(uri), at).await?;
                Ok(())
            }

            /// Erases the text of proposals staged in a deleted session or chat.
            /// Their rows stay, with tool, status, times and payload hash: the audit log
            /// names them, and what was applied, when and by whom stays answerable.
            /// Undecided ones (pending, approved) expire: nothing is left to review or
            /// apply.
            pub(crate) async fn erase_proposals(
                connection: &mut $connection,
                owner: ProposalOwner<'_>,
                at: i64,
            ) -> Result<u64, sqlx::Error> {
                let (column, uri) = match owner {
                    ProposalOwner::Session(session) => ("session_uri", session.to_string()),
                    ProposalOwner::Chat(chat) => ("chat_uri", chat.to_string()),
                };
                let sql = format!(
                    "UPDATE proposals SET summary = $1, diff = $1, payload = $1,
                            reason = CASE WHEN reason IS NULL THEN NULL ELSE $1 END,
                            outcome = CASE WHEN outcome IS NULL THEN NULL ELSE $1 END,
                            error = CASE WHEN error IS NULL THEN NULL ELSE $1 END,
                            status = CASE WHEN status IN ('pending', 'approved') THEN 'expired' ELSE status END,
                            updated_at = CASE WHEN updated_at > $2 THEN updated_at ELSE $2 END
                     WHERE {column} = $3"
                );
                sqlx::query(sqlx::AssertSqlSafe(sql))
                    .bind(ERASED_TEXT)
                    .bind(at)
                    .bind(uri)
                    .execute(&mut *connection)
                    .await
                    .map(|result| result.rows_affected())
            }
        }
    };
}

erase_statements!(SqliteStore, sqlx::SqliteConnection);
erase_statements!(PgStore, sqlx::PgConnection);

impl SqliteStore {
    /// Commits a deletion, then erases what it removed ([`Self::erase_removed`]).
    pub(crate) async fn commit_deletion(
        &self,
        deletion: sqlx::Transaction<'static, sqlx::Sqlite>,
    ) -> StoreResult<()> {
        deletion.commit().await.map_err(|e| self.error(e))?;
        self.erase_removed().await
    }

    /// After a deletion committed: rebuilds the file if content removed before this
    /// version may still sit in its free space (once), then checkpoints and truncates the
    /// write-ahead log. The deletion stands whatever happens here; what could not be done
    /// is logged, and done by the next deletion (or when the last connection closes).
    pub(crate) async fn erase_removed(&self) -> StoreResult<()> {
        let mut connection = self.pool.acquire().await.map_err(|e| self.error(e))?;
        let chore: Option<String> =
            sqlx::query_scalar("SELECT chore FROM store_chores WHERE chore = ?")
                .bind(SCRUB_CHORE)
                .fetch_optional(&mut *connection)
                .await
                .map_err(|e| self.error(e))?;
        if chore.is_some() {
            tracing::info!(
                path = %self.path().display(),
                "rebuilding the database once, so that nothing deleted before this version can be read back"
            );
            match sqlx::query("VACUUM").execute(&mut *connection).await {
                Ok(_) => {
                    sqlx::query("DELETE FROM store_chores WHERE chore = ?")
                        .bind(SCRUB_CHORE)
                        .execute(&mut *connection)
                        .await
                        .map_err(|e| self.error(e))?;
                }
                Err(error) => tracing::warn!(
                    path = %self.path().display(),
                    error = %self.error(error),
                    "could not rebuild the database; content deleted by an older Hearth may remain in its free space until the next deletion"
                ),
            }
        }
        let checkpoint: Result<(i64, i64, i64), sqlx::Error> =
            sqlx::query_as("PRAGMA wal_checkpoint(TRUNCATE)")
                .fetch_one(&mut *connection)
                .await;
        match checkpoint {
            Ok((0, _, _)) => {}
            Ok((_busy, _, _)) => tracing::warn!(
                path = %self.path().display(),
                "another process kept reading the database, so what was deleted stays in its write-ahead log until the next checkpoint"
            ),
            Err(error) => tracing::warn!(
                path = %self.path().display(),
                error = %self.error(error),
                "could not checkpoint the database; what was deleted stays in its write-ahead log until the next checkpoint"
            ),
        }
        Ok(())
    }
}
