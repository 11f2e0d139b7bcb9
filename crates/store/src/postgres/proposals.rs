//! Proposals on PostgreSQL: what only PostgreSQL does (the statements both databases
//! share are in `proposal_statements`).

use futures::future::BoxFuture;
use hearth_core::{ProposalId, Timestamp};

use super::PgStore;
use crate::error::StoreResult;
use crate::prefixes::{range_end, valid_prefix};
use crate::proposals::{
    COLUMNS, ProposalPage, ProposalQuery, ProposalRecord, ProposalStatus, ProposalStore,
};
use crate::rows::decode_proposal;

impl PgStore {
    /// Proposals whose id starts with `prefix`, in id order; at most `max`.
    pub async fn proposals_with_id_prefix(
        &self,
        prefix: &str,
        max: u32,
    ) -> StoreResult<Vec<ProposalRecord>> {
        if !valid_prefix(prefix) {
            return Ok(Vec::new());
        }
        // Byte order (COLLATE "C"), as SQLite compares text, so the range is a prefix's.
        let sql = format!(
            "SELECT {COLUMNS} FROM proposals
             WHERE id COLLATE \"C\" >= $1 AND id COLLATE \"C\" < $2
             ORDER BY id COLLATE \"C\" LIMIT $3"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(prefix)
            .bind(range_end(prefix))
            .bind(i64::from(max.clamp(1, 500)))
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        rows.iter().map(decode_proposal).collect()
    }
}

crate::proposals::proposal_store_by_impls!(PgStore);
