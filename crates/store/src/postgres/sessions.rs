//! Chats found by a prefix of their id, and proposals changed since a time, on
//! PostgreSQL (what sessions and chats share with SQLite is `catalog_statements`,
//! `row_statements` and `trash_statements`).

use hearth_core::{CHAT_SCHEME, DEFAULT_CHAT_ID, Timestamp};

use super::PgStore;
use crate::codec::{from_millis, to_millis};
use crate::error::StoreResult;
use crate::prefixes::{limit, valid_prefix};
use crate::rows::{CHAT_COLUMNS, decode_chat};
use crate::store::ChatRecord;

impl PgStore {
    pub(crate) async fn chats_with_id_prefix_impl(
        &self,
        prefix: &str,
        max: u32,
    ) -> StoreResult<Vec<ChatRecord>> {
        if !valid_prefix(prefix) {
            return Ok(Vec::new());
        }
        // A chat URI has exactly two `/`: the chat id is what follows the second.
        let sql = format!(
            "SELECT {CHAT_COLUMNS}
             FROM chats c JOIN sessions s ON s.id = c.session_id
             WHERE split_part(c.uri, '/', 3) LIKE $1 ESCAPE '\\' AND split_part(c.uri, '/', 3) <> $2
               AND starts_with(c.uri, $3) AND s.deleted_at IS NULL
             ORDER BY c.updated_at DESC LIMIT $4"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(format!("{}%", prefix.replace('_', "\\_")))
            .bind(DEFAULT_CHAT_ID)
            .bind(CHAT_SCHEME)
            .bind(limit(max))
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        rows.iter().map(decode_chat).collect()
    }

    pub(crate) async fn proposals_changed_after_impl(
        &self,
        after: Timestamp,
    ) -> StoreResult<Vec<(String, Timestamp)>> {
        let rows: Vec<(String, i64)> = sqlx::query_as(
            "SELECT id, updated_at FROM proposals WHERE updated_at >= $1
             ORDER BY updated_at LIMIT 500",
        )
        .bind(to_millis(&after))
        .fetch_all(&self.pool)
        .await
        .map_err(|e| self.error(e))?;
        rows.into_iter()
            .map(|(id, at)| Ok((id, from_millis(at)?)))
            .collect()
    }
}
