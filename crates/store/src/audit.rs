//! The audit log's rows: appended in order under a write lock, each sealed with a hash
//! over its content and the previous row's hash, and never changed or deleted (the
//! table's triggers refuse both). What a row means and how it is sealed (and with which
//! key) is hearth-tools' business; the store keeps the chain's order and link, and the
//! id of the key that sealed each row.

use std::path::Path;

use futures::future::BoxFuture;
use hearth_core::Timestamp;

use crate::error::StoreResult;
use crate::sqlite::SqliteStore;

/// The `prev_hash` of the first row.
pub const AUDIT_GENESIS_HASH: &str =
    "0000000000000000000000000000000000000000000000000000000000000000";

/// A row to append, its detail as JSON text; with the detail parsed (`D` a JSON value),
/// as listings and exports show it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct AuditDraft<D = String> {
    /// When it happened.
    pub at: Timestamp,
    /// Who acted: an agent's chat URI, `user`, or `hearth`.
    pub actor: String,
    /// What kind of event (`tool_call`, `proposal`, `permission`, `fetch`).
    pub kind: String,
    /// The tool involved.
    pub tool: Option<String>,
    /// Hash of the arguments or payload.
    pub argument_hash: Option<String>,
    /// The proposal involved.
    pub proposal_id: Option<String>,
    /// What was decided.
    pub decision: String,
    /// How it ended.
    pub outcome: String,
    /// More, as JSON text (already redacted).
    pub detail: Option<D>,
}

/// A stored row.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct AuditRecord<D = String> {
    /// Position in the chain, from 1.
    pub seq: i64,
    /// The row's content.
    #[serde(flatten)]
    pub entry: AuditDraft<D>,
    /// The previous row's hash ([`AUDIT_GENESIS_HASH`] for the first).
    pub prev_hash: String,
    /// The key that sealed this row; `None` for rows written before rows were keyed
    /// (their hash is a plain SHA-256).
    pub key_id: Option<String>,
    /// This row's hash.
    pub hash: String,
}

/// The row with its detail parsed; a detail that does not parse is kept as a JSON string,
/// so that what is stored is still shown.
impl From<AuditRecord> for AuditRecord<serde_json::Value> {
    fn from(record: AuditRecord) -> Self {
        let entry = record.entry;
        Self {
            seq: record.seq,
            entry: AuditDraft {
                at: entry.at,
                actor: entry.actor,
                kind: entry.kind,
                tool: entry.tool,
                argument_hash: entry.argument_hash,
                proposal_id: entry.proposal_id,
                decision: entry.decision,
                outcome: entry.outcome,
                detail: entry.detail.map(|text| {
                    serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text))
                }),
            },
            prev_hash: record.prev_hash,
            key_id: record.key_id,
            hash: record.hash,
        }
    }
}

/// Seals rows as they are appended: names the key it seals with and computes a row's
/// hash from its sequence number, content, key id and previous hash.
pub trait AuditSealer: Send + Sync {
    /// The id stored with each row this sealer seals.
    fn key_id(&self) -> &str;

    /// The row's hash (the `hash` field of the record it is given is empty; `key_id` is
    /// already set).
    fn seal(&self, record: &AuditRecord) -> String;
}

/// The newest row sealed with a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditKeyUse {
    /// The row's sequence number.
    pub seq: i64,
    /// The key's id.
    pub key_id: String,
}

/// An applied proposal with no `applied` entry in the audit log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnauditedApply {
    /// The proposal.
    pub proposal_id: String,
    /// When it was applied, as the proposal records it.
    pub applied_at: Option<Timestamp>,
}

/// Which rows a listing returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditQuery {
    /// Only rows before this sequence number (paging backwards).
    pub before: Option<i64>,
    /// Only rows of this actor.
    pub actor: Option<String>,
    /// Only rows about this tool.
    pub tool: Option<String>,
    /// At most this many rows (1..=100000).
    pub limit: u32,
}

impl Default for AuditQuery {
    fn default() -> Self {
        Self {
            before: None,
            actor: None,
            tool: None,
            limit: 50,
        }
    }
}

/// The append-only audit log. Appends are durable when they return and ordered: each
/// row links to the one before it.
pub trait AuditStore: Send + Sync + 'static {
    /// The database file the log is kept in; `None` for a private in-memory database and
    /// for a database server. (hearth-tools keeps the log's key and head files beside it.)
    fn database_file(&self) -> Option<&Path>;

    /// Appends a row: assigns the next sequence number, links it to the last row's hash
    /// and stores it with the key id and hash `sealer` gives, in one write transaction
    /// that excludes other appends (SQLite's `BEGIN IMMEDIATE`, a table lock on
    /// PostgreSQL), so appends from several processes or nodes are serialized.
    fn append_audit<'a>(
        &'a self,
        entry: &'a AuditDraft,
        sealer: &'a dyn AuditSealer,
    ) -> BoxFuture<'a, StoreResult<AuditRecord>>;

    /// Rows matching `query`, newest first.
    fn audit_page<'a>(
        &'a self,
        query: &'a AuditQuery,
    ) -> BoxFuture<'a, StoreResult<Vec<AuditRecord>>>;

    /// Up to `limit` rows after sequence number `after`, oldest first (to walk the
    /// chain).
    fn audit_after<'a>(
        &'a self,
        after: i64,
        limit: u32,
    ) -> BoxFuture<'a, StoreResult<Vec<AuditRecord>>>;

    /// The newest row sealed with a key, if any.
    fn last_keyed_audit(&self) -> BoxFuture<'_, StoreResult<Option<AuditKeyUse>>>;

    /// Up to `limit` proposals whose status is `applied` but which have no audit row of
    /// kind `proposal` and decision `applied` naming them, oldest apply first.
    fn unaudited_applies(&self, limit: u32) -> BoxFuture<'_, StoreResult<Vec<UnauditedApply>>>;
}

pub(crate) const COLUMNS: &str = "seq, at, actor, kind, tool, argument_hash, proposal_id, decision, outcome, \
     detail, prev_hash, key_id, hash";

impl SqliteStore {
    /// What keeps two appends from linking to one row: nothing more than the write
    /// transaction, whose lock is the whole database's.
    pub(crate) const AUDIT_LOCK: Option<&str> = None;

    fn database_file_impl(&self) -> Option<&Path> {
        let path = self.path();
        (path != Path::new(":memory:")).then_some(path)
    }
}

audit_store_by_impls!(SqliteStore);

/// Implements [`AuditStore`] for a store type by its methods of the same names with `_impl`
/// (see `audit_statements`). The names it uses are resolved where it is invoked.
macro_rules! audit_store_by_impls {
    ($store:ty) => {
        impl AuditStore for $store {
            fn database_file(&self) -> Option<&::std::path::Path> {
                self.database_file_impl()
            }

            fn append_audit<'a>(
                &'a self,
                entry: &'a AuditDraft,
                sealer: &'a dyn AuditSealer,
            ) -> BoxFuture<'a, StoreResult<AuditRecord>> {
                Box::pin(self.append_audit_impl(entry, sealer))
            }

            fn audit_page<'a>(
                &'a self,
                query: &'a AuditQuery,
            ) -> BoxFuture<'a, StoreResult<Vec<AuditRecord>>> {
                Box::pin(self.audit_page_impl(query))
            }

            fn audit_after<'a>(
                &'a self,
                after: i64,
                limit: u32,
            ) -> BoxFuture<'a, StoreResult<Vec<AuditRecord>>> {
                Box::pin(self.audit_after_impl(after, limit))
            }

            fn last_keyed_audit(&self) -> BoxFuture<'_, StoreResult<Option<AuditKeyUse>>> {
                Box::pin(self.last_keyed_audit_impl())
            }

            fn unaudited_applies(
                &self,
                limit: u32,
            ) -> BoxFuture<'_, StoreResult<Vec<UnauditedApply>>> {
                Box::pin(self.unaudited_applies_impl(limit))
            }
        }
    };
}
pub(crate) use audit_store_by_impls;
