//! `/tool`, `/tool-updates`, and `/mcp-call` against the binary's own MCP server mode.

use agent_client_protocol::v1::schema::{
    EnvVariable, McpServer, McpServerStdio, NewSessionRequest, SessionUpdate, StopReason,
    ToolCallStatus, ToolKind,
};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{AgentProcess, ClientSetup, chunks, within};

#[tokio::test]
async fn a_tool_call_runs_to_completion() {
    let mut agent = AgentProcess::start(&[]);
    agent
        .client(ClientSetup::default(), async |mut harness| {
            harness.initialize().await;
            let session = harness.new_session("/work".as_ref()).await;
            harness.next_update().await;
            let answer = harness.prompt(&session, "/tool").await;
            assert_eq!(answer.stop_reason, StopReason::EndTurn);
            let updates = harness.received();
            let SessionUpdate::ToolCall(call) = &updates[0] else {
                panic!("a tool call comes first: {updates:?}");
            };
            assert_eq!(call.title, "Look something up");
            assert_eq!(call.kind, ToolKind::Fetch);
            assert_eq!(call.status, ToolCallStatus::Pending);
            let statuses: Vec<Option<ToolCallStatus>> = updates[1..3]
                .iter()
                .map(|update| match update {
                    SessionUpdate::ToolCallUpdate(update) => update.fields.status,
                    _ => None,
                })
                .collect();
            assert_eq!(
                statuses,
                vec![
                    Some(ToolCallStatus::InProgress),
                    Some(ToolCallStatus::Completed)
                ]
            );
            assert_eq!(chunks(&updates), vec![("agent", "tool done".to_owned())]);
        })
        .await;
    assert!(agent.finish().await.status.success());
}

#[tokio::test]
async fn tool_updates_go_to_the_calls_in_turn_then_end_each() {
    let mut agent = AgentProcess::start(&[]);
    agent
        .client(ClientSetup::default(), async |mut harness| {
            harness.initialize().await;
            let session = harness.new_session("/work".as_ref()).await;
            harness.next_update().await;
            let answer = harness.prompt(&session, "/tool-updates 3 2").await;
            assert_eq!(answer.stop_reason, StopReason::EndTurn);
            let updates = harness.received();
            let shown: Vec<String> = updates
                .iter()
                .map(|update| match update {
                    SessionUpdate::ToolCall(call) => {
                        format!("start {} {:?}", call.title, call.status)
                    }
                    SessionUpdate::ToolCallUpdate(update) => {
                        let text = serde_json::to_value(&update.fields.content)
                            .unwrap()
                            .pointer("/0/content/text")
                            .and_then(serde_json::Value::as_str)
                            .unwrap_or_default()
                            .to_owned();
                        format!("{:?} {}", update.fields.status, text.trim_end())
                    }
                    other => format!("{other:?}"),
                })
                .take(7)
                .collect();
            assert_eq!(
                shown,
                [
                    "start Build part 0 InProgress",
                    "start Build part 1 InProgress",
                    "Some(InProgress) update 0 of call 0",
                    "Some(InProgress) update 1 of call 1",
                    "Some(InProgress) update 2 of call 0",
                    "Some(Completed) done 0",
                    "Some(Completed) done 1",
                ]
            );
            assert_eq!(
                chunks(&updates),
                vec![("agent", "tool updates done".to_owned())]
            );
        })
        .await;
    assert!(agent.finish().await.status.success());
}

#[tokio::test]
async fn mcp_call_reaches_a_stdio_server_with_its_environment() {
    let server = McpServerStdio::new("tools", env!("CARGO_BIN_EXE_hearth-acp-test-agent"))
        .args(vec!["mcp-server".to_owned()])
        .env(vec![EnvVariable::new("GREETING", "hi there")]);
    let mut agent = AgentProcess::start(&[]);
    agent
        .client(ClientSetup::default(), async |mut harness| {
            harness.initialize().await;
            let session = within(
                harness
                    .connection
                    .send_request(
                        NewSessionRequest::new("/work")
                            .mcp_servers(vec![McpServer::Stdio(server.clone())]),
                    )
                    .block_task(),
            )
            .await
            .unwrap()
            .session_id;
            harness.next_update().await;

            harness.prompt(&session, "/mcp").await;
            let listing: serde_json::Value =
                serde_json::from_str(&chunks(&harness.received())[0].1).unwrap();
            assert_eq!(
                listing,
                json!([{
                    "name": "tools",
                    "type": "stdio",
                    "command": env!("CARGO_BIN_EXE_hearth-acp-test-agent"),
                    "args": ["mcp-server"],
                }])
            );

            harness
                .prompt(&session, r#"/mcp-call tools echo {"text": "ping pong"}"#)
                .await;
            harness
                .prompt(&session, r#"/mcp-call tools env {"name": "GREETING"}"#)
                .await;
            harness.prompt(&session, "/mcp-call nowhere echo {}").await;
            let replies: Vec<String> = chunks(&harness.received())
                .into_iter()
                .map(|(_, text)| text)
                .collect();
            assert_eq!(replies[0], "ping pong");
            assert_eq!(replies[1], "hi there");
            assert!(
                replies[2]
                    .starts_with("mcp-call failed: this session has no MCP server named nowhere"),
                "{}",
                replies[2]
            );
        })
        .await;
    assert!(agent.finish().await.status.success());
}
