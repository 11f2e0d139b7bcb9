//! An authenticated client's request while thousands of connections that sent half a
//! request and then nothing are held open: its latency against an idle server, the time
//! to open them, and how many the server keeps (its connection cap).
//!
//! `cargo bench -p hearth-server --bench flood`
//!
//! The server and the flood share this process, so its open-file limit (raised to the
//! hard limit) is split between them: the flood is the limit less the server's cap and a
//! margin, at most 20,000. The CLI's end-to-end test holds 20,000 against the real binary.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::time::{Duration, Instant};

use hearth_server::{Backend, DEFAULT_MAX_CONNECTIONS, Secret, Server, ServerOptions};
use hearth_test_support::{TestHost, test_config};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Authenticated requests timed in each phase.
const SAMPLES: usize = 200;

/// One authenticated `POST /rpc` on a new connection; its time to the whole answer.
async fn authenticated(authority: &str, token: &Secret) -> Duration {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"session/list"}"#;
    let request = format!(
        "POST /rpc HTTP/1.1\r\nHost: {authority}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        token.expose(),
        body.len()
    );
    let started = Instant::now();
    let mut stream = TcpStream::connect(authority).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let took = started.elapsed();
    assert!(answer.starts_with(b"HTTP/1.1 200"), "{answer:?}");
    took
}

async fn latencies(authority: &str, token: &Secret) -> Vec<Duration> {
    let mut taken = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        taken.push(authenticated(authority, token).await);
    }
    taken.sort();
    taken
}

fn report(what: &str, taken: &[Duration]) {
    let at = |quantile: f64| {
        let index = ((taken.len() - 1) as f64 * quantile).round() as usize;
        taken[index].as_secs_f64() * 1000.0
    };
    println!(
        "{what}: median {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms ({} requests)",
        at(0.5),
        at(0.9),
        at(0.99),
        at(1.0),
        taken.len()
    );
}

fn open_files() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count)
}

#[tokio::main]
async fn main() {
    let limit = hearth_server::raise_open_file_limit().unwrap_or(1 << 20);
    let room = usize::try_from(limit)
        .unwrap_or(usize::MAX)
        .saturating_sub(DEFAULT_MAX_CONNECTIONS + 600);
    let flood = room.min(20_000);

    let host = TestHost::start_with(Vec::new(), test_config()).await;
    let token = Secret::generate().unwrap();
    let server = Server::bind(
        Backend::new(host.host.clone()),
        ServerOptions::at("127.0.0.1", 0).unwrap(),
        token.clone(),
    )
    .await
    .unwrap();
    let authority = server.url().trim_start_matches("http://").to_owned();
    tokio::spawn(server.serve(std::future::pending()));

    // Warm up, then the idle server.
    latencies(&authority, &token).await;
    report("idle server", &latencies(&authority, &token).await);

    let before = open_files();
    let half = format!("GET /health HTTP/1.1\r\nHost: {authority}\r\n");
    let started = Instant::now();
    let mut held = Vec::with_capacity(flood);
    for _ in 0..flood {
        let mut stream = TcpStream::connect(&authority).await.unwrap();
        // The server may have closed it already to make room for a newer one.
        stream.write_all(half.as_bytes()).await.ok();
        held.push(stream);
    }
    let opened = started.elapsed();
    // This process holds `flood` client sockets; the rest are the server's.
    let server_files = open_files().saturating_sub(before + flood);
    println!(
        "opened {flood} half-sent connections in {:.2} s ({:.0} per second); the server holds {server_files} sockets (cap {DEFAULT_MAX_CONNECTIONS})",
        opened.as_secs_f64(),
        flood as f64 / opened.as_secs_f64()
    );
    report(
        &format!("with {flood} half-sent connections held"),
        &latencies(&authority, &token).await,
    );
    drop(held);
}
