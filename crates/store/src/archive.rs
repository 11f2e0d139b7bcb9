//! The lossless archive: JSON Lines, one record per line, each an object with a `type`.
//!
//! ```text
//! {"type":"header","format":"hearth-archive","version":1,"schema":12,"exportedAt":"…"}
//! {"type":"project","row":{…}}                  every column of the project's row
//! {"type":"session","row":{…}}                  every column but the row id
//! {"type":"chat","session":"<uri>","row":{…}}   every column but the row ids
//! {"type":"turn","chat":"<uri>","row":{…}}      every column (the body as stored)
//! {"type":"backing","row":{…}}                  a provider conversation behind a chat
//! {"type":"proposal","row":{…}}                 a change staged in the session
//! {"type":"end","records":N}                    how many records came before it
//! ```
//!
//! Rows are written column by column as the database holds them (a BLOB as
//! `{"$blob":"<hex>"}`), so whatever a later schema adds to a table travels too, and
//! rows refer to each other by URI, never by the row ids of one database. One session
//! and everything (`--all`: every project, session — live, in the trash, or a tombstone —
//! and proposal) use the same format, so one importer reads both; JSON Lines rather than
//! a tar of files, because the records are rows, not files: one stream, written and read
//! a record at a time, checked for being cut short by its `end` record, and readable
//! with any JSON tool. The audit log and chat leases are not part of it: the log is
//! sealed to its own database and key, leases to running processes.

use std::io::Write;

use futures::future::BoxFuture;
use hearth_core::SessionUri;
use serde_json::{Map, Value, json};
use sqlx::sqlite::SqliteRow;
use sqlx::{Column as _, Row, TypeInfo as _, ValueRef as _};

use crate::error::{StoreError, StoreResult};
use crate::open::SCHEMA_VERSION;
use crate::sqlite::SqliteStore;

/// The `format` of a header line.
pub const ARCHIVE_FORMAT: &str = "hearth-archive";

/// The archive format's version this binary writes and reads.
pub const ARCHIVE_VERSION: u64 = 1;

/// Columns that are one database's row ids: left out, and made again on import.
pub(crate) const LOCAL_COLUMNS: [&str; 3] = ["id", "session_id", "chat_id"];

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// A row of either database as a JSON object of its columns (row ids left out, except a
/// project's `id`): integers as numbers, blobs as `{"$blob": hex}`, the rest as text.
pub(crate) fn row_json<R>(row: &R, keep_id: bool) -> StoreResult<Map<String, Value>>
where
    R: Row,
    usize: sqlx::ColumnIndex<R>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> f64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Vec<u8>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let decode = |error: sqlx::Error| StoreError::Decode {
        what: "archived row",
        detail: error.to_string(),
    };
    let mut object = Map::new();
    for column in row.columns() {
        let name = column.name();
        if LOCAL_COLUMNS.contains(&name) && !(keep_id && name == "id") {
            continue;
        }
        let index = column.ordinal();
        let raw = row.try_get_raw(index).map_err(decode)?;
        let value = if raw.is_null() {
            Value::Null
        } else {
            // SQLite's and PostgreSQL's names of the types Hearth's tables use.
            match raw.type_info().name() {
                "INTEGER" | "INT8" => Value::from(row.try_get::<i64, _>(index).map_err(decode)?),
                "REAL" | "FLOAT8" => Value::from(row.try_get::<f64, _>(index).map_err(decode)?),
                "BLOB" | "BYTEA" => {
                    json!({ "$blob": hex(&row.try_get::<Vec<u8>, _>(index).map_err(decode)?) })
                }
                _ => Value::from(row.try_get::<String, _>(index).map_err(decode)?),
            }
        };
        object.insert(name.to_owned(), value);
    }
    Ok(object)
}

/// Writes records as lines, counting them for the `end` record.
pub(crate) struct Lines<'a> {
    out: &'a mut (dyn Write + Send),
    records: u64,
}

impl<'a> Lines<'a> {
    /// Lines written to `out`.
    pub(crate) fn new(out: &'a mut (dyn Write + Send)) -> Self {
        Self { out, records: 0 }
    }

    /// The `end` record, counting the records before it.
    pub(crate) fn end(&mut self) -> StoreResult<()> {
        let records = self.records;
        self.put(&json!({ "type": "end", "records": records }))
    }

    fn put(&mut self, record: &Value) -> StoreResult<()> {
        let mut line = serde_json::to_string(record).map_err(|error| StoreError::Decode {
            what: "archive record",
            detail: error.to_string(),
        })?;
        line.push('\n');
        self.out
            .write_all(line.as_bytes())
            .map_err(|error| StoreError::Archive(format!("cannot write the archive: {error}")))
    }

    pub(crate) fn record(&mut self, record: &Value) -> StoreResult<()> {
        self.records += 1;
        self.put(record)
    }
}

/// What an archive reads of a database: its rows as JSON objects (see [`row_json`]),
/// each read keyed by a URI or by nothing. Each store answers these in its own SQL; the
/// archive's records and their order are written once, here.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Read<'a> {
    /// Every project (ids kept).
    Projects,
    /// Every session, live, in the trash or a tombstone.
    Sessions,
    /// Proposals of no session there is (ids kept).
    OrphanProposals,
    /// The live session of this URI.
    LiveSession(&'a str),
    /// The project of the session of this URI (ids kept).
    ProjectOf(&'a str),
    /// The chats of the session of this URI, in order.
    ChatsOf(&'a str),
    /// The turns of the chat of this URI, in order.
    TurnsOf(&'a str),
    /// The provider conversations behind the chat of this URI (ids kept).
    BackingsOf(&'a str),
    /// The proposals of the session of this URI (ids kept).
    ProposalsOf(&'a str),
}

impl Read<'_> {
    /// The key the read binds, if any.
    pub(crate) fn key(self) -> Option<String> {
        match self {
            Self::Projects | Self::Sessions | Self::OrphanProposals => None,
            Self::LiveSession(key)
            | Self::ProjectOf(key)
            | Self::ChatsOf(key)
            | Self::TurnsOf(key)
            | Self::BackingsOf(key)
            | Self::ProposalsOf(key) => Some(key.to_owned()),
        }
    }

    /// Whether the rows keep their `id` column (ids that are not one database's row ids).
    pub(crate) fn keeps_id(self) -> bool {
        matches!(
            self,
            Self::Projects
                | Self::OrphanProposals
                | Self::ProjectOf(_)
                | Self::BackingsOf(_)
                | Self::ProposalsOf(_)
        )
    }
}

/// The statement of a read, with the key's placeholder written as `$key` (each store puts
/// its own in).
pub(crate) fn read_sql(read: Read<'_>) -> &'static str {
    match read {
        Read::Projects => "SELECT * FROM projects ORDER BY id",
        Read::Sessions => "SELECT * FROM sessions ORDER BY uri",
        Read::OrphanProposals => {
            "SELECT * FROM proposals WHERE session_uri NOT IN (SELECT uri FROM sessions) ORDER BY id"
        }
        Read::LiveSession(_) => "SELECT * FROM sessions WHERE uri = $key AND deleted_at IS NULL",
        Read::ProjectOf(_) => {
            "SELECT * FROM projects WHERE id = (SELECT project_id FROM sessions WHERE uri = $key)"
        }
        Read::ChatsOf(_) => {
            "SELECT c.* FROM chats c JOIN sessions s ON s.id = c.session_id WHERE s.uri = $key ORDER BY c.position, c.uri"
        }
        Read::TurnsOf(_) => {
            "SELECT t.* FROM turns t JOIN chats c ON c.id = t.chat_id WHERE c.uri = $key ORDER BY t.seq"
        }
        Read::BackingsOf(_) => {
            "SELECT * FROM chat_backings WHERE chat_uri = $key ORDER BY provider, backing"
        }
        Read::ProposalsOf(_) => "SELECT * FROM proposals WHERE session_uri = $key ORDER BY id",
    }
}

/// A database an archive is written from.
pub(crate) trait ArchiveSource: Sync {
    /// The rows `read` names, as JSON objects.
    fn read<'a>(&'a self, read: Read<'a>) -> BoxFuture<'a, StoreResult<Vec<Map<String, Value>>>>;
}

/// A row's text column `name`.
fn text_of<'r>(row: &'r Map<String, Value>, name: &str) -> StoreResult<&'r str> {
    row.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| StoreError::Decode {
            what: "archived row",
            detail: format!("a row without `{name}`"),
        })
}

/// Writes one session's archive (with its project's record, when it has one).
pub(crate) async fn export_session(
    source: &dyn ArchiveSource,
    uri: &SessionUri,
    out: &mut (dyn Write + Send),
) -> StoreResult<()> {
    let uri = uri.to_string();
    let sessions = source.read(Read::LiveSession(&uri)).await?;
    let Some(session) = sessions.into_iter().next() else {
        return Err(StoreError::NotFound {
            what: "session",
            key: uri,
        });
    };
    let mut lines = Lines::new(out);
    header(&mut lines)?;
    for project in source.read(Read::ProjectOf(&uri)).await? {
        lines.record(&json!({ "type": "project", "row": project }))?;
    }
    export_session_rows(source, session, &mut lines).await?;
    lines.end()
}

/// Writes the archive of everything: every project, every session (live, in the trash,
/// or a tombstone) with its records, and proposals of no session archived.
pub(crate) async fn export_all(
    source: &dyn ArchiveSource,
    out: &mut (dyn Write + Send),
) -> StoreResult<()> {
    let mut lines = Lines::new(out);
    header(&mut lines)?;
    for project in source.read(Read::Projects).await? {
        lines.record(&json!({ "type": "project", "row": project }))?;
    }
    for session in source.read(Read::Sessions).await? {
        export_session_rows(source, session, &mut lines).await?;
    }
    for proposal in source.read(Read::OrphanProposals).await? {
        lines.record(&json!({ "type": "proposal", "row": proposal }))?;
    }
    lines.end()
}

/// A session's record, then its chats with their turns and backings, then its proposals.
async fn export_session_rows(
    source: &dyn ArchiveSource,
    session: Map<String, Value>,
    lines: &mut Lines<'_>,
) -> StoreResult<()> {
    let uri = text_of(&session, "uri")?.to_owned();
    lines.record(&json!({ "type": "session", "row": session }))?;
    for chat in source.read(Read::ChatsOf(&uri)).await? {
        let chat_uri = text_of(&chat, "uri")?.to_owned();
        lines.record(&json!({ "type": "chat", "session": uri, "row": chat }))?;
        for turn in source.read(Read::TurnsOf(&chat_uri)).await? {
            lines.record(&json!({ "type": "turn", "chat": chat_uri, "row": turn }))?;
        }
        for backing in source.read(Read::BackingsOf(&chat_uri)).await? {
            lines.record(&json!({ "type": "backing", "row": backing }))?;
        }
    }
    for proposal in source.read(Read::ProposalsOf(&uri)).await? {
        lines.record(&json!({ "type": "proposal", "row": proposal }))?;
    }
    Ok(())
}

/// A store's [`ArchiveSource`]: [`read_sql`] with the key's placeholder as the store
/// writes it, rows of the store's database read as JSON.
macro_rules! archive_source {
    ($store:ty, $row:ty, $placeholder:literal) => {
        impl $crate::archive::ArchiveSource for $store {
            fn read<'a>(
                &'a self,
                read: $crate::archive::Read<'a>,
            ) -> ::futures::future::BoxFuture<
                'a,
                $crate::StoreResult<Vec<::serde_json::Map<String, ::serde_json::Value>>>,
            > {
                Box::pin(async move {
                    let sql = $crate::archive::read_sql(read).replace("$key", $placeholder);
                    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
                    if let Some(key) = read.key() {
                        query = query.bind(key);
                    }
                    let rows: Vec<$row> = query
                        .fetch_all(&self.pool)
                        .await
                        .map_err(|e| self.error(e))?;
                    rows.iter()
                        .map(|row| $crate::archive::row_json(row, read.keeps_id()))
                        .collect()
                })
            }
        }
    };
}
pub(crate) use archive_source;

archive_source!(SqliteStore, SqliteRow, "?");

impl SqliteStore {
    /// Writes one session's archive (with its project's record, when it has one).
    pub async fn export_session(
        &self,
        uri: &SessionUri,
        out: &mut (dyn Write + Send),
    ) -> StoreResult<()> {
        export_session(self, uri, out).await
    }

    /// Writes the archive of everything: every project, every session (live, in the
    /// trash, or a tombstone) with its records, and proposals of no session archived.
    pub async fn export_all(&self, out: &mut (dyn Write + Send)) -> StoreResult<()> {
        export_all(self, out).await
    }
}

pub(crate) fn header(lines: &mut Lines<'_>) -> StoreResult<()> {
    lines.put(&json!({
        "type": "header",
        "format": ARCHIVE_FORMAT,
        "version": ARCHIVE_VERSION,
        "schema": SCHEMA_VERSION,
        "exportedAt": hearth_core::now().to_rfc3339(),
    }))
}
