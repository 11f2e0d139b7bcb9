//! Anthropic Messages: what is sent and what the caller sees.

use hearth_core::Usage;
use hearth_llm::{
    ANTHROPIC_VERSION, ApiError, CancellationToken, CompletedToolCall, FinishReason, LlmError,
    Message, ModelClient, ModelRequest, StreamEvent, ToolCall, ToolSpec,
};
use hearth_test_support::{AnthropicStream, MockModelServer, MockResponse};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{KEY, anthropic, drain, hello, reasoning, text};

#[tokio::test]
async fn streams_thinking_text_tool_use_and_usage() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        AnthropicStream::new("claude-test")
            .message_start(25)
            .ping()
            .thinking_block(&["The user ", "wants weather."])
            .text_block(&["Let me ", "check."])
            .tool_use_block("toolu_1", "weather", &["{\"city\": ", "\"Paris\"}"])
            .message_delta("tool_use", 40)
            .message_stop(),
    );
    let request = ModelRequest::new("claude-test")
        .with_system("You are Hearth.")
        .with_message(Message::user("Earlier question"))
        .with_message(Message::Assistant {
            text: String::new(),
            tool_calls: vec![ToolCall {
                id: "toolu_0".into(),
                name: "weather".into(),
                arguments: json!({"city": "Rome"}),
            }],
        })
        .with_message(Message::tool_error("toolu_0", "service down"))
        .with_message(Message::user("Weather in Paris?"))
        .with_tool(ToolSpec::new(
            "weather",
            "Weather",
            json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        ))
        .with_max_tokens(1024);
    let (events, error) = drain(anthropic(&server).stream(request, CancellationToken::new())).await;

    assert_eq!(error, None);
    let usage = |output_tokens| {
        StreamEvent::Usage(Usage {
            input_tokens: 25,
            output_tokens,
            ..Usage::default()
        })
    };
    assert_eq!(
        events,
        vec![
            usage(1),
            reasoning("The user "),
            reasoning("wants weather."),
            text("Let me "),
            text("check."),
            StreamEvent::ToolCallStarted {
                index: 0,
                id: "toolu_1".into(),
                name: "weather".into()
            },
            StreamEvent::ToolCallDelta {
                index: 0,
                arguments: "{\"city\": ".into()
            },
            StreamEvent::ToolCallDelta {
                index: 0,
                arguments: "\"Paris\"}".into()
            },
            StreamEvent::ToolCallCompleted(CompletedToolCall {
                index: 0,
                id: "toolu_1".into(),
                name: "weather".into(),
                arguments: "{\"city\": \"Paris\"}".into(),
            }),
            usage(40),
            StreamEvent::Finished {
                reason: FinishReason::ToolUse
            },
        ]
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(sent.header("x-api-key"), Some(KEY));
    assert_eq!(sent.header("anthropic-version"), Some(ANTHROPIC_VERSION));
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(
        sent.json(),
        json!({
            "model": "claude-test",
            "max_tokens": 1024,
            "system": "You are Hearth.",
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Earlier question"}]},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_0", "name": "weather", "input": {"city": "Rome"}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_0", "content": "service down", "is_error": true},
                    {"type": "text", "text": "Weather in Paris?"},
                ]},
            ],
            "tools": [{"name": "weather", "description": "Weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}],
            "stream": true,
        })
    );
}

#[tokio::test]
async fn an_error_event_after_200_ends_the_stream_without_retrying() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        MockResponse::from(
            AnthropicStream::new("claude-test")
                .message_start(5)
                .text_block(&["Partial"])
                .error("overloaded_error", "Overloaded"),
        )
        .with_header("request-id", "req_011"),
    );
    let (events, error) =
        drain(anthropic(&server).stream(hello("claude-test"), CancellationToken::new())).await;

    assert_eq!(
        events,
        vec![
            StreamEvent::Usage(Usage {
                input_tokens: 5,
                output_tokens: 1,
                ..Usage::default()
            }),
            text("Partial")
        ]
    );
    let error = error.unwrap();
    assert_eq!(
        error,
        LlmError::Api(Box::new(ApiError {
            provider: "anthropic".into(),
            status: None,
            error_type: Some("overloaded_error".into()),
            code: None,
            message: "Overloaded".into(),
            request_id: Some("req_011".into()),
        }))
    );
    assert_eq!(
        error.to_string(),
        "anthropic reported an error during the response (overloaded_error): Overloaded [request id req_011]"
    );
    assert!(error.is_retryable());
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn unknown_events_and_deltas_are_ignored() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        AnthropicStream::new("claude-test")
            .message_start(1)
            .event("future_event", &json!({"type": "future_event", "x": 1}))
            .block_start(
                0,
                &json!({"type": "server_tool_use", "id": "s1", "name": "web_search"}),
            )
            .block_delta(0, &json!({"type": "citations_delta", "citation": {}}))
            .block_stop(0)
            .text_block(&["Done"])
            .message_delta("end_turn", 2)
            .message_stop(),
    );
    let (events, error) =
        drain(anthropic(&server).stream(hello("claude-test"), CancellationToken::new())).await;

    assert_eq!(error, None);
    assert_eq!(
        events,
        vec![
            StreamEvent::Usage(Usage {
                input_tokens: 1,
                output_tokens: 1,
                ..Usage::default()
            }),
            text("Done"),
            StreamEvent::Usage(Usage {
                input_tokens: 1,
                output_tokens: 2,
                ..Usage::default()
            }),
            StreamEvent::Finished {
                reason: FinishReason::EndTurn
            },
        ]
    );
}

#[tokio::test]
async fn a_tool_call_without_argument_deltas_has_empty_object_arguments() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        AnthropicStream::new("claude-test")
            .message_start(1)
            .tool_use_block("toolu_9", "now", &[])
            .message_delta("tool_use", 3)
            .message_stop(),
    );
    let response = anthropic(&server)
        .complete(hello("claude-test"), CancellationToken::new())
        .await
        .unwrap();

    assert_eq!(
        response.tool_calls,
        vec![CompletedToolCall {
            index: 0,
            id: "toolu_9".into(),
            name: "now".into(),
            arguments: "{}".into()
        }]
    );
}

#[tokio::test]
async fn lists_models_with_the_api_headers() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(MockResponse::json(
        200,
        &json!({"data": [{"type": "model", "id": "claude-sonnet-4-5", "display_name": "Claude Sonnet 4.5"}], "has_more": false}),
    ));
    let models = anthropic(&server)
        .list_models(CancellationToken::new())
        .await
        .unwrap();

    assert_eq!(models, vec!["claude-sonnet-4-5".to_owned()]);
    let sent = &server.requests()[0];
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("GET", "/v1/models?limit=1000")
    );
    assert_eq!(sent.header("x-api-key"), Some(KEY));
    assert_eq!(sent.header("anthropic-version"), Some(ANTHROPIC_VERSION));
}
