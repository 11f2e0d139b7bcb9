//! The order in which the mock model server finds an answer: responder, path queues
//! (longest prefix first), main queue, fallback; and the scripted models' incidental
//! answers, which take no turn.

use std::time::Duration;

use hearth_test_support::real_agents::{ModelTurn, WireFormat};
use hearth_test_support::{MockModelServer, MockResponse, ScriptedModel};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// One request on its own connection; returns the status and the body (chunked
/// bodies decoded).
async fn send(server: &MockModelServer, method: &str, path: &str, body: &Value) -> (u16, String) {
    let body = body.to_string();
    let mut stream = TcpStream::connect(server.address()).await.unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    let read = async {
        // The server keeps the connection open: read until the response is complete.
        let mut chunk = [0u8; 8192];
        loop {
            if let Some(done) = complete(&response) {
                return done;
            }
            let count = stream.read(&mut chunk).await.unwrap();
            assert!(count > 0, "connection closed mid-response");
            response.extend_from_slice(&chunk[..count]);
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .expect("a response within 10 s")
}

/// The status and body once `response` holds a whole response.
fn complete(response: &[u8]) -> Option<(u16, String)> {
    let text = String::from_utf8_lossy(response);
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    let lower = head.to_ascii_lowercase();
    if lower.contains("transfer-encoding: chunked") {
        let mut decoded = String::new();
        let mut rest = body;
        loop {
            let (size, after) = rest.split_once("\r\n")?;
            let size = usize::from_str_radix(size.trim(), 16).ok()?;
            if size == 0 {
                return Some((status, decoded));
            }
            decoded.push_str(after.get(..size)?);
            rest = after.get(size + 2..)?;
        }
    }
    let length: usize = lower
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(0);
    (body.len() >= length).then(|| (status, body[..length].to_owned()))
}

fn marker(name: &str) -> MockResponse {
    MockResponse::json(200, &json!({"from": name}))
}

#[tokio::test]
async fn the_responder_comes_first_then_path_queues_then_the_main_queue() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(marker("main"));
    server.enqueue_for("/v1/messages", marker("messages"));
    server.enqueue_for("/v1/messages/count_tokens", marker("count"));
    server.set_responder(std::sync::Arc::new(|request| {
        (request.path == "/answered").then(|| marker("responder"))
    }));
    server.set_fallback(marker("fallback"));
    assert_eq!(server.pending(), 3);

    let answers = [
        ("/answered", "responder"),
        ("/v1/messages/count_tokens?beta=true", "count"),
        // The longest prefix is empty now: the shorter one answers.
        ("/v1/messages/count_tokens", "messages"),
        ("/v1/messages", "main"),
        ("/v1/messages", "fallback"),
    ];
    for (path, from) in answers {
        let (status, body) = send(&server, "POST", path, &json!({})).await;
        assert_eq!(
            (status, body),
            (200, json!({"from": from}).to_string()),
            "{path}"
        );
    }
    assert_eq!(server.pending(), 0);

    server.clear_responder();
    let (_, body) = send(&server, "POST", "/answered", &json!({})).await;
    assert_eq!(body, json!({"from": "fallback"}).to_string());

    let seen = server
        .wait_for_request(Duration::from_secs(1), |request| {
            request.path.ends_with("?beta=true")
        })
        .await
        .unwrap();
    assert_eq!(seen.path, "/v1/messages/count_tokens?beta=true");
    let missing = server
        .wait_for_request(Duration::from_millis(50), |request| {
            request.path == "/never"
        })
        .await;
    assert!(missing.is_none());
}

#[tokio::test]
async fn a_scripted_model_answers_incidental_requests_without_taking_a_turn() {
    let server = MockModelServer::start().await.unwrap();
    let model = ScriptedModel::new(WireFormat::AnthropicMessages);
    model.install(&server);
    model.push(ModelTurn::text("pong"));

    let (status, body) = send(
        &server,
        "POST",
        "/v1/messages/count_tokens?beta=true",
        &json!({"model": "m", "messages": [{"role": "user", "content": "hello there"}]}),
    )
    .await;
    assert_eq!(status, 200);
    assert!(serde_json::from_str::<Value>(&body).unwrap()["input_tokens"].is_u64());
    // A title request carries no tools: answered, no turn taken.
    let (_, title) = send(
        &server,
        "POST",
        "/v1/messages",
        &json!({"model": "m", "max_tokens": 10, "messages": []}),
    )
    .await;
    assert!(title.contains("Hearth test session"), "{title}");
    assert_eq!(model.pending(), 1);

    let (_, turn) = send(
        &server,
        "POST",
        "/v1/messages?beta=true",
        &json!({"model": "m", "stream": true, "messages": [], "tools": [{"name": "Write"}]}),
    )
    .await;
    assert!(turn.contains("event: message_start"), "{turn}");
    assert!(turn.contains(r#""text":"pong""#), "{turn}");
    assert_eq!(model.pending(), 0);
    assert_eq!(model.served().len(), 1);
    assert_eq!(model.incidental().len(), 2);

    // The script is empty: the agent is told so in text, and the request is recorded.
    let (_, unscripted) = send(
        &server,
        "POST",
        "/v1/messages",
        &json!({"model": "m", "stream": false, "messages": [], "tools": [{"name": "Write"}]}),
    )
    .await;
    assert!(unscripted.contains("no turn scripted"), "{unscripted}");
    assert!(model.served()[1].turn.is_none());

    // A path of no wire format known to the script falls through to the server.
    let (status, _) = send(&server, "POST", "/v1/embeddings", &json!({})).await;
    assert_eq!(status, 500);
}

#[tokio::test]
async fn each_wire_format_renders_the_write_tool_the_agent_advertises() {
    let cases = [
        (
            WireFormat::AnthropicMessages,
            "/v1/messages",
            json!({"model": "m", "stream": false, "messages": [], "tools": [{"name": "mcp__acp__Write"}, {"name": "Write"}]}),
            vec![r#""name":"mcp__acp__Write""#, r#""file_path":"/w/a.txt""#],
        ),
        (
            WireFormat::OpenAiResponses,
            "/v1/responses",
            json!({"model": "m", "stream": true, "input": [], "tools": [{"type": "custom", "name": "apply_patch"}]}),
            vec![
                r#""type":"custom_tool_call""#,
                r#"*** Add File: /w/a.txt\n+one\n+two\n*** End Patch\n"#,
                "event: response.completed",
            ],
        ),
        (
            WireFormat::GeminiGenerateContent,
            "/v1beta/models/gemini-x:streamGenerateContent?alt=sse",
            json!({"contents": [], "tools": [{"functionDeclarations": [{"name": "write_file"}]}]}),
            vec![
                r#""functionCall":{"name":"write_file","args":{"file_path":"/w/a.txt","content":"one\ntwo\n"}}"#,
                r#""finishReason":"STOP""#,
                "\r\n\r\n",
            ],
        ),
        (
            WireFormat::OpenAiChat,
            "/v1/chat/completions",
            json!({"model": "m", "stream": true, "messages": [], "tools": [{"type": "function", "function": {"name": "write"}}]}),
            vec![
                r#""name":"write""#,
                r#"filePath"#,
                r#""finish_reason":"tool_calls""#,
                "data: [DONE]",
            ],
        ),
        (
            WireFormat::OpenAiChat,
            "/v1/chat/completions",
            json!({"model": "m", "stream": true, "messages": [], "tools": [
                {"type": "function", "function": {"name": "view"}},
                {"type": "function", "function": {"name": "create"}},
                {"type": "function", "function": {"name": "edit"}},
            ]}),
            vec![
                r#""name":"create""#,
                r#"\"path\":\"/w/a.txt\""#,
                r#"\"file_text\":\"one\\ntwo\\n\""#,
                r#""finish_reason":"tool_calls""#,
                "data: [DONE]",
            ],
        ),
    ];
    for (format, path, request, expected) in cases {
        let server = MockModelServer::start().await.unwrap();
        let model = ScriptedModel::new(format);
        model.install(&server);
        model.push(ModelTurn::write_file("/w/a.txt", "one\ntwo\n"));
        let (status, body) = send(&server, "POST", path, &request).await;
        assert_eq!(status, 200, "{format:?}");
        for fragment in expected {
            assert!(
                body.contains(fragment),
                "{format:?}: {fragment} not in {body}"
            );
        }
    }
}

#[tokio::test]
async fn each_wire_format_calls_the_advertised_tool_that_ends_with_a_name() {
    let cases = [
        (
            WireFormat::AnthropicMessages,
            "/v1/messages",
            json!({"model": "m", "stream": false, "messages": [], "tools": [
                {"name": "Write"}, {"name": "mcp__hearth__event_create"},
            ]}),
            vec![
                r#""name":"mcp__hearth__event_create""#,
                r#""input":{"title":"Dentist"}"#,
            ],
        ),
        (
            // Codex: an MCP server's tools inside a `namespace` tool.
            WireFormat::OpenAiResponses,
            "/v1/responses",
            json!({"model": "m", "stream": true, "input": [], "tools": [
                {"type": "custom", "name": "apply_patch"},
                {"type": "namespace", "name": "mcp__hearth", "tools": [
                    {"type": "function", "name": "event_create"},
                ]},
            ]}),
            vec![
                r#""namespace":"mcp__hearth""#,
                r#""name":"event_create""#,
                r#""arguments":"{\"title\":\"Dentist\"}""#,
            ],
        ),
        (
            WireFormat::GeminiGenerateContent,
            "/v1beta/models/gemini-x:streamGenerateContent?alt=sse",
            json!({"contents": [], "tools": [{"functionDeclarations": [
                {"name": "write_file"}, {"name": "mcp_hearth_event_create"},
            ]}]}),
            vec![r#""functionCall":{"name":"mcp_hearth_event_create","args":{"title":"Dentist"}}"#],
        ),
        (
            WireFormat::OpenAiChat,
            "/v1/chat/completions",
            json!({"model": "m", "stream": true, "messages": [], "tools": [
                {"type": "function", "function": {"name": "create"}},
                {"type": "function", "function": {"name": "hearth-event_create"}},
            ]}),
            vec![
                r#""name":"hearth-event_create""#,
                r#"\"title\":\"Dentist\""#,
            ],
        ),
    ];
    for (format, path, request, expected) in cases {
        let server = MockModelServer::start().await.unwrap();
        let model = ScriptedModel::new(format);
        model.install(&server);
        model.push(ModelTurn::tool_call_ending_with(
            "event_create",
            json!({"title": "Dentist"}),
        ));
        let (status, body) = send(&server, "POST", path, &request).await;
        assert_eq!(status, 200, "{format:?}");
        for fragment in expected {
            assert!(
                body.contains(fragment),
                "{format:?}: {fragment} not in {body}"
            );
        }
    }
}

#[tokio::test]
async fn a_call_of_a_tool_nobody_offered_is_answered_with_a_text_that_says_so() {
    let server = MockModelServer::start().await.unwrap();
    let model = ScriptedModel::new(WireFormat::AnthropicMessages);
    model.install(&server);
    // `create` does not end with `_create` after a separator: no tool fits.
    model.push(ModelTurn::tool_call_ending_with("event_create", json!({})));
    let request = json!({"model": "m", "stream": false, "messages": [], "tools": [
        {"name": "create"}, {"name": "hearth_noevent_create"},
    ]});
    let (status, body) = send(&server, "POST", "/v1/messages", &request).await;
    assert_eq!(status, 200);
    assert!(!body.contains("tool_use"), "{body}");
    assert!(
        body.contains("none of the tools offered is one: create, hearth_noevent_create"),
        "{body}"
    );
}

#[tokio::test]
async fn a_paced_turn_pauses_between_the_events_of_its_stream() {
    let server = MockModelServer::start().await.unwrap();
    let model = ScriptedModel::new(WireFormat::OpenAiChat);
    model.install(&server);
    let pause = Duration::from_millis(100);
    model.push(ModelTurn::paced(&["tick 1 ", "tick 2 "], pause));
    let (status, body) = send(
        &server,
        "POST",
        "/v1/chat/completions",
        &json!({"model": "m", "stream": true, "messages": [], "tools": [{"type": "function", "function": {"name": "write"}}]}),
    )
    .await;
    assert_eq!(status, 200);
    assert!(
        body.contains("tick 1 ") && body.contains("tick 2 "),
        "{body}"
    );
    assert!(body.contains("data: [DONE]"), "{body}");
    let sent = server.timing(0).unwrap().chunks_sent_at;
    assert!(sent.len() > 2, "{sent:?}");
    for pair in sent.windows(2) {
        assert!(pair[1] - pair[0] >= pause, "{sent:?}");
    }
}
