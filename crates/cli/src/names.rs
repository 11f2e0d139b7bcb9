//! Names people can type. Wherever the command line takes a session, a chat or a
//! proposal, it takes its full URI or id, or a bare id, or a unique prefix of the id
//! ([`MIN_PREFIX`] characters or more), looked up in the store. A prefix that names
//! several is refused with the candidates and their titles; one that names none says how
//! to list them. Full URIs are taken as given, without reading the store.

use std::path::Path;

use anyhow::bail;
use hearth_core::{
    CHAT_SCHEME, ChatUri, ProposalId, ResourceUri, SESSION_SCHEME, Scope, SessionSummary,
    SessionUri,
};
use hearth_store::{ScopeFilter, SessionQuery, SqliteStore, Store};

use hearth_app::App;

/// The shortest prefix of an id that is looked up.
pub const MIN_PREFIX: usize = 4;

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

/// The one candidate of a lookup, or the error that says why there is not one.
fn single(kind: Kind, text: &str, mut found: Vec<Candidate>) -> anyhow::Result<String> {
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

/// The chat a name stands for: its URI, or a bare chat id or prefix of one.
pub async fn chat(store: &dyn Store, text: &str) -> anyhow::Result<ChatUri> {
    let text = text.trim();
    if !is_bare(text) {
        return Ok(ChatUri::parse(text)?);
    }
    check_length(Kind::Chat, text)?;
    let found = store
        .chats_with_id_prefix(text, CANDIDATES + 1)
        .await?
        .into_iter()
        .map(|chat| Candidate {
            name: chat.summary.uri.to_string(),
            title: chat.summary.title,
        })
        .collect();
    Ok(ChatUri::parse(&single(Kind::Chat, text, found)?)?)
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
pub async fn proposal(store: &SqliteStore, text: &str) -> anyhow::Result<ProposalId> {
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
