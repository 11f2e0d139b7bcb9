//! Verifying the audit log: the chain, the key, the head file, the heads a user kept,
//! and the applied proposals, in that order.

use std::path::PathBuf;

use hearth_store::{AUDIT_GENESIS_HASH, AuditRecord, AuditSealer, StoreError};
use serde::Serialize;

use super::head::{ChainHead, HeadFile, HeadLine, HeadLines};
use super::key::{self, AuditKey};
use super::{AuditFiles, AuditLog};
use crate::error::Result;

/// Rows read per batch while verifying.
const VERIFY_BATCH: u32 = 1000;

/// Applied proposals without an entry named in a report, at most.
const UNAUDITED_SHOWN: u32 = 20;

/// The checks [`AuditLog::verify`] makes; a failure names the one that failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditCheck {
    /// Each row follows the one before it: the next sequence number, linked to the
    /// previous row's hash, and its hash recomputes (HMAC-SHA256 under the key for keyed
    /// rows, plain SHA-256 for rows written before rows were keyed); no unkeyed row
    /// follows a keyed one.
    Chain,
    /// Keyed rows were sealed with the key in the key file: the file is there, readable,
    /// and holds the key whose id the rows name.
    Key,
    /// Every line of the head file names its row's hash.
    Head,
    /// The table reaches the newest line of the head file (no rows were cut from the
    /// end), and the head file exists once rows are keyed.
    Tail,
    /// The table holds each head the user kept and passed to verify.
    Kept,
    /// Every applied proposal has its `applied` entry.
    Proposals,
}

impl AuditCheck {
    /// The check's name, as reports show it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Chain => "chain",
            Self::Key => "key",
            Self::Head => "head",
            Self::Tail => "tail",
            Self::Kept => "kept head",
            Self::Proposals => "proposals",
        }
    }
}

/// The first failed check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BrokenLink {
    /// Which check failed.
    pub check: AuditCheck,
    /// The row it failed at, when it is about one row.
    pub seq: Option<i64>,
    /// What is wrong, and what to do.
    pub reason: String,
}

/// What the user is told: where the log broke, which check, why, and whether the
/// entries after it can be trusted.
impl std::fmt::Display for BrokenLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the audit log is broken")?;
        if let Some(seq) = self.seq {
            write!(f, " at entry {seq}")?;
        }
        write!(f, " ({} check): {}", self.check.as_str(), self.reason)?;
        match self.check {
            AuditCheck::Chain | AuditCheck::Key | AuditCheck::Head => write!(
                f,
                "; entries from there on cannot be trusted (an export or a head kept from before shows what they were)"
            ),
            AuditCheck::Tail | AuditCheck::Kept | AuditCheck::Proposals => Ok(()),
        }
    }
}

/// What verifying found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChainReport {
    /// Rows checked (up to and including the first broken one).
    pub rows: u64,
    /// The last row, when every check passed: the head for the user to keep somewhere
    /// Hearth cannot write, and to pass to a later verify.
    pub head: Option<ChainHead>,
    /// The first row sealed with the key; rows before it were written before rows were
    /// keyed and are chained with plain SHA-256 (the first keyed row's seal covers them).
    pub keyed_from: Option<i64>,
    /// The id of the key the rows are sealed with.
    pub key_id: Option<String>,
    /// The key file (`None` for a log in memory).
    pub key_file: Option<PathBuf>,
    /// The head file (`None` for a log in memory).
    pub head_file: Option<PathBuf>,
    /// The newest head the head file records.
    pub recorded_head: Option<ChainHead>,
    /// What is worth knowing but does not fail the log.
    pub notes: Vec<String>,
    /// The first failed check, if any.
    pub broken: Option<BrokenLink>,
}

impl ChainReport {
    /// Whether every check passed.
    pub fn is_intact(&self) -> bool {
        self.broken.is_none()
    }
}

fn short(hash: &str) -> &str {
    hash.get(..16).unwrap_or(hash)
}

/// The walk's state.
struct Walk<'a> {
    key: &'a std::result::Result<Option<AuditKey>, StoreError>,
    key_file: String,
    head_file: String,
    lines: &'a [HeadLine],
    /// The next head line to compare.
    next_line: usize,
    kept: Vec<(ChainHead, Option<String>)>,
    expected_seq: i64,
    previous: String,
    rows: u64,
    keyed_from: Option<i64>,
}

impl Walk<'_> {
    fn broken(check: AuditCheck, seq: i64, reason: String) -> Option<BrokenLink> {
        Some(BrokenLink {
            check,
            seq: Some(seq),
            reason,
        })
    }

    /// Checks one row (in the order [`AuditLog::verify_with`] documents).
    fn check(&mut self, record: &AuditRecord) -> Option<BrokenLink> {
        let seq = record.seq;
        if seq != self.expected_seq {
            let reason = format!("entries {} to {} are missing", self.expected_seq, seq - 1);
            return Self::broken(AuditCheck::Chain, seq, reason);
        }
        if record.prev_hash != self.previous {
            let reason = "it does not link to the entry before it".to_owned();
            return Self::broken(AuditCheck::Chain, seq, reason);
        }
        let expected = match (&record.key_id, self.keyed_from) {
            (None, Some(from)) => {
                let reason = format!(
                    "it is not sealed with the key, though entries {from} to {} before it are: it was rewritten with a plain hash",
                    seq - 1
                );
                return Self::broken(AuditCheck::Chain, seq, reason);
            }
            (None, None) => key::plain_seal(record),
            (Some(id), _) => {
                self.keyed_from.get_or_insert(seq);
                match self.key {
                    Ok(Some(key)) if key.id() == id => key.seal(record),
                    Ok(Some(key)) => {
                        let reason = format!(
                            "it is sealed with key {id}, but {} holds key {}: restore the key file that sealed the log (from a backup of the data directory)",
                            self.key_file,
                            key.id()
                        );
                        return Self::broken(AuditCheck::Key, seq, reason);
                    }
                    Ok(None) => {
                        let reason = format!(
                            "it is sealed with key {id}, but the key file {} is missing, so the entries from here on cannot be checked; restore it from a backup of the data directory (Hearth does not make a new key while entries sealed with one exist)",
                            self.key_file
                        );
                        return Self::broken(AuditCheck::Key, seq, reason);
                    }
                    Err(error) => {
                        let reason = format!("it is sealed with key {id}, but {error}");
                        return Self::broken(AuditCheck::Key, seq, reason);
                    }
                }
            }
        };
        if expected != record.hash {
            let reason = if record.key_id.is_some() {
                "its content does not match its seal (it was changed)"
            } else {
                "its content does not match its hash (it was changed)"
            };
            return Self::broken(AuditCheck::Chain, seq, reason.to_owned());
        }
        while let Some(line) = self.lines.get(self.next_line)
            && line.head.seq <= seq
        {
            self.next_line += 1;
            if line.head.seq == seq && line.head.hash != record.hash {
                let reason = format!(
                    "the head file {} recorded entry {seq} as {} at {}, but the entry now hashes to {}: it was rewritten and re-sealed with the key (or the head file was edited)",
                    self.head_file,
                    short(&line.head.hash),
                    line.at,
                    short(&record.hash)
                );
                return Self::broken(AuditCheck::Head, seq, reason);
            }
        }
        for (kept, found) in &mut self.kept {
            if kept.seq == seq {
                *found = Some(record.hash.clone());
            }
        }
        self.rows += 1;
        self.previous.clone_from(&record.hash);
        self.expected_seq += 1;
        None
    }
}

impl AuditLog {
    /// [`verify_with`](Self::verify_with) without kept heads.
    pub async fn verify(&self) -> Result<ChainReport> {
        self.verify_with(&[]).await
    }

    /// Verifies the log, in this order, and reports the first failed check:
    ///
    /// 1. Reads the head file (before the table, so each line it holds names a row that
    ///    was committed) and the key file.
    /// 2. Walks the rows from the first; for each: its sequence number is the next one
    ///    and it links to the previous hash ([`AuditCheck::Chain`]); a keyed row's key is
    ///    the key file's ([`AuditCheck::Key`]); its hash recomputes, and no unkeyed row
    ///    follows a keyed one ([`AuditCheck::Chain`]); each head-file line for it names
    ///    its hash ([`AuditCheck::Head`]).
    /// 3. The table reaches the newest head-file line, and the head file exists once
    ///    rows are keyed ([`AuditCheck::Tail`]).
    /// 4. Each of `kept` (heads printed by an earlier verify and kept elsewhere) is in
    ///    the table ([`AuditCheck::Kept`]).
    /// 5. Every applied proposal has an `applied` entry ([`AuditCheck::Proposals`]).
    pub async fn verify_with(&self, kept: &[ChainHead]) -> Result<ChainReport> {
        self.flush().await?;
        let files = self.inner.files.as_ref();
        let head_file = self.inner.head.as_ref();
        let lines = match head_file {
            Some(file) => file
                .read()
                .map_err(|error| StoreError::from_io(file.path(), &error))?,
            None => HeadLines::default(),
        };
        let key = match files {
            Some(files) => key::read(&files.key),
            None => key::ephemeral().map(Some),
        };
        let mut report = first_report(files, head_file, &lines);
        let mut walk = Walk {
            key: &key,
            key_file: files.map_or_else(
                || "the in-memory key".to_owned(),
                |files| files.key.display().to_string(),
            ),
            head_file: head_file.map_or_else(
                || "(none)".to_owned(),
                |file| file.path().display().to_string(),
            ),
            lines: &lines.lines,
            next_line: 0,
            kept: kept.iter().map(|head| (head.clone(), None)).collect(),
            expected_seq: 1,
            previous: AUDIT_GENESIS_HASH.to_owned(),
            rows: 0,
            keyed_from: None,
        };
        let walked = self.walk_rows(&mut walk).await?;
        report.keyed_from = walk.keyed_from;
        let last_seq = match walked {
            Ok(last_seq) => last_seq,
            Err(broken) => {
                report.rows = walk.rows + 1;
                report.broken = Some(broken);
                return Ok(report);
            }
        };
        report.rows = walk.rows;
        if let (Some(_), Ok(Some(key))) = (walk.keyed_from, &key) {
            report.key_id = Some(key.id().to_owned());
        }
        report.broken = tail(&report, &lines, last_seq, &walk.head_file)
            .or_else(|| kept_heads(&walk.kept, last_seq));
        if report.broken.is_none() {
            report.broken = self.unaudited_applies().await?;
        }
        if report.broken.is_none() {
            notes(&mut report, &lines, last_seq, &walk.head_file);
            report.head = (last_seq > 0).then(|| ChainHead {
                seq: last_seq,
                hash: walk.previous.clone(),
            });
        }
        Ok(report)
    }

    /// Check 2: walks every row in batches; the last row's sequence number, or the first
    /// broken link.
    async fn walk_rows(&self, walk: &mut Walk<'_>) -> Result<std::result::Result<i64, BrokenLink>> {
        loop {
            let batch = self
                .inner
                .store
                .audit_after(walk.expected_seq - 1, VERIFY_BATCH)
                .await?;
            if batch.is_empty() {
                return Ok(Ok(walk.expected_seq - 1));
            }
            for record in &batch {
                if let Some(broken) = walk.check(record) {
                    return Ok(Err(broken));
                }
            }
        }
    }

    /// Check 5: every applied proposal has its `applied` entry.
    async fn unaudited_applies(&self) -> Result<Option<BrokenLink>> {
        let unaudited = self.inner.store.unaudited_applies(UNAUDITED_SHOWN).await?;
        if unaudited.is_empty() {
            return Ok(None);
        }
        let ids: Vec<&str> = unaudited
            .iter()
            .map(|apply| apply.proposal_id.as_str())
            .collect();
        Ok(Some(BrokenLink {
            check: AuditCheck::Proposals,
            seq: None,
            reason: format!(
                "applied proposal(s) {} have no `applied` entry in the audit log: entries about them were removed, or could not be written when they were applied (if one was being applied just now, verify again)",
                ids.join(", ")
            ),
        }))
    }
}

/// The report before any row is read: where the key and head files are, the newest head
/// the head file records, and a note on its unreadable lines.
fn first_report(
    files: Option<&AuditFiles>,
    head_file: Option<&HeadFile>,
    lines: &HeadLines,
) -> ChainReport {
    let mut report = ChainReport {
        rows: 0,
        head: None,
        keyed_from: None,
        key_id: None,
        key_file: files.map(|files| files.key.clone()),
        head_file: head_file.map(|file| file.path().to_path_buf()),
        recorded_head: lines.newest().map(|line| line.head.clone()),
        notes: Vec::new(),
        broken: None,
    };
    if lines.unreadable > 0 {
        report.notes.push(format!(
            "the head file {} has {} unreadable line(s), skipped (a line torn by a crash, or an edit)",
            head_file.map_or_else(String::new, |file| file.path().display().to_string()),
            lines.unreadable
        ));
    }
    report
}

/// Check 3: the table reaches the head file's newest line.
fn tail(
    report: &ChainReport,
    lines: &HeadLines,
    last_seq: i64,
    head_file: &str,
) -> Option<BrokenLink> {
    let restored = format!(
        "if you restored the database from a backup, this is expected: move {head_file} aside and the next entry starts a new one"
    );
    match lines.newest() {
        Some(newest) if newest.head.seq > last_seq => {
            let cut = if last_seq == 0 {
                format!(
                    "the table has no entries, but the head file {head_file} records entry {} ({}): every entry was deleted",
                    newest.head.seq, newest.at
                )
            } else {
                format!(
                    "the table ends at entry {last_seq}, but the head file {head_file} records entry {} ({}): entries {} to {} were cut from the end",
                    newest.head.seq,
                    newest.at,
                    last_seq + 1,
                    newest.head.seq
                )
            };
            Some(BrokenLink {
                check: AuditCheck::Tail,
                seq: Some(last_seq + 1),
                reason: format!("{cut}; {restored}"),
            })
        }
        _ => match report.keyed_from {
            Some(from) if report.head_file.is_some() && !lines.exists => Some(BrokenLink {
                check: AuditCheck::Tail,
                seq: None,
                reason: format!(
                    "the head file {head_file} is missing, though the entries from {from} on are keyed: it was deleted, so entries may have been cut from the end with it; {restored}"
                ),
            }),
            _ => None,
        },
    }
}

/// Check 4: the table holds each kept head.
fn kept_heads(kept: &[(ChainHead, Option<String>)], last_seq: i64) -> Option<BrokenLink> {
    kept.iter().find_map(|(head, found)| {
        let reason = match found {
            Some(hash) if *hash == head.hash => return None,
            Some(hash) => format!(
                "you kept entry {} as {}, but it now hashes to {}: the log was rewritten (with the key, and the head file with it)",
                head.seq,
                short(&head.hash),
                short(hash)
            ),
            None => format!(
                "you kept entry {} as {}, but the table ends at entry {last_seq}: entries were cut from the end (and the head file with them)",
                head.seq,
                short(&head.hash)
            ),
        };
        Some(BrokenLink {
            check: AuditCheck::Kept,
            seq: Some(head.seq),
            reason,
        })
    })
}

/// What an intact log's report says besides.
fn notes(report: &mut ChainReport, lines: &HeadLines, last_seq: i64, head_file: &str) {
    match (report.keyed_from, &report.key_file) {
        (None, Some(key_file)) if last_seq > 0 => report.notes.push(format!(
            "no entry is sealed with a key yet (entries 1 to {last_seq} use the older plain hash chain); the next entry makes the key {}",
            key_file.display()
        )),
        _ => {}
    }
    if let (true, Some(from)) = (report.head_file.is_some(), report.keyed_from) {
        let recorded = lines.newest().map_or(0, |line| line.head.seq);
        let first = recorded.max(from - 1) + 1;
        if first <= last_seq {
            report.notes.push(format!(
                "entries {first} to {last_seq} have no line in the head file {head_file} (a process stopped, or could not write it, after storing them)"
            ));
        }
    }
}
