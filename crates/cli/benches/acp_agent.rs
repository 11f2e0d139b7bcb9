//! Figures of `hearth acp` (Hearth's agent for ACP editors) against a loopback mock model
//! speaking OpenAI SSE, on a warm data directory, spoken to over its stdin/stdout the
//! way an editor does:
//!
//! 1. initialize → session/new → session/prompt → the answer's first
//!    `agent_message_chunk`, timed from writing `initialize` (the process already
//!    started), and from spawning the process;
//! 2. a second prompt in the same session: from writing it to its first chunk;
//! 3. the process's peak RSS (VmHWM) after those turns.
//!
//! Medians (and the worst run) over repeated runs, each a fresh process.
//!
//! `cargo bench -p hearth-cli --bench acp_agent`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use hearth_test_support::{MockModelServer, OpenAiStream};
use serde_json::{Value, json};

const RUNS: usize = 20;

/// Starts the mock server on a thread of its own; it lives until the process ends.
fn mock_server() -> Arc<MockModelServer> {
    let (ready, started) = mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let server = Arc::new(MockModelServer::start().await.unwrap());
            server.set_fallback(OpenAiStream::text_answer(
                "mock-model",
                &["pong", " and more"],
                9,
                2,
            ));
            ready.send(Arc::clone(&server)).unwrap();
            std::future::pending::<()>().await;
        });
    });
    started.recv().unwrap()
}

/// One run's figures.
struct Run {
    from_spawn: Duration,
    from_initialize: Duration,
    second_prompt: Duration,
    peak_rss_kib: u64,
}

fn request(id: u64, method: &str, params: Value) -> String {
    let mut line =
        json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string();
    line.push('\n');
    line
}

/// Reads messages until the answer to `id` (returned), or with `chunk`, until the
/// first `agent_message_chunk` (returned).
fn read_until(
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
    id: u64,
    chunk: bool,
) -> Value {
    for line in lines {
        let message: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if chunk {
            if message["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
                return message;
            }
        } else if message["id"] == id && message.get("method").is_none() {
            assert!(message.get("error").is_none(), "{message}");
            return message;
        }
    }
    panic!("hearth acp ended before answering {id}");
}

fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

fn run_once(home: &Path, work: &Path) -> Run {
    let spawned = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_hearth"))
        .arg("--home")
        .arg(home)
        .arg("acp")
        .current_dir(work)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OLLAMA_HOST")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // The process is up when it answers; time the editor's path from here.
    let initialize = Instant::now();
    stdin
        .write_all(
            request(
                1,
                "initialize",
                json!({ "protocolVersion": 1, "clientCapabilities": {} }),
            )
            .as_bytes(),
        )
        .unwrap();
    read_until(&mut lines, 1, false);
    stdin
        .write_all(request(2, "session/new", json!({ "cwd": work, "mcpServers": [] })).as_bytes())
        .unwrap();
    let session = read_until(&mut lines, 2, false)["result"]["sessionId"].clone();
    let prompt = |id: u64| {
        request(
            id,
            "session/prompt",
            json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "say ping" }] }),
        )
    };
    stdin.write_all(prompt(3).as_bytes()).unwrap();
    read_until(&mut lines, 3, true);
    let first_chunk = Instant::now();
    read_until(&mut lines, 3, false);
    let second = Instant::now();
    stdin.write_all(prompt(4).as_bytes()).unwrap();
    read_until(&mut lines, 4, true);
    let second_prompt = second.elapsed();
    read_until(&mut lines, 4, false);
    let peak_rss_kib = peak_rss_kib(child.id());
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "hearth acp exited with {status}");
    Run {
        from_spawn: first_chunk - spawned,
        from_initialize: first_chunk - initialize,
        second_prompt,
        peak_rss_kib,
    }
}

fn summary(name: &str, mut values: Vec<Duration>) {
    values.sort();
    println!(
        "{name:<58} median {:>7.2} ms   worst {:>7.2} ms",
        values[values.len() / 2].as_secs_f64() * 1e3,
        values[values.len() - 1].as_secs_f64() * 1e3
    );
}

fn main() {
    let server = mock_server();
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "[defaults]\nprovider = \"mock\"\n\n[providers.mock]\nkind = \"openai\"\nbase_url = \"{}\"\ndefault_model = \"mock-model\"\nmax_retries = 0\n",
            server.url_with("/v1")
        ),
    )
    .unwrap();
    // Warm: the database exists and is migrated.
    run_once(home.path(), work.path());
    let runs: Vec<Run> = (0..RUNS)
        .map(|_| run_once(home.path(), work.path()))
        .collect();
    println!("hearth acp, {RUNS} runs, loopback mock model:");
    summary(
        "initialize → session/new → first chunk",
        runs.iter().map(|run| run.from_initialize).collect(),
    );
    summary(
        "process spawn → … → first chunk",
        runs.iter().map(|run| run.from_spawn).collect(),
    );
    summary(
        "second prompt → its first chunk",
        runs.iter().map(|run| run.second_prompt).collect(),
    );
    let mut rss: Vec<u64> = runs.iter().map(|run| run.peak_rss_kib).collect();
    rss.sort_unstable();
    println!(
        "{:<58} median {:>7.1} MB   worst {:>7.1} MB",
        "peak RSS (VmHWM) after two turns",
        rss[rss.len() / 2] as f64 / 1024.0,
        rss[rss.len() - 1] as f64 / 1024.0
    );
}
