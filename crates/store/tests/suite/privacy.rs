//! Privacy at rest: the database and the files beside it are readable by their owner
//! only, and deleting a session or a chat erases what was said in it — from the database
//! file and from its write-ahead log — keeping only a tombstone.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use hearth_core::{
    ChatId, ChatOrigin, ChatUri, HarnessData, ProposalId, Turn, TurnId, UserMessage, now,
};
use hearth_store::{NewSession, ProposalRecord, ProposalStatus, ProposalStore, SqliteStore, Store};
use pretty_assertions::assert_eq;

use super::fixtures::{at, chat_record, new_session};

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn companion(path: &Path, suffix: &str) -> PathBuf {
    PathBuf::from(format!("{}{suffix}", path.display()))
}

#[tokio::test]
async fn a_new_data_directory_database_and_log_are_readable_by_their_owner_only() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let path = home.join("hearth.db");
    let store = SqliteStore::open(&path).await.unwrap();
    store
        .create_session(&new_session("replay", None, at(0)))
        .await
        .unwrap();
    assert_eq!(mode(&home), 0o700, "the data directory");
    assert_eq!(mode(&path), 0o600, "hearth.db");
    assert_eq!(mode(&companion(&path, "-wal")), 0o600, "hearth.db-wal");
    assert_eq!(mode(&companion(&path, "-shm")), 0o600, "hearth.db-shm");
}

#[tokio::test]
async fn an_existing_database_open_to_others_is_narrowed_when_opened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hearth.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let session = new_session("replay", None, at(0));
    store.create_session(&session).await.unwrap();
    // Another process keeps the log open meanwhile, as a running server would.
    let wal = companion(&path, "-wal");
    for file in [&path, &wal] {
        fs::set_permissions(file, fs::Permissions::from_mode(0o644)).unwrap();
    }
    let reopened = SqliteStore::open(&path).await.unwrap();
    assert_eq!((mode(&path), mode(&wal)), (0o600, 0o600));
    assert!(
        reopened
            .session(&session.summary.uri)
            .await
            .unwrap()
            .is_some()
    );
    store.close().await;
}

/// A marker no other test data contains.
fn marker(name: &str) -> String {
    format!("{name}-{}", TurnId::generate())
}

/// The database file and its write-ahead log, as an attacker reading the disk sees them.
fn raw_bytes(path: &Path) -> Vec<u8> {
    let mut bytes = fs::read(path).unwrap();
    match fs::read(companion(path, "-wal")) {
        Ok(wal) => bytes.extend(wal),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => panic!("{error}"),
    }
    bytes
}

fn holds(bytes: &[u8], text: &str) -> bool {
    bytes
        .windows(text.len())
        .any(|window| window == text.as_bytes())
}

/// A session whose every stored part says `secret`: title, chat titles, drafts, provider
/// data, the user's messages, answers streamed in several checkpoints, and a proposal.
async fn session_saying(store: &SqliteStore, secret: &str) -> NewSession {
    let mut session = new_session("replay", None, at(0));
    session.summary.title = Some(format!("title {secret}"));
    session.default_chat.provider_data = Some(HarnessData::from_bytes(
        format!("{{\"notes\":\"{secret}\"}}").into_bytes(),
    ));
    store.create_session(&session).await.unwrap();
    let uri = session.summary.uri.clone();
    let default = ChatUri::default_for(&uri);
    let peer = ChatUri::peer(&uri, ChatId::generate());
    let mut side = chat_record(peer.clone(), ChatOrigin::User, at(1));
    side.summary.title = Some(format!("side {secret}"));
    store.insert_chat(&side).await.unwrap();
    for chat in [&default, &peer] {
        store
            .set_draft(chat, Some(&format!("draft {secret}")))
            .await
            .unwrap();
        let mut turn = Turn::started(
            TurnId::generate(),
            UserMessage::text(format!("question {secret}")),
            now(),
        );
        store.insert_turn(chat, &turn).await.unwrap();
        // Streaming: each checkpoint rewrites the body, leaving older copies behind.
        for piece in ["first ", "second ", "third "] {
            turn.push_text(&format!("{piece}{secret} "));
            store.save_turn(chat, &turn).await.unwrap();
        }
        turn.end(hearth_core::StopReason::EndTurn);
        store.save_turn(chat, &turn).await.unwrap();
    }
    let mut summary = session.summary.clone();
    summary.title = Some(format!("renamed {secret}"));
    store.update_session(&summary).await.unwrap();
    store
        .insert_proposal(&ProposalRecord {
            id: ProposalId::generate(),
            tool: "calendar_add_event".into(),
            session: uri.clone(),
            chat: default.clone(),
            turn_id: TurnId::generate(),
            call_id: "call-1".into(),
            summary: format!("add {secret}"),
            diff: format!("+ {secret}"),
            payload: format!("{{\"title\":\"{secret}\"}}"),
            payload_hash: "0".repeat(64),
            status: ProposalStatus::Pending,
            approved_hash: None,
            decided_by: None,
            decided_at: None,
            reason: None,
            outcome: None,
            error: None,
            created_at: now(),
            expires_at: now() + chrono::Duration::days(7),
            updated_at: now(),
            applied_at: None,
        })
        .await
        .unwrap();
    session
}

#[tokio::test]
async fn deleting_a_session_erases_what_was_said_from_the_file_and_its_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hearth.db");
    let store = SqliteStore::open(&path).await.unwrap();
    // A first deletion, so that this test sees what every deletion does (not the one-time
    // rebuild of a database written by an older version; see the next test).
    let first = new_session("replay", None, at(0));
    store.create_session(&first).await.unwrap();
    store.delete_session(&first.summary.uri).await.unwrap();

    let secret = marker("deleted-secret");
    let kept = marker("kept-secret");
    let deleted = session_saying(&store, &secret).await;
    let other = session_saying(&store, &kept).await;
    // Control: both are on disk (file or log) before the deletion.
    let before = raw_bytes(&path);
    assert!(holds(&before, &secret), "the control failed: never written");
    assert!(holds(&before, &kept));

    assert!(store.delete_session(&deleted.summary.uri).await.unwrap());

    let after = raw_bytes(&path);
    assert!(
        !holds(&after, &secret),
        "the deleted session's text is still readable in hearth.db or hearth.db-wal"
    );
    assert!(holds(&after, &kept), "the other session was damaged");
    assert_eq!(
        fs::metadata(companion(&path, "-wal")).unwrap().len(),
        0,
        "the log was not checkpointed and truncated"
    );
    // The tombstone: the URI and times, nothing said.
    let row: (Option<String>, Option<String>, Option<String>, Option<i64>) = sqlx::query_as(
        "SELECT title, model, working_directories, deleted_at FROM sessions WHERE uri = ?",
    )
    .bind(deleted.summary.uri.to_string())
    .fetch_one(store.pool())
    .await
    .unwrap();
    assert_eq!((row.0, row.1, row.2), (None, None, None));
    assert!(row.3.is_some());
    assert!(store.is_tombstoned(&deleted.summary.uri).await.unwrap());
    // Its proposals keep their row, expired, with their text erased.
    let proposals: Vec<(String, String, String, String)> = sqlx::query_as(
        "SELECT status, summary, diff, payload FROM proposals WHERE session_uri = ?",
    )
    .bind(deleted.summary.uri.to_string())
    .fetch_all(store.pool())
    .await
    .unwrap();
    let erased = "(erased with its session)".to_owned();
    assert_eq!(
        proposals,
        vec![("expired".to_owned(), erased.clone(), erased.clone(), erased)]
    );
    // The other session reads as before.
    let default = ChatUri::default_for(&other.summary.uri);
    assert!(
        store.turns(&default).await.unwrap()[0]
            .response_text()
            .contains(&kept)
    );
}

#[tokio::test]
async fn deleting_a_chat_erases_its_turns_and_draft() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hearth.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let first = new_session("replay", None, at(0));
    store.create_session(&first).await.unwrap();
    store.delete_session(&first.summary.uri).await.unwrap();

    let secret = marker("side-secret");
    let session = session_saying(&store, "kept-in-the-default-chat").await;
    let peer = ChatUri::peer(&session.summary.uri, ChatId::generate());
    store
        .insert_chat(&chat_record(peer.clone(), ChatOrigin::User, at(2)))
        .await
        .unwrap();
    store
        .set_draft(&peer, Some(&format!("draft {secret}")))
        .await
        .unwrap();
    let mut turn = Turn::started(TurnId::generate(), UserMessage::text(&secret), now());
    store.insert_turn(&peer, &turn).await.unwrap();
    turn.push_text(&secret);
    store.save_turn(&peer, &turn).await.unwrap();
    assert!(holds(&raw_bytes(&path), &secret), "the control failed");

    store.delete_chat(&peer).await.unwrap();
    assert!(!holds(&raw_bytes(&path), &secret));
    assert!(holds(&raw_bytes(&path), "kept-in-the-default-chat"));
}

#[tokio::test]
async fn the_first_deletion_after_upgrading_erases_what_an_older_version_left_behind() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hearth.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let secret = marker("old-secret");
    let old = session_saying(&store, &secret).await;
    // Kept, and sharing the file's pages with the old session's rows.
    let kept = marker("kept-secret");
    session_saying(&store, &kept).await;
    store.close().await;
    // An older Hearth deleted a session without overwriting anything: its text went to
    // the file's free pages, where it stays.
    {
        let options = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(&path)
            .foreign_keys(true)
            .pragma("secure_delete", "OFF");
        let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
        for statement in [
            "DELETE FROM chats WHERE session_id = (SELECT id FROM sessions WHERE uri = ?1)",
            "DELETE FROM proposals WHERE session_uri = ?1",
            "UPDATE sessions SET deleted_at = 1, title = NULL WHERE uri = ?1",
        ] {
            sqlx::query(statement)
                .bind(old.summary.uri.to_string())
                .execute(&pool)
                .await
                .unwrap();
        }
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
    }
    let store = SqliteStore::open(&path).await.unwrap();
    assert!(holds(&raw_bytes(&path), &secret), "the control failed");

    // Any deletion, of anything, after the upgrade.
    let unrelated = new_session("replay", None, at(5));
    store.create_session(&unrelated).await.unwrap();
    store.delete_session(&unrelated.summary.uri).await.unwrap();
    assert!(
        !holds(&raw_bytes(&path), &secret),
        "what an older version deleted is still in the file"
    );
    assert!(
        holds(&raw_bytes(&path), &kept),
        "the kept session was damaged"
    );
    // Done once.
    let chores: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM store_chores")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(chores, 0);
}
