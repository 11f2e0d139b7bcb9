//! The audit log: every tool call, fetch, proposal decision and permission answer,
//! appended to a hash-chained, append-only table with secrets redacted.

use std::sync::{Arc, Mutex, PoisonError};

use hearth_core::{ChatUri, ProposalId, Timestamp, now};
use hearth_store::{AuditDraft, AuditQuery, AuditRecord, AuditStore};
use serde::Serialize;
use serde_json::{Value, json};

use crate::actor::{Actor, UserActor};
use crate::canonical::{canonical_json, sha256_hex, value_hash};
use crate::error::Result;
use crate::redact::{redact_text, redact_value};

/// Rows an export keeps unless told otherwise.
pub const DEFAULT_EXPORT_KEEP: usize = 1000;

/// The most rows one export holds.
pub const MAX_EXPORT_KEEP: usize = 100_000;

/// Detail larger than this (as JSON) is stored as its size and hash only.
const MAX_DETAIL_BYTES: usize = 8 * 1024;

/// Rows read per batch while verifying.
const VERIFY_BATCH: u32 = 1000;

/// What kind of event a row records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditKind {
    /// An agent (or the user) called a tool.
    ToolCall,
    /// A tool fetched a URL.
    Fetch,
    /// A decision on a proposal, or applying it.
    Proposal,
    /// An agent's permission request, and its answer.
    Permission,
    /// An external agent wrote a file through Hearth.
    FileWrite,
    /// An external agent ran a command in a terminal Hearth gave it.
    Terminal,
}

impl AuditKind {
    /// The kind as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ToolCall => "tool_call",
            Self::Fetch => "fetch",
            Self::Proposal => "proposal",
            Self::Permission => "permission",
            Self::FileWrite => "file_write",
            Self::Terminal => "terminal",
        }
    }
}

/// What was decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// A read tool ran.
    Ran,
    /// A mutating tool's change was staged as a proposal.
    Staged,
    /// The call was not run: unknown tool or invalid arguments.
    Denied,
    /// A URL was fetched (or the fetch refused; see the outcome).
    Fetched,
    /// The user approved a proposal.
    Approved,
    /// The user rejected a proposal.
    Rejected,
    /// A proposal expired.
    Expired,
    /// A proposal was applied (see the outcome).
    Applied,
    /// A decision or apply was refused (wrong hash, wrong status, changed payload).
    Refused,
    /// The user answered a permission request.
    Answered,
    /// An agent asked for permission.
    Requested,
    /// The configured policy answered a permission request, or allowed or refused an
    /// agent's file or command request, without asking the user.
    Policy,
    /// A file was written.
    Written,
}

impl Decision {
    /// The decision as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ran => "ran",
            Self::Staged => "staged",
            Self::Denied => "denied",
            Self::Fetched => "fetched",
            Self::Approved => "approved",
            Self::Rejected => "rejected",
            Self::Expired => "expired",
            Self::Applied => "applied",
            Self::Refused => "refused",
            Self::Answered => "answered",
            Self::Requested => "requested",
            Self::Policy => "policy",
            Self::Written => "written",
        }
    }
}

/// How it ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuditOutcome {
    /// It worked (with a note, maybe).
    Ok(Option<String>),
    /// It failed or was refused.
    Error(String),
}

impl AuditOutcome {
    /// Success without a note.
    pub fn ok() -> Self {
        Self::Ok(None)
    }

    /// Success with a note.
    pub fn ok_with(note: impl Into<String>) -> Self {
        Self::Ok(Some(note.into()))
    }

    /// Failure.
    pub fn error(message: impl Into<String>) -> Self {
        Self::Error(message.into())
    }

    fn text(&self) -> String {
        match self {
            Self::Ok(None) => "ok".to_owned(),
            Self::Ok(Some(note)) => format!("ok: {note}"),
            Self::Error(message) => format!("error: {message}"),
        }
    }
}

/// One event to record.
#[derive(Clone, Debug, PartialEq)]
pub struct AuditEntry {
    /// Who acted.
    pub actor: Actor,
    /// What kind of event.
    pub kind: AuditKind,
    /// The tool involved.
    pub tool: Option<String>,
    /// SHA-256 of the canonical arguments or payload.
    pub argument_hash: Option<String>,
    /// The proposal involved.
    pub proposal: Option<ProposalId>,
    /// What was decided.
    pub decision: Decision,
    /// How it ended.
    pub outcome: AuditOutcome,
    /// More (redacted before it is stored; large detail is kept as size and hash).
    pub detail: Option<Value>,
}

impl AuditEntry {
    /// An entry without tool, arguments, proposal or detail.
    pub fn new(actor: Actor, kind: AuditKind, decision: Decision, outcome: AuditOutcome) -> Self {
        Self {
            actor,
            kind,
            tool: None,
            argument_hash: None,
            proposal: None,
            decision,
            outcome,
            detail: None,
        }
    }

    /// With the tool involved.
    pub fn tool(mut self, tool: impl Into<String>) -> Self {
        self.tool = Some(tool.into());
        self
    }

    /// With the hash of `arguments`.
    pub fn arguments(mut self, arguments: &Value) -> Self {
        self.argument_hash = Some(value_hash(arguments));
        self
    }

    /// With a hash computed elsewhere (a proposal's payload hash).
    pub fn argument_hash(mut self, hash: impl Into<String>) -> Self {
        self.argument_hash = Some(hash.into());
        self
    }

    /// With the proposal involved.
    pub fn proposal(mut self, id: ProposalId) -> Self {
        self.proposal = Some(id);
        self
    }

    /// With detail.
    pub fn detail(mut self, detail: Value) -> Self {
        self.detail = Some(detail);
        self
    }

    /// The row to store: secrets redacted, detail capped.
    fn draft(&self, at: Timestamp) -> AuditDraft {
        let detail = self.detail.as_ref().map(|detail| {
            let text = canonical_json(&redact_value(detail));
            if text.len() > MAX_DETAIL_BYTES {
                canonical_json(&json!({
                    "truncated": true,
                    "bytes": text.len(),
                    "sha256": sha256_hex(text.as_bytes()),
                }))
            } else {
                text
            }
        });
        AuditDraft {
            at,
            actor: self.actor.audit_name(),
            kind: self.kind.as_str().to_owned(),
            tool: self.tool.clone(),
            argument_hash: self.argument_hash.clone(),
            proposal_id: self.proposal.as_ref().map(|id| id.as_str().to_owned()),
            decision: self.decision.as_str().to_owned(),
            outcome: redact_text(&self.outcome.text()),
            detail,
        }
    }
}

/// A stored row, as listings and exports show it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AuditRow {
    /// Position in the chain, from 1.
    pub seq: i64,
    /// When.
    pub at: Timestamp,
    /// Who: an agent's chat URI, `user` or `hearth`.
    pub actor: String,
    /// What kind of event.
    pub kind: String,
    /// The tool.
    pub tool: Option<String>,
    /// SHA-256 of the arguments or payload.
    pub argument_hash: Option<String>,
    /// The proposal.
    pub proposal_id: Option<String>,
    /// What was decided.
    pub decision: String,
    /// How it ended (`ok`, `ok: …`, `error: …`).
    pub outcome: String,
    /// More, redacted.
    pub detail: Option<Value>,
    /// The previous row's hash.
    pub prev_hash: String,
    /// This row's hash.
    pub hash: String,
}

impl From<AuditRecord> for AuditRow {
    fn from(record: AuditRecord) -> Self {
        let entry = record.entry;
        let detail = entry
            .detail
            .map(|text| serde_json::from_str(&text).unwrap_or(Value::String(text)));
        Self {
            seq: record.seq,
            at: entry.at,
            actor: entry.actor,
            kind: entry.kind,
            tool: entry.tool,
            argument_hash: entry.argument_hash,
            proposal_id: entry.proposal_id,
            decision: entry.decision,
            outcome: entry.outcome,
            detail,
            prev_hash: record.prev_hash,
            hash: record.hash,
        }
    }
}

/// The first row where the chain breaks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BrokenLink {
    /// The row's sequence number.
    pub seq: i64,
    /// What is wrong with it.
    pub reason: String,
}

/// What walking the chain found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChainReport {
    /// Rows checked (up to and including the first broken one).
    pub rows: u64,
    /// The last row's hash, when the chain is intact; compare it with an earlier export
    /// to notice rows cut from the end.
    pub head: Option<String>,
    /// The first broken row, if any.
    pub broken: Option<BrokenLink>,
}

impl ChainReport {
    /// Whether every row links and hashes as it should.
    pub fn is_intact(&self) -> bool {
        self.broken.is_none()
    }
}

/// A row's hash: SHA-256 over its sequence number, content and the previous hash.
fn seal(record: &AuditRecord) -> String {
    let entry = &record.entry;
    let content = json!([
        "hearth-audit-1",
        record.seq,
        entry.at.timestamp_millis(),
        entry.actor,
        entry.kind,
        entry.tool,
        entry.argument_hash,
        entry.proposal_id,
        entry.decision,
        entry.outcome,
        entry.detail,
        record.prev_hash,
    ]);
    sha256_hex(content.to_string().as_bytes())
}

struct Inner {
    store: Arc<dyn AuditStore>,
    /// Entries recorded without waiting (from synchronous hooks), not yet written.
    pending: Mutex<Vec<AuditDraft>>,
    /// Serializes this process's writes, so rows keep the order they were recorded in.
    writer: tokio::sync::Mutex<()>,
}

/// Hearth's audit log. Cheap to clone; clones share one queue.
#[derive(Clone)]
pub struct AuditLog {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog").finish_non_exhaustive()
    }
}

impl AuditLog {
    /// The log kept in `store`.
    pub fn new(store: Arc<dyn AuditStore>) -> Self {
        Self {
            inner: Arc::new(Inner {
                store,
                pending: Mutex::new(Vec::new()),
                writer: tokio::sync::Mutex::new(()),
            }),
        }
    }

    fn take_pending(&self) -> Vec<AuditDraft> {
        std::mem::take(
            &mut *self
                .inner
                .pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    /// Writes queued entries; on failure the unwritten ones stay queued.
    async fn write_pending(&self) -> Result<()> {
        let mut queued = self.take_pending().into_iter();
        while let Some(draft) = queued.next() {
            if let Err(error) = self.inner.store.append_audit(&draft, seal).await {
                let mut pending = self
                    .inner
                    .pending
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                let rest: Vec<AuditDraft> = std::iter::once(draft).chain(queued).collect();
                pending.splice(0..0, rest);
                return Err(error.into());
            }
        }
        Ok(())
    }

    /// Appends an entry (after any queued ones); durable when it returns.
    pub async fn append(&self, entry: AuditEntry) -> Result<AuditRow> {
        let draft = entry.draft(now());
        let _writer = self.inner.writer.lock().await;
        self.write_pending().await?;
        let record = self.inner.store.append_audit(&draft, seal).await?;
        Ok(record.into())
    }

    /// Queues an entry from code that cannot wait (a synchronous hook) and writes it in
    /// the background; the next [`append`](Self::append) or [`flush`](Self::flush)
    /// writes it at the latest.
    pub fn record_detached(&self, entry: AuditEntry) {
        let draft = entry.draft(now());
        self.inner
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(draft);
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                let log = self.clone();
                handle.spawn(async move {
                    if let Err(error) = log.flush().await {
                        tracing::error!("could not write to the audit log: {error}");
                    }
                });
            }
            Err(_) => tracing::debug!("audit entry queued until the next write"),
        }
    }

    /// Writes every queued entry.
    pub async fn flush(&self) -> Result<()> {
        let _writer = self.inner.writer.lock().await;
        self.write_pending().await
    }

    /// Records the user's answer to an agent's permission request (for the host and
    /// the server, which resolve those requests).
    pub async fn record_permission(
        &self,
        by: &UserActor,
        chat: &ChatUri,
        request_id: &str,
        title: &str,
        option_id: &str,
    ) -> Result<AuditRow> {
        self.append(
            AuditEntry::new(
                Actor::User(by.clone()),
                AuditKind::Permission,
                Decision::Answered,
                AuditOutcome::ok_with(option_id),
            )
            .detail(json!({
                "chat": chat.to_string(),
                "request_id": request_id,
                "title": title,
                "option": option_id,
                "via": by.via(),
            })),
        )
        .await
    }

    /// Rows matching `query`, newest first.
    pub async fn list(&self, query: &AuditQuery) -> Result<Vec<AuditRow>> {
        self.flush().await?;
        let records = self.inner.store.audit_page(query).await?;
        Ok(records.into_iter().map(AuditRow::from).collect())
    }

    /// Walks the whole chain from the first row and names the first row that does not
    /// follow from the one before it (missing rows, a changed row, a broken link).
    pub async fn verify(&self) -> Result<ChainReport> {
        self.flush().await?;
        let mut expected_seq = 1;
        let mut previous = hearth_store::AUDIT_GENESIS_HASH.to_owned();
        let mut rows = 0;
        loop {
            let batch = self
                .inner
                .store
                .audit_after(expected_seq - 1, VERIFY_BATCH)
                .await?;
            if batch.is_empty() {
                let head = (rows > 0).then_some(previous);
                return Ok(ChainReport {
                    rows,
                    head,
                    broken: None,
                });
            }
            for record in batch {
                rows += 1;
                let reason = if record.seq != expected_seq {
                    Some(format!(
                        "rows {expected_seq} to {} are missing",
                        record.seq - 1
                    ))
                } else if record.prev_hash != previous {
                    Some("it does not link to the row before it".to_owned())
                } else if seal(&record) != record.hash {
                    Some("its content does not match its hash (it was changed)".to_owned())
                } else {
                    None
                };
                if let Some(reason) = reason {
                    return Ok(ChainReport {
                        rows,
                        head: None,
                        broken: Some(BrokenLink {
                            seq: record.seq,
                            reason,
                        }),
                    });
                }
                previous = record.hash;
                expected_seq += 1;
            }
        }
    }

    /// The newest `keep` rows (at most [`MAX_EXPORT_KEEP`]), oldest first.
    pub async fn export(&self, keep: usize) -> Result<Vec<AuditRow>> {
        self.flush().await?;
        if keep == 0 {
            return Ok(Vec::new());
        }
        let limit = u32::try_from(keep.min(MAX_EXPORT_KEEP)).unwrap_or(u32::MAX);
        let query = AuditQuery {
            limit,
            ..AuditQuery::default()
        };
        let mut records = self.inner.store.audit_page(&query).await?;
        records.reverse();
        Ok(records.into_iter().map(AuditRow::from).collect())
    }

    /// The newest `keep` rows as JSON Lines, oldest first.
    pub async fn export_jsonl(&self, keep: usize) -> Result<String> {
        let mut out = String::new();
        for row in self.export(keep).await? {
            // An AuditRow always serializes; a failure would be a bug worth a log line.
            match serde_json::to_string(&row) {
                Ok(line) => {
                    out.push_str(&line);
                    out.push('\n');
                }
                Err(error) => tracing::error!(seq = row.seq, "audit row not exported: {error}"),
            }
        }
        Ok(out)
    }
}
