//! The first page of a long chat: `subscribe` with a turn window of 50 on chats of 100,
//! 1,000 and 10,000 turns, for a chat already in memory and for one only on disk (a
//! fresh host: its session is restored, the page read from the store), next to a whole
//! subscribe for comparison.
//!
//! `cargo bench -p hearth-host --bench pages` prints the medians. The databases are made
//! under `target/bench-data/` and reused.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hearth_core::{
    ChatUri, Harness, HarnessId, ResourceState, ResourceUri, SessionId, SessionUri, Turn, TurnId,
    UserMessage,
};
use hearth_host::{Host, HostConfig, TurnWindow};
use hearth_store::SqliteStore;
use hearth_test_support::FakeAgent;

const LENGTHS: [usize; 3] = [100, 1_000, 10_000];
const PAGE: u32 = 50;
const SAMPLES: usize = 25;
const FILL_VERSION: &str = "v1";

fn session() -> SessionUri {
    SessionUri::new(
        HarnessId::parse("fake").unwrap(),
        SessionId::parse("long-chat").unwrap(),
    )
}

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
        "id": turn.id, "user": turn.user, "parts": turn.parts, "usage": null,
        "stop_reason": "end_turn", "started_at": at, "completed_at": at,
    })
    .to_string()
}

async fn fill(path: &Path, turns: usize) {
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
    let store = SqliteStore::open(path).await.unwrap();
    let mut connection = store.pool().acquire().await.unwrap();
    let mut transaction = sqlx::Connection::begin(&mut *connection).await.unwrap();
    let at = 1_700_000_000_000_i64;
    let uri = session();
    let row: i64 = sqlx::query_scalar(
        "INSERT INTO sessions (uri, provider, title, provenance, source, started_at, updated_at)
         VALUES (?, 'fake', 'long chat', 'hearth', 'bench', ?, ?) RETURNING id",
    )
    .bind(uri.to_string())
    .bind(at)
    .bind(at)
    .fetch_one(&mut *transaction)
    .await
    .unwrap();
    let chat: i64 = sqlx::query_scalar(
        "INSERT INTO chats (session_id, uri, position, origin, provider_data, created_at, updated_at)
         VALUES (?, ?, 0, '{\"type\":\"user\"}', x'7b7d', ?, ?) RETURNING id",
    )
    .bind(row)
    .bind(ChatUri::default_for(&uri).to_string())
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
        .bind(chat)
        .bind(index as i64 + 1)
        .bind(format!("turn-{index:06}"))
        .bind(turn_body(index, at))
        .bind(at)
        .bind(at)
        .execute(&mut *transaction)
        .await
        .unwrap();
    }
    transaction.commit().await.unwrap();
    drop(connection);
    store.close().await;
    std::fs::write(&marker, FILL_VERSION).unwrap();
}

async fn start_host(path: &Path) -> Host {
    let store = Arc::new(SqliteStore::open(path).await.unwrap());
    Host::start(
        store,
        vec![FakeAgent::new("fake") as Arc<dyn Harness>],
        HostConfig::default(),
    )
}

/// Subscribes and checks the snapshot holds `expected` turns.
async fn timed(host: &Host, window: TurnWindow, expected: usize) -> Duration {
    let resource = ResourceUri::Chat(ChatUri::default_for(&session()));
    let started = Instant::now();
    let subscription = host.subscribe_window(&resource, window).await.unwrap();
    let elapsed = started.elapsed();
    let ResourceState::Chat(chat) = subscription.snapshot.state else {
        panic!("not a chat")
    };
    assert_eq!(chat.turns.len(), expected);
    elapsed
}

fn median(mut samples: Vec<Duration>) -> f64 {
    samples.sort();
    samples[samples.len() / 2].as_secs_f64() * 1000.0
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
    runtime.block_on(async {
        println!("subscribe, first page of {PAGE} turns (median of {SAMPLES}; target ≤ 5 ms):");
        for turns in LENGTHS {
            let path = data.join(format!("hearth-pages-{turns}.db"));
            fill(&path, turns).await;
            let page = turns.min(PAGE as usize);

            let mut on_disk = Vec::new();
            let mut whole_on_disk = Vec::new();
            for _ in 0..SAMPLES {
                let host = start_host(&path).await;
                on_disk.push(timed(&host, TurnWindow::Latest(PAGE), page).await);
                host.shutdown().await;
                let host = start_host(&path).await;
                whole_on_disk.push(timed(&host, TurnWindow::All, turns).await);
                host.shutdown().await;
            }

            let host = start_host(&path).await;
            timed(&host, TurnWindow::All, turns).await;
            let mut in_memory = Vec::new();
            let mut whole_in_memory = Vec::new();
            for _ in 0..SAMPLES {
                in_memory.push(timed(&host, TurnWindow::Latest(PAGE), page).await);
                whole_in_memory.push(timed(&host, TurnWindow::All, turns).await);
            }
            host.shutdown().await;

            println!(
                "  {turns:>6} turns: in memory {:>8.3} ms, only on disk {:>8.3} ms   (whole chat: in memory {:>8.3} ms, on disk {:>8.3} ms)",
                median(in_memory),
                median(on_disk),
                median(whole_in_memory),
                median(whole_on_disk),
            );
        }
    });
}
