use chrono::Duration;
use hearth_core::{
    ChatOrigin, ChatSummary, ChatUri, HarnessData, HarnessId, ProjectId, ProposalId, Provenance,
    Scope, SessionId, SessionSummary, SessionUri, Timestamp, TurnId,
};
use hearth_store::{
    AuditStore, ChatRecord, NewSession, PgStore, ProjectStore, ProposalRecord, ProposalStatus,
    ProposalStore, Store, UserCredentialStore, UserStore,
};

pub fn session_uri(provider: &str) -> SessionUri {
    SessionUri::new(HarnessId::parse(provider).unwrap(), SessionId::generate())
}

pub fn chat_record(uri: ChatUri, origin: ChatOrigin, at: Timestamp) -> ChatRecord {
    ChatRecord {
        summary: ChatSummary::new(uri, origin, at),
        provider_data: Some(HarnessData::from_bytes(b"{\"k\": 1}".to_vec())),
        conversation: None,
        draft: None,
        queued: Vec::new(),
    }
}

pub fn new_session(provider: &str, project: Option<&str>, at: Timestamp) -> NewSession {
    let uri = session_uri(provider);
    NewSession {
        summary: SessionSummary {
            uri: uri.clone(),
            harness: uri.harness().clone(),
            title: Some("a session".into()),
            provenance: Provenance::Hearth,
            source: "test".into(),
            scope: Scope::from_project(project.map(|p| ProjectId::parse(p).unwrap())),
            model: None,
            working_directories: vec!["/work/project".into(), "/work/notes".into()],
            started_at: at,
            updated_at: at,
            pinned: false,
            archived: false,
            owner: None,
        },
        default_chat: chat_record(ChatUri::default_for(&uri), ChatOrigin::User, at),
    }
}

/// Everything a backend keeps: the tests of projects, proposals, the audit log and users
/// take an `Arc<dyn Backend>` from [`on_every_backend`].
pub trait Backend:
    Store + ProjectStore + ProposalStore + AuditStore + UserStore + UserCredentialStore
{
}

impl<T: Store + ProjectStore + ProposalStore + AuditStore + UserStore + UserCredentialStore> Backend
    for T
{
}

/// Two stores on one new database of the test server, as two nodes of a team server
/// would have (`None`, the test skipped, when there is no server; see
/// `hearth_test_support::postgres::fresh_database`).
pub async fn two_nodes() -> Option<(PgStore, PgStore)> {
    let url = hearth_test_support::postgres::fresh_database().await?;
    let first = PgStore::connect(&url).await.unwrap();
    let second = PgStore::connect(&url).await.unwrap();
    Some((first, second))
}

/// A pending proposal of `session`'s default chat, staged at `created` and expiring an
/// hour later, whose payload hash is `hash`.
pub fn pending_proposal(session: &SessionUri, created: Timestamp, hash: &str) -> ProposalRecord {
    ProposalRecord {
        id: ProposalId::generate(),
        tool: "note_write".into(),
        session: session.clone(),
        chat: ChatUri::default_for(session),
        turn_id: TurnId::generate(),
        call_id: "call-1".into(),
        summary: "write a note".into(),
        diff: "+ a note".into(),
        payload: format!("{{\"hash\":\"{hash}\"}}"),
        payload_hash: hash.into(),
        status: ProposalStatus::Pending,
        approved_hash: None,
        decided_by: None,
        decided_at: None,
        reason: None,
        outcome: None,
        error: None,
        created_at: created,
        expires_at: created + Duration::hours(1),
        updated_at: created,
        applied_at: None,
    }
}

/// A time `minutes` after a fixed base, in whole milliseconds.
pub fn at(minutes: i64) -> Timestamp {
    let base = Timestamp::from_timestamp_millis(1_700_000_000_000).unwrap();
    base + Duration::minutes(minutes)
}

/// Runs each named test, an `async fn(Arc<dyn Store>)` (or of another trait both stores
/// implement, such as [`Backend`]), on every backend as its own test:
/// `NAME::sqlite` (in memory) and `NAME::postgres` (a fresh database of the test server;
/// skipped, saying why, when none runs and none is required).
macro_rules! on_every_backend {
    ($($name:ident),+ $(,)?) => {
        $(
            mod $name {
                #[tokio::test]
                async fn sqlite() {
                    let store = hearth_store::SqliteStore::open_in_memory().await.unwrap();
                    super::$name(std::sync::Arc::new(store)).await;
                }

                #[tokio::test]
                async fn postgres() {
                    if let Some(store) = hearth_test_support::postgres::fresh_store().await {
                        super::$name(std::sync::Arc::new(store)).await;
                    }
                }
            }
        )+
    };
}
pub(crate) use on_every_backend;
