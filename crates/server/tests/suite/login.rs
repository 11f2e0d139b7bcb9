//! Browser logins in process: a one-time code traded once for a session the page sends
//! itself (header, or WebSocket protocol offer; never a cookie or URL), which ends at its
//! expiry or when the login key is replaced, closing its open sockets.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::{SinkExt, StreamExt};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;

use super::support::{Setup, TestServer, WAIT};

const LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"session/list"}"#;

fn json_body(response: &str) -> Value {
    let body = &response[response.find("\r\n\r\n").unwrap() + 4..];
    serde_json::from_str(body).unwrap_or_else(|error| panic!("{error}: {response}"))
}

fn header<'a>(response: &'a str, name: &str) -> Option<&'a str> {
    let head = response.split("\r\n\r\n").next().unwrap_or_default();
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

fn bearer(server: &TestServer) -> String {
    format!("Authorization: Bearer {}", server.token.expose())
}

fn session_header(session: &str) -> String {
    format!("X-Hearth-Session: {session}")
}

/// A fresh login code, asked for with the token as `hearth login` does.
async fn login_code(server: &TestServer) -> String {
    let link = hearth_server::login_link(&server.url, &server.token)
        .await
        .unwrap();
    link.split_once("?code=").unwrap().1.to_owned()
}

/// Trades a login code for a session as the page does; returns the status and answer.
async fn trade(server: &TestServer, code: &str) -> (u16, String) {
    server
        .http(
            "POST /auth/session HTTP/1.1",
            &["Content-Type: application/json".to_owned()],
            &json!({ "code": code }).to_string(),
        )
        .await
}

/// A new browser session.
async fn logged_in(server: &TestServer) -> (String, u64) {
    let code = login_code(server).await;
    let (status, response) = trade(server, &code).await;
    assert_eq!(status, 200, "{response}");
    let answer = json_body(&response);
    let expires_at = chrono::DateTime::parse_from_rfc3339(answer["expiresAt"].as_str().unwrap())
        .unwrap()
        .timestamp();
    (
        answer["session"].as_str().unwrap().to_owned(),
        u64::try_from(expires_at).unwrap(),
    )
}

async fn session_status(server: &TestServer, session: &str) -> u16 {
    server
        .http("GET /auth/session HTTP/1.1", &[session_header(session)], "")
        .await
        .0
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Opens `/rpc` as the page does: the session in the WebSocket protocol offer.
async fn page_socket(
    server: &TestServer,
    session: &str,
) -> Result<(Socket, Option<String>), String> {
    let mut request = format!("ws://{}/rpc", server.authority())
        .into_client_request()
        .unwrap();
    request.headers_mut().insert(
        "sec-websocket-protocol",
        HeaderValue::from_str(&format!("hearth.rpc, hearth.session.{session}")).unwrap(),
    );
    match tokio_tungstenite::connect_async(request).await {
        Ok((socket, response)) => {
            let protocol = response
                .headers()
                .get("sec-websocket-protocol")
                .map(|value| value.to_str().unwrap().to_owned());
            Ok((socket, protocol))
        }
        Err(error) => Err(error.to_string()),
    }
}

/// Sends `initialize` and waits for its answer.
async fn initialize(socket: &mut Socket) -> Value {
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "page"}}});
    socket
        .send(Message::text(request.to_string()))
        .await
        .unwrap();
    loop {
        let message = tokio::time::timeout(WAIT, socket.next())
            .await
            .expect("an answer in time")
            .expect("the socket is open")
            .unwrap();
        if let Message::Text(text) = message {
            return serde_json::from_str(text.as_str()).unwrap();
        }
    }
}

/// Waits until the server closes the socket, failing after [`WAIT`].
async fn closed_by_server(socket: &mut Socket) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        match tokio::time::timeout_at(deadline, socket.next()).await {
            Err(_) => panic!("the socket stayed open"),
            Ok(None | Some(Err(_) | Ok(Message::Close(_)))) => return,
            Ok(Some(Ok(_))) => {}
        }
    }
}

#[tokio::test]
async fn a_login_code_is_traded_once_for_a_session_the_page_sends_itself() {
    let server = TestServer::start().await;
    let code = login_code(&server).await;

    // The link sends the browser on with the code in the fragment, without using it.
    for _ in 0..2 {
        let (status, response) = server
            .http(&format!("GET /auth?code={code} HTTP/1.1"), &[], "")
            .await;
        assert_eq!(status, 303, "{response}");
        assert_eq!(
            header(&response, "location"),
            Some(format!("/#login={code}").as_str())
        );
        assert_eq!(header(&response, "cache-control"), Some("no-store"));
        assert_eq!(
            header(&response, "set-cookie"),
            None,
            "no cookie: {response}"
        );
    }
    let (status, response) = server.http("GET /auth?code=0000 HTTP/1.1", &[], "").await;
    assert_eq!(status, 401, "{response}");

    // The page trades it, once; the answer is readable by its own origin only.
    let (status, response) = trade(&server, &code).await;
    assert_eq!(status, 200, "{response}");
    assert_eq!(header(&response, "cache-control"), Some("no-store"));
    assert_eq!(header(&response, "access-control-allow-origin"), None);
    assert_eq!(
        header(&response, "set-cookie"),
        None,
        "no cookie: {response}"
    );
    let session = json_body(&response)["session"].as_str().unwrap().to_owned();
    let (status, _) = trade(&server, &code).await;
    assert_eq!(status, 401, "a code works once");
    let (status, _) = server
        .http(&format!("GET /auth?code={code} HTTP/1.1"), &[], "")
        .await;
    assert_eq!(status, 401, "a used link is refused");
    let (status, response) = server
        .http(
            "POST /auth/session HTTP/1.1",
            &["Content-Type: text/plain".to_owned()],
            &json!({ "code": login_code(&server).await }).to_string(),
        )
        .await;
    assert_eq!(status, 415, "the trade is JSON: {response}");

    // The page's header authenticates reads and writes.
    assert_eq!(session_status(&server, &session).await, 200);
    let json = "Content-Type: application/json".to_owned();
    let (status, response) = server
        .http(
            "POST /rpc HTTP/1.1",
            &[session_header(&session), json.clone()],
            LIST,
        )
        .await;
    assert_eq!(status, 200, "{response}");
    // So does the WebSocket protocol offer, and only `hearth.rpc` is answered.
    let (mut socket, protocol) = page_socket(&server, &session).await.unwrap();
    assert_eq!(protocol.as_deref(), Some("hearth.rpc"));
    let answer = initialize(&mut socket).await;
    assert!(answer["result"]["protocolVersion"].is_string(), "{answer}");

    // The same credential anywhere else is worth nothing.
    for (place, headers, line) in [
        (
            "a cookie",
            vec![format!("Cookie: hearth_session={session}"), json.clone()],
            "POST /rpc HTTP/1.1".to_owned(),
        ),
        (
            "the URL",
            vec![json.clone()],
            format!("POST /rpc?session={session} HTTP/1.1"),
        ),
        (
            "a bearer token",
            vec![format!("Authorization: Bearer {session}"), json.clone()],
            "POST /rpc HTTP/1.1".to_owned(),
        ),
        (
            "a protocol offer outside an upgrade",
            vec![
                format!("Sec-WebSocket-Protocol: hearth.rpc, hearth.session.{session}"),
                json.clone(),
            ],
            "POST /rpc HTTP/1.1".to_owned(),
        ),
    ] {
        let (status, response) = server.http(&line, &headers, LIST).await;
        assert_eq!(status, 401, "{place}: {response}");
    }
    // A browser session cannot mint login codes or end sessions: only the token can.
    for path in ["/auth/code", "/auth/revoke"] {
        let (status, response) = server
            .http(
                &format!("POST {path} HTTP/1.1"),
                &[session_header(&session), json.clone()],
                "{}",
            )
            .await;
        assert_eq!(status, 403, "{path}: {response}");
    }
    assert_eq!(session_status(&server, &session).await, 200);
}

#[tokio::test]
async fn a_session_ends_at_its_expiry_and_its_socket_closes() {
    let lifetime = Duration::from_secs(3);
    let server = TestServer::start_with(Setup {
        login_lifetime: lifetime,
        ..Setup::default()
    })
    .await;
    let (session, expires_at) = logged_in(&server).await;
    let (mut socket, _) = page_socket(&server, &session).await.unwrap();
    initialize(&mut socket).await;

    closed_by_server(&mut socket).await;
    let deadline = Instant::now() + WAIT;
    while session_status(&server, &session).await != 401 {
        assert!(Instant::now() < deadline, "the session never expired");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(
        now >= expires_at,
        "refused before its expiry ({now} < {expires_at})"
    );
    let error = page_socket(&server, &session).await.err().unwrap();
    assert!(error.contains("401"), "{error}");
    // A new login works.
    let (fresh, _) = logged_in(&server).await;
    assert_eq!(session_status(&server, &fresh).await, 200);
}

#[tokio::test]
async fn revoking_ends_every_session_at_once_and_closes_their_sockets() {
    let server = TestServer::start().await;
    let (first, _) = logged_in(&server).await;
    let (second, _) = logged_in(&server).await;
    let (mut socket, _) = page_socket(&server, &first).await.unwrap();
    initialize(&mut socket).await;
    // A program's socket is not a browser session.
    let (program, _notifications) = server.client().await;

    let (status, response) = server
        .http(
            "POST /auth/revoke HTTP/1.1",
            &[bearer(&server), "Content-Type: application/json".to_owned()],
            "{}",
        )
        .await;
    assert_eq!(status, 200, "{response}");
    assert_eq!(json_body(&response), json!({"revoked": true}));

    closed_by_server(&mut socket).await;
    assert_eq!(session_status(&server, &first).await, 401);
    assert_eq!(session_status(&server, &second).await, 401);
    let error = page_socket(&server, &second).await.err().unwrap();
    assert!(error.contains("401"), "{error}");
    program
        .call::<hearth_protocol::SessionList>(&hearth_protocol::SessionListParams::default())
        .await
        .expect("the program's socket is still served");
    let (fresh, _) = logged_in(&server).await;
    assert_eq!(session_status(&server, &fresh).await, 200);
}
