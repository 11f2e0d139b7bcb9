//! Full-text search over every turn of every live session: the prompt and the answer
//! text, indexed by SQLite FTS5 with trigram tokens (schema 11 keeps the index in step
//! with the `turns` table through triggers). Hits come newest chat first, a turn's place
//! in its chat with them; a deleted session's turns are gone from the index.

use hearth_core::{ChatUri, HarnessId, ProjectId, SessionUri, Timestamp, TurnId};

use crate::codec::{from_millis, limit_clause, to_millis};
use crate::error::{StoreError, StoreResult};
use crate::postgres::PgStore;
use crate::rows::Columns;
use crate::sessions::VIEWER_FILTER;
use crate::sqlite::SqliteStore;

/// Where a hit's snippet marks the start of a matching piece of text.
pub const HIT_START: char = '\u{2}';
/// Where a hit's snippet marks the end of a matching piece of text.
pub const HIT_END: char = '\u{3}';

/// The fewest characters a searched word has (the index is of three-character pieces).
pub const MIN_WORD: usize = 3;

/// What to search for.
#[derive(Clone, Debug, Default)]
pub struct SearchQuery {
    /// The words: a turn matches when it holds every one of them (anywhere in a word, any
    /// case).
    pub text: String,
    /// Only sessions of this harness (agent or provider).
    pub harness: Option<HarnessId>,
    /// Only sessions of this project.
    pub project: Option<ProjectId>,
    /// Only turns of this chat.
    pub chat: Option<ChatUri>,
    /// Only turns started at or after this.
    pub since: Option<Timestamp>,
    /// Only sessions this user (an id) may see (see
    /// [`SessionQuery::viewer`](crate::SessionQuery::viewer)); `None`: every session.
    pub viewer: Option<String>,
    /// Continue after this cursor (from a previous page).
    pub cursor: Option<String>,
    /// Page size (1..=200).
    pub limit: u32,
}

/// One matching turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchHit {
    /// Its session.
    pub session: SessionUri,
    /// The session's title.
    pub title: Option<String>,
    /// Its chat.
    pub chat: ChatUri,
    /// The turn.
    pub turn_id: TurnId,
    /// The turn's number in its chat (1 is the first).
    pub index: u32,
    /// When the turn started.
    pub started_at: Timestamp,
    /// The text around the match, each matching piece between [`HIT_START`] and
    /// [`HIT_END`].
    pub snippet: String,
}

impl SearchHit {
    /// The snippet as pieces of text, each saying whether it is a match.
    pub fn pieces(&self) -> Vec<(String, bool)> {
        let mut pieces = Vec::new();
        let mut rest = self.snippet.as_str();
        while let Some(start) = rest.find(HIT_START) {
            if start > 0 {
                pieces.push((rest[..start].to_owned(), false));
            }
            let after = &rest[start + HIT_START.len_utf8()..];
            let end = after.find(HIT_END).unwrap_or(after.len());
            pieces.push((after[..end].to_owned(), true));
            rest = after.get(end + HIT_END.len_utf8()..).unwrap_or_default();
        }
        if !rest.is_empty() {
            pieces.push((rest.to_owned(), false));
        }
        pieces
    }
}

/// A page of hits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SearchPage {
    /// The hits, newest first.
    pub hits: Vec<SearchHit>,
    /// Where the next page starts, when there is one.
    pub next_cursor: Option<String>,
}

/// The words searched for; refuses none, and words shorter than [`MIN_WORD`].
pub(crate) fn words(text: &str) -> StoreResult<Vec<&str>> {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.is_empty() {
        return Err(StoreError::InvalidQuery(
            "nothing to search for: give one or more words".to_owned(),
        ));
    }
    if let Some(short) = words.iter().find(|word| word.chars().count() < MIN_WORD) {
        return Err(StoreError::InvalidQuery(format!(
            "`{short}` is too short to search for: each word needs {MIN_WORD} characters or more"
        )));
    }
    Ok(words)
}

/// The FTS5 query of the words: each quoted (so nothing in them is syntax), all required.
fn match_expression(text: &str) -> StoreResult<String> {
    Ok(words(text)?
        .iter()
        .map(|word| format!("\"{}\"", word.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" "))
}

fn decode_error(error: &hearth_core::UriError) -> StoreError {
    StoreError::Decode {
        what: "search hit",
        detail: error.to_string(),
    }
}

fn column_error(error: sqlx::Error) -> StoreError {
    StoreError::Decode {
        what: "search hit",
        detail: error.to_string(),
    }
}

/// The page of hits in `rows` (`limit + 1` read, newest first), the snippet of each
/// `snippet(row)`; its cursor is the last hit's key when more follow.
pub(crate) fn hits_page<R: Columns>(
    rows: &[R],
    limit: i64,
    snippet: impl Fn(&R) -> StoreResult<String>,
) -> StoreResult<SearchPage> {
    let more = rows.len() as i64 > limit;
    let mut hits = Vec::new();
    let mut last_key = None;
    for row in rows
        .iter()
        .take(usize::try_from(limit).unwrap_or(usize::MAX))
    {
        let text = |column: &str| row.text(column).map_err(column_error);
        let integer = |column: &str| row.integer(column).map_err(column_error);
        last_key = Some(integer("key")?);
        hits.push(SearchHit {
            session: SessionUri::parse(&text("session")?).map_err(|e| decode_error(&e))?,
            title: row.text_or_null("title").map_err(column_error)?,
            chat: ChatUri::parse(&text("chat")?).map_err(|e| decode_error(&e))?,
            turn_id: TurnId::parse(&text("turn_id")?).map_err(|e| decode_error(&e))?,
            index: u32::try_from(integer("seq")?).unwrap_or(u32::MAX),
            started_at: from_millis(integer("started_at")?)?,
            snippet: snippet(row)?,
        });
    }
    Ok(SearchPage {
        hits,
        next_cursor: if more {
            last_key.map(|key| key.to_string())
        } else {
            None
        },
    })
}

pub(crate) fn decode_cursor(cursor: Option<&str>) -> StoreResult<i64> {
    match cursor {
        None => Ok(i64::MAX),
        Some(text) => text
            .parse::<i64>()
            .ok()
            .filter(|key| *key > 0)
            .ok_or_else(|| StoreError::InvalidQuery(format!("`{text}` is not a search cursor"))),
    }
}

impl SqliteStore {
    /// The turns that hold every word of `query.text`, newest chat first.
    pub(crate) async fn search_turns_impl(&self, query: &SearchQuery) -> StoreResult<SearchPage> {
        let expression = match_expression(&query.text)?;
        let before = decode_cursor(query.cursor.as_deref())?;
        let limit = i64::from(query.limit.clamp(1, 200));
        let mut sql = format!(
            "SELECT found.rowid AS key,
                    snippet(turn_search, -1, char(2), char(3), '…', 64) AS snippet,
                    chats.uri AS chat, turns.turn_id, turns.seq, turns.started_at,
                    sessions.uri AS session, sessions.title
             FROM turn_search AS found
             JOIN chats ON chats.id = (found.rowid >> 32)
             JOIN turns ON turns.chat_id = chats.id AND turns.seq = (found.rowid & {MASK})
             JOIN sessions ON sessions.id = chats.session_id
             WHERE turn_search MATCH ?1 AND found.rowid < ?2 AND sessions.deleted_at IS NULL",
            MASK = u32::MAX
        );
        if query.harness.is_some() {
            sql.push_str(" AND sessions.provider = ?3");
        }
        if query.project.is_some() {
            sql.push_str(" AND sessions.project_id = ?4");
        }
        if query.since.is_some() {
            sql.push_str(" AND turns.started_at >= ?5");
        }
        if query.chat.is_some() {
            sql.push_str(" AND chats.uri = ?6");
        }
        if query.viewer.is_some() {
            sql.push_str(&VIEWER_FILTER.replace('?', "?7"));
        }
        sql.push_str(" ORDER BY found.rowid DESC");
        sql.push_str(&limit_clause(limit + 1));
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(&expression)
            .bind(before)
            .bind(query.harness.as_ref().map(HarnessId::as_str))
            .bind(query.project.as_ref().map(ProjectId::as_str))
            .bind(query.since.as_ref().map(to_millis))
            .bind(query.chat.as_ref().map(ToString::to_string))
            .bind(query.viewer.as_deref())
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        hits_page(&rows, limit, |row| {
            Ok(row
                .text_or_null("snippet")
                .map_err(column_error)?
                .unwrap_or_default())
        })
    }
}

impl SqliteStore {
    /// What rebuilding the search index runs: its turns' text into the FTS5 table, then
    /// the table merged into one segment.
    const SEARCH_REBUILD: &[&str] = &[
        "INSERT INTO turn_search (rowid, prompt, answer)
         SELECT turns.chat_id * 4294967296 + turns.seq,
                json_extract(CASE WHEN json_valid(turns.body) THEN turns.body END, '$.user.text'),
                (SELECT group_concat(json_extract(part.value, '$.text'), char(10))
                 FROM json_each(CASE WHEN json_valid(turns.body) THEN turns.body END, '$.parts') AS part
                 WHERE json_extract(part.value, '$.type') = 'text')
         FROM turns",
        "INSERT INTO turn_search (turn_search) VALUES ('optimize')",
    ];
}

impl PgStore {
    /// What rebuilding the search index runs: each turn's prompt and answer text into the
    /// trigram-indexed table.
    const SEARCH_REBUILD: &[&str] = &["INSERT INTO turn_search (chat_id, seq, prompt, answer)
         SELECT turns.chat_id, turns.seq, found.prompt, found.answer
         FROM turns, turn_search_text(turns.body) AS found"];
}

/// Rebuilding the search index, for both databases: emptied, then filled by the store's
/// `SEARCH_REBUILD` statements, in one transaction.
macro_rules! search_statements {
    ($store:ty) => {
        impl $store {
            /// Builds the search index again from every stored turn; returns how many
            /// turns it holds (what the first statement filled in).
            pub(crate) async fn rebuild_search_impl(&self) -> StoreResult<u64> {
                let mut transaction = self.write_transaction().await?;
                sqlx::query("DELETE FROM turn_search")
                    .execute(&mut *transaction)
                    .await
                    .map_err(|e| self.error(e))?;
                let mut indexed = None;
                for statement in Self::SEARCH_REBUILD {
                    let done = sqlx::query(*statement)
                        .execute(&mut *transaction)
                        .await
                        .map_err(|e| self.error(e))?;
                    indexed.get_or_insert(done.rows_affected());
                }
                transaction.commit().await.map_err(|e| self.error(e))?;
                Ok(indexed.unwrap_or(0))
            }
        }
    };
}

search_statements!(SqliteStore);
search_statements!(PgStore);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snippet_comes_apart_into_matches_and_the_text_between() {
        let hit = SearchHit {
            session: SessionUri::parse("hearth-session:codex/s1").unwrap(),
            title: None,
            chat: ChatUri::parse("hearth-chat:codex/s1/default").unwrap(),
            turn_id: TurnId::parse("t1").unwrap(),
            index: 1,
            started_at: hearth_core::now(),
            snippet: format!("the {HIT_START}log{HIT_END} {HIT_START}rot{HIT_END}ation…"),
        };
        assert_eq!(
            hit.pieces(),
            [
                ("the ".to_owned(), false),
                ("log".to_owned(), true),
                (" ".to_owned(), false),
                ("rot".to_owned(), true),
                ("ation…".to_owned(), false),
            ]
        );
    }

    #[test]
    fn words_are_quoted_and_short_ones_refused() {
        assert_eq!(
            match_expression("  disk full ").unwrap(),
            "\"disk\" \"full\""
        );
        assert_eq!(
            match_expression("say \"hi\"! NOT").unwrap(),
            "\"say\" \"\"\"hi\"\"!\" \"NOT\""
        );
        assert!(match_expression("").is_err());
        let error = match_expression("go to").unwrap_err().to_string();
        assert!(error.contains("`go` is too short"), "{error}");
        assert!(decode_cursor(Some("x")).is_err());
        assert_eq!(decode_cursor(Some("42")).unwrap(), 42);
    }
}
