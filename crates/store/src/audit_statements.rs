//! The audit log's reads, written once for both databases (numbered `$N` parameters,
//! which SQLite and PostgreSQL share). Appending stays each database's own: it takes the
//! log's write lock its own way (SQLite's `BEGIN IMMEDIATE`, PostgreSQL's table lock).

use crate::audit::{AuditKeyUse, AuditQuery, AuditRecord, COLUMNS};
use crate::error::StoreResult;
use crate::postgres::PgStore;
use crate::rows::decode_audit;
use crate::sqlite::SqliteStore;

/// The reads' `_impl` methods `audit_store_by_impls` wires into `AuditStore`, for a
/// store type with a `pool` and `error`.
macro_rules! audit_statements {
    ($store:ty) => {
        impl $store {
    pub(crate) async fn audit_page_impl(&self, query: &AuditQuery) -> StoreResult<Vec<AuditRecord>> {
        let mut next = 0;
        let mut parameter = || {
            next += 1;
            format!("${next}")
        };
        let mut sql = format!("SELECT {COLUMNS} FROM audit_log WHERE 1 = 1");
        if query.before.is_some() {
            sql.push_str(&format!(" AND seq < {}", parameter()));
        }
        if query.actor.is_some() {
            sql.push_str(&format!(" AND actor = {}", parameter()));
        }
        if query.tool.is_some() {
            sql.push_str(&format!(" AND tool = {}", parameter()));
        }
        sql.push_str(&format!(" ORDER BY seq DESC LIMIT {}", parameter()));
        let mut statement = sqlx::query(sqlx::AssertSqlSafe(sql));
        if let Some(before) = query.before {
            statement = statement.bind(before);
        }
        if let Some(actor) = &query.actor {
            statement = statement.bind(actor.clone());
        }
        if let Some(tool) = &query.tool {
            statement = statement.bind(tool.clone());
        }
        let rows = statement
            .bind(i64::from(query.limit.clamp(1, 100_000)))
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        rows.iter().map(decode_audit).collect()
    }

    pub(crate) async fn audit_after_impl(&self, after: i64, limit: u32) -> StoreResult<Vec<AuditRecord>> {
        let sql = format!("SELECT {COLUMNS} FROM audit_log WHERE seq > $1 ORDER BY seq LIMIT $2");
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(after)
            .bind(i64::from(limit.max(1)))
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        rows.iter().map(decode_audit).collect()
    }

    pub(crate) async fn last_keyed_audit_impl(&self) -> StoreResult<Option<AuditKeyUse>> {
        let row: Option<(i64, String)> = sqlx::query_as(
            "SELECT seq, key_id FROM audit_log WHERE key_id IS NOT NULL ORDER BY seq DESC LIMIT 1",
        )
        .fetch_optional(&self.pool)
        .await
        .map_err(|e| self.error(e))?;
        Ok(row.map(|(seq, key_id)| AuditKeyUse { seq, key_id }))
    }

        }
    };
}

audit_statements!(SqliteStore);
audit_statements!(PgStore);
