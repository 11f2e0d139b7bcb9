//! A session as a lossless JSON Lines archive, from PostgreSQL: the same records as the
//! SQLite store writes (see `crate::archive`), so either store's archive imports into the
//! other.

use hearth_core::SessionUri;
use serde_json::json;
use sqlx::Row as _;
use sqlx::postgres::PgRow;

use super::PgStore;
use crate::archive::{Lines, header, row_json};
use crate::error::{StoreError, StoreResult};

impl PgStore {
    async fn rows_by(&self, sql: &'static str, key: &str) -> StoreResult<Vec<PgRow>> {
        sqlx::query(sql)
            .bind(key.to_owned())
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.error(e))
    }

    pub(crate) async fn archive_session_impl(&self, uri: &SessionUri) -> StoreResult<String> {
        let uri = uri.to_string();
        let sessions = self
            .rows_by(
                "SELECT * FROM sessions WHERE uri = $1 AND deleted_at IS NULL",
                &uri,
            )
            .await?;
        let Some(session) = sessions.first() else {
            return Err(StoreError::NotFound {
                what: "session",
                key: uri,
            });
        };
        let mut out = Vec::new();
        let mut lines = Lines::new(&mut out);
        header(&mut lines)?;
        let projects = self
            .rows_by(
                "SELECT * FROM projects WHERE id = (SELECT project_id FROM sessions WHERE uri = $1)",
                &uri,
            )
            .await?;
        for project in &projects {
            lines.record(&json!({ "type": "project", "row": row_json(project, true)? }))?;
        }
        lines.record(&json!({ "type": "session", "row": row_json(session, false)? }))?;
        let chats = self
            .rows_by(
                "SELECT c.* FROM chats c JOIN sessions s ON s.id = c.session_id
                 WHERE s.uri = $1 ORDER BY c.position, c.uri",
                &uri,
            )
            .await?;
        for chat in &chats {
            let chat_uri: String = chat.try_get("uri").map_err(|e| self.error(e))?;
            lines.record(
                &json!({ "type": "chat", "session": uri, "row": row_json(chat, false)? }),
            )?;
            let turns = self
                .rows_by(
                    "SELECT t.* FROM turns t JOIN chats c ON c.id = t.chat_id
                     WHERE c.uri = $1 ORDER BY t.seq",
                    &chat_uri,
                )
                .await?;
            for turn in &turns {
                lines.record(
                    &json!({ "type": "turn", "chat": chat_uri, "row": row_json(turn, false)? }),
                )?;
            }
            let backings = self
                .rows_by(
                    "SELECT * FROM chat_backings WHERE chat_uri = $1 ORDER BY provider, backing",
                    &chat_uri,
                )
                .await?;
            for backing in &backings {
                lines.record(&json!({ "type": "backing", "row": row_json(backing, true)? }))?;
            }
        }
        let proposals = self
            .rows_by(
                "SELECT * FROM proposals WHERE session_uri = $1 ORDER BY id",
                &uri,
            )
            .await?;
        for proposal in &proposals {
            lines.record(&json!({ "type": "proposal", "row": row_json(proposal, true)? }))?;
        }
        lines.end()?;
        String::from_utf8(out)
            .map_err(|error| StoreError::Archive(format!("the archive is not UTF-8: {error}")))
    }
}
