//! Agent Home in the system's headless Chromium against a real `hearth serve` (release
//! build) on loopback:
//!
//! - the page's assets as the browser gets them (gzip), against the 200 KB budget;
//! - first meaningful paint: the first contentful paint and the moment the first
//!   conversation is drawn (`hearth-ready`), on reloads, against 300 ms;
//! - a 10,000-turn chat opened in the page: until its latest turn is drawn, against
//!   200 ms;
//! - 50 sessions streaming at once in one window: the main thread's busy share (the
//!   renderer's task time over wall time), against 50 %.
//!
//! `cargo bench -p hearth-cli --bench agent_home` prints the figures. The 10,000-turn
//! chat is made once through the protocol and kept under `target/bench-data/`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::performance::{EnableParams, GetMetricsParams};
use hearth_protocol::{
    Action, ChatSend, ChatSendParams, SessionCreate, SessionCreateParams, SessionList,
    SessionListParams, Subscribe, SubscribeParams, UserMessage,
};
use hearth_server::{Client, Notified, read_record, read_token, server_file};

/// The browser the end-to-end tests drive, shared with them.
#[allow(dead_code, clippy::print_stderr)]
#[path = "../tests/suite/browser_support.rs"]
mod browser_support;

use browser_support::{Chromium, eval, wait_for};

const LONG_CHAT: usize = 10_000;
const STREAMS: usize = 50;
const SCENARIO: &str = r#"name: bench
turns:
  - when: stream
    steps:
      - text: "Streaming a long answer word by word so that the page has plenty to draw while fifty of these run at once; each word arrives on its own with a short pause, like a model thinking aloud about the garden, the weather and the week ahead. Tomatoes, beans and courgettes do well; start them indoors in March and plant them out after the last frost."
        stream: words
        delay_ms: 40
  - steps:
      - text: "Noted: {{prompt}}"
"#;

fn data_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-data/agent-home");
    std::fs::create_dir_all(&dir).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    dir
}

fn serve(home: &std::path::Path, scenario: &std::path::Path) -> Child {
    let _ = std::fs::remove_file(server_file(home));
    Command::new(env!("CARGO_BIN_EXE_hearth"))
        .arg("--home")
        .arg(home)
        .args(["serve", "--port", "0", "--scenario"])
        .arg(scenario)
        .env("HEARTH_REPLAY_DELAY_SCALE", "1")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn wait_for_url(home: &std::path::Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(record) = read_record(&server_file(home)) {
            return record.url;
        }
        assert!(Instant::now() < deadline, "hearth serve did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The long chat's session, made (once) with `LONG_CHAT` turns through the protocol.
async fn long_chat(client: &Client, notifications: &mut hearth_server::Notifications) -> String {
    let sessions = client
        .call::<SessionList>(&SessionListParams {
            limit: Some(500),
            ..SessionListParams::default()
        })
        .await
        .unwrap();
    if let Some(session) = sessions
        .sessions
        .iter()
        .find(|session| session.title.as_deref() == Some("long chat"))
    {
        return session.uri.clone();
    }
    let created = client
        .call::<SessionCreate>(&SessionCreateParams {
            harness: Some("replay".into()),
            title: Some("long chat".into()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    let chat = created.session.chats[0].summary.uri.clone();
    client
        .call::<Subscribe>(&SubscribeParams {
            resource: chat.clone(),
            last_seq: None,
            turn_limit: Some(0),
        })
        .await
        .unwrap();
    let started = Instant::now();
    for index in 0..LONG_CHAT {
        client
            .call::<ChatSend>(&ChatSendParams {
                chat: chat.clone(),
                message: UserMessage {
                    text: format!("note number {index}"),
                    attachments: Vec::new(),
                    context: Vec::new(),
                },
            })
            .await
            .unwrap();
        loop {
            match notifications.recv().await.unwrap() {
                Notified::Envelope(envelope)
                    if envelope.resource == chat
                        && matches!(envelope.action, Action::TurnCompleted { .. }) =>
                {
                    break;
                }
                _ => {}
            }
        }
        if index % 1000 == 999 {
            println!(
                "  made {} turns ({:.0} s)",
                index + 1,
                started.elapsed().as_secs_f64()
            );
        }
    }
    created.session.summary.uri
}

/// Bytes of each asset as a browser that accepts gzip gets them.
fn asset_bytes(port: u16, path: &str) -> (usize, usize) {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let end = response.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&response[..end]).to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 200"), "{path}: {head}");
    let mut body = response[end + 4..].to_vec();
    if head.contains("transfer-encoding: chunked") {
        let mut plain = Vec::new();
        let mut rest = &body[..];
        loop {
            let line_end = rest.windows(2).position(|w| w == b"\r\n").unwrap();
            let size = usize::from_str_radix(String::from_utf8_lossy(&rest[..line_end]).trim(), 16)
                .unwrap();
            if size == 0 {
                break;
            }
            plain.extend_from_slice(&rest[line_end + 2..line_end + 2 + size]);
            rest = &rest[line_end + 2 + size + 2..];
        }
        body = plain;
    }
    let gzipped = head.contains("content-encoding: gzip");
    (body.len(), usize::from(gzipped))
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let Some(chromium) = Chromium::launch().await else {
        println!(
            "agent_home: no chromium on this machine (apt-get install chromium); nothing measured"
        );
        return;
    };
    let home = data_dir();
    let scenario = home.join("bench.yaml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let mut server = serve(&home, &scenario);
    let url = wait_for_url(&home);
    let port: u16 = url.rsplit(':').next().unwrap().parse().unwrap();
    let token = read_token(&home.join("token")).unwrap();
    let (client, mut notifications) = Client::connect(&url, &token).await.unwrap();
    client.initialize("bench").await.unwrap();
    let long = long_chat(&client, &mut notifications).await;

    println!("Agent Home (headless Chromium, loopback, release build)");
    // Assets.
    let assets_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../web/public/assets");
    let mut paths = vec!["/".to_owned(), "/favicon.svg".to_owned()];
    for entry in std::fs::read_dir(&assets_dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        paths.push(format!("/assets/{name}"));
    }
    let mut total = 0;
    let mut raw = 0;
    for path in &paths {
        let (bytes, gzipped) = asset_bytes(port, path);
        assert!(gzipped == 1 || bytes < 1024, "{path} was not compressed");
        total += bytes;
        let file = if path == "/" {
            "index.html".to_owned()
        } else {
            path.trim_start_matches('/').to_owned()
        };
        raw += std::fs::metadata(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../web/public")
                .join(file),
        )
        .map(|meta| meta.len() as usize)
        .unwrap_or(0);
    }
    println!(
        "  assets: {} files, {:.1} KB gzipped ({:.1} KB raw) — budget 200 KB",
        paths.len(),
        total as f64 / 1024.0,
        raw as f64 / 1024.0
    );

    // The browser, logged in.
    let login = hearth_server::login_link(&url, &token).await.unwrap();
    let page = chromium.open(&login).await;
    wait_for(&page, "document.body.dataset.connection === 'open'").await;

    // First meaningful paint, on reloads (logged in, the assets revalidated).
    let mut paints = Vec::new();
    let mut ready = Vec::new();
    for _ in 0..10 {
        page.reload().await.unwrap();
        wait_for(
            &page,
            "performance.getEntriesByName('hearth-ready').length > 0",
        )
        .await;
        let (paint, mark): (f64, f64) = eval(
            &page,
            "[performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1, performance.getEntriesByName('hearth-ready')[0].startTime]",
        )
        .await;
        paints.push(paint);
        ready.push(mark);
    }
    println!(
        "  first contentful paint: median {:.0} ms; first conversation drawn: median {:.0} ms (of 10 reloads) — target 300 ms",
        median(&mut paints),
        median(&mut ready)
    );

    // The 10,000-turn chat, opened in the page.
    let mut opens = Vec::new();
    for _ in 0..5 {
        let elapsed: f64 = eval(
            &page,
            &format!(
                "(async () => {{
                    const app = window.hearth;
                    const uri = {long:?};
                    const open = app.tabs.get(uri);
                    if (open) app.closeTab(open, false);
                    await new Promise(r => setTimeout(r, 50));
                    const started = performance.now();
                    app.openSession(uri);
                    for (;;) {{
                        const tab = app.tabs.get(uri);
                        const chat = tab && tab.chat;
                        if (chat && chat.turns.length && tab.transcript.querySelector(`[data-turn='${{chat.turns[chat.turns.length - 1].id}}']`)) break;
                        await new Promise(r => requestAnimationFrame(r));
                    }}
                    return performance.now() - started;
                }})()"
            ),
        )
        .await;
        opens.push(elapsed);
    }
    println!(
        "  a {LONG_CHAT}-turn chat opened to its latest page: median {:.0} ms (of 5) — target 200 ms",
        median(&mut opens)
    );

    // Fifty sessions streaming at once in one window. Each is made through the protocol
    // and opened as a tab: "New chat" reuses an unused empty landing rather than stacking
    // fifty of them.
    let made: usize = eval(
        &page,
        &format!(
            "(async () => {{
                const app = window.hearth;
                for (let i = 0; i < {STREAMS}; i++) {{
                    const created = await app.rpc.call('session/create', {{}});
                    app.openSession(created.session.summary.uri);
                }}
                const deadline = Date.now() + 10000;
                while (Date.now() < deadline && [...app.tabs.values()].filter(t => t.chat && t.chat.turns.length === 0).length < {STREAMS}) {{
                    await new Promise(r => setTimeout(r, 50));
                }}
                return app.tabs.size;
            }})()"
        ),
    )
    .await;
    page.execute(EnableParams::default()).await.unwrap();
    let task_time =
        |metrics: &chromiumoxide::cdp::browser_protocol::performance::GetMetricsReturns| {
            metrics
                .metrics
                .iter()
                .find(|metric| metric.name == "TaskDuration")
                .map(|metric| metric.value)
                .unwrap_or_default()
        };
    let before = page.execute(GetMetricsParams::default()).await.unwrap();
    let wall = Instant::now();
    let started: usize = eval(
        &page,
        "(async () => {
            const tabs = [...window.hearth.tabs.values()].filter(t => t.chat && t.chat.turns.length === 0);
            await Promise.all(tabs.map(t => t.send('stream please')));
            return tabs.length;
        })()",
    )
    .await;
    wait_for(
        &page,
        "[...window.hearth.tabs.values()].filter(t => t.chat && t.chat.turns.length === 1).every(t => t.chat.turns[0].stopReason)",
    )
    .await;
    let after = page.execute(GetMetricsParams::default()).await.unwrap();
    let elapsed = wall.elapsed().as_secs_f64();
    let busy = (task_time(&after.result) - task_time(&before.result)) / elapsed;
    println!(
        "  {started} sessions streaming at once ({made} tabs open, one shown): main thread busy {:.0}% over {elapsed:.1} s — target < 50%",
        busy * 100.0
    );

    // Leave the data directory as it was: the fifty sessions go.
    let _: usize = eval(
        &page,
        "(async () => {
            const tabs = [...window.hearth.tabs.values()].filter(t => t.session && t.session.summary.title !== 'long chat');
            for (const t of tabs) await window.hearth.rpc.call('session/dispose', { session: t.uri });
            return tabs.length;
        })()",
    )
    .await;
    chromium.close().await;
    let _ = Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status();
    let _ = server.wait();
}
