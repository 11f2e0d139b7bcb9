//! The import on the fixture stores (copied from what the real agents wrote), into a
//! real Hearth store: each agent's session once; a session the agent's ACP listing
//! registered first gets its turns; a conversation behind one of Hearth's own chats and
//! a deleted session are left alone.

use std::path::{Path, PathBuf};

use hearth_core::{
    ChatOrigin, ChatSummary, ChatUri, ConversationId, HarnessData, HarnessId, Provenance, Scope,
    SessionId, SessionSummary, SessionUri, Turn,
};
use hearth_history::{
    Agent, ConversationData, ImportOptions, ImportSource, NativeSession, StoreLocation,
};
use hearth_store::{ChatRecord, NewSession, SessionQuery, SqliteStore, Store};
use pretty_assertions::assert_eq;

struct Plain;

impl ConversationData for Plain {
    fn imported(
        &self,
        _: &ChatUri,
        session: &NativeSession,
        _: &[Turn],
    ) -> Result<HarnessData, String> {
        Ok(HarnessData::from_bytes(
            session.native_id.clone().into_bytes(),
        ))
    }

    fn with_turns(
        &self,
        _: &ChatUri,
        data: &HarnessData,
        _: &[Turn],
    ) -> Result<HarnessData, String> {
        Ok(data.clone())
    }
}

fn fixture(agent: Agent) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(agent.id())
}

fn options(dir: &Path) -> ImportOptions {
    ImportOptions {
        sources: Agent::ALL
            .into_iter()
            .map(|agent| ImportSource {
                location: StoreLocation {
                    agent,
                    root: fixture(agent),
                },
                provider: HarnessId::parse(agent.id()).unwrap(),
                peers: Vec::new(),
            })
            .collect(),
        record: dir.join("record.json"),
    }
}

async fn counts(store: &SqliteStore, options: &ImportOptions) -> Vec<(String, [u64; 4])> {
    let reports = hearth_history::import(store, &Plain, options)
        .await
        .unwrap();
    for report in &reports {
        assert_eq!(report.errors, Vec::<String>::new(), "{}", report.agent);
    }
    reports
        .into_iter()
        .map(|report| {
            (
                report.agent,
                [
                    report.found,
                    report.imported,
                    report.updated,
                    report.skipped,
                ],
            )
        })
        .collect()
}

fn each(counts: [u64; 4]) -> Vec<(String, [u64; 4])> {
    Agent::ALL
        .iter()
        .map(|agent| (agent.id().to_owned(), counts))
        .collect()
}

#[tokio::test]
async fn each_fixture_session_is_imported_once_with_its_provenance() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("hearth.db"))
        .await
        .unwrap();
    let options = options(dir.path());
    assert_eq!(counts(&store, &options).await, each([1, 1, 0, 0]));
    assert_eq!(counts(&store, &options).await, each([1, 0, 0, 1]));
    std::fs::remove_file(&options.record).unwrap();
    assert_eq!(
        counts(&store, &options).await,
        each([1, 0, 0, 1]),
        "read again, nothing twice"
    );

    let sessions = store
        .list_sessions(&SessionQuery::default())
        .await
        .unwrap()
        .sessions;
    let mut seen: Vec<(String, Provenance, bool, usize)> = Vec::new();
    for session in &sessions {
        let turns = store
            .turns(&ChatUri::default_for(&session.uri))
            .await
            .unwrap();
        let source = session.source.strip_prefix("import ").unwrap();
        seen.push((
            session.harness.to_string(),
            session.provenance,
            Path::new(source).is_file(),
            turns.len(),
        ));
    }
    seen.sort_by(|left, right| left.0.cmp(&right.0));
    let expected: Vec<_> = {
        let mut ids: Vec<_> = Agent::ALL
            .iter()
            .map(|agent| (agent.id().to_owned(), Provenance::External, true, 1))
            .collect();
        ids.sort_by(|left, right| left.0.cmp(&right.0));
        ids
    };
    assert_eq!(seen, expected);
}

fn discovered(uri: &SessionUri) -> NewSession {
    let at = hearth_core::now();
    NewSession {
        summary: SessionSummary {
            uri: uri.clone(),
            harness: uri.harness().clone(),
            title: None,
            provenance: Provenance::External,
            source: "discovery".into(),
            scope: Scope::Global,
            model: None,
            working_directories: Vec::new(),
            started_at: at,
            updated_at: at,
            pinned: false,
            archived: false,
            owner: None,
        },
        default_chat: ChatRecord {
            summary: ChatSummary {
                uri: ChatUri::default_for(uri),
                origin: ChatOrigin::User,
                title: None,
                model: None,
                created_at: at,
                updated_at: at,
            },
            provider_data: Some(HarnessData::from_bytes(b"listed".to_vec())),
            conversation: None,
            draft: None,
            queued: Vec::new(),
        },
    }
}

#[tokio::test]
async fn listed_sessions_get_their_turns_and_hearths_own_or_deleted_ones_are_left() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("hearth.db"))
        .await
        .unwrap();
    let session = |agent: &str, id: &str| {
        SessionUri::new(
            HarnessId::parse(agent).unwrap(),
            SessionId::parse(id).unwrap(),
        )
    };
    // Claude's session, listed over ACP before: it gets its turns.
    let listed = session("claude", "16d5267c-db96-495e-8c70-0abbed4981c7");
    store
        .register_discovered(&discovered(&listed))
        .await
        .unwrap();
    // Codex's session backs one of Hearth's own chats: left alone.
    let own = session("codex", "0000-own");
    store.create_session(&discovered(&own)).await.unwrap();
    let codex = HarnessId::parse("codex").unwrap();
    let native = ConversationId::parse("01a246af-5522-71d2-8c0d-c9d057be5d88").unwrap();
    store
        .mark_conversation(&codex, &native, &ChatUri::default_for(&own))
        .await
        .unwrap();
    // Gemini's session was deleted in Hearth: never back.
    let deleted = session("gemini", "63d28250-7076-40ab-afcf-cd367c9a0246");
    store
        .register_discovered(&discovered(&deleted))
        .await
        .unwrap();
    assert!(store.delete_session(&deleted).await.unwrap());

    let counts = counts(&store, &options(dir.path())).await;
    assert_eq!(
        counts,
        vec![
            ("codex".to_owned(), [1, 0, 0, 1]),
            ("claude".to_owned(), [1, 0, 1, 0]),
            ("gemini".to_owned(), [1, 0, 0, 1]),
            ("opencode".to_owned(), [1, 1, 0, 0]),
            ("copilot".to_owned(), [1, 1, 0, 0]),
        ]
    );
    let turns = store.turns(&ChatUri::default_for(&listed)).await.unwrap();
    assert_eq!(
        turns
            .iter()
            .map(|turn| turn.response_text())
            .collect::<Vec<_>>(),
        ["I wrote the note."]
    );
    assert!(store.session(&deleted).await.unwrap().is_none());
    assert!(store.is_tombstoned(&deleted).await.unwrap());
}
