//! Hearth's tools and the gate between them and the world.
//!
//! Owns:
//! - the tool registry ([`ToolRegistry`]): tools by name with their JSON Schema and
//!   whether they mutate; one call path that answers unknown tools and invalid
//!   arguments (checked against the schema) with errors a model can act on, runs read
//!   tools, and turns a mutating tool's staged change into a [`Proposal`] — it never
//!   applies one. It implements [`Toolbox`](hearth_core::Toolbox), which is all an
//!   agent gets; nothing an agent can call approves, applies or changes policy;
//! - the approval gate ([`ApprovalGate`]), the user's side: list, get, approve (bound to
//!   the SHA-256 of the canonical payload the user was shown), reject, apply (one
//!   compare-and-set on id, status and hash: idempotent, replay-safe, exactly one of
//!   concurrent applies runs), expire (default 7 days). Proposals live in hearth-store
//!   and survive restarts;
//! - the audit log ([`AuditLog`]): every tool call, fetch, proposal decision and
//!   permission answer, appended to an append-only, hash-chained table with secrets
//!   redacted ([`redact_text`], [`redact_value`]); rows sealed with an HMAC under a key
//!   kept outside the database and each head appended to a separate file
//!   ([`AuditFiles`]); [`AuditLog::verify`] checks the chain, the key, the head file,
//!   heads the user kept and that every applied proposal has its entry, and names the
//!   first failed check; JSON Lines export of the newest rows;
//! - the data-flow guard ([`DataFlowGuard`]): once a chat read the user's private data,
//!   a request to a site the user did not name waits for the user's permission;
//! - emptying the trash ([`empty_trash`]), audited, whether the user asks or
//!   `[history] trash_days` passed;
//! - the seam through which a toolbox asks the user before a call runs
//!   ([`PermissionAsker`], put in scope by the agent whose turn waits).
//!
//! It does not own any concrete tool (calendar, fetch and others implement
//! [`ToolHandler`](hearth_core::ToolHandler) in their crates), storage (hearth-store),
//! or how users are authenticated (the CLI and the server decide who holds a gate).

mod actor;
mod audit;
mod canonical;
mod error;
mod flow;
mod gate;
mod permission;
mod proposal;
mod redact;
mod registry;
mod trash;

pub use actor::{Actor, UserActor};
pub use audit::{
    AUDIT_HEAD_FILE, AUDIT_KEY_FILE, AuditCheck, AuditEntry, AuditFiles, AuditKind, AuditLog,
    AuditOutcome, AuditRow, BrokenLink, ChainHead, ChainHeadError, ChainReport,
    DEFAULT_EXPORT_KEEP, Decision, MAX_EXPORT_KEEP,
};
pub use canonical::{canonical_json, sha256_hex, value_hash};
pub use error::{Result, ToolsError};
pub use flow::{ChatHistory, DataFlowGuard, FlowFacts, Taint, Trusted};
pub use gate::ApprovalGate;
pub use hearth_store::{AuditQuery, ProposalQuery, ProposalStatus};
pub use permission::{
    PermissionAsker, PermissionQuestion, PermissionReply, permission_asker, tool_call_options,
    tool_call_options_for_chat, with_permission_asker,
};
pub use proposal::{ApplyOutcome, Decided, Proposal, ProposalList};
pub use redact::{REDACTED, is_secret_name, redact_text, redact_value};
pub use registry::{
    CallAdmission, Clock, DEFAULT_PROPOSAL_EXPIRY_DAYS, RegistryBuilder, ToolRegistry,
    staged_message,
};
pub use trash::{Emptying, empty_trash, purge_at};
