//! What connections that send nothing useful can hold: a new one has the header read
//! timeout to send a request's head, a kept-alive one the idle timeout to start its next
//! request, and at the cap the oldest connection that sent nothing makes room, so a
//! client that sends requests is served. (Twenty thousand of them against the real
//! binary: the CLI's `suite::serve`.)

use std::time::{Duration, Instant};

use hearth_server::{Backend, Server, ServerOptions};
use pretty_assertions::assert_eq;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

use super::support::{Setup, TestServer, WAIT};

const LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"session/list"}"#;

/// A connection that sends half a request head, and then nothing.
async fn half_sent(authority: &str) -> TcpStream {
    let mut stream = TcpStream::connect(authority).await.unwrap();
    stream
        .write_all(format!("GET /health HTTP/1.1\r\nHost: {authority}\r\n").as_bytes())
        .await
        .unwrap();
    stream
}

/// Waits until the server closes `stream` (reading anything it sends), failing after
/// [`WAIT`]; returns when.
async fn closed_by_server(stream: &mut TcpStream) -> Instant {
    let mut buffer = [0u8; 1024];
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buffer)).await {
            Err(_) => panic!("the server kept the connection open"),
            Ok(Ok(0) | Err(_)) => return Instant::now(),
            Ok(Ok(_)) => {}
        }
    }
}

/// Whether the server still holds `stream` open right now.
fn still_open(stream: &TcpStream) -> bool {
    let mut buffer = [0u8; 16];
    matches!(stream.try_read(&mut buffer), Err(error) if error.kind() == std::io::ErrorKind::WouldBlock)
}

async fn authenticated_list(server: &TestServer) -> u16 {
    let (status, response) = server
        .http(
            "POST /rpc HTTP/1.1",
            &[
                format!("Authorization: Bearer {}", server.token.expose()),
                "Content-Type: application/json".to_owned(),
            ],
            LIST,
        )
        .await;
    assert!(response.contains(r#""sessions""#), "{response}");
    status
}

#[tokio::test]
async fn a_connection_that_sends_no_whole_request_is_closed_after_the_header_timeout() {
    let timeout = Duration::from_secs(1);
    let server = TestServer::start_with(Setup {
        header_read_timeout: timeout,
        ..Setup::default()
    })
    .await;
    let opened = Instant::now();
    let mut half = half_sent(server.authority()).await;
    let mut silent = TcpStream::connect(server.authority()).await.unwrap();
    for stream in [&mut half, &mut silent] {
        let closed = closed_by_server(stream).await;
        assert!(
            closed - opened >= timeout,
            "closed before its time: {:?}",
            closed - opened
        );
    }
    assert_eq!(authenticated_list(&server).await, 200);
}

#[tokio::test]
async fn a_kept_alive_connection_is_closed_after_the_idle_timeout_but_a_websocket_is_not() {
    let idle = Duration::from_secs(1);
    let server = TestServer::start_with(Setup {
        idle_timeout: idle,
        ..Setup::default()
    })
    .await;
    let (client, _notifications) = server.client().await;

    // One whole request, answered, and the connection kept alive.
    let mut stream = TcpStream::connect(server.authority()).await.unwrap();
    let request = format!(
        "GET /health HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\n\r\n",
        server.authority(),
        server.token.expose()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    while !String::from_utf8_lossy(&answer).contains("\"status\":\"ok\"") {
        let read = tokio::time::timeout(WAIT, stream.read(&mut buffer))
            .await
            .unwrap()
            .unwrap();
        assert!(read > 0, "closed before answering");
        answer.extend_from_slice(&buffer[..read]);
    }
    let answered = Instant::now();
    let closed = closed_by_server(&mut stream).await;
    assert!(
        closed - answered >= idle - Duration::from_millis(50),
        "closed before its time: {:?}",
        closed - answered
    );

    // The WebSocket opened before is older than that and still served.
    client
        .call::<hearth_protocol::SessionList>(&hearth_protocol::SessionListParams::default())
        .await
        .unwrap();
}

#[tokio::test]
async fn at_the_cap_the_oldest_connection_that_sent_nothing_makes_room() {
    let server = TestServer::start_with(Setup {
        max_connections: 4,
        ..Setup::default()
    })
    .await;
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(half_sent(server.authority()).await);
    }
    // A fifth connection, with a whole request, is served: the oldest makes room.
    assert_eq!(authenticated_list(&server).await, 200);
    closed_by_server(&mut held[0]).await;
    for stream in &held[1..] {
        assert!(still_open(stream), "only the oldest was closed");
    }
}

#[tokio::test]
async fn a_stopping_server_closes_idle_connections_and_returns() {
    let host = hearth_test_support::TestHost::start(Vec::new()).await;
    let token = hearth_server::Secret::generate().unwrap();
    let server = Server::bind(
        Backend::new(host.host.clone()),
        ServerOptions::at("127.0.0.1", 0).unwrap(),
        token.clone(),
    )
    .await
    .unwrap();
    let authority = server.url().trim_start_matches("http://").to_owned();
    let (stop, stopped) = oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve(async move {
        stopped.await.ok();
    }));
    let mut half = half_sent(&authority).await;
    let mut kept = TcpStream::connect(&authority).await.unwrap();
    let request = format!(
        "GET /health HTTP/1.1\r\nHost: {authority}\r\nAuthorization: Bearer {}\r\n\r\n",
        token.expose()
    );
    kept.write_all(request.as_bytes()).await.unwrap();
    let mut buffer = [0u8; 4096];
    let read = tokio::time::timeout(WAIT, kept.read(&mut buffer))
        .await
        .unwrap()
        .unwrap();
    assert!(String::from_utf8_lossy(&buffer[..read]).starts_with("HTTP/1.1 200"));

    stop.send(()).unwrap();
    tokio::time::timeout(WAIT, serving)
        .await
        .expect("the server stopped in time")
        .unwrap()
        .unwrap();
    closed_by_server(&mut half).await;
    closed_by_server(&mut kept).await;
    let refused = TcpStream::connect(&authority).await;
    assert!(refused.is_err(), "it no longer listens");
}
