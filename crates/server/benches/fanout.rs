//! Fan-out figures of the server on loopback: envelopes per second and latency (emission
//! by the harness → parsed by a WebSocket client) to 1 and to 100 subscribers, with and
//! without one deliberately slow subscriber.
//!
//! `cargo bench -p hearth-server --bench fanout` (on SQLite; with `HEARTH_TEST_POSTGRES`
//! naming a server — see `.ci/postgres` — each scenario runs on PostgreSQL too)
//!
//! Each envelope is a `textDelta` whose text is the time it was emitted, so latency is
//! measured per envelope. The host, the server and the clients share this process (and
//! the machine's cores); figures are end to end through the real host, hub, queues and
//! sockets.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use hearth_core::{ChatUri, HarnessId, Signal, TurnId};
use hearth_server::{Backend, Client, Secret, Server, ServerOptions};
use hearth_test_support::{FakeAgent, TestHost, test_config};
use tokio::sync::Barrier;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

/// The marker text that ends a run.
const END: &str = "end";

struct Bench {
    url: String,
    token: Secret,
    fake: Arc<FakeAgent>,
    _host: TestHost,
    epoch: Instant,
}

#[derive(Default)]
struct Received {
    latencies: Vec<u64>,
    envelopes: u64,
    resyncs: u64,
    finished: Option<Instant>,
}

async fn start() -> Bench {
    let fake = FakeAgent::new("fake");
    let host = TestHost::start_with(vec![fake.clone()], test_config()).await;
    let backend = Backend {
        default_provider: Some(HarnessId::parse("fake").unwrap()),
        ..Backend::new(host.host.clone())
    };
    let token = Secret::generate().unwrap();
    let server = Server::bind(
        backend,
        ServerOptions::at("127.0.0.1", 0).unwrap(),
        token.clone(),
    )
    .await
    .unwrap();
    let url = server.url();
    tokio::spawn(server.serve(std::future::pending()));
    Bench {
        url,
        token,
        fake,
        _host: host,
        epoch: Instant::now(),
    }
}

/// Parses the emission time out of a `textDelta` notification without a full parse.
fn emitted(text: &str) -> Option<&str> {
    let start = text.find("\"text\":\"")? + 8;
    let rest = &text[start..];
    Some(&rest[..rest.find('"')?])
}

/// A subscriber: reads every message, records latency; `pause` slows it down.
async fn subscriber(
    bench: &Bench,
    chat: &str,
    ready: Arc<Barrier>,
    pause: Option<Duration>,
) -> tokio::task::JoinHandle<Received> {
    let mut request = hearth_server::rpc_url(&bench.url)
        .into_client_request()
        .unwrap();
    request.headers_mut().insert(
        "authorization",
        format!("Bearer {}", bench.token.expose()).parse().unwrap(),
    );
    let (mut socket, _) = tokio_tungstenite::connect_async_with_config(request, None, true)
        .await
        .unwrap();
    for (id, method, params) in [
        (
            1,
            "initialize",
            serde_json::json!({"clientInfo": {"name": "bench"}}),
        ),
        (2, "subscribe", serde_json::json!({"resource": chat})),
    ] {
        let text =
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        socket.send(Message::text(text.to_string())).await.unwrap();
        loop {
            let Message::Text(reply) = socket.next().await.unwrap().unwrap() else {
                continue;
            };
            if reply.as_str().contains(&format!("\"id\":{id}")) {
                break;
            }
        }
    }
    let epoch = bench.epoch;
    tokio::spawn(async move {
        ready.wait().await;
        let mut received = Received::default();
        let mut count = 0u64;
        while let Some(Ok(message)) = socket.next().await {
            let Message::Text(text) = message else {
                continue;
            };
            let text = text.as_str();
            if text.contains("subscription/resync") {
                received.resyncs += 1;
                // The deltas' texts are joined in the snapshot: it may end with the marker.
                if text.contains(&format!("{END}\"")) {
                    received.finished = Some(Instant::now());
                    break;
                }
                continue;
            }
            let Some(stamp) = emitted(text) else {
                continue;
            };
            received.envelopes += 1;
            if stamp == END {
                received.finished = Some(Instant::now());
                break;
            }
            if let Ok(nanos) = stamp.parse::<u64>() {
                let now = epoch.elapsed().as_nanos() as u64;
                received.latencies.push(now.saturating_sub(nanos));
            }
            count += 1;
            if let Some(pause) = pause
                && count.is_multiple_of(50)
            {
                tokio::time::sleep(pause).await;
            }
        }
        received
    })
}

/// Starts a turn on a fresh session; returns the chat and the turn.
async fn turn(bench: &Bench) -> (String, ChatUri, TurnId) {
    let (client, _notes) = Client::connect(&bench.url, &bench.token).await.unwrap();
    client.initialize("bench").await.unwrap();
    let session = client
        .call::<hearth_protocol::SessionCreate>(&Default::default())
        .await
        .unwrap()
        .session;
    let chat = session.chats[0].summary.uri.clone();
    let turn_id = client
        .call::<hearth_protocol::ChatSend>(&hearth_protocol::ChatSendParams {
            chat: chat.clone(),
            message: hearth_protocol::UserMessage {
                text: "go".into(),
                ..Default::default()
            },
        })
        .await
        .unwrap()
        .turn_id;
    let chat_uri = ChatUri::parse(&chat).unwrap();
    bench.fake.wait_for_send(&chat_uri).await;
    (chat, chat_uri, TurnId::parse(&turn_id).unwrap())
}

/// Emits `count` deltas into the running turn, `per_tick` per millisecond (as fast as
/// the host takes them when `None`).
async fn emit(bench: &Bench, chat: &ChatUri, turn_id: TurnId, count: u64, per_tick: Option<u64>) {
    let mut ticker = tokio::time::interval(Duration::from_millis(1));
    let mut sent = 0;
    while sent < count {
        if per_tick.is_some() {
            ticker.tick().await;
        }
        let burst = per_tick.unwrap_or(256).min(count - sent);
        for _ in 0..burst {
            let stamp = bench.epoch.elapsed().as_nanos().to_string();
            bench
                .fake
                .progress(
                    chat,
                    Signal::TextDelta {
                        turn_id: turn_id.clone(),
                        text: stamp,
                    },
                )
                .await;
        }
        sent += burst;
        if per_tick.is_none() {
            tokio::task::yield_now().await;
        }
    }
    bench
        .fake
        .progress(
            chat,
            Signal::TextDelta {
                turn_id,
                text: END.into(),
            },
        )
        .await;
}

fn percentile(sorted: &[u64], fraction: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let index = ((sorted.len() as f64 - 1.0) * fraction).round() as usize;
    sorted[index] as f64 / 1e6
}

struct Scenario {
    name: &'static str,
    subscribers: usize,
    slow: bool,
    envelopes: u64,
    per_tick: Option<u64>,
}

async fn run(scenario: &Scenario) {
    let bench = start().await;
    let (chat, chat_uri, turn_id) = turn(&bench).await;
    let clients = scenario.subscribers + usize::from(scenario.slow);
    let ready = Arc::new(Barrier::new(clients + 1));
    let mut fast = Vec::new();
    for _ in 0..scenario.subscribers {
        fast.push(subscriber(&bench, &chat, ready.clone(), None).await);
    }
    let slow = if scenario.slow {
        Some(
            subscriber(
                &bench,
                &chat,
                ready.clone(),
                Some(Duration::from_millis(20)),
            )
            .await,
        )
    } else {
        None
    };
    ready.wait().await;
    let started = Instant::now();
    emit(
        &bench,
        &chat_uri,
        turn_id,
        scenario.envelopes,
        scenario.per_tick,
    )
    .await;
    let mut latencies = Vec::new();
    let mut delivered = 0;
    let mut resyncs = 0;
    let mut last = started;
    for handle in fast {
        let received = tokio::time::timeout(Duration::from_secs(120), handle)
            .await
            .expect("a subscriber never finished")
            .unwrap();
        delivered += received.envelopes;
        resyncs += received.resyncs;
        last = last.max(received.finished.unwrap_or(last));
        latencies.extend(received.latencies);
    }
    let elapsed = last.duration_since(started).as_secs_f64();
    let slow_note = match slow {
        Some(handle) => {
            handle.abort();
            match handle.await {
                Ok(received) => format!(", slow subscriber: {} resyncs", received.resyncs),
                Err(_) => ", slow subscriber: still behind at the end (resynced)".to_owned(),
            }
        }
        None => String::new(),
    };
    latencies.sort_unstable();
    println!(
        "{:<44} {:>10.0} env/s per subscriber {:>12.0} env/s total   p50 {:>7.2} ms   p99 {:>7.2} ms   max {:>7.2} ms   fast resyncs {}{}",
        scenario.name,
        scenario.envelopes as f64 / elapsed,
        delivered as f64 / elapsed,
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99),
        percentile(&latencies, 1.0),
        resyncs,
        slow_note,
    );
}

fn main() {
    // The server's own warnings (a hub falling behind the host) go to stderr.
    tracing_subscriber::fmt()
        .with_env_filter("hearth_server=warn")
        .with_writer(std::io::stderr)
        .init();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let scenarios = [
        Scenario {
            name: "1 subscriber, offered 200k/s",
            subscribers: 1,
            slow: false,
            envelopes: 300_000,
            per_tick: Some(200),
        },
        Scenario {
            name: "1 subscriber + 1 slow, offered 200k/s",
            subscribers: 1,
            slow: true,
            envelopes: 300_000,
            per_tick: Some(200),
        },
        Scenario {
            name: "1 subscriber, 300k as fast as possible",
            subscribers: 1,
            slow: false,
            envelopes: 300_000,
            per_tick: None,
        },
        Scenario {
            name: "100 subscribers, offered 2k/s",
            subscribers: 100,
            slow: false,
            envelopes: 6_000,
            per_tick: Some(2),
        },
        Scenario {
            name: "100 subscribers + 1 slow, offered 2k/s",
            subscribers: 100,
            slow: true,
            envelopes: 6_000,
            per_tick: Some(2),
        },
        Scenario {
            name: "100 subscribers, 20k as fast as possible",
            subscribers: 100,
            slow: false,
            envelopes: 20_000,
            per_tick: None,
        },
    ];
    // `cargo bench … -- 100` runs only the scenarios whose name contains `100`.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with("--"))
        .collect();
    let postgres = std::env::var_os(hearth_test_support::postgres::SERVER_VARIABLE).is_some();
    for scenario in &scenarios {
        if filter
            .iter()
            .all(|word| scenario.name.contains(word.as_str()))
        {
            println!("on sqlite:");
            runtime.block_on(run(scenario));
            if postgres {
                runtime.block_on(async {
                    let url = hearth_test_support::postgres::fresh_database()
                        .await
                        .unwrap();
                    println!("on postgres:");
                    hearth_test_support::on_backend(
                        hearth_test_support::Backend::Postgres(url),
                        run(scenario),
                    )
                    .await;
                });
            }
        }
    }
}
