//! The same loop over the Anthropic Messages API.

use std::sync::Arc;

use hearth_core::{Signal, StopReason, ToolCallStatus, Usage};
use hearth_test_support::{AnthropicStream, MockModelServer};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{
    MODEL, TestToolbox, agent_with, anthropic_client, default_chat, send, settings,
};

#[tokio::test]
async fn the_anthropic_path_runs_tools_and_streams_thinking() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        AnthropicStream::new(MODEL)
            .message_start(20)
            .ping()
            .thinking_block(&["Tides need ", "a lookup."])
            .text_block(&["Let me look. "])
            .tool_use_block("toolu_1", "lookup", &["{\"query\":", " \"tides\"}"])
            .message_delta("tool_use", 7)
            .message_stop(),
    );
    server.enqueue(AnthropicStream::text_answer(
        MODEL,
        &["At ", "10:00."],
        30,
        4,
    ));
    let toolbox = Arc::new(TestToolbox::default());
    let (agent, recorder) = agent_with(
        "claude",
        anthropic_client(&server),
        Arc::clone(&toolbox),
        settings(),
    );
    let chat = default_chat(&agent).await;
    let (_, outcome) = send(&agent, &chat, "tides?").await;
    assert_eq!(outcome.stop_reason, StopReason::EndTurn);
    assert_eq!(
        outcome.usage,
        Some(Usage {
            input_tokens: 50,
            output_tokens: 11,
            ..Usage::default()
        })
    );
    assert_eq!(toolbox.calls()[0].arguments, json!({"query": "tides"}));

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].path, "/v1/messages");
    let first = requests[0].json();
    assert!(
        first["system"]
            .as_str()
            .unwrap()
            .starts_with("You are Hearth's assistant"),
        "{first}"
    );
    assert_eq!(
        first["tools"][0],
        json!({"name": "lookup", "description": "Looks up a fact.", "input_schema": TestToolbox::lookup().parameters})
    );
    assert_eq!(first["system"], requests[1].json()["system"]);
    assert_eq!(
        requests[1].json()["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "tides?"}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Let me look. "},
                {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"query": "tides"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "tides: high tide at 10:00"},
            ]},
        ])
    );
    let signals = recorder.signals(&chat.chat);
    let reasoning: String = signals
        .iter()
        .filter_map(|signal| match signal {
            Signal::ReasoningDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(reasoning, "Tides need a lookup.");
    assert!(signals.iter().any(|signal| matches!(
        signal,
        Signal::ToolCallUpdated {
            status: ToolCallStatus::Completed,
            ..
        }
    )));
    assert_eq!(recorder.text(&chat.chat), "Let me look. At 10:00.");
}
