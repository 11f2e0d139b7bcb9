//! [`ProposalStore`](crate::ProposalStore)'s statements, written once for both databases:
//! numbered `$N` parameters, row-value comparison and `RETURNING`, which SQLite and
//! PostgreSQL share. Every transition is one conditional `UPDATE`: of two writers making
//! the same transition at once, exactly one changes the row (SQLite writes one at a
//! time; PostgreSQL checks the conditions again on the row the other writer left).
//!
//! The list's order and its cursor compare ids in each database's own collation (the
//! one its indexes follow), so pages never skip or repeat a proposal on either.

use hearth_core::{ProposalId, Timestamp};

use crate::codec::{from_millis, limit_clause, to_millis};
use crate::error::StoreResult;
use crate::postgres::PgStore;
use crate::proposals::{
    COLUMNS, ProposalPage, ProposalQuery, ProposalRecord, ProposalStatus, decode_cursor,
    encode_cursor,
};
use crate::rows::decode_proposal;
use crate::sqlite::SqliteStore;

/// `$1, $2, …, $count`.
fn placeholders(count: usize) -> String {
    (1..=count)
        .map(|number| format!("${number}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `_impl` methods `proposal_store_by_impls` wires into `ProposalStore`, for a store
/// type with a `pool`, `error` and `unique_conflict`.
macro_rules! proposal_statements {
    ($store:ty) => {
        impl $store {
            /// The ids of proposals changed at or after `after`, oldest change first (at
            /// most 500).
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

    pub(crate) async fn insert_proposal_impl(&self, record: &ProposalRecord) -> StoreResult<()> {
        let columns = COLUMNS.split(',').count();
        let sql = format!(
            "INSERT INTO proposals ({COLUMNS}) VALUES ({})",
            placeholders(columns)
        );
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(record.id.as_str())
            .bind(&record.tool)
            .bind(record.session.to_string())
            .bind(record.chat.to_string())
            .bind(record.turn_id.as_str())
            .bind(&record.call_id)
            .bind(&record.summary)
            .bind(&record.diff)
            .bind(&record.payload)
            .bind(&record.payload_hash)
            .bind(record.status.as_str())
            .bind(record.approved_hash.as_deref())
            .bind(record.decided_by.as_deref())
            .bind(record.decided_at.as_ref().map(to_millis))
            .bind(record.reason.as_deref())
            .bind(record.outcome.as_deref())
            .bind(record.error.as_deref())
            .bind(to_millis(&record.created_at))
            .bind(to_millis(&record.expires_at))
            .bind(to_millis(&record.updated_at))
            .bind(record.applied_at.as_ref().map(to_millis))
            .execute(&self.pool)
            .await
            .map_err(|e| self.unique_conflict(e, "proposal", record.id.as_str()))?;
        Ok(())
    }

    pub(crate) async fn proposal_impl(&self, id: &ProposalId) -> StoreResult<Option<ProposalRecord>> {
        let sql = format!("SELECT {COLUMNS} FROM proposals WHERE id = $1");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(id.as_str())
            .fetch_optional(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        row.as_ref().map(decode_proposal).transpose()
    }

    pub(crate) async fn list_proposals_impl(&self, query: &ProposalQuery) -> StoreResult<ProposalPage> {
        let limit = query.limit.clamp(1, 500);
        let cursor = query.cursor.as_deref().map(decode_cursor).transpose()?;
        let mut next = 0;
        let mut parameter = || {
            next += 1;
            format!("${next}")
        };
        let mut sql = format!("SELECT {COLUMNS} FROM proposals WHERE 1 = 1");
        if !query.statuses.is_empty() {
            let marks: Vec<String> = query.statuses.iter().map(|_| parameter()).collect();
            sql.push_str(&format!(" AND status IN ({})", marks.join(", ")));
        }
        if query.session.is_some() {
            sql.push_str(&format!(" AND session_uri = {}", parameter()));
        }
        // Ids of one creation time in the database's collation, which the indexes of
        // `proposals` follow; the cursor compares in the same one, so pages never skip or
        // repeat a proposal.
        if cursor.is_some() {
            let (time, id) = (parameter(), parameter());
            sql.push_str(&format!(" AND (created_at, id) < ({time}, {id})"));
        }
        sql.push_str(" ORDER BY created_at DESC, id DESC");
        sql.push_str(&limit_clause(i64::from(limit) + 1));
        let mut statement = sqlx::query(sqlx::AssertSqlSafe(sql));
        for status in &query.statuses {
            statement = statement.bind(status.as_str());
        }
        if let Some(session) = &query.session {
            statement = statement.bind(session.to_string());
        }
        if let Some((created_at, id)) = &cursor {
            statement = statement.bind(*created_at).bind(id.clone());
        }
        let rows = statement
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        let mut proposals = rows
            .iter()
            .map(decode_proposal)
            .collect::<StoreResult<Vec<_>>>()?;
        let next_cursor = if proposals.len() > limit as usize {
            proposals.truncate(limit as usize);
            proposals
                .last()
                .map(|last| encode_cursor(to_millis(&last.created_at), last.id.as_str()))
        } else {
            None
        };
        Ok(ProposalPage {
            proposals,
            next_cursor,
        })
    }

    /// Whether a conditional update changed its row.
    fn changed(&self, result: Result<u64, sqlx::Error>) -> StoreResult<bool> {
        Ok(result.map_err(|e| self.error(e))? == 1)
    }

    pub(crate) async fn approve_proposal_impl(
        &self,
        id: &ProposalId,
        payload_hash: &str,
        decided_by: &str,
        at: Timestamp,
    ) -> StoreResult<bool> {
        let at = to_millis(&at);
        self.changed(
            sqlx::query(
                "UPDATE proposals
                 SET status = 'approved', approved_hash = payload_hash, decided_by = $1,
                     decided_at = $2, updated_at = $2
                 WHERE id = $3 AND status = 'pending' AND payload_hash = $4 AND expires_at > $2",
            )
            .bind(decided_by)
            .bind(at)
            .bind(id.as_str())
            .bind(payload_hash)
            .execute(&self.pool)
            .await
            .map(|done| done.rows_affected()),
        )
    }

    pub(crate) async fn reject_proposal_impl(
        &self,
        id: &ProposalId,
        decided_by: &str,
        reason: Option<&str>,
        at: Timestamp,
    ) -> StoreResult<bool> {
        let at = to_millis(&at);
        self.changed(
            sqlx::query(
                "UPDATE proposals
                 SET status = 'rejected', decided_by = $1, decided_at = $2, updated_at = $2,
                     reason = $3
                 WHERE id = $4 AND status IN ('pending', 'approved')",
            )
            .bind(decided_by)
            .bind(at)
            .bind(reason)
            .bind(id.as_str())
            .execute(&self.pool)
            .await
            .map(|done| done.rows_affected()),
        )
    }

    pub(crate) async fn claim_proposal_impl(
        &self,
        id: &ProposalId,
        payload_hash: &str,
        payload: &str,
        at: Timestamp,
    ) -> StoreResult<bool> {
        let at = to_millis(&at);
        self.changed(
            sqlx::query(
                "UPDATE proposals SET status = 'applying', updated_at = $1
                 WHERE id = $2 AND status = 'approved' AND approved_hash = $3
                   AND payload_hash = $3 AND payload = $4 AND expires_at > $1",
            )
            .bind(at)
            .bind(id.as_str())
            .bind(payload_hash)
            .bind(payload)
            .execute(&self.pool)
            .await
            .map(|done| done.rows_affected()),
        )
    }

    pub(crate) async fn finish_proposal_impl(
        &self,
        id: &ProposalId,
        result: Result<&str, &str>,
        at: Timestamp,
    ) -> StoreResult<bool> {
        let at = to_millis(&at);
        let (status, outcome, error) = match result {
            Ok(outcome) => (ProposalStatus::Applied, Some(outcome), None),
            Err(error) => (ProposalStatus::Failed, None, Some(error)),
        };
        self.changed(
            sqlx::query(
                "UPDATE proposals
                 SET status = $1, outcome = $2, error = $3, applied_at = $4, updated_at = $4
                 WHERE id = $5 AND status = 'applying'",
            )
            .bind(status.as_str())
            .bind(outcome)
            .bind(error)
            .bind(at)
            .bind(id.as_str())
            .execute(&self.pool)
            .await
            .map(|done| done.rows_affected()),
        )
    }

    pub(crate) async fn fail_proposal_impl(
        &self,
        id: &ProposalId,
        from: ProposalStatus,
        error: &str,
        at: Timestamp,
    ) -> StoreResult<bool> {
        let at = to_millis(&at);
        self.changed(
            sqlx::query(
                "UPDATE proposals SET status = 'failed', error = $1, updated_at = $2
                 WHERE id = $3 AND status = $4",
            )
            .bind(error)
            .bind(at)
            .bind(id.as_str())
            .bind(from.as_str())
            .execute(&self.pool)
            .await
            .map(|done| done.rows_affected()),
        )
    }

    pub(crate) async fn expire_proposals_impl(&self, at: Timestamp) -> StoreResult<Vec<ProposalRecord>> {
        let sql = format!(
            "UPDATE proposals SET status = 'expired', updated_at = $1
             WHERE status IN ('pending', 'approved') AND expires_at <= $1
             RETURNING {COLUMNS}"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(to_millis(&at))
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        rows.iter().map(decode_proposal).collect()
    }

    pub(crate) async fn stale_applying_impl(&self, before: Timestamp) -> StoreResult<Vec<ProposalRecord>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM proposals WHERE status = 'applying' AND updated_at < $1"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(to_millis(&before))
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        let mut stale = rows
            .iter()
            .map(decode_proposal)
            .collect::<StoreResult<Vec<_>>>()?;
        // Oldest first, ids in byte order: the same on both databases.
        stale.sort_by(|a, b| (a.created_at, a.id.as_str()).cmp(&(b.created_at, b.id.as_str())));
        Ok(stale)
    }

        }
    };
}

proposal_statements!(SqliteStore);
proposal_statements!(PgStore);
