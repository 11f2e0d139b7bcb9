//! The archive: everything exported, imported into a fresh database and exported again
//! gives the same records (compared: every line after the header, by its SHA-256-free
//! exact text — the same rows with the same columns and values, row ids left out); an
//! import of what is already there skips and reports it; a cut, damaged or foreign
//! archive fails naming why and imports nothing.

use std::collections::BTreeMap;

use hearth_core::{
    Attachment, ChatId, ChatOrigin, ChatUri, ConversationId, HarnessData, HarnessId, ProjectId,
    ResponsePart, StopReason, ToolCallPart, ToolCallStatus, Turn, TurnId, UserMessage, now,
};
use hearth_store::{
    PgStore, ProjectRecord, ProjectStore, SessionQuery, SqliteStore, Store, StoreError,
    session_markdown,
};
use pretty_assertions::assert_eq;

use super::fixtures::{at, chat_record, new_session};

async fn store() -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("hearth.db"))
        .await
        .unwrap();
    (dir, store)
}

fn rich_turn() -> Turn {
    let mut user = UserMessage::text("read `notes.md` and plan");
    user.attachments.push(Attachment {
        name: "notes.md".into(),
        media_type: "text/markdown".into(),
        uri: "data:text/markdown;base64,aGk=".into(),
    });
    let mut turn = Turn::started(TurnId::generate(), user, at(1));
    turn.push_text("Reading.");
    let mut call = ToolCallPart::new(
        "c1",
        "read_file",
        serde_json::json!({"path": "notes.md"}),
        ToolCallStatus::Completed,
    );
    call.title = Some("Read notes.md".into());
    turn.parts.push(ResponsePart::ToolCall(call));
    turn.end(StopReason::EndTurn);
    turn
}

/// A database with a project, a session in it with a rich turn, an incomplete one, a
/// side chat with a draft and a backing, a trashed session and a tombstone.
async fn filled(store: &SqliteStore) {
    let project = ProjectRecord {
        id: ProjectId::parse("thesis").unwrap(),
        folder: "/work/thesis".into(),
        name: "Thesis".into(),
        created_at: at(0),
        updated_at: at(0),
        trusted_digest: Some("d1".into()),
    };
    store.insert_project(&project).await.unwrap();
    let session = new_session("codex", Some("thesis"), at(0));
    store.create_session(&session).await.unwrap();
    let main = ChatUri::default_for(&session.summary.uri);
    let rich = rich_turn();
    store.insert_turn(&main, &rich).await.unwrap();
    store.save_turn(&main, &rich).await.unwrap();
    let running = Turn::started(TurnId::generate(), UserMessage::text("and then"), at(2));
    store.insert_turn(&main, &running).await.unwrap();
    let side = ChatUri::peer(&session.summary.uri, ChatId::generate());
    let origin = ChatOrigin::SideChat {
        source_chat: main.clone(),
        turn_id: rich.id.clone(),
    };
    let mut record = chat_record(side.clone(), origin, at(3));
    record.provider_data = Some(HarnessData::from_bytes(vec![0, 159, 146, 150, 255]));
    store.insert_chat(&record).await.unwrap();
    store
        .set_draft(&side, Some("half a thought"))
        .await
        .unwrap();
    let provider = HarnessId::parse("codex").unwrap();
    let conversation = ConversationId::parse("native-7").unwrap();
    store
        .mark_conversation(&provider, &conversation, &side)
        .await
        .unwrap();
    for erase in [true, false] {
        let gone = new_session("claude", None, at(4));
        store.create_session(&gone).await.unwrap();
        let chat = ChatUri::default_for(&gone.summary.uri);
        store.insert_turn(&chat, &rich_turn()).await.unwrap();
        store.trash_session(&gone.summary.uri).await.unwrap();
        if erase {
            store.empty_trash(Some(now())).await.unwrap();
        }
    }
}

async fn export_all(store: &SqliteStore) -> String {
    let mut out = Vec::new();
    store.export_all(&mut out).await.unwrap();
    String::from_utf8(out).unwrap()
}

/// Every record after the header, counted by its exact text.
fn records(archive: &str) -> BTreeMap<String, usize> {
    let mut counted = BTreeMap::new();
    for line in archive.lines().skip(1) {
        *counted.entry(line.to_owned()).or_default() += 1;
    }
    counted
}

fn holds_every_kind(archive: &str) {
    let kinds: Vec<String> = archive
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    for kind in [
        "header", "project", "session", "chat", "turn", "backing", "end",
    ] {
        assert!(
            kinds.iter().any(|found| found == kind),
            "no {kind} in {archive}"
        );
    }
}

#[tokio::test]
async fn everything_round_trips_and_a_second_import_skips_what_is_there() {
    let (_a, first) = store().await;
    filled(&first).await;
    let archive = export_all(&first).await;
    holds_every_kind(&archive);
    let (_b, second) = store().await;
    let report = second
        .import_archive(&mut archive.as_bytes())
        .await
        .unwrap();
    assert_eq!(
        (report.projects, report.sessions, report.chats, report.turns),
        (1, 3, 3, 3)
    );
    assert!(report.skipped.is_empty(), "{report:?}");
    let again = export_all(&second).await;
    assert_eq!(records(&again), records(&archive));
    // What was searchable is searchable there too, and the turns read back the same.
    let listed = second
        .list_sessions(&SessionQuery::default())
        .await
        .unwrap();
    assert_eq!(listed.sessions.len(), 1);
    let uri = &listed.sessions[0].uri;
    let main = ChatUri::default_for(uri);
    assert_eq!(
        second.turns(&main).await.unwrap(),
        first.turns(&main).await.unwrap()
    );
    let markdown = session_markdown(&second, uri).await.unwrap();
    assert!(
        markdown.contains("- Attached: notes.md (text/markdown)"),
        "{markdown}"
    );
    assert!(markdown.contains("**Tool call** `read_file`"), "{markdown}");
    assert!(markdown.contains("*[incomplete]*"), "{markdown}");

    let repeat = second
        .import_archive(&mut archive.as_bytes())
        .await
        .unwrap();
    assert_eq!((repeat.sessions, repeat.turns), (0, 0));
    let skipped: Vec<&str> = repeat.skipped.iter().map(|(kind, _)| *kind).collect();
    assert_eq!(skipped, vec!["project", "session", "session", "session"]);
    assert_eq!(records(&export_all(&second).await), records(&archive));
}

async fn refused(archive: &str) -> String {
    let (_dir, store) = store().await;
    let error = store
        .import_archive(&mut archive.as_bytes())
        .await
        .unwrap_err();
    assert!(matches!(error, StoreError::Archive(_)), "{error:?}");
    // Nothing partial: not one session, project or turn.
    assert!(
        store
            .list_sessions(&SessionQuery::default())
            .await
            .unwrap()
            .sessions
            .is_empty()
    );
    assert!(store.projects().await.unwrap().is_empty());
    assert!(store.trash_items().await.unwrap().is_empty());
    error.to_string()
}

#[tokio::test]
async fn a_cut_damaged_or_foreign_archive_imports_nothing_and_says_why() {
    let (_a, first) = store().await;
    filled(&first).await;
    let archive = export_all(&first).await;
    let lines: Vec<&str> = archive.lines().collect();

    let without_end = lines[..lines.len() - 1].join("\n");
    assert!(refused(&without_end).await.contains("cut short"));
    let cut_mid_line = &archive[..archive.len() - 40];
    assert!(refused(cut_mid_line).await.contains("not a JSON record"));
    let mut missing_turn = lines.clone();
    let turn = missing_turn
        .iter()
        .position(|line| line.contains("\"type\":\"turn\""))
        .unwrap();
    missing_turn.remove(turn);
    assert!(
        refused(&missing_turn.join("\n"))
            .await
            .contains("records are missing")
    );
    let newer_column = archive.replacen("\"provenance\":", "\"mood\":\"calm\",\"provenance\":", 1);
    assert!(refused(&newer_column).await.contains("no column `mood`"));
    let foreign = "{\"type\":\"conversation\",\"id\":1}\n{\"type\":\"message\"}\n";
    assert!(refused(foreign).await.contains("not a Hearth archive"));
    assert!(refused("").await.contains("empty"));
    let newer = archive.replacen("\"version\":1", "\"version\":9", 1);
    assert!(refused(&newer).await.contains("newer Hearth"));
}

async fn export_all_of(store: &dyn Store) -> String {
    let mut out = Vec::new();
    Store::export_all(store, &mut out).await.unwrap();
    String::from_utf8(out).unwrap()
}

#[tokio::test]
async fn everything_moves_from_sqlite_to_postgresql_and_back_unchanged() {
    let Some(url) = hearth_test_support::postgres::fresh_database().await else {
        return;
    };
    let (_a, first) = store().await;
    filled(&first).await;
    let archive = export_all(&first).await;
    let postgres = PgStore::connect(&url).await.unwrap();
    let report = Store::import_archive(&postgres, &mut archive.as_bytes())
        .await
        .unwrap();
    assert_eq!(
        (report.projects, report.sessions, report.chats, report.turns),
        (1, 3, 3, 3)
    );
    // PostgreSQL holds the same rows: its archive is the same records.
    let from_postgres = export_all_of(&postgres).await;
    assert_eq!(records(&from_postgres), records(&archive));
    let listed = postgres
        .list_sessions(&SessionQuery::default())
        .await
        .unwrap();
    assert_eq!(listed.sessions.len(), 1);
    let main = ChatUri::default_for(&listed.sessions[0].uri);
    assert_eq!(
        postgres.turns(&main).await.unwrap(),
        first.turns(&main).await.unwrap()
    );
    // Its turns are searchable there (PostgreSQL's index is kept by a trigger).
    let found = postgres
        .search_turns(&hearth_store::SearchQuery {
            text: "plan".into(),
            ..hearth_store::SearchQuery::default()
        })
        .await
        .unwrap();
    assert!(!found.hits.is_empty(), "{found:?}");

    // A second import skips what is there; nothing changes.
    let repeat = Store::import_archive(&postgres, &mut archive.as_bytes())
        .await
        .unwrap();
    assert_eq!((repeat.sessions, repeat.turns), (0, 0));
    assert_eq!(repeat.skipped.len(), 4, "{repeat:?}");
    assert_eq!(records(&export_all_of(&postgres).await), records(&archive));

    // And back into a new SQLite database, the same again.
    let (_b, back) = store().await;
    back.import_archive(&mut from_postgres.as_bytes())
        .await
        .unwrap();
    assert_eq!(records(&export_all(&back).await), records(&archive));
}

#[tokio::test]
async fn a_damaged_archive_imports_nothing_into_postgresql() {
    let Some(url) = hearth_test_support::postgres::fresh_database().await else {
        return;
    };
    let (_a, first) = store().await;
    filled(&first).await;
    let archive = export_all(&first).await;
    let lines: Vec<&str> = archive.lines().collect();
    let without_end = lines[..lines.len() - 1].join("\n");
    let postgres = PgStore::connect(&url).await.unwrap();
    let error = Store::import_archive(&postgres, &mut without_end.as_bytes())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("cut short"), "{error}");
    assert!(
        postgres
            .list_sessions(&SessionQuery::default())
            .await
            .unwrap()
            .sessions
            .is_empty()
    );
    assert!(postgres.projects().await.unwrap().is_empty());
}
