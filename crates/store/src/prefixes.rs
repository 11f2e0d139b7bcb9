//! Records found by a prefix of their id, so that people can type names shorter than a
//! URI. Session and proposal lookups are range scans of unique indexes (`sessions.uri`,
//! `proposals.id`); chat ids are the third part of `chats.uri`, so a chat lookup scans
//! the chat catalog (one row per chat, no turns).

use hearth_core::{CHAT_SCHEME, DEFAULT_CHAT_ID, SESSION_SCHEME, SessionSummary};

use crate::chats::decode_chat;
use crate::codec::limit_clause;
use crate::error::StoreResult;
use crate::postgres::PgStore;
use crate::proposals::{COLUMNS as PROPOSAL_COLUMNS, ProposalRecord, decode as decode_proposal};
use crate::rows::CHAT_COLUMNS;
use crate::sessions::{SESSION_COLUMNS, decode_session};
use crate::sqlite::SqliteStore;
use crate::store::ChatRecord;

/// The characters an id may hold (see `hearth_core`'s identifiers): a prefix with any
/// other character matches nothing, and never reaches a pattern or a range.
pub(crate) fn valid_prefix(prefix: &str) -> bool {
    !prefix.is_empty()
        && prefix
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
}

/// The end of the range of keys that start with `start`: every stored key is ASCII below
/// DEL, so `start` followed by DEL is above all of them.
pub(crate) fn range_end(start: &str) -> String {
    format!("{start}\u{7f}")
}

pub(crate) fn limit(limit: u32) -> i64 {
    i64::from(limit.clamp(1, 500))
}

/// The lookups by a range of a unique index, written once for both databases (numbered
/// parameters; the range compares bytes with the store's `BYTE_ORDER`, as the index
/// keys are ASCII). Chats are each database's own: their ids are a part of a URI.
macro_rules! prefix_statements {
    ($store:ty) => {
        impl $store {
            /// Live sessions whose id (the part of the URI after `<provider>/`) starts with
            /// `prefix`, of every provider, newest first; at most `max`.
            pub(crate) async fn sessions_with_id_prefix_impl(
                &self,
                prefix: &str,
                max: u32,
            ) -> StoreResult<Vec<SessionSummary>> {
                if !valid_prefix(prefix) {
                    return Ok(Vec::new());
                }
                let providers: Vec<String> = sqlx::query_scalar(
                    "SELECT DISTINCT provider FROM sessions WHERE deleted_at IS NULL",
                )
                .fetch_all(&self.pool)
                .await
                .map_err(|e| self.error(e))?;
                let sql = format!(
                    "SELECT {SESSION_COLUMNS} FROM sessions
                     WHERE uri{bytes} >= $1 AND uri{bytes} < $2 AND deleted_at IS NULL
                     ORDER BY updated_at DESC, id DESC{rows}",
                    bytes = Self::BYTE_ORDER,
                    rows = limit_clause(limit(max))
                );
                let mut found = Vec::new();
                for provider in providers {
                    let start = format!("{SESSION_SCHEME}{provider}/{prefix}");
                    let rows = sqlx::query(sqlx::AssertSqlSafe(sql.clone()))
                        .bind(&start)
                        .bind(range_end(&start))
                        .fetch_all(&self.pool)
                        .await
                        .map_err(|e| self.error(e))?;
                    for row in &rows {
                        found.push(decode_session(row)?);
                    }
                }
                found.sort_by_key(|session| std::cmp::Reverse(session.updated_at));
                found.truncate(usize::try_from(limit(max)).unwrap_or(usize::MAX));
                Ok(found)
            }

            /// Proposals whose id starts with `prefix`, in id order; at most `max`.
            pub async fn proposals_with_id_prefix(
                &self,
                prefix: &str,
                max: u32,
            ) -> StoreResult<Vec<ProposalRecord>> {
                if !valid_prefix(prefix) {
                    return Ok(Vec::new());
                }
                let sql = format!(
                    "SELECT {PROPOSAL_COLUMNS} FROM proposals
                     WHERE id{bytes} >= $1 AND id{bytes} < $2 ORDER BY id{bytes}{rows}",
                    bytes = Self::BYTE_ORDER,
                    rows = limit_clause(limit(max))
                );
                let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
                    .bind(prefix)
                    .bind(range_end(prefix))
                    .fetch_all(&self.pool)
                    .await
                    .map_err(|e| self.error(e))?;
                rows.iter().map(decode_proposal).collect()
            }
        }
    };
}

prefix_statements!(SqliteStore);
prefix_statements!(PgStore);

impl SqliteStore {
    /// What selects the chats whose id starts with `prefix` (every session's `default`
    /// chat excluded), and its parameters from `$1`. The chat id is what follows the
    /// second `/` of the URI; it is compared, not matched with `GLOB`, as SQLite prepares
    /// a statement again each time a pattern bound to it changes.
    fn chat_id_matches(prefix: &str) -> (String, Vec<String>) {
        const CHAT_ID: &str = "substr(c.uri, instr(c.uri, '/') + instr(substr(c.uri, instr(c.uri, '/') + 1), '/') + 1)";
        (
            format!(
                "substr(c.uri, 1, length($3)) = $3 AND substr({CHAT_ID}, 1, length($1)) = $1
                   AND {CHAT_ID} <> $2"
            ),
            vec![
                prefix.to_owned(),
                DEFAULT_CHAT_ID.to_owned(),
                CHAT_SCHEME.to_owned(),
            ],
        )
    }
}

impl PgStore {
    /// What selects the chats whose id (the third part of the URI) starts with `prefix`
    /// (every session's `default` chat excluded), and its parameters from `$1`.
    fn chat_id_matches(prefix: &str) -> (String, Vec<String>) {
        (
            "split_part(c.uri, '/', 3) LIKE $1 ESCAPE '\\' AND split_part(c.uri, '/', 3) <> $2
               AND starts_with(c.uri, $3)"
                .to_owned(),
            vec![
                format!("{}%", prefix.replace('_', "\\_")),
                DEFAULT_CHAT_ID.to_owned(),
                CHAT_SCHEME.to_owned(),
            ],
        )
    }
}

/// Chats by a prefix of their id, for both databases: each store says how it matches a
/// chat id (`chat_id_matches`), as chat ids are a part of a URI.
macro_rules! chat_prefix_statements {
    ($store:ty) => {
        impl $store {
            /// Chats of live sessions whose chat id starts with `prefix` (every session's
            /// `default` chat excluded: that id names no one chat), newest first; at most
            /// `max`.
            pub(crate) async fn chats_with_id_prefix_impl(
                &self,
                prefix: &str,
                max: u32,
            ) -> StoreResult<Vec<ChatRecord>> {
                if !valid_prefix(prefix) {
                    return Ok(Vec::new());
                }
                let (matches, patterns) = Self::chat_id_matches(prefix);
                let sql = format!(
                    "SELECT {CHAT_COLUMNS}
                     FROM chats c JOIN sessions s ON s.id = c.session_id
                     WHERE {matches} AND s.deleted_at IS NULL
                     ORDER BY c.updated_at DESC{}",
                    limit_clause(limit(max))
                );
                let mut statement = sqlx::query(sqlx::AssertSqlSafe(sql));
                for pattern in patterns {
                    statement = statement.bind(pattern);
                }
                let rows = statement
                    .fetch_all(&self.pool)
                    .await
                    .map_err(|e| self.error(e))?;
                rows.iter().map(decode_chat).collect()
            }
        }
    };
}

chat_prefix_statements!(SqliteStore);
chat_prefix_statements!(PgStore);
