//! Hearth's durable store: the one source of truth for the session registry (with
//! provenance, scope and tombstones), each session's chat catalog with the harnesses'
//! opaque provider data, turns and their response parts, drafts, the provider
//! conversations that back chats, proposals staged by mutating tools
//! ([`ProposalStore`]) and the append-only, hash-chained audit log ([`AuditStore`]).
//!
//! SQLite in WAL mode with `synchronous=FULL`: a write that acknowledges user input is
//! durable when it returns. Numbered migrations; a database from a newer schema, a file
//! that is not SQLite, or a corrupt database is refused with a clear message and never
//! overwritten. The [`Store`] trait keeps other backends possible.
//!
//! It does not know what a harness stores in provider data, and does not decide when to
//! write: the host does.

mod audit;
mod chats;
mod codec;
mod error;
mod open;
mod proposals;
mod sessions;
mod sqlite;
mod store;
mod turns;

pub use audit::{AUDIT_GENESIS_HASH, AuditDraft, AuditQuery, AuditRecord, AuditSeal, AuditStore};
pub use error::{StoreError, StoreResult};
pub use open::SCHEMA_VERSION;
pub use proposals::{ProposalPage, ProposalQuery, ProposalRecord, ProposalStatus, ProposalStore};
pub use sqlite::SqliteStore;
pub use store::{
    ChatRecord, NewSession, Registration, ScopeFilter, SessionPage, SessionQuery, Store,
};
