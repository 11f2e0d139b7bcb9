//! The same protocol over JSON Lines (what `hearth app-server --stdio` speaks).

use hearth_core::{ChatUri, Signal, TurnId};
use hearth_server::{Backend, serve_lines};
use hearth_test_support::{FakeAgent, TestHost};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::support::WAIT;

#[tokio::test]
async fn requests_and_envelopes_travel_as_json_lines() {
    let fake = FakeAgent::new("fake");
    let host = TestHost::start(vec![fake.clone()]).await;
    let backend = Backend {
        default_provider: Some(hearth_core::HarnessId::parse("fake").unwrap()),
        ..Backend::new(host.host.clone())
    };
    // One pipe each way, so closing the client's end is the server's end of input.
    let (mut client_write, server_read) = tokio::io::duplex(64 * 1024);
    let (server_write, client_read) = tokio::io::duplex(64 * 1024);
    let serving = tokio::spawn(serve_lines(backend, server_read, server_write));
    let mut lines = BufReader::new(client_read).lines();
    let mut next = async || -> Value {
        let line = tokio::time::timeout(WAIT, lines.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        serde_json::from_str(&line).unwrap()
    };
    let mut write = async |value: Value| {
        let mut line = value.to_string();
        line.push('\n');
        client_write.write_all(line.as_bytes()).await.unwrap();
    };

    write(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "editor"}}})).await;
    assert_eq!(next().await["result"]["serverInfo"]["name"], "hearth");
    write(json!({"jsonrpc": "2.0", "id": 2, "method": "session/create"})).await;
    let created = next().await;
    let chat = created["result"]["session"]["chats"][0]["summary"]["uri"]
        .as_str()
        .unwrap()
        .to_owned();
    write(json!({"jsonrpc": "2.0", "id": 3, "method": "subscribe", "params": {"resource": chat}}))
        .await;
    let subscribed = next().await;
    assert_eq!(subscribed["result"]["type"], "snapshot");
    let seq = subscribed["result"]["snapshot"]["seq"].as_u64().unwrap();
    write(json!({"jsonrpc": "2.0", "id": 4, "method": "chat/send", "params": {"chat": chat, "message": {"text": "hi"}}})).await;
    let chat_uri = ChatUri::parse(&chat).unwrap();
    let turn_id = fake.wait_for_send(&chat_uri).await;
    fake.progress(
        &chat_uri,
        Signal::TextDelta {
            turn_id: TurnId::parse(turn_id.as_str()).unwrap(),
            text: "hello".into(),
        },
    )
    .await;
    let mut seen = Vec::new();
    while seen
        .last()
        .is_none_or(|envelope: &Value| envelope["action"]["type"] != "textDelta")
    {
        let message = next().await;
        if message.get("id").is_some() {
            assert_eq!(message["result"]["turnId"], turn_id.as_str());
            continue;
        }
        assert_eq!(message["method"], "subscription/envelope");
        seen.push(message["params"].clone());
    }
    let seqs: Vec<u64> = seen.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, vec![seq + 1, seq + 2]);
    assert_eq!(seen[0]["action"]["type"], "turnStarted");
    write(json!({"jsonrpc": "2.0", "id": 5, "method": "no/such"})).await;
    assert_eq!(next().await["error"]["data"]["kind"], "methodNotFound");
    fake.finish_ok(&chat_uri);
    drop(client_write);
    tokio::time::timeout(WAIT, serving)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn a_batch_gets_one_invalid_request_error_and_the_connection_goes_on() {
    let host = TestHost::start(vec![FakeAgent::new("fake")]).await;
    let backend = Backend::new(host.host.clone());
    let (mut client_write, server_read) = tokio::io::duplex(64 * 1024);
    let (server_write, client_read) = tokio::io::duplex(64 * 1024);
    let serving = tokio::spawn(serve_lines(backend, server_read, server_write));
    let mut lines = BufReader::new(client_read).lines();

    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "editor"}}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/list"},
    ]);
    let request = json!({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {"clientInfo": {"name": "editor"}}});
    client_write
        .write_all(format!("{batch}\n{request}\n").as_bytes())
        .await
        .unwrap();
    let mut next = async || -> Value {
        let line = tokio::time::timeout(WAIT, lines.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        serde_json::from_str(&line).unwrap()
    };
    let refused = next().await;
    assert_eq!(
        refused,
        json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {
                "code": -32600,
                "message": "batches are not supported: send one request per message",
                "data": {
                    "kind": "invalidRequest",
                    "message": "batches are not supported: send one request per message",
                    "retryable": false,
                },
            },
        })
    );
    // The batch got one answer, not one per member: the next line answers request 3.
    let answered = next().await;
    assert_eq!(answered["id"], 3, "{answered}");
    assert_eq!(answered["result"]["serverInfo"]["name"], "hearth");
    drop(client_write);
    tokio::time::timeout(WAIT, serving)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}
