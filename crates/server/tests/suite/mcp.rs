//! Hearth's tools through `/mcp`, with an MCP client: read tools run, mutating tools
//! only stage proposals, and the endpoint sits behind the token.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use hearth_core::{
    ProposalId, StagedProposal, ToolCallContext, ToolCallOutcome, ToolDescription, Toolbox,
};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use super::support::{Setup, TestServer};

/// A toolbox with one read tool and one mutating tool that only stages.
#[derive(Default)]
pub struct TestTools {
    pub calls: Mutex<Vec<(String, ToolCallContext)>>,
}

impl Toolbox for TestTools {
    fn tools(&self) -> Vec<ToolDescription> {
        vec![
            ToolDescription {
                name: "echo".into(),
                description: "Says it back.".into(),
                parameters: json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
                mutates: false,
            },
            ToolDescription {
                name: "note_create".into(),
                description: "Creates a note.".into(),
                parameters: json!({"type": "object", "properties": {"title": {"type": "string"}}}),
                mutates: true,
            },
        ]
    }

    fn call<'a>(
        &'a self,
        call: &'a ToolCallContext,
        name: &'a str,
        arguments: Value,
    ) -> BoxFuture<'a, ToolCallOutcome> {
        Box::pin(async move {
            self.calls
                .lock()
                .unwrap()
                .push((name.to_owned(), call.clone()));
            match name {
                "echo" => ToolCallOutcome {
                    content: arguments["text"].as_str().unwrap_or_default().to_owned(),
                    is_error: false,
                    proposal: None,
                },
                "note_create" => ToolCallOutcome {
                    content: "staged for approval".into(),
                    is_error: false,
                    proposal: Some(StagedProposal {
                        id: ProposalId::parse("p-1").unwrap(),
                        summary: "Create note".into(),
                    }),
                },
                other => ToolCallOutcome {
                    content: format!("no tool `{other}`"),
                    is_error: true,
                    proposal: None,
                },
            }
        })
    }
}

fn arguments(value: Value) -> serde_json::Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => panic!("not an object"),
    }
}

#[tokio::test]
async fn an_mcp_client_lists_and_calls_hearths_tools() {
    let tools = Arc::new(TestTools::default());
    let server = TestServer::start_with(Setup {
        toolbox: Some(tools.clone()),
        ..Setup::default()
    })
    .await;
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", server.url))
            .auth_header(server.token.expose()),
    );
    let client = ().serve(transport).await.unwrap();
    let listed = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = listed.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(names, ["echo", "note_create"]);
    let note = &listed[1];
    assert_eq!(
        note.annotations.as_ref().and_then(|a| a.read_only_hint),
        Some(false)
    );
    assert!(note.description.as_deref().unwrap().contains("approval"));

    let echoed = client
        .call_tool(
            CallToolRequestParams::new("echo").with_arguments(arguments(json!({"text": "hi"}))),
        )
        .await
        .unwrap();
    assert_eq!(echoed.is_error, Some(false));
    assert_eq!(
        serde_json::to_value(&echoed.content).unwrap()[0]["text"],
        "hi"
    );

    let staged = client
        .call_tool(
            CallToolRequestParams::new("note_create")
                .with_arguments(arguments(json!({"title": "x"}))),
        )
        .await
        .unwrap();
    assert_eq!(
        staged.structured_content.unwrap()["proposalId"],
        json!("p-1")
    );
    let calls = tools.calls.lock().unwrap().clone();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].1.session.harness().as_str(), "mcp");
    assert_eq!(calls[0].1.session, calls[1].1.session);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn mcp_without_the_token_is_refused() {
    let server = TestServer::start_with(Setup {
        toolbox: Some(Arc::new(TestTools::default())),
        ..Setup::default()
    })
    .await;
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", server.url))
            .auth_header("0".repeat(64)),
    );
    assert!(().serve(transport).await.is_err());
}

/// An MCP client of the lent-tools endpoint with `token`, if the endpoint lets it in.
async fn lent_client(
    endpoint: &hearth_server::LentEndpoint,
    token: &str,
) -> Option<rmcp::service::RunningService<rmcp::RoleClient, ()>> {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(endpoint.url().to_owned())
            .auth_header(token.to_owned()),
    );
    ().serve(transport).await.ok()
}

#[tokio::test]
async fn the_lent_tools_endpoint_serves_each_chat_by_its_token_and_nobody_else() {
    let tools = Arc::new(TestTools::default());
    let stop = tokio_util::sync::CancellationToken::new();
    let endpoint = hearth_server::LentEndpoint::start(tools.clone(), stop.clone()).unwrap();
    assert!(endpoint.url().starts_with("http://127.0.0.1:"));
    let chat = |name: &str| {
        hearth_core::ChatUri::parse(&format!("hearth-chat:claude/{name}/default")).unwrap()
    };
    let (first, second) = (chat("first-session"), chat("second-session"));
    let first_token = endpoint.token_for(&first).unwrap();
    assert_eq!(endpoint.token_for(&first).unwrap(), first_token);
    let second_token = endpoint.token_for(&second).unwrap();
    assert_ne!(first_token, second_token);

    for (token, expected) in [(&first_token, &first), (&second_token, &second)] {
        let client = lent_client(&endpoint, token).await.expect("a known token");
        client
            .call_tool(
                CallToolRequestParams::new("note_create")
                    .with_arguments(json!({"title": "x"}).as_object().unwrap().clone()),
            )
            .await
            .unwrap();
        let calls = tools.calls.lock().unwrap().clone();
        let (name, context) = calls.last().unwrap();
        assert_eq!(name, "note_create");
        assert_eq!(&context.chat, expected);
        assert_eq!(context.session, expected.session());
        client.cancel().await.unwrap();
    }
    // No token, an unknown one, a revoked one: refused before any tool.
    let calls = tools.calls.lock().unwrap().len();
    assert!(lent_client(&endpoint, &"0".repeat(64)).await.is_none());
    let no_token = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(endpoint.url().to_owned()),
    );
    assert!(().serve(no_token).await.is_err());
    endpoint.revoke(&first);
    assert!(lent_client(&endpoint, &first_token).await.is_none());
    assert!(lent_client(&endpoint, &second_token).await.is_some());
    assert_eq!(tools.calls.lock().unwrap().len(), calls);
    stop.cancel();
}

/// The JSON-RPC message with `id` streamed in answer to one request of the lent-tools
/// endpoint; every event of the stream up to it must carry a JSON-RPC message (no
/// event with empty data, such as an SSE priming event).
async fn streamed_answer(mut response: reqwest::Response, id: u64) -> Value {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut text = String::new();
    loop {
        let chunk = tokio::time::timeout_at(deadline, response.chunk())
            .await
            .unwrap_or_else(|_| panic!("no answer {id} within 10 s: {text:?}"))
            .unwrap();
        let Some(chunk) = chunk else {
            panic!("the stream ended without answer {id}: {text:?}");
        };
        text.push_str(std::str::from_utf8(&chunk).unwrap());
        // Whole events only: they end with an empty line.
        let Some(end) = text.rfind("\n\n") else {
            continue;
        };
        for line in text[..end].lines() {
            let Some(data) = line.strip_prefix("data:") else {
                continue;
            };
            let message: Value = serde_json::from_str(data.trim())
                .unwrap_or_else(|error| panic!("an event that is not JSON ({error}): {text:?}"));
            if message["id"] == json!(id) {
                return message;
            }
        }
    }
}

#[tokio::test]
async fn the_lent_tools_endpoint_streams_only_json_rpc_messages() {
    let tools = Arc::new(TestTools::default());
    let stop = tokio_util::sync::CancellationToken::new();
    let endpoint = hearth_server::LentEndpoint::start(tools, stop.clone()).unwrap();
    let chat = hearth_core::ChatUri::parse("hearth-chat:gemini/a-session/default").unwrap();
    let token = endpoint.token_for(&chat).unwrap();
    let client = reqwest::Client::new();
    let post = |session: Option<&str>, body: Value| {
        let mut request = client
            .post(endpoint.url())
            .bearer_auth(&token)
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };
    let initialize = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "a client", "version": "1"},
        },
    });
    let response = post(None, initialize).await.unwrap();
    assert_eq!(response.status(), 200);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let answer = streamed_answer(response, 0).await;
    assert_eq!(answer["result"]["serverInfo"]["name"], "hearth");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let response = post(Some(&session), initialized).await.unwrap();
    assert_eq!(response.status(), 202);
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    let response = post(Some(&session), list).await.unwrap();
    let answer = streamed_answer(response, 1).await;
    assert_eq!(answer["result"]["tools"][1]["name"], "note_create");
    stop.cancel();
}
