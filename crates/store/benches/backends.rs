//! The store on SQLite beside the store on PostgreSQL, doing what a server node does
//! most: listing sessions (pages of 50, newest first, over 10,000 sessions), storing
//! turns as they stream (the durable insert of the prompt, three relaxed checkpoints and
//! the final save), and taking and releasing chat leases. Each figure is per second from
//! one node's connection pool, with 8 concurrent clients; PostgreSQL is run when
//! `HEARTH_TEST_POSTGRES` names a server (see `.ci/postgres`), and said skipped otherwise.
//!
//! `cargo bench -p hearth-store --bench backends` (`HEARTH_BACKENDS_BENCH_SESSIONS=1000`
//! for a smaller run)

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use hearth_core::{
    ChatOrigin, ChatSummary, ChatUri, HarnessData, HarnessId, Provenance, Scope, SessionId,
    SessionSummary, SessionUri, StopReason, Turn, TurnId, UserMessage, now,
};
use hearth_store::{
    ChatRecord, LeaseHolder, NewSession, PgStore, SessionQuery, SqliteStore, Store, Takeover,
};

/// Clients working at once.
const CLIENTS: usize = 8;
/// How long each measurement runs.
const SPAN: Duration = Duration::from_secs(3);
/// The users the sessions belong to (a team server's), in turn.
const USERS: usize = 100;

fn new_session(index: usize) -> NewSession {
    let uri = SessionUri::new(HarnessId::parse("replay").unwrap(), SessionId::generate());
    let at = now() - chrono::Duration::seconds(index as i64);
    NewSession {
        summary: SessionSummary {
            uri: uri.clone(),
            harness: uri.harness().clone(),
            title: Some(format!("session {index}")),
            provenance: Provenance::Hearth,
            source: "bench".into(),
            scope: Scope::Global,
            model: None,
            working_directories: Vec::new(),
            started_at: at,
            updated_at: at,
            pinned: false,
            archived: false,
            owner: Some(hearth_core::Owner::user(owner_of(index))),
        },
        default_chat: ChatRecord {
            summary: ChatSummary {
                uri: ChatUri::default_for(&uri),
                origin: ChatOrigin::User,
                title: None,
                model: None,
                created_at: at,
                updated_at: at,
            },
            provider_data: Some(HarnessData::from_bytes(b"{}".to_vec())),
            conversation: None,
            draft: None,
            queued: Vec::new(),
        },
    }
}

/// The user session `index` belongs to.
fn owner_of(index: usize) -> String {
    format!("u-bench{:03}", index % USERS)
}

/// Runs `work(client, round)` from [`CLIENTS`] clients for [`SPAN`]; operations per second.
async fn rate<F, Fut>(work: F) -> f64
where
    F: Fn(usize, usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let work = Arc::new(work);
    let started = Instant::now();
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|client| {
            let work = work.clone();
            tokio::spawn(async move {
                let mut done = 0_usize;
                while started.elapsed() < SPAN {
                    work(client, done).await;
                    done += 1;
                }
                done
            })
        })
        .collect();
    let mut total = 0;
    for task in tasks {
        total += task.await.unwrap();
    }
    total as f64 / started.elapsed().as_secs_f64()
}

async fn measure(name: &str, store: Arc<dyn Store>, sessions: usize) {
    let started = Instant::now();
    let mut chats = Vec::new();
    for index in 0..sessions {
        let session = new_session(index);
        store.create_session(&session).await.unwrap();
        chats.push(session.default_chat.summary.uri.clone());
    }
    let filled = started.elapsed();
    let chats = Arc::new(chats);

    let listing = store.clone();
    let listed = rate(move |_, round| {
        let store = listing.clone();
        async move {
            let mut query = SessionQuery {
                limit: 50,
                ..SessionQuery::default()
            };
            // Every other listing is a second page.
            if round % 2 == 1 {
                let first = store.list_sessions(&query).await.unwrap();
                query.cursor = first.next_cursor;
            }
            let page = store.list_sessions(&query).await.unwrap();
            assert_eq!(page.sessions.len(), 50);
        }
    })
    .await;

    // One user's list among everyone's (a team server): the viewer filter.
    let viewing = store.clone();
    let viewed = rate(move |client, round| {
        let store = viewing.clone();
        async move {
            let query = SessionQuery {
                limit: 50,
                viewer: Some(owner_of(client * 31 + round)),
                ..SessionQuery::default()
            };
            let page = store.list_sessions(&query).await.unwrap();
            assert_eq!(page.sessions.len(), 50.min(sessions / USERS));
        }
    })
    .await;

    let writing = store.clone();
    let targets = chats.clone();
    let turns = rate(move |client, round| {
        let store = writing.clone();
        let chat = targets[(client * 7919 + round) % targets.len()].clone();
        async move {
            let mut turn = Turn::started(TurnId::generate(), UserMessage::text("ping"), now());
            store.insert_turn(&chat, &turn).await.unwrap();
            for _ in 0..3 {
                turn.push_text("some streamed text ");
                store.save_turn(&chat, &turn).await.unwrap();
            }
            turn.end(StopReason::EndTurn);
            store.save_turn(&chat, &turn).await.unwrap();
        }
    })
    .await;

    let leasing = store.clone();
    let leases = rate(move |client, round| {
        let store = leasing.clone();
        let chat = chats[(client * 104_729 + round) % chats.len()].clone();
        let holder = LeaseHolder {
            instance: format!("node-{client}"),
            pid: 1,
            host: "bench".into(),
        };
        async move {
            if store
                .take_lease(&chat, &holder, Duration::from_secs(30), &Takeover::Ended)
                .await
                .is_ok()
            {
                store.release_lease(&chat, &holder).await.unwrap();
            }
        }
    })
    .await;

    println!(
        "{name:<10} {sessions} sessions made in {:.1} s | session pages listed: {listed:>7.0}/s | one of {USERS} users' pages: {viewed:>7.0}/s | turns stored (insert, 3 checkpoints, end): {turns:>6.0}/s | leases taken and released: {leases:>6.0}/s",
        filled.as_secs_f64()
    );
}

#[tokio::main]
async fn main() {
    let sessions: usize = std::env::var("HEARTH_BACKENDS_BENCH_SESSIONS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(10_000);
    println!("{CLIENTS} clients, {} s per figure", SPAN.as_secs());
    let dir = tempfile::tempdir().unwrap();
    let sqlite = SqliteStore::open(&dir.path().join("hearth.db"))
        .await
        .unwrap();
    measure("sqlite", Arc::new(sqlite), sessions).await;
    match hearth_test_support::postgres::fresh_database().await {
        Some(url) => {
            let postgres = PgStore::connect(&url).await.unwrap();
            measure("postgres", Arc::new(postgres), sessions).await;
        }
        None => println!("postgres   skipped: HEARTH_TEST_POSTGRES is not set (see .ci/postgres)"),
    }
}
