//! `hearth serve` end to end: the real binary, real WebSocket clients.

use std::time::{Duration, Instant};

use hearth_core::{self as core, Mirror};
use hearth_protocol::{
    self as wire, ChatAbort, ChatParams, ChatResolve, ChatSend, ChatSendParams, SessionCreate,
    SessionCreateParams, Subscribe, SubscribeParams, SubscribeResponse, UserMessage,
};
use hearth_server::{Client, Notifications, Notified};
use hearth_test_support::{BoundedCommand, PROCESS_WAIT};
use pretty_assertions::assert_eq;
use serde_json::Value;

use super::serve_support::{Served, next};
use super::support::Hearth;

/// A word every 100 ms for a minute, ending in "finale": no test waits for its end, so
/// none depends on the machine being quick enough to act before it.
fn slow_scenario() -> String {
    format!(
        "name: slow\nturns:\n  - steps:\n      - text: \"one two three four{} finale\"\n        stream: words\n        delay_ms: 100\n",
        " more".repeat(600)
    )
}

async fn new_chat(client: &Client) -> String {
    let created = client
        .call::<SessionCreate>(&SessionCreateParams {
            harness: Some("replay".into()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    created.session.chats[0].summary.uri.clone()
}

async fn subscribe(client: &Client, chat: &str, last_seq: Option<u64>) -> SubscribeResponse {
    client
        .call::<Subscribe>(&SubscribeParams {
            resource: chat.to_owned(),
            last_seq,
            turn_limit: None,
        })
        .await
        .unwrap()
}

async fn snapshot_mirror(client: &Client, chat: &str) -> Mirror {
    match subscribe(client, chat, None).await {
        SubscribeResponse::Snapshot { snapshot } => Mirror::new(snapshot.try_into().unwrap()),
        other => panic!("expected a snapshot, got {other:?}"),
    }
}

async fn send(client: &Client, chat: &str, text: &str) -> String {
    client
        .call::<ChatSend>(&ChatSendParams {
            chat: chat.to_owned(),
            message: UserMessage {
                text: text.into(),
                ..UserMessage::default()
            },
        })
        .await
        .unwrap()
        .turn_id
}

fn apply(mirror: &mut Mirror, envelope: wire::Envelope) {
    mirror
        .apply(&core::Envelope::try_from(envelope).unwrap())
        .unwrap();
}

/// Applies envelopes until the turn completes; returns its stop reason.
async fn follow(notes: &mut Notifications, mirror: &mut Mirror, turn_id: &str) -> wire::StopReason {
    loop {
        let Notified::Envelope(envelope) = next(notes).await else {
            continue;
        };
        let done = match &envelope.action {
            wire::Action::TurnCompleted {
                turn_id: id,
                stop_reason,
                ..
            } if id == turn_id => Some(stop_reason.clone()),
            _ => None,
        };
        apply(mirror, envelope);
        if let Some(reason) = done {
            return reason;
        }
    }
}

async fn resolved(client: &Client, chat: &str) -> core::ResourceState {
    let chat = client
        .call::<ChatResolve>(&ChatParams {
            chat: chat.to_owned(),
        })
        .await
        .unwrap()
        .chat;
    core::ResourceState::Chat(chat.try_into().unwrap())
}

#[tokio::test]
async fn a_turn_streams_to_two_clients_that_converge() {
    let served = Served::start(Hearth::new(), &[], &[]);
    let (alice, mut alice_notes) = served.client().await;
    let (bob, mut bob_notes) = served.client().await;
    let chat = new_chat(&alice).await;
    let mut alice_mirror = snapshot_mirror(&alice, &chat).await;
    let mut bob_mirror = snapshot_mirror(&bob, &chat).await;
    let turn_id = send(&alice, &chat, "hello").await;
    let reason = follow(&mut alice_notes, &mut alice_mirror, &turn_id).await;
    assert_eq!(reason, wire::StopReason::EndTurn);
    follow(&mut bob_notes, &mut bob_mirror, &turn_id).await;
    assert_eq!(alice_mirror.snapshot.state, bob_mirror.snapshot.state);
    assert_eq!(alice_mirror.snapshot.state, resolved(&bob, &chat).await);
    let core::ResourceState::Chat(state) = &bob_mirror.snapshot.state else {
        panic!("not a chat")
    };
    assert!(state.turns[0].response_text().contains("scripted demo"));
}

#[tokio::test]
async fn abort_and_reconnect_with_the_last_seq() {
    let hearth = Hearth::new();
    let scenario = hearth.write("slow.yaml", &slow_scenario());
    let served = Served::start(
        hearth,
        &["--scenario", scenario.to_str().unwrap()],
        &[("HEARTH_REPLAY_DELAY_SCALE", "1")],
    );
    let (first, mut first_notes) = served.client().await;
    let chat = new_chat(&first).await;
    let mut mirror = snapshot_mirror(&first, &chat).await;
    let turn_id = send(&first, &chat, "count").await;
    // Take the start and two words, then drop the connection.
    let mut words = 0;
    while words < 2 {
        let Notified::Envelope(envelope) = next(&mut first_notes).await else {
            continue;
        };
        if matches!(envelope.action, wire::Action::TextDelta { .. }) {
            words += 1;
        }
        apply(&mut mirror, envelope);
    }
    let last_seq = mirror.snapshot.seq;
    let seen = response_text(&mirror);
    first.close().await;
    drop(first);

    // Another client reconnects once more words streamed while the first was away.
    let (second, mut second_notes) = served.client().await;
    let deadline = tokio::time::Instant::now() + super::serve_support::WAIT;
    loop {
        let core::ResourceState::Chat(state) = resolved(&second, &chat).await else {
            panic!("not a chat")
        };
        if state.turns[0].response_text().len() > seen.len() {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no word streamed after {seen:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let SubscribeResponse::Replay { envelopes, .. } =
        subscribe(&second, &chat, Some(last_seq)).await
    else {
        panic!("expected the missed envelopes")
    };
    assert!(
        !envelopes.is_empty(),
        "words streamed while the client was away"
    );
    assert_eq!(envelopes[0].seq, last_seq + 1);
    for envelope in envelopes {
        apply(&mut mirror, envelope);
    }
    let aborted = second
        .call::<ChatAbort>(&ChatParams { chat: chat.clone() })
        .await
        .unwrap();
    assert!(aborted.aborted);
    let reason = follow(&mut second_notes, &mut mirror, &turn_id).await;
    assert_eq!(reason, wire::StopReason::Aborted);
    assert_eq!(mirror.snapshot.state, resolved(&second, &chat).await);
    let core::ResourceState::Chat(state) = &mirror.snapshot.state else {
        panic!("not a chat")
    };
    let text = state.turns[0].response_text();
    assert!(text.starts_with("one two"), "{text}");
    assert!(!text.contains("finale"), "the turn ran to the end: {text}");
}

/// The answer text of the mirrored chat's first turn.
fn response_text(mirror: &Mirror) -> String {
    let core::ResourceState::Chat(state) = &mirror.snapshot.state else {
        panic!("not a chat")
    };
    state.turns[0].response_text()
}

#[tokio::test]
async fn the_cli_uses_the_running_server_and_runs_alone_after_it_stops() {
    let mut served = Served::start(Hearth::new(), &[], &[]);
    let answer = served.hearth.ok(&["run", "hello"]);
    assert!(answer.contains("scripted demo"), "{answer}");
    let listed = served.hearth.ok(&["sessions", "list", "--json"]);
    let session: Value = serde_json::from_str(listed.lines().next().unwrap()).unwrap();
    assert_eq!(session["source"], "server", "the server's host ran it");
    let uri = session["uri"].as_str().unwrap().to_owned();
    let shown = served.hearth.ok(&["sessions", "show", &uri]);
    assert!(
        shown.contains("› hello") && shown.contains("scripted demo"),
        "{shown}"
    );
    let shown = served.hearth.ok(&["sessions", "show", "--json", &uri]);
    let shown: Value = serde_json::from_str(shown.trim()).unwrap();
    assert_eq!(shown["session"]["uri"], uri.as_str());
    assert_eq!(shown["chats"][0]["turns"][0]["user"]["text"], "hello");
    let local = served.hearth.ok(&["--local", "run", "hi"]);
    assert!(local.contains("scripted demo"), "{local}");

    let home = served.hearth.home.path().to_path_buf();
    assert!(home.join("server.json").exists());
    let stderr = served.stop();
    assert!(stderr.contains("stopped"), "{stderr}");
    assert!(!home.join("server.json").exists());
    served.hearth.ok(&["run", "again"]);
    let listed = served.hearth.ok(&["sessions", "list", "--json"]);
    let newest: Value = serde_json::from_str(listed.lines().next().unwrap()).unwrap();
    assert_eq!(
        newest["source"], "cli",
        "with no server, the CLI runs the turn itself"
    );
}

#[tokio::test]
async fn an_explicit_server_that_is_not_there_is_an_error() {
    let hearth = Hearth::new();
    let error = hearth.fails(&["--server", "http://127.0.0.1:9", "run", "hi"]);
    assert!(
        error.contains("using the Hearth server at http://127.0.0.1:9"),
        "{error}"
    );
}

#[tokio::test]
async fn deleting_and_forking_beside_a_server_go_through_it() {
    let served = Served::start(Hearth::new(), &[], &[]);
    served.hearth.ok(&["run", "hello"]);
    let listed = served.hearth.ok(&["sessions", "list"]);
    assert!(listed.contains("replay (demo)"), "{listed}");
    let listed = served.hearth.ok(&["sessions", "list", "--json"]);
    let session: Value = serde_json::from_str(listed.lines().next().unwrap()).unwrap();
    let uri = session["uri"].as_str().unwrap().to_owned();
    let chat = format!(
        "hearth-chat:{}/default",
        uri.trim_start_matches("hearth-session:")
    );
    let (client, _notifications) = served.client().await;
    // The server holds the chat in memory once it was resolved.
    client
        .call::<ChatResolve>(&ChatParams { chat: chat.clone() })
        .await
        .unwrap();

    let forked = served.hearth.ok(&["sessions", "fork", &uri]);
    let forked = forked.trim().to_owned();
    assert!(forked.starts_with("hearth-session:replay/"), "{forked}");
    let fork_source = served
        .hearth
        .ok(&["sessions", "list", "--json"])
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|listed| listed["uri"] == forked.as_str())
        .map(|listed| listed["source"].clone());
    assert_eq!(
        fork_source,
        Some(Value::from("server")),
        "the server forked it"
    );

    let deleted = served.hearth.ok(&["sessions", "delete", &uri]);
    assert!(deleted.contains("deleted"), "{deleted}");
    let gone = client.call::<ChatResolve>(&ChatParams { chat }).await;
    assert!(
        gone.is_err(),
        "the server forgot the deleted session: {gone:?}"
    );
}

#[tokio::test]
async fn a_second_server_on_the_same_data_directory_refuses_and_leaves_the_first_alone() {
    let served = Served::start(Hearth::new(), &[], &[]);
    let record_path = hearth_server::server_file(served.hearth.home.path());
    let first = hearth_server::read_record(&record_path).unwrap();
    let second = served
        .hearth
        .command()
        .args(["serve", "--port", "0"])
        .output_within(PROCESS_WAIT);
    assert!(!second.status.success());
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        stderr.contains("another hearth serve already serves"),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("pid {}", first.pid)), "{stderr}");
    assert!(stderr.contains(&first.url), "{stderr}");
    // The first server's record is untouched, and the CLI still talks to it.
    assert_eq!(hearth_server::read_record(&record_path), Some(first));
    let listed = served.hearth.ok(&["sessions", "list"]);
    assert!(listed.contains("no sessions yet"), "{listed}");

    // A server killed outright leaves no lock behind: the next one starts.
    let hearth = {
        let mut served = served;
        served.child.kill().unwrap();
        served.child.wait().unwrap();
        std::mem::replace(&mut served.hearth, Hearth::new())
    };
    let mut again = Served::start(hearth, &[], &[]);
    let record_path = hearth_server::server_file(again.hearth.home.path());
    let deadline = std::time::Instant::now() + super::serve_support::WAIT;
    while hearth_server::read_record(&record_path).map(|record| record.pid)
        != Some(again.child.id())
    {
        assert!(
            again.child.try_wait().unwrap().is_none(),
            "the new server exited: {}",
            again.stop()
        );
        assert!(
            std::time::Instant::now() < deadline,
            "the new server did not start"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_chat_answered_beside_the_server_reaches_its_subscribers() {
    use std::io::Write;

    use hearth_test_support::BoundedChild;

    let served = Served::start(Hearth::new(), &[], &[]);
    let (client, mut notes) = served.client().await;
    let chat = new_chat(&client).await;
    let mut mirror = snapshot_mirror(&client, &chat).await;
    let session = core::ChatUri::parse(&chat).unwrap().session().to_string();

    // `hearth chat --local` answers in the same session beside the server.
    let mut child = served
        .hearth
        .command()
        .args(["--local", "chat", "--session", &session])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"said beside the server\n/quit\n")
        .unwrap();
    let output = tokio::task::spawn_blocking(move || child.wait_with_output_within(PROCESS_WAIT))
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    // The server's subscriber is told of the turn, complete, without asking again.
    let turn = loop {
        let Notified::Envelope(envelope) = next(&mut notes).await else {
            continue;
        };
        let started = match &envelope.action {
            wire::Action::TurnStarted { turn } => Some(turn.clone()),
            _ => None,
        };
        apply(&mut mirror, envelope);
        if let Some(turn) = started {
            break turn;
        }
    };
    assert_eq!(turn.user.text, "said beside the server");
    let core::ResourceState::Chat(state) = &mirror.snapshot.state else {
        panic!("not a chat");
    };
    assert_eq!(state.turns.len(), 1);
    assert!(
        !state.turns[0].response_text().is_empty(),
        "{:?}",
        state.turns[0]
    );
}

#[tokio::test]
async fn a_session_made_beside_the_server_is_announced_to_root_subscribers() {
    let served = Served::start(Hearth::new(), &[], &[]);
    let (client, mut notes) = served.client().await;
    subscribe(&client, core::ROOT_URI, None).await;
    let mut command = served.hearth.command();
    command.args(["--local", "run", "made beside"]);
    let output = tokio::task::spawn_blocking(move || command.output_within(PROCESS_WAIT))
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let made = served.hearth.session_uris().remove(0);
    let announced = loop {
        let Notified::Envelope(envelope) = next(&mut notes).await else {
            continue;
        };
        if let wire::Action::SessionAdded { summary } = envelope.action {
            break summary;
        }
    };
    assert_eq!(announced.uri, made);
}

/// How many files a process has open.
fn open_files(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

/// Whether the server closed `stream` (it must be non-blocking): read to its end.
fn closed_by_server(stream: &mut std::net::TcpStream) -> bool {
    use std::io::Read;
    let mut buffer = [0u8; 512];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => return false,
            Err(_) => return true,
        }
    }
}

/// Twenty thousand connections (as many as this process may open, if fewer) that send
/// half a request and then nothing: the server's open files stay within its connection
/// cap, an authenticated client is served meanwhile (a `POST /rpc` and a WebSocket), and
/// every one of them is closed after the header read timeout.
#[test]
#[allow(clippy::print_stderr)]
fn an_authenticated_client_is_served_while_twenty_thousand_half_sent_requests_are_held() {
    use std::io::Write;

    const WANTED: usize = 20_000;
    let limit = hearth_server::raise_open_file_limit().unwrap_or(u64::MAX);
    let count = usize::try_from(limit.saturating_sub(100)).map_or(WANTED, |room| room.min(WANTED));
    if count < WANTED {
        eprintln!("holding {count} connections: this process may open {limit} files");
    }
    let hearth = Hearth::new();
    hearth.write("config.toml", "[server]\nheader_read_timeout_seconds = 5\n");
    let served = Served::start(hearth, &[], &[]);
    let pid = served.child.id();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let authenticated = || {
        let (status, response) = served.http(&super::serve_support::request(
            "POST /rpc HTTP/1.1",
            &[
                format!("Host: 127.0.0.1:{}", served.port),
                format!("Authorization: Bearer {}", served.token.expose()),
                "Content-Type: application/json".to_owned(),
            ],
            r#"{"jsonrpc":"2.0","id":1,"method":"session/list"}"#,
        ));
        assert_eq!(status, 200, "{response}");
        runtime.block_on(async {
            let (client, _notifications) = served.client().await;
            client
                .call::<hearth_protocol::SessionList>(
                    &hearth_protocol::SessionListParams::default(),
                )
                .await
                .unwrap();
            client.close().await;
        });
    };
    // Once before, so what the first requests open (the database's connections) is
    // counted in `before`.
    authenticated();
    let before = open_files(pid);
    let cap = hearth_server::DEFAULT_MAX_CONNECTIONS;

    let half = format!(
        "GET /health HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n",
        served.port
    );
    let mut held = Vec::with_capacity(count);
    let mut most = before;
    for index in 0..count {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", served.port)).unwrap();
        // The server may have closed it already to make room for a newer one.
        stream.write_all(half.as_bytes()).ok();
        held.push(stream);
        if index % 500 == 0 {
            most = most.max(open_files(pid));
        }
    }
    most = most.max(open_files(pid));

    // Served while they are held: a request, and a WebSocket client.
    authenticated();
    assert!(
        most >= before + cap / 2,
        "the control failed: the server held at most {} of them",
        most - before
    );
    assert!(
        most <= before + cap + 64,
        "the server's open files grew from {before} to {most} (cap {cap})"
    );

    // After the header timeout, the server has closed every one of them.
    for stream in &held {
        stream.set_nonblocking(true).unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(5) + super::serve_support::WAIT;
    loop {
        held.retain_mut(|stream| !closed_by_server(stream));
        if held.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{} connections are still open",
            held.len()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let after = open_files(pid);
    assert!(
        after <= before + 16,
        "the server still has {after} files open ({before} before)"
    );
}

#[test]
fn a_zero_server_limit_in_the_config_is_refused_with_its_key() {
    for key in [
        "login_days",
        "header_read_timeout_seconds",
        "idle_timeout_seconds",
        "max_connections",
    ] {
        let hearth = Hearth::new();
        hearth.write("config.toml", &format!("[server]\n{key} = 0\n"));
        let error = hearth.fails(&["serve", "--port", "0"]);
        assert!(
            error.contains(&format!(
                "[server] {key} in the config file must be at least 1"
            )),
            "{key}: {error}"
        );
    }
}
