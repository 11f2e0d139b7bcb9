//! The session registry's shared pieces: columns, filters, cursors and `LIKE` patterns
//! (the statements that make and delete sessions are `catalog_statements`; listing and
//! updating, `row_statements`).

use hearth_core::Provenance;

use crate::error::{StoreError, StoreResult};
pub(crate) use crate::rows::decode_session;
use crate::store::{ScopeFilter, SessionQuery};

pub(crate) const SESSION_COLUMNS: &str = "id, uri, provider, title, provenance, source, project_id, model, \
     working_directories, started_at, updated_at, pinned, archived, owner, team";

/// Working directories as stored: a JSON array of paths, or NULL for none.
pub(crate) fn encode_directories(directories: &[std::path::PathBuf]) -> Option<String> {
    if directories.is_empty() {
        return None;
    }
    let paths: Vec<String> = directories
        .iter()
        .map(|directory| directory.to_string_lossy().into_owned())
        .collect();
    serde_json::to_string(&paths).ok()
}

pub(crate) fn decode_directories(text: Option<String>) -> StoreResult<Vec<std::path::PathBuf>> {
    let Some(text) = text else {
        return Ok(Vec::new());
    };
    let paths: Vec<String> = serde_json::from_str(&text).map_err(|error| StoreError::Decode {
        what: "working directories",
        detail: format!("{error} in `{text}`"),
    })?;
    Ok(paths.into_iter().map(std::path::PathBuf::from).collect())
}

pub(crate) fn provenance_text(provenance: Provenance) -> &'static str {
    match provenance {
        Provenance::Hearth => "hearth",
        Provenance::External => "external",
    }
}

/// The condition that keeps a viewer's sessions (of the table `sessions`): their own, and
/// those shared with a team they are in; never one without an owner. Every `?` is the
/// viewer's id.
pub(crate) const VIEWER_FILTER: &str = " AND sessions.owner IS NOT NULL AND (sessions.owner = ? \
     OR sessions.team IN (SELECT m.team FROM team_members m WHERE m.user_id = ?))";

/// The `AND …` conditions of a listing's filters, numbered from `$1` in binding order (a
/// viewer's id is one value used twice), and the next free number. `like` is the
/// database's case-insensitive `LIKE`: SQLite's `LIKE` ignores the case of ASCII letters,
/// PostgreSQL's `ILIKE` that of every letter.
pub(crate) fn session_filters(query: &SessionQuery, like: &str) -> (String, usize) {
    let mut sql = String::new();
    let mut next = 1;
    let mut parameter = |sql: &mut String, condition: &str| {
        sql.push_str(&condition.replace('?', &format!("${next}")));
        next += 1;
    };
    match &query.scope {
        ScopeFilter::Any => {}
        ScopeFilter::Global => sql.push_str(" AND project_id IS NULL"),
        ScopeFilter::Project(_) => parameter(&mut sql, " AND project_id = ?"),
    }
    if query.provider.is_some() {
        parameter(&mut sql, " AND provider = ?");
    }
    if query.provenance.is_some() {
        parameter(&mut sql, " AND provenance = ?");
    }
    if query.title_contains.is_some() {
        parameter(&mut sql, &format!(r" AND title {like} ? ESCAPE '\'"));
    }
    if let Some(pinned) = query.pinned {
        sql.push_str(if pinned {
            " AND pinned = 1"
        } else {
            " AND pinned = 0"
        });
    }
    if let Some(archived) = query.archived {
        sql.push_str(if archived {
            " AND archived = 1"
        } else {
            " AND archived = 0"
        });
    }
    if query.viewer.is_some() {
        parameter(&mut sql, VIEWER_FILTER);
    }
    (sql, next)
}

pub(crate) fn encode_cursor(updated_at: i64, id: i64) -> String {
    format!("{updated_at}.{id}")
}

pub(crate) fn decode_cursor(cursor: &str) -> StoreResult<(i64, i64)> {
    cursor
        .split_once('.')
        .and_then(|(time, id)| Some((time.parse().ok()?, id.parse().ok()?)))
        .ok_or_else(|| StoreError::Decode {
            what: "cursor",
            detail: format!("`{cursor}` is not a cursor from a previous page"),
        })
}

/// A `LIKE ? ESCAPE '\'` pattern matching text that contains `text` literally.
pub(crate) fn like_pattern(text: &str) -> String {
    format!("%{}%", escape_like(text))
}

/// `text` with the `LIKE` wildcards (and the escape) escaped by a backslash.
pub(crate) fn escape_like(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len() + 2);
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_reject_junk() {
        assert_eq!(decode_cursor(&encode_cursor(17, 4)).unwrap(), (17, 4));
        assert!(decode_cursor("nope").is_err());
        assert!(decode_cursor("1.x").is_err());
    }
}
