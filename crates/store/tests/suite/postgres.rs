//! What only the PostgreSQL store has to show: nodes opening one database at once migrate
//! it once; a database of another program or of a newer Hearth is refused untouched; a
//! server that cannot be reached is a clear, retryable error; and two nodes writing one
//! chat at once lose nothing and never both hold its lease.

use std::sync::Arc;
use std::time::Duration;

use hearth_core::{ChatUri, StopReason, Turn, TurnId, UserMessage};
use hearth_store::{Change, LeaseHolder, PgStore, Store, StoreError, Takeover};
use hearth_test_support::postgres::fresh_database;
use sqlx::Connection;

use super::fixtures::{at, new_session};

#[tokio::test]
async fn nodes_opening_one_new_database_at_once_migrate_it_once() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let opens = (0..6).map(|_| {
        let url = url.clone();
        tokio::spawn(async move { PgStore::connect(&url).await })
    });
    for open in futures::future::join_all(opens).await {
        open.unwrap().unwrap();
    }
    let mut connection = sqlx::PgConnection::connect(&url).await.unwrap();
    let versions: Vec<i64> = sqlx::query_scalar("SELECT version FROM hearth_schema")
        .fetch_all(&mut connection)
        .await
        .unwrap();
    assert_eq!(versions, [hearth_store::SCHEMA_VERSION]);
}

#[tokio::test]
async fn another_programs_database_and_a_newer_schema_are_refused_untouched() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let mut connection = sqlx::PgConnection::connect(&url).await.unwrap();
    sqlx::query("CREATE TABLE invoices (id BIGINT PRIMARY KEY)")
        .execute(&mut connection)
        .await
        .unwrap();
    let error = PgStore::connect(&url).await.unwrap_err();
    assert!(matches!(error, StoreError::Foreign { .. }), "{error}");
    let tables: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()",
    )
    .fetch_one(&mut connection)
    .await
    .unwrap();
    assert_eq!(
        tables, 1,
        "nothing was added to the other program's database"
    );

    let Some(url) = fresh_database().await else {
        return;
    };
    PgStore::connect(&url).await.unwrap().close().await;
    let mut connection = sqlx::PgConnection::connect(&url).await.unwrap();
    sqlx::query("UPDATE hearth_schema SET version = 999")
        .execute(&mut connection)
        .await
        .unwrap();
    let error = PgStore::connect(&url).await.unwrap_err();
    assert!(
        matches!(error, StoreError::NewerSchema { found: 999, .. }),
        "{error}"
    );
}

#[tokio::test]
async fn a_server_that_cannot_be_reached_is_a_clear_retryable_error_without_the_password() {
    // A port nothing listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let error = PgStore::connect(&format!("postgres://hearth:s3cret@127.0.0.1:{port}/hearth"))
        .await
        .unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, StoreError::Unreachable { .. }), "{message}");
    assert!(error.is_transient(), "{message}");
    assert!(message.contains(&format!("127.0.0.1:{port}")), "{message}");
    assert!(!message.contains("s3cret"), "{message}");
    let error = PgStore::connect("postgres://[bad").await.unwrap_err();
    assert!(
        error.to_string().contains("is not a PostgreSQL URL"),
        "{error}"
    );
}

fn holder(name: &str) -> LeaseHolder {
    LeaseHolder {
        instance: name.into(),
        pid: 1,
        host: format!("node-{name}"),
    }
}

#[tokio::test]
async fn two_nodes_writing_one_chat_at_once_lose_nothing_and_never_share_its_lease() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let nodes: Vec<Arc<PgStore>> = vec![
        Arc::new(PgStore::connect(&url).await.unwrap()),
        Arc::new(PgStore::connect(&url).await.unwrap()),
    ];
    let session = new_session("replay", None, at(0));
    nodes[0].create_session(&session).await.unwrap();
    let chat = ChatUri::default_for(&session.summary.uri);

    // 40 turns from each node, interleaved: every one is stored, numbered without a gap.
    let writers = nodes.iter().enumerate().map(|(index, node)| {
        let node = node.clone();
        let chat = chat.clone();
        tokio::spawn(async move {
            for n in 0..40 {
                let mut turn = Turn::started(
                    TurnId::generate(),
                    UserMessage::text(format!("node {index} turn {n}")),
                    at(n),
                );
                node.insert_turn(&chat, &turn).await.unwrap();
                turn.push_text("ok");
                turn.end(StopReason::EndTurn);
                node.save_turn(&chat, &turn).await.unwrap();
            }
        })
    });
    for writer in futures::future::join_all(writers).await {
        writer.unwrap();
    }
    let turns = nodes[1].turns(&chat).await.unwrap();
    assert_eq!(turns.len(), 80);
    for index in 0..2 {
        let mine: Vec<String> = turns
            .iter()
            .map(|turn| turn.user.text.clone())
            .filter(|text| text.starts_with(&format!("node {index} ")))
            .collect();
        let expected: Vec<String> = (0..40).map(|n| format!("node {index} turn {n}")).collect();
        assert_eq!(mine, expected, "node {index}'s turns, in its order");
    }

    // Both nodes take the lease at once, 20 times: exactly one wins each round.
    for round in 0..20 {
        let takes = nodes.iter().enumerate().map(|(index, node)| {
            let node = node.clone();
            let chat = chat.clone();
            let me = holder(&format!("{round}-{index}"));
            tokio::spawn(async move {
                node.take_lease(&chat, &me, Duration::from_secs(60), &Takeover::Ended)
                    .await
                    .map(|grant| (me, grant))
            })
        });
        let results: Vec<_> = futures::future::join_all(takes)
            .await
            .into_iter()
            .map(Result::unwrap)
            .collect();
        let winners: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert_eq!(winners.len(), 1, "round {round}: {results:?}");
        for loser in results.iter().filter_map(|r| r.as_ref().err()) {
            assert!(matches!(loser, StoreError::Leased { .. }), "{loser}");
        }
        let (winner, _) = winners[0];
        nodes[0].release_lease(&chat, winner).await.unwrap();
    }
}

#[tokio::test]
async fn a_node_hears_of_the_sessions_and_answers_another_node_commits() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let listening = PgStore::connect(&url).await.unwrap();
    let writing = PgStore::connect(&url).await.unwrap();
    let mut changes = listening.changes().await.unwrap();

    let session = new_session("replay", None, at(0));
    writing.create_session(&session).await.unwrap();
    assert_eq!(
        next(&mut changes).await,
        Change::Session(session.summary.uri.clone())
    );
    let chat = ChatUri::default_for(&session.summary.uri);
    let me = holder("writer");
    writing
        .take_lease(&chat, &me, Duration::from_secs(60), &Takeover::Ended)
        .await
        .unwrap();
    // A lease released by someone who does not hold it changes nothing, and says nothing.
    writing
        .release_lease(&chat, &holder("stranger"))
        .await
        .unwrap();
    writing.release_lease(&chat, &me).await.unwrap();
    assert_eq!(next(&mut changes).await, Change::Chat(chat.clone()));
    // A rolled-back write announces nothing: a duplicate session is refused.
    assert!(writing.create_session(&session).await.is_err());
    let other = new_session("replay", None, at(1));
    writing.create_session(&other).await.unwrap();
    assert_eq!(
        next(&mut changes).await,
        Change::Session(other.summary.uri.clone())
    );
}

/// The next change of the feed, failing the test after the wait.
async fn next(changes: &mut tokio::sync::mpsc::Receiver<Change>) -> Change {
    tokio::time::timeout(hearth_test_support::WAIT, changes.recv())
        .await
        .expect("a change within the wait")
        .expect("the feed stays open")
}

#[tokio::test]
async fn a_sessions_archive_from_postgres_imports_into_sqlite_whole() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let postgres = PgStore::connect(&url).await.unwrap();
    let session = new_session("replay", None, at(0));
    postgres.create_session(&session).await.unwrap();
    let chat = ChatUri::default_for(&session.summary.uri);
    let mut turn = Turn::started(TurnId::generate(), UserMessage::text("keep me"), at(1));
    postgres.insert_turn(&chat, &turn).await.unwrap();
    turn.push_text("kept");
    turn.end(StopReason::EndTurn);
    postgres.save_turn(&chat, &turn).await.unwrap();

    let archive = postgres
        .archive_session(&session.summary.uri)
        .await
        .unwrap();
    let sqlite = hearth_store::SqliteStore::open_in_memory().await.unwrap();
    let report = sqlite
        .import_archive(&mut std::io::Cursor::new(archive.into_bytes()))
        .await
        .unwrap();
    assert_eq!((report.sessions, report.chats, report.turns), (1, 1, 1));
    assert_eq!(
        sqlite.session(&session.summary.uri).await.unwrap(),
        postgres.session(&session.summary.uri).await.unwrap()
    );
    assert_eq!(
        sqlite.turns(&chat).await.unwrap(),
        postgres.turns(&chat).await.unwrap()
    );
    assert_eq!(
        sqlite.chats(&session.summary.uri).await.unwrap(),
        postgres.chats(&session.summary.uri).await.unwrap()
    );
}

/// Waits until `waiting` advisory locks of the database at `url` are asked for and not
/// yet granted, failing loudly after a deadline.
async fn wait_for_advisory_waiters(url: &str, waiting: i64) {
    let mut connection = sqlx::PgConnection::connect(url).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let found: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        )
        .fetch_one(&mut connection)
        .await
        .unwrap();
        if found == waiting {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{waiting} advisory lock waiter(s) never appeared (found {found})"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn an_advisory_lock_excludes_another_node_until_its_guard_drops() {
    let sqlite = hearth_store::SqliteStore::open_in_memory().await.unwrap();
    assert!(
        hearth_store::Stores::as_postgres(&sqlite).is_none(),
        "SQLite offers no advisory locks"
    );
    let Some(url) = hearth_test_support::postgres::fresh_database().await else {
        return;
    };
    let first = PgStore::connect(&url).await.unwrap();
    let second = PgStore::connect(&url).await.unwrap();
    let held = first.advisory_lock("remotes/web-1.md").await.unwrap();
    // Another name is free meanwhile.
    let other = tokio::time::timeout(
        Duration::from_secs(10),
        second.advisory_lock("remotes/web-2.md"),
    )
    .await
    .expect("another name is not blocked")
    .unwrap();
    drop(other);
    let waiter = tokio::spawn(async move { second.advisory_lock("remotes/web-1.md").await });
    wait_for_advisory_waiters(&url, 1).await;
    assert!(!waiter.is_finished(), "the second node waits for the lock");
    drop(held);
    let taken = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("the lock passes to the waiting node once the first guard drops")
        .unwrap();
    assert!(taken.is_ok(), "{taken:?}");
}

#[tokio::test]
async fn an_advisory_lock_dies_with_its_holders_connection() {
    let Some(url) = hearth_test_support::postgres::fresh_database().await else {
        return;
    };
    let first = PgStore::connect(&url).await.unwrap();
    let second = PgStore::connect(&url).await.unwrap();
    let held = first.advisory_lock("files/file-1.md").await.unwrap();
    let waiter = tokio::spawn(async move { second.advisory_lock("files/file-1.md").await });
    wait_for_advisory_waiters(&url, 1).await;
    // The holder's node is cut off: its backend is terminated, its guard never dropped.
    let mut admin = sqlx::PgConnection::connect(&url).await.unwrap();
    let terminated: Vec<bool> = sqlx::query_scalar(
        "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
    )
    .fetch_all(&mut admin)
    .await
    .unwrap();
    assert_eq!(terminated, [true], "exactly the holder's backend was ended");
    let taken = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("the lock of a dead connection is released")
        .unwrap();
    assert!(taken.is_ok(), "{taken:?}");
    drop(held);
}
