//! The audit log: every tool call, fetch, proposal decision and permission answer,
//! appended to a hash-chained, append-only table with secrets redacted.
//!
//! Each row is sealed with an HMAC-SHA256 under a key kept in a file beside the database
//! (`audit.key`), and each row's sequence number and hash are also appended to a head
//! file (`audit.head`), so that rewriting rows without the key, or cutting rows from the
//! end, fails [`AuditLog::verify`]. Rows written before rows were keyed keep their plain
//! SHA-256 chain and still verify.

mod entry;
mod head;
mod key;
mod verify;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use hearth_core::{ChatUri, now};
use hearth_store::{AuditDraft, AuditQuery, AuditRecord, AuditStore, StoreError};
use serde_json::json;

use crate::actor::{Actor, UserActor};
use crate::error::Result;

pub use entry::{AuditEntry, AuditKind, AuditOutcome, AuditRow, Decision};
pub use head::{ChainHead, ChainHeadError};
pub use verify::{AuditCheck, BrokenLink, ChainReport};

use head::HeadFile;
use key::AuditKey;

/// Rows an export keeps unless told otherwise.
pub const DEFAULT_EXPORT_KEEP: usize = 1000;

/// The most rows one export holds.
pub const MAX_EXPORT_KEEP: usize = 100_000;

/// The key file's name in the data directory.
pub const AUDIT_KEY_FILE: &str = "audit.key";

/// The head file's name in the data directory.
pub const AUDIT_HEAD_FILE: &str = "audit.head";

/// Where a log keeps its key and its head file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditFiles {
    /// The key that seals rows: 32 random bytes, mode 0600, made on the first append.
    pub key: PathBuf,
    /// The head file: one line `SEQ HASH TIME` appended per row, mode 0600.
    pub head: PathBuf,
}

impl AuditFiles {
    /// [`AUDIT_KEY_FILE`] and [`AUDIT_HEAD_FILE`] in `directory` (the data directory).
    pub fn in_dir(directory: &Path) -> Self {
        Self {
            key: directory.join(AUDIT_KEY_FILE),
            head: directory.join(AUDIT_HEAD_FILE),
        }
    }
}

struct Inner {
    store: Arc<dyn AuditStore>,
    /// `None` for a log in memory (sealed with a key that lives as long as the process).
    files: Option<AuditFiles>,
    head: Option<HeadFile>,
    /// The key, once loaded (or made).
    key: Mutex<Option<AuditKey>>,
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
    /// The log kept in `store`, with its key and head file beside the database
    /// ([`AuditFiles::in_dir`] of its directory).
    pub fn new(store: Arc<dyn AuditStore>) -> Self {
        let files = store.database_file().map(|database| {
            AuditFiles::in_dir(
                database
                    .parent()
                    .filter(|parent| !parent.as_os_str().is_empty())
                    .unwrap_or(Path::new(".")),
            )
        });
        Self::build(store, files)
    }

    /// The log kept in `store`, with its key and head file where `files` says.
    pub fn with_files(store: Arc<dyn AuditStore>, files: AuditFiles) -> Self {
        Self::build(store, Some(files))
    }

    fn build(store: Arc<dyn AuditStore>, files: Option<AuditFiles>) -> Self {
        Self {
            inner: Arc::new(Inner {
                head: files
                    .as_ref()
                    .map(|files| HeadFile::new(files.head.clone())),
                files,
                store,
                key: Mutex::new(None),
                pending: Mutex::new(Vec::new()),
                writer: tokio::sync::Mutex::new(()),
            }),
        }
    }

    /// Where the key and head file are (`None` for a log in memory).
    pub fn files(&self) -> Option<&AuditFiles> {
        self.inner.files.as_ref()
    }

    /// The key that seals new rows: loaded once; made only while no row is keyed, so a
    /// lost key is never silently replaced.
    async fn sealing_key(&self) -> Result<AuditKey> {
        if let Some(key) = self
            .inner
            .key
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
        {
            return Ok(key.clone());
        }
        let last_keyed = self.inner.store.last_keyed_audit().await?;
        let key = match &self.inner.files {
            None => key::ephemeral()?,
            Some(files) => match (key::read(&files.key)?, &last_keyed) {
                (Some(key), _) => key,
                (None, None) => key::create(&files.key)?,
                (None, Some(last)) => {
                    return Err(StoreError::Conflict(format!(
                        "the audit key {} is missing, but the audit log's entries up to {} are sealed with key {}; restore the key file from a backup of the data directory (Hearth does not make a new key while entries sealed with one exist, and records nothing until then)",
                        files.key.display(),
                        last.seq,
                        last.key_id
                    ))
                    .into());
                }
            },
        };
        if let Some(last) = &last_keyed
            && last.key_id != key.id()
        {
            let file = self.inner.files.as_ref().map_or_else(
                || "the in-memory key".to_owned(),
                |files| files.key.display().to_string(),
            );
            return Err(StoreError::Conflict(format!(
                "{file} holds key {}, but the audit log's entries up to {} are sealed with key {}; restore the key file that sealed them (Hearth records nothing until then)",
                key.id(),
                last.seq,
                last.key_id
            ))
            .into());
        }
        *self
            .inner
            .key
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(key.clone());
        Ok(key)
    }

    /// Appends one row, sealed, and records its head (the caller holds the writer lock).
    async fn append_sealed(&self, draft: &AuditDraft) -> Result<AuditRecord> {
        let key = self.sealing_key().await?;
        let record = self.inner.store.append_audit(draft, &key).await?;
        // The row is stored; a head file that cannot be written is a warning, not a
        // failed append (retrying would store the row twice). Verify notes the gap.
        if let Some(head) = &self.inner.head {
            let file = head.clone();
            let line = HeadFile::line(&record);
            let written = tokio::task::spawn_blocking(move || file.append(&line)).await;
            let failure = match written {
                Ok(Ok(())) => None,
                Ok(Err(error)) => Some(error.to_string()),
                Err(error) => Some(error.to_string()),
            };
            if let Some(error) = failure {
                tracing::warn!(
                    seq = record.seq,
                    "could not record the audit log's head in {}: {error}",
                    head.path().display()
                );
            }
        }
        Ok(record)
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
            if let Err(error) = self.append_sealed(&draft).await {
                let mut pending = self
                    .inner
                    .pending
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                let rest: Vec<AuditDraft> = std::iter::once(draft).chain(queued).collect();
                pending.splice(0..0, rest);
                return Err(error);
            }
        }
        Ok(())
    }

    /// Appends an entry (after any queued ones); durable when it returns.
    pub async fn append(&self, entry: AuditEntry) -> Result<AuditRow> {
        let draft = entry.draft(now());
        let _writer = self.inner.writer.lock().await;
        self.write_pending().await?;
        let record = self.append_sealed(&draft).await?;
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
