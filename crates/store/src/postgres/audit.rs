//! The audit log on PostgreSQL (see the SQLite store's `audit`). Nodes sharing one
//! database append to one chain: an append locks the table against other appends
//! (`SHARE ROW EXCLUSIVE`, which readers pass) before it reads the last row, so no two
//! appends link to the same row and the sequence has no gap.

use std::path::Path;

use futures::future::BoxFuture;

use super::PgStore;
use crate::audit::{
    AuditDraft, AuditKeyUse, AuditQuery, AuditRecord, AuditSealer, AuditStore, UnauditedApply,
};
use crate::error::StoreResult;

impl PgStore {
    /// What keeps two appends from linking to one row: the table's lock, held until
    /// commit (another node's append waits for it, then reads this one's row).
    pub(crate) const AUDIT_LOCK: Option<&str> =
        Some("LOCK TABLE audit_log IN SHARE ROW EXCLUSIVE MODE");

    /// `None`: the log is in the database server, and there is no file beside which to
    /// keep its key and head file (give them to the log explicitly).
    fn database_file_impl(&self) -> Option<&Path> {
        None
    }
}

crate::audit::audit_store_by_impls!(PgStore);
