//! Reading an archive (see `archive`) into this database, in one transaction: every
//! record is checked (its type, its table's columns, what it refers to) and inserted with
//! the ids it has; a project, session or proposal whose id is already here is skipped,
//! with everything of it, and reported — never overwritten. An archive that is not
//! Hearth's, from a newer format, damaged, or cut short (no `end` record, or one that
//! does not count what came before it) fails naming the line, and imports nothing.

use std::collections::HashMap;
use std::io::BufRead;

use serde_json::{Map, Value};
use sqlx::{PgConnection, SqliteConnection};

use crate::archive::{ARCHIVE_FORMAT, ARCHIVE_VERSION, LOCAL_COLUMNS};
use crate::error::{StoreError, StoreResult};
use crate::postgres::PgStore;
use crate::sqlite::SqliteStore;

/// What an import did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Projects added.
    pub projects: u64,
    /// Sessions added.
    pub sessions: u64,
    /// Chats added.
    pub chats: u64,
    /// Turns added.
    pub turns: u64,
    /// Proposals added.
    pub proposals: u64,
    /// What was already here, by kind and id, and left as it was (with its chats, turns
    /// and proposals, for a session).
    pub skipped: Vec<(&'static str, String)>,
}

fn refused(line: usize, why: impl std::fmt::Display) -> StoreError {
    StoreError::Archive(format!(
        "line {line} of the archive: {why}; nothing was imported"
    ))
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(text.get(at..at + 2)?, 16).ok())
        .collect()
}

/// How a column's values are bound (a NULL too must have its column's type on
/// PostgreSQL).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Integer,
    Real,
    Blob,
    Text,
}

impl Kind {
    /// The kind of a column of SQLite's or PostgreSQL's declared type.
    fn of(declared: &str) -> Self {
        let declared = declared.to_ascii_lowercase();
        if declared.contains("int") {
            Self::Integer
        } else if declared.contains("real") || declared.contains("double") {
            Self::Real
        } else if declared.contains("blob") || declared == "bytea" {
            Self::Blob
        } else {
            Self::Text
        }
    }
}

/// An archived column value, read.
#[derive(Debug)]
enum Cell {
    Null,
    Integer(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

/// Reads one archived column value.
fn cell(value: &Value, line: usize, column: &str) -> StoreResult<Cell> {
    Ok(match value {
        Value::Null => Cell::Null,
        Value::Bool(flag) => Cell::Integer(i64::from(*flag)),
        Value::Number(number) => match number.as_i64() {
            Some(integer) => Cell::Integer(integer),
            None => Cell::Real(number.as_f64().unwrap_or_default()),
        },
        Value::String(text) => Cell::Text(text.clone()),
        Value::Object(object) => Cell::Blob(
            object
                .get("$blob")
                .and_then(Value::as_str)
                .and_then(unhex)
                .ok_or_else(|| {
                    refused(
                        line,
                        format!(
                            "column `{column}` holds an object that is not a {{\"$blob\": hex}}"
                        ),
                    )
                })?,
        ),
        Value::Array(_) => return Err(refused(line, format!("column `{column}` holds an array"))),
    })
}

/// Binds a value to a query of either database; a NULL as its column's type.
macro_rules! bind_cell {
    ($query:expr, $cell:expr, $kind:expr) => {
        match ($cell, $kind) {
            (Cell::Null, Kind::Integer) => $query.bind(Option::<i64>::None),
            (Cell::Null, Kind::Real) => $query.bind(Option::<f64>::None),
            (Cell::Null, Kind::Blob) => $query.bind(Option::<Vec<u8>>::None),
            (Cell::Null, Kind::Text) => $query.bind(Option::<String>::None),
            (Cell::Integer(value), _) => $query.bind(value),
            (Cell::Real(value), _) => $query.bind(value),
            (Cell::Text(value), _) => $query.bind(value),
            (Cell::Blob(value), _) => $query.bind(value),
        }
    };
}

/// The connection an import writes through, inside its transaction.
enum Target<'c> {
    Sqlite(&'c mut SqliteConnection),
    Postgres(&'c mut PgConnection),
}

impl Target<'_> {
    /// `sql` with its `?` placeholders as this database writes them.
    fn placeholders(&self, sql: &str) -> String {
        match self {
            Self::Sqlite(_) => sql.to_owned(),
            Self::Postgres(_) => {
                let mut numbered = String::with_capacity(sql.len() + 8);
                let mut n = 0;
                for character in sql.chars() {
                    if character == '?' {
                        n += 1;
                        numbered.push_str(&format!("${n}"));
                    } else {
                        numbered.push(character);
                    }
                }
                numbered
            }
        }
    }

    /// The table's columns and their kinds, as this database has them.
    async fn columns(&mut self, table: &str) -> Result<Vec<(String, Kind)>, sqlx::Error> {
        let declared: Vec<(String, String)> = match self {
            Self::Sqlite(connection) => {
                sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT name, type FROM pragma_table_info('{table}')"
                )))
                .fetch_all(&mut **connection)
                .await?
            }
            Self::Postgres(connection) => {
                sqlx::query_as(
                    "SELECT column_name::text, data_type::text FROM information_schema.columns
                     WHERE table_schema = current_schema() AND table_name = $1",
                )
                .bind(table.to_owned())
                .fetch_all(&mut **connection)
                .await?
            }
        };
        Ok(declared
            .into_iter()
            .map(|(name, declared)| {
                let kind = Kind::of(&declared);
                (name, kind)
            })
            .collect())
    }

    /// Runs an insert of `cells`; the new row's id when `returning`.
    async fn insert(
        &mut self,
        sql: &str,
        cells: Vec<(Cell, Kind)>,
        returning: bool,
    ) -> Result<Option<i64>, sqlx::Error> {
        let sql = self.placeholders(sql);
        let id = match self {
            Self::Sqlite(connection) => {
                let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
                for (cell, kind) in cells {
                    query = bind_cell!(query, cell, kind);
                }
                let row = query.fetch_optional(&mut **connection).await?;
                row.map(|row| sqlx::Row::try_get::<i64, _>(&row, "id"))
            }
            Self::Postgres(connection) => {
                let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
                for (cell, kind) in cells {
                    query = bind_cell!(query, cell, kind);
                }
                let row = query.fetch_optional(&mut **connection).await?;
                row.map(|row| sqlx::Row::try_get::<i64, _>(&row, "id"))
            }
        };
        if returning { id.transpose() } else { Ok(None) }
    }

    /// Whether `table` has a row whose `column` is `key`.
    async fn has(&mut self, table: &str, column: &str, key: &str) -> Result<bool, sqlx::Error> {
        let sql = self.placeholders(&format!("SELECT COUNT(*) FROM {table} WHERE {column} = ?"));
        let count: i64 = match self {
            Self::Sqlite(connection) => {
                sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                    .bind(key.to_owned())
                    .fetch_one(&mut **connection)
                    .await?
            }
            Self::Postgres(connection) => {
                sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                    .bind(key.to_owned())
                    .fetch_one(&mut **connection)
                    .await?
            }
        };
        Ok(count > 0)
    }
}

/// What one import knows while it runs.
struct Importer<'c> {
    target: Target<'c>,
    /// Each table's columns, as this database has them.
    columns: HashMap<&'static str, Vec<(String, Kind)>>,
    /// Sessions of the archive: their new row id, or `None` when skipped.
    sessions: HashMap<String, Option<i64>>,
    /// Chats of the archive, likewise.
    chats: HashMap<String, Option<i64>>,
    records: u64,
    ended: bool,
    report: ImportReport,
}

impl Importer<'_> {
    async fn columns(&mut self, table: &'static str) -> StoreResult<Vec<(String, Kind)>> {
        if let Some(columns) = self.columns.get(table) {
            return Ok(columns.clone());
        }
        let columns = self.target.columns(table).await.map_err(|error| {
            StoreError::Archive(format!("cannot read the columns of {table}: {error}"))
        })?;
        self.columns.insert(table, columns.clone());
        Ok(columns)
    }

    /// Inserts a row with its archived columns and `links` (row ids made here);
    /// returns the new row id when `returning` says so.
    async fn insert(
        &mut self,
        line: usize,
        table: &'static str,
        row: &Map<String, Value>,
        links: &[(&str, i64)],
        returning: bool,
    ) -> StoreResult<Option<i64>> {
        let known = self.columns(table).await?;
        let keeps_id = matches!(table, "projects" | "proposals");
        let mut cells = Vec::with_capacity(row.len() + links.len());
        for (name, value) in row {
            let local = LOCAL_COLUMNS.contains(&name.as_str()) && !(keeps_id && name == "id");
            let kind = known
                .iter()
                .find(|(column, _)| column == name)
                .map(|(_, kind)| *kind);
            let Some(kind) = kind.filter(|_| !local) else {
                return Err(refused(
                    line,
                    format!(
                        "table `{table}` has no column `{name}` to import (an archive from a newer Hearth?)"
                    ),
                ));
            };
            cells.push((cell(value, line, name)?, kind));
        }
        cells.extend(
            links
                .iter()
                .map(|(_, id)| (Cell::Integer(*id), Kind::Integer)),
        );
        let names: Vec<String> = row
            .keys()
            .map(String::as_str)
            .chain(links.iter().map(|(name, _)| *name))
            .map(|name| format!("\"{name}\""))
            .collect();
        let marks = vec!["?"; names.len()].join(", ");
        let tail = if returning { " RETURNING id" } else { "" };
        let sql = format!(
            "INSERT INTO {table} ({}) VALUES ({marks}){tail}",
            names.join(", ")
        );
        self.target
            .insert(&sql, cells, returning)
            .await
            .map_err(|error| refused(line, format!("the {table} row was refused: {error}")))
    }

    async fn exists(&mut self, table: &str, column: &str, key: &str) -> StoreResult<bool> {
        self.target
            .has(table, column, key)
            .await
            .map_err(|error| StoreError::Archive(format!("cannot look up {key}: {error}")))
    }
}

fn text<'v>(value: &'v Value, key: &str, line: usize) -> StoreResult<&'v str> {
    value
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| refused(line, format!("the record has no `{key}`")))
}

fn row_of(record: &Value, line: usize) -> StoreResult<&Map<String, Value>> {
    record
        .get("row")
        .and_then(Value::as_object)
        .ok_or_else(|| refused(line, "the record has no `row` object"))
}

impl Importer<'_> {
    async fn record(&mut self, line: usize, record: &Value) -> StoreResult<()> {
        if self.ended {
            return Err(refused(line, "a record after the `end` record"));
        }
        let kind = text(record, "type", line)?;
        if kind == "end" {
            return self.end(line, record);
        }
        self.records += 1;
        match kind {
            "project" => self.project(line, row_of(record, line)?).await,
            "session" => self.session(line, row_of(record, line)?).await,
            "chat" => self.chat(line, record).await,
            "turn" => self.turn(line, record).await,
            "backing" => self.backing(line, row_of(record, line)?).await,
            "proposal" => self.proposal(line, row_of(record, line)?).await,
            other => Err(refused(
                line,
                format!("unknown record type `{other}` (an archive from a newer Hearth?)"),
            )),
        }
    }

    fn end(&mut self, line: usize, record: &Value) -> StoreResult<()> {
        let counted = record.get("records").and_then(Value::as_u64);
        if counted != Some(self.records) {
            return Err(refused(
                line,
                format!(
                    "the archive says it holds {} records, but {} came before its end (records are missing: a damaged archive)",
                    counted.map_or_else(|| "?".to_owned(), |n| n.to_string()),
                    self.records
                ),
            ));
        }
        self.ended = true;
        Ok(())
    }

    async fn project(&mut self, line: usize, row: &Map<String, Value>) -> StoreResult<()> {
        let id = row
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| refused(line, "a project without an id"))?
            .to_owned();
        if self.exists("projects", "id", &id).await? {
            self.report.skipped.push(("project", id));
            return Ok(());
        }
        self.insert(line, "projects", row, &[], false).await?;
        self.report.projects += 1;
        Ok(())
    }

    async fn session(&mut self, line: usize, row: &Map<String, Value>) -> StoreResult<()> {
        let uri = row
            .get("uri")
            .and_then(Value::as_str)
            .ok_or_else(|| refused(line, "a session without a uri"))?
            .to_owned();
        if self.exists("sessions", "uri", &uri).await? {
            self.sessions.insert(uri.clone(), None);
            self.report.skipped.push(("session", uri));
            return Ok(());
        }
        let id = self.insert(line, "sessions", row, &[], true).await?;
        self.sessions.insert(uri, id);
        self.report.sessions += 1;
        Ok(())
    }

    async fn chat(&mut self, line: usize, record: &Value) -> StoreResult<()> {
        let session = text(record, "session", line)?;
        let row = row_of(record, line)?;
        let uri = row
            .get("uri")
            .and_then(Value::as_str)
            .ok_or_else(|| refused(line, "a chat without a uri"))?
            .to_owned();
        let id = match self.sessions.get(session) {
            None => {
                return Err(refused(
                    line,
                    format!("a chat of session {session}, which no record before it holds"),
                ));
            }
            Some(None) => None,
            Some(Some(session_id)) => {
                let session_id = *session_id;
                self.report.chats += 1;
                self.insert(line, "chats", row, &[("session_id", session_id)], true)
                    .await?
            }
        };
        self.chats.insert(uri, id);
        Ok(())
    }

    async fn turn(&mut self, line: usize, record: &Value) -> StoreResult<()> {
        let chat = text(record, "chat", line)?;
        match self.chats.get(chat) {
            None => Err(refused(
                line,
                format!("a turn of chat {chat}, which no record before it holds"),
            )),
            Some(None) => Ok(()),
            Some(Some(chat_id)) => {
                let chat_id = *chat_id;
                self.insert(
                    line,
                    "turns",
                    row_of(record, line)?,
                    &[("chat_id", chat_id)],
                    false,
                )
                .await?;
                self.report.turns += 1;
                Ok(())
            }
        }
    }

    async fn backing(&mut self, line: usize, row: &Map<String, Value>) -> StoreResult<()> {
        let chat = row
            .get("chat_uri")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match self.chats.get(chat) {
            None => Err(refused(
                line,
                format!("a backing of chat {chat}, which no record before it holds"),
            )),
            Some(None) => Ok(()),
            Some(Some(_)) => self
                .insert(line, "chat_backings", row, &[], false)
                .await
                .map(|_| ()),
        }
    }

    async fn proposal(&mut self, line: usize, row: &Map<String, Value>) -> StoreResult<()> {
        let session = row
            .get("session_uri")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if matches!(self.sessions.get(session), Some(None)) {
            return Ok(());
        }
        let id = row
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| refused(line, "a proposal without an id"))?
            .to_owned();
        if self.exists("proposals", "id", &id).await? {
            self.report.skipped.push(("proposal", id));
            return Ok(());
        }
        self.insert(line, "proposals", row, &[], false).await?;
        self.report.proposals += 1;
        Ok(())
    }
}

/// The first line: a Hearth archive header of a format this binary reads.
fn check_header(line: Option<&str>) -> StoreResult<()> {
    let Some(line) = line else {
        return Err(StoreError::Archive(
            "the archive is empty; nothing was imported".into(),
        ));
    };
    let header: Option<Value> = serde_json::from_str(line).ok();
    let header = header
        .filter(|header| header.get("type").and_then(Value::as_str) == Some("header"))
        .filter(|header| header.get("format").and_then(Value::as_str) == Some(ARCHIVE_FORMAT))
        .ok_or_else(|| StoreError::Archive("not a Hearth archive: its first line is not the header `hearth export` writes; nothing was imported".into()))?;
    match header.get("version").and_then(Value::as_u64) {
        Some(version) if version <= ARCHIVE_VERSION => Ok(()),
        version => Err(StoreError::Archive(format!(
            "the archive's format version is {}, this Hearth reads version {ARCHIVE_VERSION}: import it with a newer Hearth; nothing was imported",
            version.map_or_else(|| "missing".to_owned(), |v| v.to_string())
        ))),
    }
}

/// Reads an archive's lines into `target` (a transaction's connection); the report,
/// or why the archive was refused (the caller then rolls back).
async fn import_lines(
    target: Target<'_>,
    input: &mut (dyn BufRead + Send),
) -> StoreResult<ImportReport> {
    let mut lines = input.lines().enumerate();
    let first = match lines.next() {
        None => None,
        Some((_, Ok(line))) => Some(line),
        Some((_, Err(error))) => {
            return Err(StoreError::Archive(format!(
                "the archive cannot be read: {error}; nothing was imported"
            )));
        }
    };
    check_header(first.as_deref())?;
    let mut importer = Importer {
        target,
        columns: HashMap::new(),
        sessions: HashMap::new(),
        chats: HashMap::new(),
        records: 0,
        ended: false,
        report: ImportReport::default(),
    };
    for (index, line) in lines {
        let number = index + 1;
        let line = line.map_err(|error| refused(number, format!("cannot be read: {error}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let record: Value = serde_json::from_str(&line).map_err(|error| {
            refused(
                number,
                format!("not a JSON record ({error}): the archive is damaged or cut short"),
            )
        })?;
        importer.record(number, &record).await?;
    }
    if !importer.ended {
        return Err(StoreError::Archive(
            "the archive ends before its `end` record: it was cut short; nothing was imported"
                .into(),
        ));
    }
    Ok(importer.report)
}

impl SqliteStore {
    /// Imports an archive, all or nothing (see the module's documentation).
    pub async fn import_archive(
        &self,
        input: &mut (dyn BufRead + Send),
    ) -> StoreResult<ImportReport> {
        let mut transaction = self.write_transaction().await?;
        let report = import_lines(Target::Sqlite(&mut transaction), input).await?;
        transaction.commit().await.map_err(|e| self.error(e))?;
        Ok(report)
    }
}

impl PgStore {
    /// Imports an archive, all or nothing (see the module's documentation).
    pub async fn import_archive(
        &self,
        input: &mut (dyn BufRead + Send),
    ) -> StoreResult<ImportReport> {
        let mut transaction = self.write_transaction().await?;
        let report = import_lines(Target::Postgres(&mut transaction), input).await?;
        transaction.commit().await.map_err(|e| self.error(e))?;
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_refuses_junk() {
        assert_eq!(unhex("00ff10"), Some(vec![0, 255, 16]));
        assert_eq!(unhex("0"), None);
        assert_eq!(unhex("zz"), None);
    }
}
