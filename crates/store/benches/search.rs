//! Full-text search at the size of years of use: 100,000 sessions, 1,000,000 turns (a
//! prompt of ~12 words and an answer of ~60, from a vocabulary of 20,000 words). Prints
//! the indexing throughput (turns written with their index, in batches), the index's
//! size, and the p50/p95/max time of queries for a rare word, a common word, two words,
//! and a filtered query. Target: p95 ≤ 20 ms.
//!
//! `cargo bench -p hearth-store --bench search` (`HEARTH_SEARCH_BENCH_TURNS=100000` for a
//! smaller run)

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::time::{Duration, Instant};

use hearth_core::{ChatUri, HarnessId};
use hearth_store::{NewSession, SearchQuery, SqliteStore, Store};

const TURNS_PER_SESSION: usize = 10;
const VOCABULARY: usize = 20_000;

/// A small deterministic generator (no dependency, same data every run).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A word index, skewed so that a few words are common and most rare (Zipf-like).
    fn word(&mut self) -> usize {
        let uniform = (self.next() % 1_000_000) as f64 / 1_000_000.0;
        ((uniform * uniform * uniform) * VOCABULARY as f64) as usize
    }
}

fn vocabulary() -> Vec<String> {
    const SYLLABLES: &[&str] = &[
        "ka", "lo", "mi", "ne", "sur", "ta", "vin", "qua", "dre", "pol", "zen", "bri", "ost",
        "lum", "ga", "fer", "chi", "nox", "rel", "sta",
    ];
    (0..VOCABULARY)
        .map(|index| {
            let mut word = String::new();
            // Two syllables at least: every word can be searched for.
            let mut rest = index + SYLLABLES.len() + 1;
            while rest > 0 {
                word.push_str(SYLLABLES[rest % SYLLABLES.len()]);
                rest /= SYLLABLES.len();
            }
            word
        })
        .collect()
}

fn sentence(rng: &mut Rng, words: &[String], length: usize) -> String {
    (0..length)
        .map(|_| words[rng.word()].as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

fn new_session(index: usize) -> NewSession {
    let provider = ["codex", "claude", "openai", "gemini"][index % 4];
    let uri = hearth_core::SessionUri::new(
        HarnessId::parse(provider).unwrap(),
        hearth_core::SessionId::generate(),
    );
    let at = hearth_core::now();
    NewSession {
        summary: hearth_core::SessionSummary {
            uri: uri.clone(),
            harness: uri.harness().clone(),
            title: Some(format!("session {index}")),
            provenance: hearth_core::Provenance::Hearth,
            source: "bench".into(),
            scope: hearth_core::Scope::Global,
            model: None,
            working_directories: Vec::new(),
            started_at: at,
            updated_at: at,
            pinned: false,
            archived: false,
            owner: None,
        },
        default_chat: hearth_store::ChatRecord {
            summary: hearth_core::ChatSummary {
                uri: ChatUri::default_for(&uri),
                origin: hearth_core::ChatOrigin::User,
                title: None,
                model: None,
                created_at: at,
                updated_at: at,
            },
            provider_data: None,
            conversation: None,
            draft: None,
            queued: Vec::new(),
        },
    }
}

fn percentile(sorted: &[Duration], fraction: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * fraction).round() as usize]
}

async fn time_queries(store: &SqliteStore, label: &str, queries: &[SearchQuery]) {
    let mut times = Vec::new();
    let mut hits = 0;
    for query in queries {
        let started = Instant::now();
        let page = store.search_turns(query).await.unwrap();
        times.push(started.elapsed());
        hits += page.hits.len();
    }
    times.sort();
    println!(
        "{label:<34} p50 {:>7.2} ms  p95 {:>7.2} ms  max {:>7.2} ms  ({:.1} hits a page)",
        percentile(&times, 0.5).as_secs_f64() * 1e3,
        percentile(&times, 0.95).as_secs_f64() * 1e3,
        times.last().unwrap().as_secs_f64() * 1e3,
        hits as f64 / queries.len() as f64
    );
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let turns: usize = std::env::var("HEARTH_SEARCH_BENCH_TURNS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(1_000_000);
    let sessions = turns / TURNS_PER_SESSION;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hearth.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let words = vocabulary();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);

    let started = Instant::now();
    for index in 0..sessions {
        store.create_session(&new_session(index)).await.unwrap();
    }
    let sessions_took = started.elapsed();
    let chat_ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM chats ORDER BY id")
        .fetch_all(store.pool())
        .await
        .unwrap();

    // Turns as the store writes them (one JSON body each), in transactions of 1,000, the
    // index kept by its triggers.
    let started = Instant::now();
    let mut written = 0;
    for batch in chat_ids.chunks(100) {
        let mut transaction = store.pool().begin().await.unwrap();
        for chat_id in batch {
            for seq in 1..=TURNS_PER_SESSION {
                let prompt = sentence(&mut rng, &words, 12);
                let answer = sentence(&mut rng, &words, 60);
                let body = serde_json::json!({
                    "id": format!("t{chat_id}-{seq}"),
                    "user": {"text": prompt},
                    "parts": [{"type": "text", "text": answer}],
                    "usage": null,
                    "stop_reason": "end_turn",
                    "started_at": 1_700_000_000_000_i64 + written as i64,
                    "completed_at": null,
                })
                .to_string();
                sqlx::query(
                    "INSERT INTO turns (chat_id, seq, turn_id, running, body, started_at, checkpointed_at)
                     VALUES (?, ?, ?, 0, ?, ?, ?)",
                )
                .bind(chat_id)
                .bind(seq as i64)
                .bind(format!("t{chat_id}-{seq}"))
                .bind(&body)
                .bind(1_700_000_000_000_i64 + written as i64)
                .bind(1_700_000_000_000_i64 + written as i64)
                .execute(&mut *transaction)
                .await
                .unwrap();
                written += 1;
            }
        }
        transaction.commit().await.unwrap();
    }
    let turns_took = started.elapsed();
    let index_pages: Option<i64> =
        sqlx::query_scalar("SELECT SUM(pgsize) FROM dbstat WHERE name LIKE 'turn_search%'")
            .fetch_one(store.pool())
            .await
            .ok()
            .flatten();
    let file = std::fs::metadata(&path).unwrap().len()
        + std::fs::metadata(format!("{}-wal", path.display()))
            .map(|metadata| metadata.len())
            .unwrap_or(0);
    println!("{sessions} sessions, {written} turns (~12 + ~60 words each)");
    println!(
        "sessions created: {:.0}/s; turns written and indexed: {:.0}/s ({:.1} s)",
        sessions as f64 / sessions_took.as_secs_f64(),
        written as f64 / turns_took.as_secs_f64(),
        turns_took.as_secs_f64()
    );
    match index_pages {
        Some(bytes) => println!(
            "index size: {:.0} MB of a {:.0} MB database",
            bytes as f64 / 1e6,
            file as f64 / 1e6
        ),
        None => println!(
            "database: {:.0} MB (index size not measurable here)",
            file as f64 / 1e6
        ),
    }

    let query = |text: String| SearchQuery {
        text,
        limit: 20,
        ..SearchQuery::default()
    };
    let rare: Vec<SearchQuery> = (0..200)
        .map(|index| query(words[VOCABULARY - 1 - index * 7].clone()))
        .collect();
    let common: Vec<SearchQuery> = (0..200)
        .map(|index| query(words[index % 20].clone()))
        .collect();
    let pairs: Vec<SearchQuery> = (0..200)
        .map(|index| query(format!("{} {}", words[index % 50], words[200 + index * 3])))
        .collect();
    let filtered: Vec<SearchQuery> = (0..200)
        .map(|index| SearchQuery {
            harness: Some(HarnessId::parse("gemini").unwrap()),
            ..query(words[100 + index].clone())
        })
        .collect();
    time_queries(&store, "a rare word", &rare).await;
    time_queries(&store, "a common word", &common).await;
    time_queries(&store, "two words", &pairs).await;
    time_queries(&store, "a word, one agent's sessions", &filtered).await;
}
