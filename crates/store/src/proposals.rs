//! Proposals: changes mutating tools staged, their status, and the compare-and-set
//! transitions the approval gate drives. The store keeps them; it does not decide who
//! may approve (hearth-tools does).

use std::fmt;
use std::str::FromStr;

use futures::future::BoxFuture;
use hearth_core::{ChatUri, ProposalId, SessionUri, Timestamp, TurnId};
use serde::{Deserialize, Serialize};
use sqlx::Row;

use crate::codec::{from_millis, to_millis};
use crate::error::{StoreError, StoreResult};
/// Shared by both dialects; named `decode` here, as the SQLite lookups by prefix call it.
pub(crate) use crate::rows::decode_proposal as decode;
use crate::sqlite::SqliteStore;

/// Where a proposal is in its life: `Pending` → `Approved` / `Rejected` / `Expired`;
/// `Approved` → `Applying` (claimed by exactly one apply) → `Applied` / `Failed`. An
/// approval not applied before the proposal expires becomes `Expired`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProposalStatus {
    /// Awaiting the user's decision.
    Pending,
    /// Approved by the user; not yet applied.
    Approved,
    /// Rejected by the user.
    Rejected,
    /// Not decided (or not applied) in time.
    Expired,
    /// Being applied.
    Applying,
    /// Applied.
    Applied,
    /// Applying failed, or was refused; `error` says why.
    Failed,
}

impl ProposalStatus {
    /// Every status.
    pub const ALL: [Self; 7] = [
        Self::Pending,
        Self::Approved,
        Self::Rejected,
        Self::Expired,
        Self::Applying,
        Self::Applied,
        Self::Failed,
    ];

    /// The status as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Approved => "approved",
            Self::Rejected => "rejected",
            Self::Expired => "expired",
            Self::Applying => "applying",
            Self::Applied => "applied",
            Self::Failed => "failed",
        }
    }

    /// Whether nothing can happen to the proposal any more.
    pub fn is_final(self) -> bool {
        match self {
            Self::Rejected | Self::Expired | Self::Applied | Self::Failed => true,
            Self::Pending | Self::Approved | Self::Applying => false,
        }
    }
}

impl fmt::Display for ProposalStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProposalStatus {
    type Err = StoreError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|status| status.as_str() == text)
            .ok_or_else(|| StoreError::Decode {
                what: "proposal status",
                detail: format!(
                    "`{text}` is not one of {}",
                    Self::ALL.map(Self::as_str).join(", ")
                ),
            })
    }
}

/// A proposal as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProposalRecord {
    /// Its id.
    pub id: ProposalId,
    /// The tool that staged it (and applies it).
    pub tool: String,
    /// The session of the call.
    pub session: SessionUri,
    /// The chat that called the tool.
    pub chat: ChatUri,
    /// The turn of the call.
    pub turn_id: TurnId,
    /// The model's call id.
    pub call_id: String,
    /// One line for humans.
    pub summary: String,
    /// Before/after, for humans.
    pub diff: String,
    /// What applying needs, as canonical JSON text.
    pub payload: String,
    /// SHA-256 of `payload`.
    pub payload_hash: String,
    /// Status.
    pub status: ProposalStatus,
    /// The payload hash the user approved.
    pub approved_hash: Option<String>,
    /// Who decided (`user`), once decided.
    pub decided_by: Option<String>,
    /// When it was decided.
    pub decided_at: Option<Timestamp>,
    /// Why the user rejected it, if they said.
    pub reason: Option<String>,
    /// What applying did.
    pub outcome: Option<String>,
    /// Why applying failed or was refused.
    pub error: Option<String>,
    /// When it was staged.
    pub created_at: Timestamp,
    /// When it expires unless applied.
    pub expires_at: Timestamp,
    /// Last change.
    pub updated_at: Timestamp,
    /// When applying ended.
    pub applied_at: Option<Timestamp>,
}

/// Which proposals a listing returns (newest first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProposalQuery {
    /// Only these statuses (all when empty).
    pub statuses: Vec<ProposalStatus>,
    /// Only this session's.
    pub session: Option<SessionUri>,
    /// Continue after this cursor (from a previous page).
    pub cursor: Option<String>,
    /// Page size (1..=500).
    pub limit: u32,
}

impl Default for ProposalQuery {
    fn default() -> Self {
        Self {
            statuses: Vec::new(),
            session: None,
            cursor: None,
            limit: 50,
        }
    }
}

/// One page of proposals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProposalPage {
    /// The proposals, newest first.
    pub proposals: Vec<ProposalRecord>,
    /// Cursor of the next page, if there is one.
    pub next_cursor: Option<String>,
}

/// Storage of proposals. Every transition is one conditional update that changes the
/// row only while it is still in the expected state, and says whether it did: the gate
/// builds idempotent, replay-safe decisions on that. Writes are durable when they return.
pub trait ProposalStore: Send + Sync + 'static {
    /// Stores a newly staged proposal.
    fn insert_proposal<'a>(&'a self, record: &'a ProposalRecord) -> BoxFuture<'a, StoreResult<()>>;

    /// A proposal by id.
    fn proposal<'a>(
        &'a self,
        id: &'a ProposalId,
    ) -> BoxFuture<'a, StoreResult<Option<ProposalRecord>>>;

    /// A page of proposals, newest first.
    fn list_proposals<'a>(
        &'a self,
        query: &'a ProposalQuery,
    ) -> BoxFuture<'a, StoreResult<ProposalPage>>;

    /// `Pending` → `Approved`, binding the approval to `payload_hash`: only while the
    /// proposal is pending, holds exactly that payload hash and has not expired at `at`.
    fn approve_proposal<'a>(
        &'a self,
        id: &'a ProposalId,
        payload_hash: &'a str,
        decided_by: &'a str,
        at: Timestamp,
    ) -> BoxFuture<'a, StoreResult<bool>>;

    /// `Pending` or `Approved` → `Rejected`.
    fn reject_proposal<'a>(
        &'a self,
        id: &'a ProposalId,
        decided_by: &'a str,
        reason: Option<&'a str>,
        at: Timestamp,
    ) -> BoxFuture<'a, StoreResult<bool>>;

    /// The apply's compare-and-set: `Approved` → `Applying`, only while the approved
    /// hash, the payload hash and the payload text are exactly those given and the
    /// proposal has not expired at `at`. At most one caller ever wins it.
    fn claim_proposal<'a>(
        &'a self,
        id: &'a ProposalId,
        payload_hash: &'a str,
        payload: &'a str,
        at: Timestamp,
    ) -> BoxFuture<'a, StoreResult<bool>>;

    /// `Applying` → `Applied` (with what was done) or `Failed` (with the error).
    fn finish_proposal<'a>(
        &'a self,
        id: &'a ProposalId,
        result: Result<&'a str, &'a str>,
        at: Timestamp,
    ) -> BoxFuture<'a, StoreResult<bool>>;

    /// `from` → `Failed` with `error` (a refused apply: the stored payload no longer
    /// matches its approval, or an apply interrupted long ago).
    fn fail_proposal<'a>(
        &'a self,
        id: &'a ProposalId,
        from: ProposalStatus,
        error: &'a str,
        at: Timestamp,
    ) -> BoxFuture<'a, StoreResult<bool>>;

    /// Every `Pending` or `Approved` proposal whose expiry is at or before `at` →
    /// `Expired`; returns them as they are now.
    fn expire_proposals<'a>(
        &'a self,
        at: Timestamp,
    ) -> BoxFuture<'a, StoreResult<Vec<ProposalRecord>>>;

    /// Proposals stuck in `Applying` since before `before` (the applying process
    /// stopped).
    fn stale_applying<'a>(
        &'a self,
        before: Timestamp,
    ) -> BoxFuture<'a, StoreResult<Vec<ProposalRecord>>>;
}

pub(crate) const COLUMNS: &str = "id, tool, session_uri, chat_uri, turn_id, call_id, summary, diff, payload, \
     payload_hash, status, approved_hash, decided_by, decided_at, reason, outcome, error, created_at, \
     expires_at, updated_at, applied_at";

/// The cursor of the page after a proposal created at `created_at` with id `id`.
pub(crate) fn encode_cursor(created_at: i64, id: &str) -> String {
    format!("{created_at}.{id}")
}

/// The creation time and id of a cursor from [`encode_cursor`].
pub(crate) fn decode_cursor(cursor: &str) -> StoreResult<(i64, String)> {
    cursor
        .split_once('.')
        .and_then(|(time, id)| Some((time.parse().ok()?, id.to_owned())))
        .ok_or_else(|| StoreError::Decode {
            what: "cursor",
            detail: format!("`{cursor}` is not a cursor from a previous page"),
        })
}

impl SqliteStore {
    async fn insert_proposal_impl(&self, record: &ProposalRecord) -> StoreResult<()> {
        let sql = format!(
            "INSERT INTO proposals ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
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

    pub(crate) async fn proposals_changed_after_impl(
        &self,
        after: Timestamp,
    ) -> StoreResult<Vec<(String, Timestamp)>> {
        let rows = sqlx::query(
            "SELECT id, updated_at FROM proposals WHERE updated_at >= ?
             ORDER BY updated_at LIMIT 500",
        )
        .bind(to_millis(&after))
        .fetch_all(&self.pool)
        .await
        .map_err(|e| self.error(e))?;
        rows.iter()
            .map(|row| {
                let id: String = row.try_get("id").map_err(|e| self.error(e))?;
                let at: i64 = row.try_get("updated_at").map_err(|e| self.error(e))?;
                Ok((id, from_millis(at)?))
            })
            .collect()
    }

    async fn proposal_impl(&self, id: &ProposalId) -> StoreResult<Option<ProposalRecord>> {
        let sql = format!("SELECT {COLUMNS} FROM proposals WHERE id = ?");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(id.as_str())
            .fetch_optional(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        row.as_ref().map(decode).transpose()
    }

    async fn list_proposals_impl(&self, query: &ProposalQuery) -> StoreResult<ProposalPage> {
        let limit = query.limit.clamp(1, 500);
        let cursor = query.cursor.as_deref().map(decode_cursor).transpose()?;
        let mut sql = format!("SELECT {COLUMNS} FROM proposals WHERE 1 = 1");
        if !query.statuses.is_empty() {
            let marks = vec!["?"; query.statuses.len()].join(", ");
            sql.push_str(&format!(" AND status IN ({marks})"));
        }
        if query.session.is_some() {
            sql.push_str(" AND session_uri = ?");
        }
        if cursor.is_some() {
            sql.push_str(" AND (created_at, id) < (?, ?)");
        }
        sql.push_str(" ORDER BY created_at DESC, id DESC LIMIT ?");
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
            .bind(i64::from(limit) + 1)
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        let mut proposals = rows.iter().map(decode).collect::<StoreResult<Vec<_>>>()?;
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
    fn changed(
        &self,
        result: Result<sqlx::sqlite::SqliteQueryResult, sqlx::Error>,
    ) -> StoreResult<bool> {
        Ok(result.map_err(|e| self.error(e))?.rows_affected() == 1)
    }

    async fn approve_proposal_impl(
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
                 SET status = 'approved', approved_hash = payload_hash, decided_by = ?1,
                     decided_at = ?2, updated_at = ?2
                 WHERE id = ?3 AND status = 'pending' AND payload_hash = ?4 AND expires_at > ?2",
            )
            .bind(decided_by)
            .bind(at)
            .bind(id.as_str())
            .bind(payload_hash)
            .execute(&self.pool)
            .await,
        )
    }

    async fn reject_proposal_impl(
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
                 SET status = 'rejected', decided_by = ?1, decided_at = ?2, updated_at = ?2,
                     reason = ?3
                 WHERE id = ?4 AND status IN ('pending', 'approved')",
            )
            .bind(decided_by)
            .bind(at)
            .bind(reason)
            .bind(id.as_str())
            .execute(&self.pool)
            .await,
        )
    }

    async fn claim_proposal_impl(
        &self,
        id: &ProposalId,
        payload_hash: &str,
        payload: &str,
        at: Timestamp,
    ) -> StoreResult<bool> {
        let at = to_millis(&at);
        self.changed(
            sqlx::query(
                "UPDATE proposals SET status = 'applying', updated_at = ?1
                 WHERE id = ?2 AND status = 'approved' AND approved_hash = ?3
                   AND payload_hash = ?3 AND payload = ?4 AND expires_at > ?1",
            )
            .bind(at)
            .bind(id.as_str())
            .bind(payload_hash)
            .bind(payload)
            .execute(&self.pool)
            .await,
        )
    }

    async fn finish_proposal_impl(
        &self,
        id: &ProposalId,
        result: Result<&str, &str>,
        at: Timestamp,
    ) -> StoreResult<bool> {
        let at = to_millis(&at);
        let (status, outcome, error) = match result {
            Ok(outcome) => ("applied", Some(outcome), None),
            Err(error) => ("failed", None, Some(error)),
        };
        self.changed(
            sqlx::query(
                "UPDATE proposals
                 SET status = ?1, outcome = ?2, error = ?3, applied_at = ?4, updated_at = ?4
                 WHERE id = ?5 AND status = 'applying'",
            )
            .bind(status)
            .bind(outcome)
            .bind(error)
            .bind(at)
            .bind(id.as_str())
            .execute(&self.pool)
            .await,
        )
    }

    async fn fail_proposal_impl(
        &self,
        id: &ProposalId,
        from: ProposalStatus,
        error: &str,
        at: Timestamp,
    ) -> StoreResult<bool> {
        let at = to_millis(&at);
        self.changed(
            sqlx::query(
                "UPDATE proposals SET status = 'failed', error = ?1, updated_at = ?2
                 WHERE id = ?3 AND status = ?4",
            )
            .bind(error)
            .bind(at)
            .bind(id.as_str())
            .bind(from.as_str())
            .execute(&self.pool)
            .await,
        )
    }

    async fn expire_proposals_impl(&self, at: Timestamp) -> StoreResult<Vec<ProposalRecord>> {
        let sql = format!(
            "UPDATE proposals SET status = 'expired', updated_at = ?1
             WHERE status IN ('pending', 'approved') AND expires_at <= ?1
             RETURNING {COLUMNS}"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(to_millis(&at))
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        rows.iter().map(decode).collect()
    }

    async fn stale_applying_impl(&self, before: Timestamp) -> StoreResult<Vec<ProposalRecord>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM proposals WHERE status = 'applying' AND updated_at < ?
             ORDER BY created_at, id"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(to_millis(&before))
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        rows.iter().map(decode).collect()
    }
}

proposal_store_by_impls!(SqliteStore);

/// Implements [`ProposalStore`] for a store type by its methods of the same names with
/// `_impl` (each dialect's statements are its own; the wiring is this once). The names it
/// uses are resolved where it is invoked.
macro_rules! proposal_store_by_impls {
    ($store:ty) => {
        impl ProposalStore for $store {
            fn insert_proposal<'a>(
                &'a self,
                record: &'a ProposalRecord,
            ) -> BoxFuture<'a, StoreResult<()>> {
                Box::pin(self.insert_proposal_impl(record))
            }

            fn proposal<'a>(
                &'a self,
                id: &'a ProposalId,
            ) -> BoxFuture<'a, StoreResult<Option<ProposalRecord>>> {
                Box::pin(self.proposal_impl(id))
            }

            fn list_proposals<'a>(
                &'a self,
                query: &'a ProposalQuery,
            ) -> BoxFuture<'a, StoreResult<ProposalPage>> {
                Box::pin(self.list_proposals_impl(query))
            }

            fn approve_proposal<'a>(
                &'a self,
                id: &'a ProposalId,
                payload_hash: &'a str,
                decided_by: &'a str,
                at: Timestamp,
            ) -> BoxFuture<'a, StoreResult<bool>> {
                Box::pin(self.approve_proposal_impl(id, payload_hash, decided_by, at))
            }

            fn reject_proposal<'a>(
                &'a self,
                id: &'a ProposalId,
                decided_by: &'a str,
                reason: Option<&'a str>,
                at: Timestamp,
            ) -> BoxFuture<'a, StoreResult<bool>> {
                Box::pin(self.reject_proposal_impl(id, decided_by, reason, at))
            }

            fn claim_proposal<'a>(
                &'a self,
                id: &'a ProposalId,
                payload_hash: &'a str,
                payload: &'a str,
                at: Timestamp,
            ) -> BoxFuture<'a, StoreResult<bool>> {
                Box::pin(self.claim_proposal_impl(id, payload_hash, payload, at))
            }

            fn finish_proposal<'a>(
                &'a self,
                id: &'a ProposalId,
                result: Result<&'a str, &'a str>,
                at: Timestamp,
            ) -> BoxFuture<'a, StoreResult<bool>> {
                Box::pin(self.finish_proposal_impl(id, result, at))
            }

            fn fail_proposal<'a>(
                &'a self,
                id: &'a ProposalId,
                from: ProposalStatus,
                error: &'a str,
                at: Timestamp,
            ) -> BoxFuture<'a, StoreResult<bool>> {
                Box::pin(self.fail_proposal_impl(id, from, error, at))
            }

            fn expire_proposals<'a>(
                &'a self,
                at: Timestamp,
            ) -> BoxFuture<'a, StoreResult<Vec<ProposalRecord>>> {
                Box::pin(self.expire_proposals_impl(at))
            }

            fn stale_applying<'a>(
                &'a self,
                before: Timestamp,
            ) -> BoxFuture<'a, StoreResult<Vec<ProposalRecord>>> {
                Box::pin(self.stale_applying_impl(before))
            }
        }
    };
}
pub(crate) use proposal_store_by_impls;
