//! Names people can type. Wherever the command line takes a session, a chat or a
//! proposal, it takes its full URI or id, or a bare id, or a unique prefix of the id
//! ([`MIN_PREFIX`] characters or more), looked up in the store. A prefix that names
//! several is refused with the candidates and their titles; one that names none says how
//! to list them. Full URIs are taken as given, without reading the store.
//!
//! Listings show the other side: each id's shortest start that names it alone, git-style
//! ([`SHOWN_PREFIX`] characters or more), so what a listing shows can be typed back. A
//! turn is named by its index in its chat (`3`, `-1` for the last) or a start of its id.

use std::path::Path;

use anyhow::bail;
use hearth_core::{
    CHAT_SCHEME, ChatUri, ProposalId, ResourceUri, SESSION_SCHEME, Scope, SessionSummary,
    SessionUri,
};
use hearth_store::{ScopeFilter, SessionQuery, Store, Stores};

use hearth_app::App;

/// The shortest prefix of an id that is looked up.
pub const MIN_PREFIX: usize = 4;

/// The fewest characters of an id a listing shows.
pub const SHOWN_PREFIX: usize = 6;

/// How many candidates an ambiguous prefix lists.
const CANDIDATES: u32 = 10;

/// What a bare name can stand for, in messages.
#[derive(Clone, Copy)]
enum Kind {
    Session,
    Chat,
    Proposal,
}

impl Kind {
    fn noun(self) -> &'static str {
        match self {
            Self::Session => "session",
            Self::Chat => "chat",
            Self::Proposal => "proposal",
        }
    }

    fn listing(self) -> &'static str {
        match self {
            Self::Session => "hearth sessions list",
            Self::Chat => "hearth chats list SESSION",
            Self::Proposal => "hearth proposals list",
        }
    }
}

/// One match of a prefix: its full name and title.
struct Candidate {
    name: String,
    title: Option<String>,
}

/// Whether `text` is a bare id (or a prefix of one) rather than a URI: made of the
/// characters ids are made of. Anything else is parsed as a URI, which says what is wrong.
fn is_bare(text: &str) -> bool {
    !text.starts_with(SESSION_SCHEME)
        && !text.starts_with(CHAT_SCHEME)
        && !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
}

/// Checks that a bare name is long enough to look up.
fn check_length(kind: Kind, text: &str) -> anyhow::Result<()> {
    if text.chars().count() < MIN_PREFIX {
        bail!(
            "`{text}` is too short to name a {}: give its URI, its id, or at least {MIN_PREFIX} characters of the id (see `{}`)",
            kind.noun(),
            kind.listing()
        );
    }
    Ok(())
}

/// The one candidate of a lookup, or the error that says why there is not one. A
/// candidate whose whole id is `text` is that one, even if another's id extends it.
fn single(kind: Kind, text: &str, mut found: Vec<Candidate>) -> anyhow::Result<String> {
    if let Some(exact) = found
        .iter()
        .position(|candidate| candidate.name.rsplit('/').next() == Some(text))
    {
        return Ok(found.swap_remove(exact).name);
    }
    match found.len() {
        0 => bail!(
            "no {} has an id starting with `{text}` (see `{}`)",
            kind.noun(),
            kind.listing()
        ),
        1 => Ok(found.remove(0).name),
        count => {
            let more = if count > CANDIDATES as usize {
                "more than 10".to_owned()
            } else {
                count.to_string()
            };
            let mut message = format!(
                "`{text}` is the start of {more} {}s' ids; give more of it, or the full URI:",
                kind.noun()
            );
            for candidate in found.iter().take(CANDIDATES as usize) {
                message.push_str(&format!(
                    "\n  {}  {}",
                    candidate.name,
                    candidate.title.as_deref().unwrap_or("(untitled)")
                ));
            }
            bail!(message)
        }
    }
}

/// The session a name stands for (its URI, or a bare id or prefix of one).
pub async fn session(store: &dyn Store, text: &str) -> anyhow::Result<SessionUri> {
    let text = text.trim();
    if !is_bare(text) {
        return Ok(SessionUri::parse(text)?);
    }
    check_length(Kind::Session, text)?;
    let found = store
        .sessions_with_id_prefix(text, CANDIDATES + 1)
        .await?
        .into_iter()
        .map(|session| Candidate {
            name: session.uri.to_string(),
            title: session.title,
        })
        .collect();
    Ok(SessionUri::parse(&single(Kind::Session, text, found)?)?)
}

/// The chat a name stands for: its URI, or a bare chat id or prefix of one, or a bare
/// session id or prefix of one (its default chat, which `chats list` shows so).
pub async fn chat(store: &dyn Store, text: &str) -> anyhow::Result<ChatUri> {
    let text = text.trim();
    if !is_bare(text) {
        return Ok(ChatUri::parse(text)?);
    }
    check_length(Kind::Chat, text)?;
    Ok(ChatUri::parse(&single(
        Kind::Chat,
        text,
        chat_candidates(store, text).await?,
    )?)?)
}

/// The chats a bare name may stand for: peer chats by their id, default chats by their
/// session's id.
async fn chat_candidates(store: &dyn Store, text: &str) -> anyhow::Result<Vec<Candidate>> {
    let chats = store.chats_with_id_prefix(text, CANDIDATES + 1).await?;
    let sessions = store.sessions_with_id_prefix(text, CANDIDATES + 1).await?;
    Ok(chats
        .into_iter()
        .map(|chat| Candidate {
            name: chat.summary.uri.to_string(),
            title: chat.summary.title,
        })
        .chain(sessions.into_iter().map(|session| Candidate {
            name: ChatUri::default_for(&session.uri).to_string(),
            title: session.title,
        }))
        .collect())
}

/// The shortest start of `id`, [`SHOWN_PREFIX`] characters or more (or the whole id),
/// for which `count` finds no record but this one. `count` only grows shorter as the
/// start grows longer, so the length is found by bisection.
async fn shortest<F, Fut>(id: &str, count: F) -> anyhow::Result<String>
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<usize>>,
{
    let start = |length: usize| id.get(..length).unwrap_or(id).to_owned();
    let (mut low, mut high) = (SHOWN_PREFIX.min(id.len()), id.len());
    while low < high {
        let middle = low + (high - low) / 2;
        if count(start(middle)).await? <= 1 {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    Ok(start(low))
}

/// The shortest start of a session's id that `sessions …` commands take for it.
pub async fn short_session(store: &dyn Store, session: &SessionUri) -> anyhow::Result<String> {
    shortest(session.id().as_str(), |prefix| async move {
        Ok(store.sessions_with_id_prefix(&prefix, 2).await?.len())
    })
    .await
}

/// The shortest start of a chat's id (a default chat: of its session's id) that `chats
/// show` takes for it.
pub async fn short_chat(store: &dyn Store, chat: &ChatUri) -> anyhow::Result<String> {
    let id = if chat.is_default() {
        chat.session_ref().id().as_str()
    } else {
        chat.chat_id().as_str()
    };
    shortest(id, |prefix| async move {
        Ok(store.chats_with_id_prefix(&prefix, 2).await?.len()
            + store.sessions_with_id_prefix(&prefix, 2).await?.len())
    })
    .await
}

/// The shortest start of a proposal's id that `proposals …` commands take for it.
pub async fn short_proposal(store: &dyn Stores, proposal: &ProposalId) -> anyhow::Result<String> {
    shortest(proposal.as_str(), |prefix| async move {
        Ok(store.proposals_with_id_prefix(&prefix, 2).await?.len())
    })
    .await
}

/// The shortest start of each of these ids (a chat's turns) that names it among them,
/// [`SHOWN_PREFIX`] characters or more.
pub fn short_among(ids: &[&str]) -> Vec<String> {
    ids.iter()
        .map(|id| {
            let shared = ids
                .iter()
                .filter(|other| *other != id)
                .map(|other| {
                    id.bytes()
                        .zip(other.bytes())
                        .take_while(|(a, b)| a == b)
                        .count()
                })
                .max()
                .unwrap_or(0);
            let length = (shared + 1).max(SHOWN_PREFIX).min(id.len());
            id.get(..length).unwrap_or(id).to_owned()
        })
        .collect()
}

/// Which of a chat's turns (their ids, oldest first) `text` names: its index from 1
/// (`-1` is the last, `-2` the one before), or its id or a unique start of it.
pub fn turn_index(ids: &[&str], text: &str) -> anyhow::Result<usize> {
    let text = text.trim();
    let count = ids.len();
    if let Ok(index) = text.parse::<i64>() {
        let found = match index {
            1.. => usize::try_from(index - 1)
                .ok()
                .filter(|index| *index < count),
            ..=-1 => usize::try_from(index.unsigned_abs())
                .ok()
                .and_then(|back| count.checked_sub(back)),
            0 => None,
        };
        // Digits past the last turn may be the start of a turn's id (ids are hex).
        let by_id = (found.is_none() && index > 0 && text.len() >= MIN_PREFIX)
            .then(|| {
                let starting: Vec<usize> =
                    (0..count).filter(|at| ids[*at].starts_with(text)).collect();
                (starting.len() == 1).then(|| starting[0])
            })
            .flatten();
        return found.or(by_id).ok_or_else(|| {
            anyhow::anyhow!(
                "there is no turn {index}: the chat has {count} turn{} (give 1 to {count}, -1 for the last, or a turn id; `hearth sessions show` lists them)",
                if count == 1 { "" } else { "s" }
            )
        });
    }
    if let Some(exact) = ids.iter().position(|id| *id == text) {
        return Ok(exact);
    }
    if text.chars().count() < MIN_PREFIX {
        bail!(
            "`{text}` is too short to name a turn: give its index (1, 2, … or -1 for the last), its id, or at least {MIN_PREFIX} characters of the id (`hearth sessions show` lists them)"
        );
    }
    let found: Vec<usize> = (0..count).filter(|at| ids[*at].starts_with(text)).collect();
    match found.as_slice() {
        [one] => Ok(*one),
        [] => bail!(
            "no turn has an id starting with `{text}` (`hearth sessions show` lists each turn's index and id)"
        ),
        many => bail!(
            "`{text}` is the start of {} turns' ids ({}); give more of it, or the turn's index",
            many.len(),
            many.iter()
                .map(|at| format!("turn {}", at + 1))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// What `--session` of `run` and `chat` takes: a session or chat URI, or a bare session
/// id or prefix of one (its default chat), else a bare chat id or prefix of one. Returns
/// the full URI.
pub async fn session_or_chat(store: &dyn Store, text: &str) -> anyhow::Result<String> {
    let text = text.trim();
    if !is_bare(text) {
        ResourceUri::parse(text)?;
        return Ok(text.to_owned());
    }
    check_length(Kind::Session, text)?;
    let sessions = store.sessions_with_id_prefix(text, CANDIDATES + 1).await?;
    if !sessions.is_empty() {
        let found = sessions
            .into_iter()
            .map(|session| Candidate {
                name: session.uri.to_string(),
                title: session.title,
            })
            .collect();
        return single(Kind::Session, text, found);
    }
    let chats = store.chats_with_id_prefix(text, CANDIDATES + 1).await?;
    if chats.is_empty() {
        bail!("no session or chat has an id starting with `{text}` (see `hearth sessions list`)");
    }
    let found = chats
        .into_iter()
        .map(|chat| Candidate {
            name: chat.summary.uri.to_string(),
            title: chat.summary.title,
        })
        .collect();
    single(Kind::Chat, text, found)
}

/// The proposal a name stands for: its id, or a unique prefix of it.
pub async fn proposal(store: &dyn Stores, text: &str) -> anyhow::Result<ProposalId> {
    let text = text.trim();
    let id = ProposalId::parse(text)?;
    check_length(Kind::Proposal, text)?;
    let found: Vec<Candidate> = store
        .proposals_with_id_prefix(text, CANDIDATES + 1)
        .await?
        .into_iter()
        .map(|record| Candidate {
            name: record.id.to_string(),
            title: Some(record.summary),
        })
        .collect();
    // The full id of one proposal is never ambiguous, even if another's id extends it.
    if found.iter().any(|candidate| candidate.name == text) {
        return Ok(id);
    }
    Ok(ProposalId::parse(&single(Kind::Proposal, text, found)?)?)
}

/// How many sessions `-c` looks through for one of the current folder.
const CONTINUE_SEARCH: u32 = 2000;

/// The session `-c` continues: the newest of the project; in the global scope, the
/// newest that works in `folder` (the current directory), as claude and codex do.
pub async fn latest_session(
    store: &dyn Store,
    scope: &Scope,
    folder: &Path,
) -> anyhow::Result<SessionUri> {
    if let Some(project) = scope.project_id() {
        let page = store
            .list_sessions(&SessionQuery {
                scope: ScopeFilter::Project(project.clone()),
                limit: 1,
                ..SessionQuery::default()
            })
            .await?;
        return match page.sessions.into_iter().next() {
            Some(session) => Ok(session.uri),
            None => bail!(
                "there is no session to continue in project {project}: start one with `hearth run --project {project} \"hello\"`"
            ),
        };
    }
    let mut query = SessionQuery {
        scope: ScopeFilter::Global,
        limit: 200,
        ..SessionQuery::default()
    };
    let mut seen = 0;
    loop {
        let page = store.list_sessions(&query).await?;
        seen += page.sessions.len() as u32;
        if let Some(session) = page
            .sessions
            .into_iter()
            .find(|session| works_in(session, folder))
        {
            return Ok(session.uri);
        }
        match page.next_cursor {
            Some(cursor) if seen < CONTINUE_SEARCH => query.cursor = Some(cursor),
            _ => break,
        }
    }
    bail!(
        "there is no session to continue in {}: start one with `hearth run \"hello\"`, or pick one of another folder with `hearth resume` (sessions of projects need --project NAME)",
        folder.display()
    )
}

/// Whether a session works in `folder` (its first working directory, compared as
/// real paths).
fn works_in(session: &SessionSummary, folder: &Path) -> bool {
    let real = |path: &Path| std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    session
        .working_directories
        .first()
        .is_some_and(|directory| real(directory) == real(folder))
}

/// Resolves a session name for a command that may go to a server: full URIs as given,
/// bare names through this data directory's store (read only).
pub async fn session_in(app: &App, text: &str) -> anyhow::Result<SessionUri> {
    if !is_bare(text.trim()) {
        return Ok(SessionUri::parse(text)?);
    }
    let store = app.open_store().await?;
    session(store.as_ref(), text).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Time-ordered ids made in the same millisecond, as before: they share 13 characters.
    const SAME_MILLISECOND: [&str; 3] = [
        "019a3f2e-7c41-7b3a-9d2e-4f5a6b7c8d9e",
        "019a3f2e-7c41-70c1-8a11-0e2f3a4b5c6d",
        "019a3f2e-7c41-7f02-b3c4-d5e6f7a8b9c0",
    ];

    #[test]
    fn turns_are_named_by_index_from_either_end() {
        let ids = SAME_MILLISECOND;
        assert_eq!(turn_index(&ids, "1").unwrap(), 0);
        assert_eq!(turn_index(&ids, "3").unwrap(), 2);
        assert_eq!(turn_index(&ids, "-1").unwrap(), 2);
        assert_eq!(turn_index(&ids, "-3").unwrap(), 0);
        for bad in ["0", "4", "-4"] {
            let error = turn_index(&ids, bad).unwrap_err().to_string();
            assert!(error.contains("the chat has 3 turns"), "{bad}: {error}");
        }
    }

    #[test]
    fn turns_are_named_by_id_or_a_unique_start_of_it() {
        let ids = SAME_MILLISECOND;
        assert_eq!(turn_index(&ids, ids[1]).unwrap(), 1);
        assert_eq!(turn_index(&ids, "019a3f2e-7c41-7f").unwrap(), 2);
        let error = turn_index(&ids, "019a3f2e").unwrap_err().to_string();
        assert!(
            error.contains("start of 3 turns' ids (turn 1, turn 2, turn 3)"),
            "{error}"
        );
        let error = turn_index(&ids, "abc").unwrap_err().to_string();
        assert!(error.contains("too short"), "{error}");
        let error = turn_index(&ids, "ffff").unwrap_err().to_string();
        assert!(
            error.contains("no turn has an id starting with `ffff`"),
            "{error}"
        );
        // An id starting with digits only is found by them once they are past the turns.
        let digits = ["880283d1-0000-4000-8000-000000000000", ids[0]];
        assert_eq!(turn_index(&digits, "880283").unwrap(), 0);
        assert_eq!(turn_index(&digits, "2").unwrap(), 1);
        let error = turn_index(&digits, "123456").unwrap_err().to_string();
        assert!(error.contains("there is no turn 123456"), "{error}");
    }

    #[test]
    fn short_ids_are_the_shortest_unique_start_of_six_or_more() {
        let random = [
            "3f9c2a71-0b4e-4d2a-9c1e-7a6b5c4d3e2f",
            "3f9c2b05-1c2d-4e3f-8a9b-0c1d2e3f4a5b",
            "b8e41d09-aa12-4c3b-b4d5-e6f7a8b9c0d1",
        ];
        assert_eq!(short_among(&random), ["3f9c2a", "3f9c2b", "b8e41d"]);
        assert_eq!(
            short_among(&SAME_MILLISECOND),
            ["019a3f2e-7c41-7b", "019a3f2e-7c41-70", "019a3f2e-7c41-7f"]
        );
        assert_eq!(short_among(&["abc-1"]), ["abc-1"]);
        // Each short id names its turn.
        for (at, short) in short_among(&SAME_MILLISECOND).iter().enumerate() {
            assert_eq!(turn_index(&SAME_MILLISECOND, short).unwrap(), at);
        }
    }

    #[tokio::test]
    async fn the_shortest_start_is_found_by_bisection() {
        let stored = SAME_MILLISECOND;
        let count = |prefix: String| async move {
            Ok(stored.iter().filter(|id| id.starts_with(&prefix)).count())
        };
        assert_eq!(
            shortest(stored[0], count).await.unwrap(),
            "019a3f2e-7c41-7b"
        );
        let lone = "b8e41d09-aa12-4c3b-b4d5-e6f7a8b9c0d1";
        let count = |prefix: String| async move { Ok(usize::from(lone.starts_with(&prefix))) };
        assert_eq!(shortest(lone, count).await.unwrap(), "b8e41d");
    }
}
