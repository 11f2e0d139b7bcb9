//! The audit log's statements, written once for both databases (numbered `$N`
//! parameters, which SQLite and PostgreSQL share). Only the lock an append takes is each
//! database's own (the store's `AUDIT_LOCK` inside its `write_transaction`: SQLite's
//! `BEGIN IMMEDIATE`, PostgreSQL's table lock).

use crate::audit::{
    AUDIT_GENESIS_HASH, AuditDraft, AuditKeyUse, AuditQuery, AuditRecord, AuditSealer, COLUMNS,
    UnauditedApply,
};
use crate::codec::{from_millis, limit_clause, to_millis};
use crate::error::StoreResult;
use crate::postgres::PgStore;
use crate::rows::decode_audit;
use crate::sqlite::SqliteStore;

/// The `_impl` methods `audit_store_by_impls` wires into `AuditStore` (all but
/// `database_file_impl`), for a store type with a `pool`, `error`, `write_transaction`,
/// `AUDIT_LOCK` and `BYTE_ORDER`, on the database `$db`.
macro_rules! audit_statements {
    ($store:ty, $db:ty) => {
        impl $store {
    /// Appends `entry` to the log in a write transaction of its own, holding the store's
    /// `AUDIT_LOCK`.
    pub(crate) async fn append_audit_impl(
        &self,
        entry: &AuditDraft,
        sealer: &dyn AuditSealer,
    ) -> StoreResult<AuditRecord> {
        let mut transaction = self.write_transaction().await?;
        if let Some(lock) = Self::AUDIT_LOCK {
            sqlx::query(lock)
                .execute(&mut *transaction)
                .await
                .map_err(|e| self.error(e))?;
        }
        let record = self.append_locked(&mut transaction, entry, sealer).await?;
        transaction.commit().await.map_err(|e| self.error(e))?;
        Ok(record)
    }

    /// Appends `entry` after the last row, inside a transaction that holds the log's write
    /// lock, so that no other append links to the same row.
    pub(crate) async fn append_locked(
        &self,
        transaction: &mut sqlx::Transaction<'_, $db>,
        entry: &AuditDraft,
        sealer: &dyn AuditSealer,
    ) -> StoreResult<AuditRecord> {
        let last: Option<(i64, String)> =
            sqlx::query_as("SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1")
                .fetch_optional(&mut **transaction)
                .await
                .map_err(|e| self.error(e))?;
        let (seq, prev_hash) = match last {
            Some((seq, hash)) => (seq + 1, hash),
            None => (1, AUDIT_GENESIS_HASH.to_owned()),
        };
        let mut record = AuditRecord {
            seq,
            entry: entry.clone(),
            prev_hash,
            key_id: Some(sealer.key_id().to_owned()),
            hash: String::new(),
        };
        record.hash = sealer.seal(&record);
        let sql = format!(
            "INSERT INTO audit_log ({COLUMNS})
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
        );
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(record.seq)
            .bind(to_millis(&entry.at))
            .bind(&entry.actor)
            .bind(&entry.kind)
            .bind(entry.tool.as_deref())
            .bind(entry.argument_hash.as_deref())
            .bind(entry.proposal_id.as_deref())
            .bind(&entry.decision)
            .bind(&entry.outcome)
            .bind(entry.detail.as_deref())
            .bind(&record.prev_hash)
            .bind(record.key_id.as_deref())
            .bind(&record.hash)
            .execute(&mut **transaction)
            .await
            .map_err(|e| self.error(e))?;
        Ok(record)
    }

    pub(crate) async fn unaudited_applies_impl(
        &self,
        limit: u32,
    ) -> StoreResult<Vec<UnauditedApply>> {
        let sql = format!(
            "SELECT id, applied_at FROM proposals
             WHERE status = 'applied'
               AND NOT EXISTS (
                   SELECT 1 FROM audit_log
                   WHERE audit_log.proposal_id = proposals.id
                     AND audit_log.decision = 'applied'
                     AND audit_log.kind = 'proposal')
             ORDER BY applied_at, id{}{}",
            Self::BYTE_ORDER,
            limit_clause(i64::from(limit.max(1)))
        );
        let rows: Vec<(String, Option<i64>)> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        rows.into_iter()
            .map(|(proposal_id, applied_at)| {
                Ok(UnauditedApply {
                    proposal_id,
                    applied_at: applied_at.map(from_millis).transpose()?,
                })
            })
            .collect()
    }

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
        sql.push_str(" ORDER BY seq DESC");
        sql.push_str(&limit_clause(i64::from(query.limit.clamp(1, 100_000))));
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
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        rows.iter().map(decode_audit).collect()
    }

    pub(crate) async fn audit_after_impl(&self, after: i64, limit: u32) -> StoreResult<Vec<AuditRecord>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM audit_log WHERE seq > $1 ORDER BY seq{}",
            limit_clause(i64::from(limit.max(1)))
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(after)
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

audit_statements!(SqliteStore, sqlx::Sqlite);
audit_statements!(PgStore, sqlx::Postgres);
