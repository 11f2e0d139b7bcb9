//! Proposals: changes mutating tools staged, their status, and the compare-and-set
//! transitions the approval gate drives. The store keeps them; it does not decide who
//! may approve (hearth-tools does).

use std::fmt;
use std::str::FromStr;

use futures::future::BoxFuture;
use hearth_core::{ChatUri, ProposalId, SessionUri, Timestamp, TurnId};
use serde::{Deserialize, Serialize};

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

/// A proposal as stored, its payload as canonical JSON text; with the payload parsed
/// (`P` a JSON value), as users, UIs and the server see it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProposalRecord<P = String> {
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
    /// What applying does, exactly (the approval binds to its hash): as stored, its
    /// canonical JSON text.
    pub payload: P,
    /// SHA-256 of the payload's canonical JSON, lower-case hex.
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

/// The proposal with its payload parsed; kept as a JSON string when it does not parse, so
/// that what is stored is still shown.
impl From<ProposalRecord> for ProposalRecord<serde_json::Value> {
    fn from(record: ProposalRecord) -> Self {
        record.map_payload(|payload| {
            serde_json::from_str(&payload).unwrap_or(serde_json::Value::String(payload))
        })
    }
}

impl<P> ProposalRecord<P> {
    /// The same proposal with its payload turned by `payload`.
    pub fn map_payload<Q>(self, payload: impl FnOnce(P) -> Q) -> ProposalRecord<Q> {
        ProposalRecord {
            id: self.id,
            tool: self.tool,
            session: self.session,
            chat: self.chat,
            turn_id: self.turn_id,
            call_id: self.call_id,
            summary: self.summary,
            diff: self.diff,
            payload: payload(self.payload),
            payload_hash: self.payload_hash,
            status: self.status,
            approved_hash: self.approved_hash,
            decided_by: self.decided_by,
            decided_at: self.decided_at,
            reason: self.reason,
            outcome: self.outcome,
            error: self.error,
            created_at: self.created_at,
            expires_at: self.expires_at,
            updated_at: self.updated_at,
            applied_at: self.applied_at,
        }
    }
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
