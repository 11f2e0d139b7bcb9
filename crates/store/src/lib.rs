//! Hearth's durable store: the one source of truth for the session registry (with
//! provenance, scope and tombstones), each session's chat catalog with the harnesses'
//! opaque provider data, turns and their response parts, drafts, the provider
//! conversations that back chats, the project registry ([`ProjectStore`]), proposals staged by mutating tools
//! ([`ProposalStore`]), the append-only, hash-chained audit log ([`AuditStore`]) and, for
//! a team server, its users, their API tokens' digests, teams and roles ([`UserStore`]).
//!
//! SQLite in WAL mode with `synchronous=FULL`: a write that acknowledges user input is
//! durable when it returns. Numbered migrations; a database from a newer schema, a file
//! that is not SQLite, or a corrupt database is refused with a clear message and never
//! overwritten. The [`Store`] trait keeps other backends possible.
//!
//! Private at rest: the database, its log and its directory are created readable by their
//! owner only, and narrowed when found open. Deleting a session or a project moves it to a
//! trash it can be restored from ([`Store::trash_session`]); emptying the trash, or
//! deleting a chat, erases what was said in it — overwritten in the file
//! (`secure_delete`), flushed out of the log — and keeps only a tombstone. It degrades per item: a turn that cannot be read back is read
//! as an unreadable turn naming its chat, and a database this process cannot write opens
//! for reading ([`SqliteStore::open_or_read_only`]).
//!
//! It does not know what a harness stores in provider data, and does not decide when to
//! write: the host does. It keeps each chat to one writer at a time across processes with
//! a lease per chat ([`Store::take_lease`]); when to take one is the host's decision too.

mod archive;
mod archive_import;
mod audit;
mod audit_statements;
mod catalog_statements;
mod chats;
mod codec;
mod erase;
mod error;
mod leases;
mod open;
mod postgres;
mod prefixes;
mod project_statements;
mod projects;
mod proposal_statements;
mod proposals;
mod row_statements;
mod rows;
mod search;
mod sessions;
mod sqlite;
mod store;
mod stores;
mod transcript;
mod trash;
mod trash_statements;
mod turn_statements;
mod turns;
mod users;

pub use archive::{ARCHIVE_FORMAT, ARCHIVE_VERSION};
pub use archive_import::ImportReport;
pub use audit::{
    AUDIT_GENESIS_HASH, AuditDraft, AuditKeyUse, AuditQuery, AuditRecord, AuditSealer, AuditStore,
    UnauditedApply,
};
pub use erase::ERASED_TEXT;
pub use error::{StoreError, StoreResult};
pub use leases::{ChatLease, LeaseGrant, LeaseHolder, Takeover};
pub use open::{Access, SCHEMA_VERSION};
pub use postgres::{AdvisoryLock, PgStore};
pub use projects::{ProjectRecord, ProjectStore};
pub use proposals::{ProposalPage, ProposalQuery, ProposalRecord, ProposalStatus, ProposalStore};
pub use search::{HIT_END, HIT_START, MIN_WORD, SearchHit, SearchPage, SearchQuery};
pub use sqlite::SqliteStore;
pub use store::{
    ChatRecord, NewSession, Registration, ScopeFilter, SessionPage, SessionQuery, Store, TurnPage,
};
pub use stores::{Change, HolderAsk, Stores};
pub use transcript::session_markdown;
pub use trash::{Removal, TrashItem, TrashKind};
pub use users::{
    Membership, Role, UserAgent, UserCredentialStore, UserProvider, UserRecord, UserStore,
};
