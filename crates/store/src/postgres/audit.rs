//! The audit log on PostgreSQL (see the SQLite store's `audit`). Nodes sharing one
//! database append to one chain: an append locks the table against other appends
//! (`SHARE ROW EXCLUSIVE`, which readers pass) before it reads the last row, so no two
//! appends link to the same row and the sequence has no gap.

use std::path::Path;

use futures::future::BoxFuture;

use super::PgStore;
use crate::audit::{
    AUDIT_GENESIS_HASH, AuditDraft, AuditKeyUse, AuditQuery, AuditRecord, AuditSealer, AuditStore,
    COLUMNS, UnauditedApply,
};
use crate::codec::{from_millis, to_millis};
use crate::error::StoreResult;

impl PgStore {
    async fn append_audit_impl(
        &self,
        entry: &AuditDraft,
        sealer: &dyn AuditSealer,
    ) -> StoreResult<AuditRecord> {
        let mut transaction = self.pool.begin().await.map_err(|e| self.error(e))?;
        // Held until commit: another node's append waits here, then reads this one's row.
        sqlx::query("LOCK TABLE audit_log IN SHARE ROW EXCLUSIVE MODE")
            .execute(&mut *transaction)
            .await
            .map_err(|e| self.error(e))?;
        let last: Option<(i64, String)> =
            sqlx::query_as("SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1")
                .fetch_optional(&mut *transaction)
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
            .execute(&mut *transaction)
            .await
            .map_err(|e| self.error(e))?;
        transaction.commit().await.map_err(|e| self.error(e))?;
        Ok(record)
    }

    async fn unaudited_applies_impl(&self, limit: u32) -> StoreResult<Vec<UnauditedApply>> {
        let rows: Vec<(String, Option<i64>)> = sqlx::query_as(
            "SELECT id, applied_at FROM proposals
             WHERE status = 'applied'
               AND NOT EXISTS (
                   SELECT 1 FROM audit_log
                   WHERE audit_log.proposal_id = proposals.id
                     AND audit_log.decision = 'applied'
                     AND audit_log.kind = 'proposal')
             ORDER BY applied_at, id COLLATE \"C\"
             LIMIT $1",
        )
        .bind(i64::from(limit.max(1)))
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
}

impl PgStore {
    /// `None`: the log is in the database server, and there is no file beside which to
    /// keep its key and head file (give them to the log explicitly).
    fn database_file_impl(&self) -> Option<&Path> {
        None
    }
}

crate::audit::audit_store_by_impls!(PgStore);
