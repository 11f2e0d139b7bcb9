//! Memory of `hearth serve` per connected client: the real server (release build) on a
//! free loopback port, its resident memory read from /proc before and after connecting
//! idle WebSocket clients, each initialized and subscribed to a chat and to the session
//! list.
//!
//! `cargo bench -p hearth-cli --bench serve_clients`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hearth_protocol::{SessionCreate, SessionCreateParams, Subscribe, SubscribeParams};
use hearth_server::{Client, read_record, read_token, server_file};

/// Clients per step.
const STEPS: [usize; 3] = [100, 200, 400];

fn resident_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

async fn connect(url: &str, token: &hearth_server::Secret, chat: &str) -> Client {
    let (client, notifications) = Client::connect(url, token).await.unwrap();
    client.initialize("bench").await.unwrap();
    for resource in [chat, hearth_protocol::ROOT_RESOURCE] {
        client
            .call::<Subscribe>(&SubscribeParams {
                resource: resource.to_owned(),
                last_seq: None,
                turn_limit: None,
            })
            .await
            .unwrap();
    }
    // Idle clients still read: keep their notifications drained.
    tokio::spawn(async move {
        let mut notifications = notifications;
        while notifications.recv().await.is_some() {}
    });
    client
}

fn main() {
    let home = tempfile::tempdir().unwrap();
    let mut server = Command::new(env!("CARGO_BIN_EXE_hearth"))
        .arg("--home")
        .arg(home.path())
        .args(["serve", "--port", "0"])
        .env("HEARTH_REPLAY_DELAY_SCALE", "0")
        .env_remove("HEARTH_REPLAY_SCENARIO")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let record = loop {
        if let Some(record) = read_record(&server_file(home.path())) {
            break record;
        }
        assert!(Instant::now() < deadline, "hearth serve did not start");
        std::thread::sleep(Duration::from_millis(20));
    };
    let token = read_token(&home.path().join("token")).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (first, _notes) = Client::connect(&record.url, &token).await.unwrap();
        first.initialize("bench").await.unwrap();
        let created = first
            .call::<SessionCreate>(&SessionCreateParams {
                harness: Some("replay".into()),
                ..SessionCreateParams::default()
            })
            .await
            .unwrap();
        let chat = created.session.chats[0].summary.uri.clone();
        // Warm up: one client through the whole path, so lazily built state exists.
        let warm = connect(&record.url, &token, &chat).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let mut clients = vec![warm];
        let mut previous = (1, resident_kib(server.id()));
        println!(
            "hearth serve: {} KiB resident with 1 subscribed client",
            previous.1
        );
        for total in STEPS {
            while clients.len() < total {
                clients.push(connect(&record.url, &token, &chat).await);
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
            let resident = resident_kib(server.id());
            let per_client =
                (resident.saturating_sub(previous.1)) as f64 * 1024.0 / (total - previous.0) as f64;
            println!(
                "{total:>5} clients: {resident:>7} KiB resident, {:>6.1} KiB per added client",
                per_client / 1024.0
            );
            previous = (total, resident);
        }
        for client in &clients {
            client.close().await;
        }
    });
    server.kill().unwrap();
    server.wait().unwrap();
}
