//! The head file: after each keyed row is committed, one line `SEQ HASH TIME` is appended
//! to a file beside the database (mode 0600), so that cutting rows from the end of the
//! table, or rewriting rows, shows against a record kept outside it.
//!
//! Several processes append to one log: each writes its line after its own commit, so
//! lines may be out of order, and a process that stops between its commit and its line
//! leaves the newest rows without one. Verifying reads the file before the table, takes
//! the highest sequence number as the head, and checks every line against its row.

use std::fmt;
use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use chrono::SecondsFormat;
use hearth_store::AuditRecord;
use serde::Serialize;

use super::key::private_options;

/// The first line of a new head file.
const PREAMBLE: &str = "# Hearth audit log heads: entry, hash, time (one line per entry). Keep the last line somewhere else too; `hearth audit verify --head SEQ:HASH` checks the log still holds it.\n";

/// A point of the chain: an entry's sequence number and hash. Written `SEQ:HASH`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChainHead {
    /// The entry's sequence number (the chain's length up to it).
    pub seq: i64,
    /// The entry's hash.
    pub hash: String,
}

impl fmt::Display for ChainHead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.seq, self.hash)
    }
}

/// Text that is not `SEQ:HASH`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a head: expected SEQ:HASH, a positive entry number and 64 hex characters, as `hearth audit verify` prints it"
)]
pub struct ChainHeadError(String);

impl FromStr for ChainHead {
    type Err = ChainHeadError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = || ChainHeadError(text.to_owned());
        let (seq, hash) = text.trim().split_once(':').ok_or_else(error)?;
        let seq: i64 = seq.parse().map_err(|_| error())?;
        if seq < 1 || !is_hash(hash) {
            return Err(error());
        }
        Ok(Self {
            seq,
            hash: hash.to_ascii_lowercase(),
        })
    }
}

fn is_hash(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|byte| byte.is_ascii_hexdigit())
}

/// One line of the head file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HeadLine {
    pub head: ChainHead,
    /// When the entry was recorded, as the line says.
    pub at: String,
}

/// What the head file holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct HeadLines {
    /// Whether the file exists.
    pub exists: bool,
    /// Its lines, by sequence number (stable: lines for one entry keep their order).
    pub lines: Vec<HeadLine>,
    /// Lines that could not be read (a line torn by a crash, or edited).
    pub unreadable: usize,
}

impl HeadLines {
    /// The line with the highest sequence number.
    pub fn newest(&self) -> Option<&HeadLine> {
        self.lines.last()
    }
}

/// The head file of one log.
#[derive(Clone, Debug)]
pub(crate) struct HeadFile {
    path: PathBuf,
}

impl HeadFile {
    pub fn new(path: PathBuf) -> Self {
        Self { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The line of a committed row: `SEQ HASH TIME` (RFC 3339, UTC, milliseconds).
    pub fn line(record: &AuditRecord) -> String {
        format!(
            "{} {} {}\n",
            record.seq,
            record.hash,
            record.entry.at.to_rfc3339_opts(SecondsFormat::Millis, true)
        )
    }

    /// Appends `line` (see [`line`](Self::line)) in one write, synced; a new file starts
    /// with a comment saying what it is.
    pub fn append(&self, line: &str) -> io::Result<()> {
        let (mut file, text) = match private_options()
            .append(true)
            .create_new(true)
            .open(&self.path)
        {
            Ok(file) => (file, format!("{PREAMBLE}{line}")),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => (
                fs::OpenOptions::new().append(true).open(&self.path)?,
                line.to_owned(),
            ),
            Err(error) => return Err(error),
        };
        file.write_all(text.as_bytes())?;
        file.sync_data()
    }

    /// Reads every line.
    pub fn read(&self) -> io::Result<HeadLines> {
        let text = match fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                return Ok(HeadLines::default());
            }
            Err(error) => return Err(error),
        };
        let mut read = HeadLines {
            exists: true,
            ..HeadLines::default()
        };
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            match parse_line(line) {
                Some(line) => read.lines.push(line),
                None => read.unreadable += 1,
            }
        }
        read.lines.sort_by_key(|line| line.head.seq);
        Ok(read)
    }
}

fn parse_line(line: &str) -> Option<HeadLine> {
    let mut fields = line.split_whitespace();
    let seq: i64 = fields.next()?.parse().ok()?;
    let hash = fields.next()?;
    let at = fields.next()?;
    if seq < 1 || !is_hash(hash) || fields.next().is_some() {
        return None;
    }
    Some(HeadLine {
        head: ChainHead {
            seq,
            hash: hash.to_ascii_lowercase(),
        },
        at: at.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use hearth_store::AuditDraft;
    use pretty_assertions::assert_eq;

    use super::*;

    fn record(seq: i64, hash: char) -> AuditRecord {
        AuditRecord {
            seq,
            entry: AuditDraft {
                at: chrono::DateTime::from_timestamp_millis(1_700_000_000_123).unwrap(),
                actor: "user".into(),
                kind: "tool_call".into(),
                tool: None,
                argument_hash: None,
                proposal_id: None,
                decision: "ran".into(),
                outcome: "ok".into(),
                detail: None,
            },
            prev_hash: String::new(),
            key_id: None,
            hash: hash.to_string().repeat(64),
        }
    }

    #[test]
    fn lines_are_appended_and_read_back_in_sequence_order() {
        let dir = tempfile::tempdir().unwrap();
        let file = HeadFile::new(dir.path().join("audit.head"));
        assert_eq!(file.read().unwrap(), HeadLines::default());
        // Two processes may append out of order.
        file.append(&HeadFile::line(&record(2, 'b'))).unwrap();
        file.append(&HeadFile::line(&record(1, 'a'))).unwrap();
        let text = fs::read_to_string(file.path()).unwrap();
        assert!(text.starts_with("# Hearth audit log heads"), "{text}");
        assert!(
            text.ends_with(&format!(
                "\n1 {} 2023-11-14T22:13:20.123Z\n",
                "a".repeat(64)
            )),
            "{text}"
        );
        let read = file.read().unwrap();
        assert_eq!(
            read.lines
                .iter()
                .map(|line| line.head.to_string())
                .collect::<Vec<_>>(),
            [
                format!("1:{}", "a".repeat(64)),
                format!("2:{}", "b".repeat(64))
            ]
        );
        assert_eq!(read.newest().unwrap().head.seq, 2);
        assert_eq!(read.unreadable, 0);
    }

    #[test]
    fn a_torn_line_is_counted_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let file = HeadFile::new(dir.path().join("audit.head"));
        file.append(&HeadFile::line(&record(1, 'a'))).unwrap();
        let mut handle = fs::OpenOptions::new()
            .append(true)
            .open(file.path())
            .unwrap();
        handle.write_all(b"2 bbbb").unwrap();
        let read = file.read().unwrap();
        assert_eq!((read.lines.len(), read.unreadable), (1, 1));
    }

    #[test]
    fn a_head_parses_from_what_verify_prints() {
        let head = ChainHead {
            seq: 12,
            hash: "c".repeat(64),
        };
        assert_eq!(head.to_string().parse::<ChainHead>().unwrap(), head);
        let short_hash = format!("3:{}", "c".repeat(63));
        let zero = format!("0:{}", "c".repeat(64));
        for bad in ["12", "x:y", short_hash.as_str(), zero.as_str()] {
            assert!(bad.parse::<ChainHead>().is_err(), "{bad}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn the_file_is_readable_by_its_owner_only() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let file = HeadFile::new(dir.path().join("audit.head"));
        file.append(&HeadFile::line(&record(1, 'a'))).unwrap();
        let mode = fs::metadata(file.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
