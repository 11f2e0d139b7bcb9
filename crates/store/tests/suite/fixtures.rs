use chrono::Duration;
use hearth_core::{
    ChatOrigin, ChatSummary, ChatUri, HarnessData, HarnessId, ProjectId, Provenance, Scope,
    SessionId, SessionSummary, SessionUri, Timestamp,
};
use hearth_store::{ChatRecord, NewSession};

pub fn session_uri(provider: &str) -> SessionUri {
    SessionUri::new(HarnessId::parse(provider).unwrap(), SessionId::generate())
}

pub fn chat_record(uri: ChatUri, origin: ChatOrigin, at: Timestamp) -> ChatRecord {
    ChatRecord {
        summary: ChatSummary {
            uri,
            origin,
            title: None,
            model: None,
            created_at: at,
            updated_at: at,
        },
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
        },
        default_chat: chat_record(ChatUri::default_for(&uri), ChatOrigin::User, at),
    }
}

/// A time `minutes` after a fixed base, in whole milliseconds.
pub fn at(minutes: i64) -> Timestamp {
    let base = Timestamp::from_timestamp_millis(1_700_000_000_000).unwrap();
    base + Duration::minutes(minutes)
}

/// Runs each named test, an `async fn(Arc<dyn Store>)`, on every backend as its own test:
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
