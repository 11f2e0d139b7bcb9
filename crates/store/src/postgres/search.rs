//! Full-text search on PostgreSQL: every word of the query must occur (any case, anywhere
//! in a word) in a turn's prompt or answer; a trigram index finds the candidates, and the
//! snippet around the first match is cut here.

use hearth_core::{HarnessId, ProjectId};
use sqlx::Row;

use super::PgStore;
use crate::codec::{limit_clause, to_millis};
use crate::error::StoreResult;
use crate::search::{HIT_END, HIT_START, SearchPage, SearchQuery, decode_cursor, hits_page, words};
use crate::sessions::VIEWER_FILTER;

/// Words of context kept before the first match in a snippet.
const WORDS_BEFORE: usize = 12;
/// Words a snippet holds at most (as SQLite's snippets do).
const SNIPPET_WORDS: usize = 64;

/// `ILIKE` pattern matching text that contains `word` literally.
fn contains_pattern(word: &str) -> String {
    crate::sessions::like_pattern(word)
}

/// Where `needle` (lower-cased) occurs in `haystack`, ignoring case: byte ranges.
fn occurrences(haystack: &str, needle: &str) -> Vec<(usize, usize)> {
    let folded: Vec<(usize, char)> = haystack
        .char_indices()
        .map(|(at, c)| (at, c.to_lowercase().next().unwrap_or(c)))
        .collect();
    let needle: Vec<char> = needle
        .chars()
        .map(|c| c.to_lowercase().next().unwrap_or(c))
        .collect();
    let mut found = Vec::new();
    let mut index = 0;
    while index + needle.len() <= folded.len() && !needle.is_empty() {
        if folded[index..index + needle.len()]
            .iter()
            .map(|(_, c)| *c)
            .eq(needle.iter().copied())
        {
            let start = folded[index].0;
            let end = folded
                .get(index + needle.len())
                .map_or(haystack.len(), |(at, _)| *at);
            found.push((start, end));
            index += needle.len();
        } else {
            index += 1;
        }
    }
    found
}

/// The text around the first match of any word, each match between [`HIT_START`] and
/// [`HIT_END`], cut to [`SNIPPET_WORDS`] words with `…` where text was left out.
pub(crate) fn snippet(text: &str, words: &[&str]) -> String {
    let mut matches: Vec<(usize, usize)> = words
        .iter()
        .flat_map(|word| occurrences(text, word))
        .collect();
    matches.sort_unstable();
    let Some(&(first, _)) = matches.first() else {
        return String::new();
    };
    // Word starts (after whitespace), to cut the window on word boundaries.
    let starts: Vec<usize> = std::iter::once(0)
        .chain(
            text.char_indices()
                .zip(text.chars().skip(1))
                .filter(|((_, c), next)| c.is_whitespace() && !next.is_whitespace())
                .map(|((at, c), _)| at + c.len_utf8()),
        )
        .collect();
    let first_word = starts
        .partition_point(|start| *start <= first)
        .saturating_sub(1);
    let from_word = first_word.saturating_sub(WORDS_BEFORE);
    let from = starts[from_word];
    let to = starts
        .get(from_word + SNIPPET_WORDS)
        .copied()
        .unwrap_or(text.len());
    let mut out = String::new();
    if from > 0 {
        out.push('…');
    }
    let mut at = from;
    for (start, end) in matches {
        if start < at || end > to {
            continue;
        }
        out.push_str(&text[at..start]);
        out.push(HIT_START);
        out.push_str(&text[start..end]);
        out.push(HIT_END);
        at = end;
    }
    out.push_str(text[at..to].trim_end());
    if to < text.len() {
        out.push('…');
    }
    out
}

impl PgStore {
    pub(crate) async fn search_turns_impl(&self, query: &SearchQuery) -> StoreResult<SearchPage> {
        let words = words(&query.text)?;
        let before = decode_cursor(query.cursor.as_deref())?;
        let limit = i64::from(query.limit.clamp(1, 200));
        let mut sql = String::from(
            "SELECT found.chat_id * 4294967296 + found.seq AS key,
                    found.prompt, found.answer,
                    chats.uri AS chat, turns.turn_id, turns.seq, turns.started_at,
                    sessions.uri AS session, sessions.title
             FROM turn_search AS found
             JOIN chats ON chats.id = found.chat_id
             JOIN turns ON turns.chat_id = found.chat_id AND turns.seq = found.seq
             JOIN sessions ON sessions.id = chats.session_id
             WHERE found.chat_id * 4294967296 + found.seq < $1 AND sessions.deleted_at IS NULL
               AND ($2::text IS NULL OR sessions.provider = $2)
               AND ($3::text IS NULL OR sessions.project_id = $3)
               AND ($4::bigint IS NULL OR turns.started_at >= $4)
               AND ($5::text IS NULL OR chats.uri = $5)",
        );
        // The words' patterns are bound after the viewer, when there is one.
        let mut first_word = 6;
        if query.viewer.is_some() {
            sql.push_str(&VIEWER_FILTER.replace('?', "$6"));
            first_word = 7;
        }
        for index in 0..words.len() {
            sql.push_str(&format!(
                " AND (coalesce(found.prompt, '') || E'\\n' || coalesce(found.answer, '')) ILIKE ${}",
                index + first_word
            ));
        }
        sql.push_str(" ORDER BY found.chat_id DESC, found.seq DESC");
        sql.push_str(&limit_clause(limit + 1));
        let mut statement = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(before)
            .bind(query.harness.as_ref().map(HarnessId::as_str))
            .bind(query.project.as_ref().map(ProjectId::as_str))
            .bind(query.since.as_ref().map(to_millis))
            .bind(query.chat.as_ref().map(ToString::to_string));
        if let Some(viewer) = &query.viewer {
            statement = statement.bind(viewer.as_str());
        }
        for word in &words {
            statement = statement.bind(contains_pattern(word));
        }
        let rows = statement
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        hits_page(&rows, limit, |row| {
            let part = |column: &str| -> StoreResult<String> {
                Ok(row
                    .try_get::<Option<String>, _>(column)
                    .map_err(|e| self.error(e))?
                    .unwrap_or_default())
            };
            let whole = format!("{}\n{}", part("prompt")?, part("answer")?);
            Ok(snippet(whole.trim(), &words))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snippet_marks_every_match_in_its_window_in_any_case() {
        let text = "The log ROTATION failed; the Log was kept.";
        assert_eq!(
            snippet(text, &["log", "rot"]),
            format!(
                "The {HIT_START}log{HIT_END} {HIT_START}ROT{HIT_END}ATION failed; the {HIT_START}Log{HIT_END} was kept."
            )
        );
        let long: String = (0..200).map(|n| format!("w{n} ")).collect();
        let cut = snippet(&format!("{long}needle {long}"), &["needle"]);
        assert!(cut.starts_with('…') && cut.ends_with('…'), "{cut}");
        assert!(
            cut.contains(&format!("{HIT_START}needle{HIT_END}")),
            "{cut}"
        );
        assert_eq!(cut.split_whitespace().count(), SNIPPET_WORDS);
        assert_eq!(
            snippet("Ünïcode ÄRGER", &["ärg"]),
            format!("Ünïcode {HIT_START}ÄRG{HIT_END}ER")
        );
        assert_eq!(contains_pattern("50%_a\\b"), "%50\\%\\_a\\\\b%");
    }
}
