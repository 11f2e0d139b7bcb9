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

impl SqliteStore {
    async fn rows(&self, sql: &'static str, key: Option<&str>) -> StoreResult<Vec<SqliteRow>> {
        let mut query = sqlx::query(sql);
        if let Some(key) = key {
            query = query.bind(key.to_owned());
        }
        query.fetch_all(&self.pool).await.map_err(|e| self.error(e))
    }

    /// Writes one session's archive (with its project's record, when it has one).
    pub async fn export_session(
        &self,
        uri: &SessionUri,
        out: &mut (dyn Write + Send),
    ) -> StoreResult<()> {
        let uri = uri.to_string();
        let sessions = self
            .rows(
                "SELECT * FROM sessions WHERE uri = ? AND deleted_at IS NULL",
                Some(&uri),
            )
            .await?;
        if sessions.is_empty() {
            return Err(StoreError::NotFound {
                what: "session",
                key: uri,
            });
        }
        let mut lines = Lines { out, records: 0 };
        header(&mut lines)?;
        let projects = self
            .rows(
                "SELECT * FROM projects WHERE id = (SELECT project_id FROM sessions WHERE uri = ?)",
                Some(&uri),
            )
            .await?;
        for project in &projects {
            lines.record(&json!({ "type": "project", "row": row_json(project, true)? }))?;
        }
        self.export_session_rows(&sessions[0], &mut lines).await?;
        lines.put(&json!({ "type": "end", "records": lines.records }))
    }

    /// Writes the archive of everything: every project, every session (live, in the
    /// trash, or a tombstone) with its records, and proposals of no session archived.
    pub async fn export_all(&self, out: &mut (dyn Write + Send)) -> StoreResult<()> {
        let mut lines = Lines { out, records: 0 };
        header(&mut lines)?;
        for project in self
            .rows("SELECT * FROM projects ORDER BY id", None)
            .await?
        {
            lines.record(&json!({ "type": "project", "row": row_json(&project, true)? }))?;
        }
        for session in self
            .rows("SELECT * FROM sessions ORDER BY uri", None)
            .await?
        {
            self.export_session_rows(&session, &mut lines).await?;
        }
        let orphans = self
            .rows(
                "SELECT * FROM proposals WHERE session_uri NOT IN (SELECT uri FROM sessions) ORDER BY id",
                None,
            )
            .await?;
        for proposal in &orphans {
            lines.record(&json!({ "type": "proposal", "row": row_json(proposal, true)? }))?;
        }
        lines.put(&json!({ "type": "end", "records": lines.records }))
    }

    /// A session's record, then its chats with their turns and backings, then its
    /// proposals.
    async fn export_session_rows(
        &self,
        session: &SqliteRow,
        lines: &mut Lines<'_>,
    ) -> StoreResult<()> {
        let get = |error: sqlx::Error| self.error(error);
        let uri: String = session.try_get("uri").map_err(get)?;
        let id: i64 = session.try_get("id").map_err(get)?;
        lines.record(&json!({ "type": "session", "row": row_json(session, false)? }))?;
        let chats = sqlx::query("SELECT * FROM chats WHERE session_id = ? ORDER BY position, uri")
            .bind(id)
            .fetch_all(&self.pool)
            .await
            .map_err(get)?;
        for chat in &chats {
            self.export_chat_rows(&uri, chat, lines).await?;
        }
        let proposals = self
            .rows(
                "SELECT * FROM proposals WHERE session_uri = ? ORDER BY id",
                Some(&uri),
            )
            .await?;
        for proposal in &proposals {
            lines.record(&json!({ "type": "proposal", "row": row_json(proposal, true)? }))?;
        }
        Ok(())
    }

    async fn export_chat_rows(
        &self,
        session: &str,
        chat: &SqliteRow,
        lines: &mut Lines<'_>,
    ) -> StoreResult<()> {
        let get = |error: sqlx::Error| self.error(error);
        let uri: String = chat.try_get("uri").map_err(get)?;
        let id: i64 = chat.try_get("id").map_err(get)?;
        lines.record(
            &json!({ "type": "chat", "session": session, "row": row_json(chat, false)? }),
        )?;
        let turns = sqlx::query("SELECT * FROM turns WHERE chat_id = ? ORDER BY seq")
            .bind(id)
            .fetch_all(&self.pool)
            .await
            .map_err(get)?;
        for turn in &turns {
            lines.record(&json!({ "type": "turn", "chat": uri, "row": row_json(turn, false)? }))?;
        }
        let backings = self
            .rows(
                "SELECT * FROM chat_backings WHERE chat_uri = ? ORDER BY provider, backing",
                Some(&uri),
            )
            .await?;
        for backing in &backings {
            lines.record(&json!({ "type": "backing", "row": row_json(backing, true)? }))?;
        }
        Ok(())
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
