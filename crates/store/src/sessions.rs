//! The session registry: create, discover, list, update, delete (tombstone).

use hearth_core::{Provenance, SessionUri, now};
use sqlx::Connection;

use crate::codec::to_millis;
use crate::erase::{Deletion, ProposalOwner, erase_proposals};
use crate::error::{StoreError, StoreResult};
pub(crate) use crate::rows::decode_session;
use crate::sqlite::SqliteStore;
use crate::store::{NewSession, Registration, ScopeFilter, SessionQuery};

pub(crate) const SESSION_COLUMNS: &str = "id, uri, provider, title, provenance, source, project_id, model, \
     working_directories, started_at, updated_at, pinned, archived, owner, team";

/// Working directories as stored: a JSON array of paths, or NULL for none.
pub(crate) fn encode_directories(directories: &[std::path::PathBuf]) -> Option<String> {
    if directories.is_empty() {
        return None;
    }
    let paths: Vec<String> = directories
        .iter()
        .map(|directory| directory.to_string_lossy().into_owned())
        .collect();
    serde_json::to_string(&paths).ok()
}

pub(crate) fn decode_directories(text: Option<String>) -> StoreResult<Vec<std::path::PathBuf>> {
    let Some(text) = text else {
        return Ok(Vec::new());
    };
    let paths: Vec<String> = serde_json::from_str(&text).map_err(|error| StoreError::Decode {
        what: "working directories",
        detail: format!("{error} in `{text}`"),
    })?;
    Ok(paths.into_iter().map(std::path::PathBuf::from).collect())
}

pub(crate) fn provenance_text(provenance: Provenance) -> &'static str {
    match provenance {
        Provenance::Hearth => "hearth",
        Provenance::External => "external",
    }
}

/// The condition that keeps a viewer's sessions (of the table `sessions`): their own, and
/// those shared with a team they are in; never one without an owner. Every `?` is the
/// viewer's id.
pub(crate) const VIEWER_FILTER: &str = " AND sessions.owner IS NOT NULL AND (sessions.owner = ? \
     OR sessions.team IN (SELECT m.team FROM team_members m WHERE m.user_id = ?))";

/// The `AND …` conditions of a listing's filters, numbered from `$1` in binding order (a
/// viewer's id is one value used twice), and the next free number. `like` is the
/// database's case-insensitive `LIKE`: SQLite's `LIKE` ignores the case of ASCII letters,
/// PostgreSQL's `ILIKE` that of every letter.
pub(crate) fn session_filters(query: &SessionQuery, like: &str) -> (String, usize) {
    let mut sql = String::new();
    let mut next = 1;
    let mut parameter = |sql: &mut String, condition: &str| {
        sql.push_str(&condition.replace('?', &format!("${next}")));
        next += 1;
    };
    match &query.scope {
        ScopeFilter::Any => {}
        ScopeFilter::Global => sql.push_str(" AND project_id IS NULL"),
        ScopeFilter::Project(_) => parameter(&mut sql, " AND project_id = ?"),
    }
    if query.provider.is_some() {
        parameter(&mut sql, " AND provider = ?");
    }
    if query.provenance.is_some() {
        parameter(&mut sql, " AND provenance = ?");
    }
    if query.title_contains.is_some() {
        parameter(&mut sql, &format!(r" AND title {like} ? ESCAPE '\'"));
    }
    if let Some(pinned) = query.pinned {
        sql.push_str(if pinned {
            " AND pinned = 1"
        } else {
            " AND pinned = 0"
        });
    }
    if let Some(archived) = query.archived {
        sql.push_str(if archived {
            " AND archived = 1"
        } else {
            " AND archived = 0"
        });
    }
    if query.viewer.is_some() {
        parameter(&mut sql, VIEWER_FILTER);
    }
    (sql, next)
}

pub(crate) fn encode_cursor(updated_at: i64, id: i64) -> String {
    format!("{updated_at}.{id}")
}

pub(crate) fn decode_cursor(cursor: &str) -> StoreResult<(i64, i64)> {
    cursor
        .split_once('.')
        .and_then(|(time, id)| Some((time.parse().ok()?, id.parse().ok()?)))
        .ok_or_else(|| StoreError::Decode {
            what: "cursor",
            detail: format!("`{cursor}` is not a cursor from a previous page"),
        })
}

impl SqliteStore {
    pub(crate) async fn create_session_impl(&self, session: &NewSession) -> StoreResult<()> {
        let mut connection = self.pool.acquire().await.map_err(|e| self.error(e))?;
        let mut transaction = connection
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(|e| self.error(e))?;
        let uri = session.summary.uri.to_string();
        let live: Option<(Option<i64>, bool)> =
            sqlx::query_as("SELECT deleted_at, trashed FROM sessions WHERE uri = ?")
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
            Some((Some(_), true)) => {
                return Err(StoreError::Conflict(format!(
                    "session {uri} is in the trash; restore it with `hearth trash restore`"
                )));
            }
            // An explicit create clears a tombstone of the same URI.
            Some((Some(_), false)) => {
                sqlx::query("DELETE FROM sessions WHERE uri = ?")
                    .bind(&uri)
                    .execute(&mut *transaction)
                    .await
                    .map_err(|e| self.error(e))?;
            }
            None => {}
        }
        Self::insert_session_rows(&mut transaction, session)
            .await
            .map_err(|e| self.error(e))?;
        transaction.commit().await.map_err(|e| self.error(e))
    }

    pub(crate) async fn register_discovered_impl(
        &self,
        session: &NewSession,
    ) -> StoreResult<Registration> {
        let mut connection = self.pool.acquire().await.map_err(|e| self.error(e))?;
        let mut transaction = connection
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(|e| self.error(e))?;
        let existing: Option<Option<i64>> =
            sqlx::query_scalar("SELECT deleted_at FROM sessions WHERE uri = ?")
                .bind(session.summary.uri.to_string())
                .fetch_optional(&mut *transaction)
                .await
                .map_err(|e| self.error(e))?;
        let outcome = match existing {
            Some(Some(_)) => Registration::Tombstoned,
            Some(None) => Registration::AlreadyKnown,
            None => {
                Self::insert_session_rows(&mut transaction, session)
                    .await
                    .map_err(|e| self.error(e))?;
                Registration::Added
            }
        };
        transaction.commit().await.map_err(|e| self.error(e))?;
        Ok(outcome)
    }

    pub(crate) async fn delete_session_impl(&self, uri: &SessionUri) -> StoreResult<bool> {
        let mut deletion = self.begin_deletion().await?;
        let Some(id) = self.live_session_id(&mut deletion, uri).await? else {
            return Ok(false);
        };
        self.erase_session(deletion, id, uri, to_millis(&now()))
            .await?;
        Ok(true)
    }

    /// The row id of the live (not deleted, not trashed) session `uri`.
    pub(crate) async fn live_session_id(
        &self,
        connection: &mut sqlx::SqliteConnection,
        uri: &SessionUri,
    ) -> StoreResult<Option<i64>> {
        sqlx::query_scalar("SELECT id FROM sessions WHERE uri = ? AND deleted_at IS NULL")
            .bind(uri.to_string())
            .fetch_optional(&mut *connection)
            .await
            .map_err(|e| self.error(e))
    }

    /// Removes session `id`'s content in `deletion` (see [`Self::erase_session_rows`]),
    /// commits it, then erases what was removed (see `erase`).
    pub(crate) async fn erase_session(
        &self,
        mut deletion: Deletion,
        id: i64,
        uri: &SessionUri,
        at: i64,
    ) -> StoreResult<()> {
        Self::erase_session_rows(&mut deletion, id, uri, at)
            .await
            .map_err(|e| self.error(e))?;
        self.commit_deletion(deletion).await
    }

    /// Removes a session's content — chats, turns, drafts, provider data, title and the
    /// other descriptions, its proposals' text — leaving a tombstone deleted at `at`
    /// (inside the deletion's transaction; `erase_removed` follows the commit).
    pub(crate) async fn erase_session_rows(
        transaction: &mut sqlx::SqliteConnection,
        id: i64,
        uri: &SessionUri,
        at: i64,
    ) -> Result<(), sqlx::Error> {
        sqlx::query("DELETE FROM chats WHERE session_id = ?")
            .bind(id)
            .execute(&mut *transaction)
            .await?;
        sqlx::query(
            "UPDATE sessions SET deleted_at = COALESCE(deleted_at, ?), trashed = 0, title = NULL,
                    model = NULL, project_id = NULL, working_directories = NULL
             WHERE id = ?",
        )
        .bind(at)
        .bind(id)
        .execute(&mut *transaction)
        .await?;
        erase_proposals(transaction, ProposalOwner::Session(uri), at).await?;
        Ok(())
    }
}

/// A `LIKE ? ESCAPE '\'` pattern matching text that contains `text` literally.
pub(crate) fn like_pattern(text: &str) -> String {
    format!("%{}%", escape_like(text))
}

/// `text` with the `LIKE` wildcards (and the escape) escaped by a backslash.
pub(crate) fn escape_like(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len() + 2);
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_reject_junk() {
        assert_eq!(decode_cursor(&encode_cursor(17, 4)).unwrap(), (17, 4));
        assert!(decode_cursor("nope").is_err());
        assert!(decode_cursor("1.x").is_err());
    }
}
