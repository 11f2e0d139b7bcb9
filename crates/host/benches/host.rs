//! Host and store figures on a large store: 100,000 sessions (default chat + 2 peers, 10
//! turns each) plus one session with 10,000 turns.
//!
//! `cargo bench -p hearth-host --bench host` prints: the first page (50) of the session
//! list, subscribe-restore of the 10,000-turn session, host start-up, and the RSS of a
//! fresh process after start-up. The filled database is kept under
//! `target/bench-data/` and reused.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hearth_core::{
    ChatUri, Harness, HarnessId, ResourceUri, SessionId, SessionUri, Turn, TurnId, UserMessage,
};
use hearth_host::{Host, HostConfig};
use hearth_store::{SessionQuery, SqliteStore, Store};
use hearth_test_support::FakeAgent;

const SESSIONS: usize = 100_000;
const PEERS: usize = 2;
const TURNS: usize = 10;
const BIG_TURNS: usize = 10_000;
const FILL_VERSION: &str = "v3";

fn session_id(index: usize) -> String {
    format!("{index:08x}-0000-7000-8000-{index:012x}")
}

fn big_session() -> SessionUri {
    SessionUri::new(
        HarnessId::parse("fake").unwrap(),
        SessionId::parse("big-session").unwrap(),
    )
}

/// A turn's stored body (the store's format: times in milliseconds).
fn turn_body(index: usize, at: i64) -> String {
    let mut turn = Turn::started(
        TurnId::parse(&format!("turn-{index:06}")).unwrap(),
        UserMessage::text(format!(
            "question number {index}: what should I plant in spring?"
        )),
        hearth_core::now(),
    );
    turn.push_text("Tomatoes, beans and courgettes do well; start them indoors in March.");
    serde_json::json!({
        "id": turn.id,
        "user": turn.user,
        "parts": turn.parts,
        "usage": null,
        "stop_reason": "end_turn",
        "started_at": at,
        "completed_at": at,
    })
    .to_string()
}

async fn insert_chat(
    transaction: &mut sqlx::SqliteConnection,
    session_row: i64,
    uri: &str,
    position: i64,
    turns: usize,
    at: i64,
) {
    let chat_row: i64 = sqlx::query_scalar(
        "INSERT INTO chats (session_id, uri, position, origin, provider_data, created_at, updated_at)
         VALUES (?, ?, ?, '{\"type\":\"user\"}', x'7b7d', ?, ?) RETURNING id",
    )
    .bind(session_row)
    .bind(uri)
    .bind(position)
    .bind(at)
    .bind(at)
    .fetch_one(&mut *transaction)
    .await
    .unwrap();
    for index in 0..turns {
        sqlx::query(
            "INSERT INTO turns (chat_id, seq, turn_id, running, body, started_at, checkpointed_at)
             VALUES (?, ?, ?, 0, ?, ?, ?)",
        )
        .bind(chat_row)
        .bind(index as i64 + 1)
        .bind(format!("turn-{index:06}"))
        .bind(turn_body(index, at))
        .bind(at)
        .bind(at)
        .execute(&mut *transaction)
        .await
        .unwrap();
    }
}

async fn insert_session(
    transaction: &mut sqlx::SqliteConnection,
    id: &str,
    peers: usize,
    turns: usize,
    at: i64,
) {
    let uri = format!("hearth-session:fake/{id}");
    let row: i64 = sqlx::query_scalar(
        "INSERT INTO sessions (uri, provider, title, provenance, source, started_at, updated_at)
         VALUES (?, 'fake', ?, 'hearth', 'bench', ?, ?) RETURNING id",
    )
    .bind(&uri)
    .bind(format!("session {id}"))
    .bind(at)
    .bind(at)
    .fetch_one(&mut *transaction)
    .await
    .unwrap();
    insert_chat(
        transaction,
        row,
        &format!("hearth-chat:fake/{id}/default"),
        0,
        turns,
        at,
    )
    .await;
    for peer in 0..peers {
        insert_chat(
            transaction,
            row,
            &format!("hearth-chat:fake/{id}/peer-{peer}"),
            peer as i64 + 1,
            turns,
            at,
        )
        .await;
    }
}

async fn fill(path: &Path) {
    let marker = path.with_extension("filled");
    if std::fs::read_to_string(&marker).is_ok_and(|text| text == FILL_VERSION) && path.exists() {
        return;
    }
    for suffix in ["", "-wal", "-shm"] {
        let file = PathBuf::from(format!("{}{suffix}", path.display()));
        if file.exists() {
            std::fs::remove_file(file).unwrap();
        }
    }
    println!("filling {} (once; reused by later runs)…", path.display());
    let started = Instant::now();
    let store = SqliteStore::open(path).await.unwrap();
    let mut connection = store.pool().acquire().await.unwrap();
    sqlx::raw_sql("PRAGMA synchronous = OFF")
        .execute(&mut *connection)
        .await
        .unwrap();
    let base = 1_700_000_000_000_i64;
    for batch in 0..(SESSIONS / 1000) {
        let mut transaction = sqlx::Connection::begin(&mut *connection).await.unwrap();
        for index in batch * 1000..(batch + 1) * 1000 {
            insert_session(
                &mut transaction,
                &session_id(index),
                PEERS,
                TURNS,
                base + index as i64 * 1000,
            )
            .await;
        }
        transaction.commit().await.unwrap();
    }
    let mut transaction = sqlx::Connection::begin(&mut *connection).await.unwrap();
    insert_session(
        &mut transaction,
        big_session().id().as_str(),
        0,
        BIG_TURNS,
        base,
    )
    .await;
    transaction.commit().await.unwrap();
    sqlx::raw_sql("PRAGMA wal_checkpoint(TRUNCATE); ANALYZE;")
        .execute(&mut *connection)
        .await
        .unwrap();
    drop(connection);
    store.close().await;
    std::fs::write(&marker, FILL_VERSION).unwrap();
    println!("filled in {:.1} s", started.elapsed().as_secs_f64());
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn p99(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[(samples.len() * 99 / 100).min(samples.len() - 1)]
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

async fn start_host(path: &Path) -> Host {
    let store = Arc::new(SqliteStore::open(path).await.unwrap());
    Host::start(
        store,
        vec![FakeAgent::new("fake") as Arc<dyn Harness>],
        HostConfig::default(),
    )
}

/// Run in a child process: start a host on the store, list the first page, report RSS.
async fn startup_probe(path: &Path) {
    let started = Instant::now();
    let host = start_host(path).await;
    let page = host.list_sessions(&SessionQuery::default()).await.unwrap();
    let elapsed = started.elapsed();
    assert_eq!(page.sessions.len(), 50);
    println!("{} {}", elapsed.as_micros(), rss_kib());
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    let data = target.join("bench-data");
    std::fs::create_dir_all(&data).unwrap();
    let path = data.join("hearth-100k.db");
    let mut args = std::env::args().skip(1);
    if args.next().as_deref() == Some("--startup-probe") {
        runtime.block_on(startup_probe(&path));
        return;
    }
    runtime.block_on(async {
        fill(&path).await;
        let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        println!("store: {SESSIONS} sessions × {} chats × {TURNS} turns + 1 session of {BIG_TURNS} turns ({} MB)", PEERS + 1, size / 1_000_000);

        let store = SqliteStore::open(&path).await.unwrap();
        let query = SessionQuery::default();
        store.list_sessions(&query).await.unwrap();
        let mut samples = Vec::new();
        for _ in 0..200 {
            let started = Instant::now();
            let page = store.list_sessions(&query).await.unwrap();
            samples.push(started.elapsed());
            assert_eq!(page.sessions.len(), 50);
        }
        println!("session list, first page of 50:      median {:>8.3} ms   p99 {:>8.3} ms   (target ≤ 5 ms)", ms(median(samples.clone())), ms(p99(samples)));
        let second = SessionQuery { cursor: store.list_sessions(&query).await.unwrap().next_cursor, ..SessionQuery::default() };
        let mut samples = Vec::new();
        for _ in 0..200 {
            let started = Instant::now();
            store.list_sessions(&second).await.unwrap();
            samples.push(started.elapsed());
        }
        println!("session list, a later page (cursor): median {:>8.3} ms", ms(median(samples)));
        store.close().await;

        let big = big_session();
        let mut samples = Vec::new();
        for _ in 0..15 {
            let host = start_host(&path).await;
            let started = Instant::now();
            let subscription = host.subscribe(&ResourceUri::Chat(ChatUri::default_for(&big))).await.unwrap();
            samples.push(started.elapsed());
            let hearth_core::ResourceState::Chat(chat) = subscription.snapshot.state else { panic!() };
            assert_eq!(chat.turns.len(), BIG_TURNS);
            host.shutdown().await;
        }
        println!("subscribe-restore, {BIG_TURNS} turns:      median {:>8.3} ms   (target ≤ 50 ms)", ms(median(samples)));

        let mut samples = Vec::new();
        for _ in 0..15 {
            let started = Instant::now();
            let host = start_host(&path).await;
            samples.push(started.elapsed());
            host.shutdown().await;
        }
        println!("host start-up (open + migrate check): median {:>8.3} ms   (target ≤ 100 ms)", ms(median(samples)));
    });
    let mut startups = Vec::new();
    let mut rss = Vec::new();
    for _ in 0..7 {
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .arg("--startup-probe")
            .output()
            .unwrap();
        let text = String::from_utf8(output.stdout).unwrap();
        let mut fields = text.split_whitespace();
        startups.push(Duration::from_micros(
            fields.next().unwrap().parse().unwrap(),
        ));
        rss.push(fields.next().unwrap().parse::<u64>().unwrap());
    }
    rss.sort_unstable();
    println!(
        "fresh process: start-up + first page  median {:>8.3} ms",
        ms(median(startups))
    );
    println!(
        "fresh process: RSS after start-up     median {:>8.1} MB   (target ≤ 60 MB)",
        rss[rss.len() / 2] as f64 / 1024.0
    );
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
