//! OpenAI-compatible Chat Completions: what is sent and what the caller sees.

use hearth_core::Usage;
use hearth_llm::{
    ApiError, CancellationToken, ClientOptions, CompletedToolCall, FinishReason, LlmError, Message,
    ModelClient, ModelRequest, OpenAiClient, StreamEvent, ToolCall, ToolSpec, parse_tool_arguments,
};
use hearth_test_support::model_server::{openai_completion, openai_error_body};
use hearth_test_support::{MockModelServer, MockResponse, OpenAiStream};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{KEY, drain, hello, openai, reasoning, text};

fn weather_tool() -> ToolSpec {
    ToolSpec::new(
        "weather",
        "Current weather for a city",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    )
}

#[tokio::test]
async fn streams_reasoning_text_and_usage() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        OpenAiStream::new("gpt-test")
            .role()
            .reasoning_content("Think")
            .reasoning("ing.")
            .text("Hel")
            .text("lo!")
            .finish("stop")
            .usage(12, 4)
            .done(),
    );
    let request = hello("gpt-test")
        .with_system("Be brief.")
        .with_max_tokens(50)
        .with_temperature(0.7);
    let (events, error) = drain(openai(&server).stream(request, CancellationToken::new())).await;

    assert_eq!(error, None);
    assert_eq!(
        events,
        vec![
            reasoning("Think"),
            reasoning("ing."),
            text("Hel"),
            text("lo!"),
            StreamEvent::Usage(Usage {
                input_tokens: 12,
                output_tokens: 4,
                ..Usage::default()
            }),
            StreamEvent::Finished {
                reason: FinishReason::EndTurn
            },
        ]
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(sent.header("accept"), Some("text/event-stream"));
    assert_eq!(
        sent.json(),
        json!({
            "model": "gpt-test",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Say hello"},
            ],
            "max_tokens": 50,
            "temperature": 0.7,
            "stream": true,
            "stream_options": {"include_usage": true},
        })
    );
}

#[tokio::test]
async fn accumulates_parallel_tool_call_deltas_by_index() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        OpenAiStream::new("gpt-test")
            .role()
            .tool_call(0, "call_a", "weather")
            .tool_call(1, "call_b", "weather")
            .tool_arguments(0, "{\"ci")
            .tool_arguments(1, "{\"city\": \"Oslo\"}")
            .tool_arguments(0, "ty\": \"Paris\"}")
            .finish("tool_calls")
            .usage(30, 20)
            .done(),
    );
    let request = ModelRequest::new("gpt-test")
        .with_message(Message::user("Weather in Paris and Oslo?"))
        .with_tool(weather_tool());
    let (events, error) = drain(openai(&server).stream(request, CancellationToken::new())).await;

    assert_eq!(error, None);
    let completed = |index: usize, id: &str, arguments: &str| {
        StreamEvent::ToolCallCompleted(CompletedToolCall {
            index,
            id: id.into(),
            name: "weather".into(),
            arguments: arguments.into(),
        })
    };
    assert_eq!(
        events,
        vec![
            StreamEvent::ToolCallStarted {
                index: 0,
                id: "call_a".into(),
                name: "weather".into()
            },
            StreamEvent::ToolCallStarted {
                index: 1,
                id: "call_b".into(),
                name: "weather".into()
            },
            StreamEvent::ToolCallDelta {
                index: 0,
                arguments: "{\"ci".into()
            },
            StreamEvent::ToolCallDelta {
                index: 1,
                arguments: "{\"city\": \"Oslo\"}".into()
            },
            StreamEvent::ToolCallDelta {
                index: 0,
                arguments: "ty\": \"Paris\"}".into()
            },
            completed(0, "call_a", "{\"city\": \"Paris\"}"),
            completed(1, "call_b", "{\"city\": \"Oslo\"}"),
            StreamEvent::Usage(Usage {
                input_tokens: 30,
                output_tokens: 20,
                ..Usage::default()
            }),
            StreamEvent::Finished {
                reason: FinishReason::ToolUse
            },
        ]
    );
    assert_eq!(
        server.requests()[0].json()["tools"],
        json!([{"type": "function", "function": {
            "name": "weather",
            "description": "Current weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        }}])
    );
}

#[tokio::test]
async fn sends_tool_history_back_in_order() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(OpenAiStream::text_answer("gpt-test", &["Sunny."], 40, 2));
    let request = ModelRequest::new("gpt-test")
        .with_message(Message::user("Weather in Paris?"))
        .with_message(Message::Assistant {
            text: "Let me look.".into(),
            tool_calls: vec![ToolCall {
                id: "call_a".into(),
                name: "weather".into(),
                arguments: json!({"city": "Paris"}),
            }],
        })
        .with_message(Message::tool_result("call_a", "sunny, 21 °C"))
        .with_tool(weather_tool());
    let (events, error) = drain(openai(&server).stream(request, CancellationToken::new())).await;

    assert_eq!(error, None);
    assert_eq!(events.first(), Some(&text("Sunny.")));
    assert_eq!(
        server.requests()[0].json()["messages"],
        json!([
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": "Let me look.", "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_a", "content": "sunny, 21 °C"},
        ])
    );
}

#[tokio::test]
async fn empty_and_unknown_finish_reasons_are_kept() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(OpenAiStream::new("m").text("a").finish("").done());
    server.enqueue(OpenAiStream::new("m").text("b").finish("eos_token").done());
    let client = openai(&server);
    for (expected_text, reason) in [
        ("a", FinishReason::Unspecified),
        ("b", FinishReason::Other("eos_token".into())),
    ] {
        let (events, error) = drain(client.stream(hello("m"), CancellationToken::new())).await;
        assert_eq!(error, None);
        assert_eq!(
            events,
            vec![text(expected_text), StreamEvent::Finished { reason }]
        );
    }
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn falls_back_to_a_non_streaming_request_when_streaming_is_refused() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(MockResponse::json(
        400,
        &openai_error_body(
            "Streaming is not supported by this server",
            "invalid_request_error",
            None,
        ),
    ));
    server.enqueue(MockResponse::json(
        200,
        &openai_completion(
            "m",
            Some("Hi there"),
            &[("call_1", "weather", "{\"city\":\"Rome\"}")],
            "tool_calls",
        ),
    ));
    server.enqueue(MockResponse::json(
        200,
        &openai_completion("m", Some("Again"), &[], "stop"),
    ));
    let client = openai(&server);

    let (events, error) = drain(client.stream(hello("m"), CancellationToken::new())).await;
    assert_eq!(error, None);
    assert_eq!(
        events,
        vec![
            text("Hi there"),
            StreamEvent::ToolCallStarted {
                index: 0,
                id: "call_1".into(),
                name: "weather".into()
            },
            StreamEvent::ToolCallDelta {
                index: 0,
                arguments: "{\"city\":\"Rome\"}".into()
            },
            StreamEvent::ToolCallCompleted(CompletedToolCall {
                index: 0,
                id: "call_1".into(),
                name: "weather".into(),
                arguments: "{\"city\":\"Rome\"}".into(),
            }),
            StreamEvent::Usage(Usage {
                input_tokens: 9,
                output_tokens: 3,
                ..Usage::default()
            }),
            StreamEvent::Finished {
                reason: FinishReason::ToolUse
            },
        ]
    );
    // The client remembers: the next call goes straight to a non-streaming request.
    let (events, error) = drain(client.stream(hello("m"), CancellationToken::new())).await;
    assert_eq!(error, None);
    assert_eq!(events.first(), Some(&text("Again")));

    let bodies: Vec<_> = server
        .requests()
        .iter()
        .map(|request| request.json())
        .collect();
    let expected_streaming = json!({
        "model": "m", "messages": [{"role": "user", "content": "Say hello"}],
        "stream": true, "stream_options": {"include_usage": true},
    });
    let expected_whole = json!({"model": "m", "messages": [{"role": "user", "content": "Say hello"}], "stream": false});
    assert_eq!(
        bodies,
        vec![expected_streaming, expected_whole.clone(), expected_whole]
    );
    assert_eq!(
        server.requests()[1].header("accept"),
        Some("application/json")
    );
}

#[tokio::test]
async fn drops_stream_options_when_a_server_rejects_them() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(MockResponse::openai_error(
        400,
        "Unrecognized request argument supplied: stream_options",
        "invalid_request_error",
    ));
    server.enqueue(OpenAiStream::new("m").text("ok").finish("stop").done());
    let (events, error) = drain(openai(&server).stream(hello("m"), CancellationToken::new())).await;

    assert_eq!(error, None);
    assert_eq!(
        events,
        vec![
            text("ok"),
            StreamEvent::Finished {
                reason: FinishReason::EndTurn
            }
        ]
    );
    let requests = server.requests();
    assert_eq!(
        requests[0].json()["stream_options"],
        json!({"include_usage": true})
    );
    assert_eq!(
        requests[1].json()["stream_options"],
        serde_json::Value::Null
    );
    assert_eq!(requests[1].json()["stream"], json!(true));
}

#[tokio::test]
async fn switches_to_max_completion_tokens_when_asked() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(MockResponse::openai_error(
        400,
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
        "invalid_request_error",
    ));
    server.enqueue(OpenAiStream::text_answer("o-test", &["ok"], 1, 1));
    let (_, error) =
        drain(openai(&server).stream(hello("o-test").with_max_tokens(9), CancellationToken::new()))
            .await;

    assert_eq!(error, None);
    let second = server.requests()[1].json();
    assert_eq!(
        (
            second["max_tokens"].clone(),
            second["max_completion_tokens"].clone()
        ),
        (serde_json::Value::Null, json!(9))
    );
}

#[tokio::test]
async fn a_server_that_ignores_stream_true_is_read_as_a_whole_answer() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(MockResponse::json(
        200,
        &openai_completion("m", Some("Whole"), &[], "stop"),
    ));
    let (events, error) = drain(openai(&server).stream(hello("m"), CancellationToken::new())).await;

    assert_eq!(error, None);
    assert_eq!(
        events,
        vec![
            text("Whole"),
            StreamEvent::Usage(Usage {
                input_tokens: 9,
                output_tokens: 3,
                ..Usage::default()
            }),
            StreamEvent::Finished {
                reason: FinishReason::EndTurn
            },
        ]
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_error_object_inside_the_stream_ends_it_with_the_providers_words() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        OpenAiStream::new("m")
            .text("Par")
            .chunk(&openai_error_body(
                "Upstream provider overloaded",
                "server_error",
                Some("502"),
            ))
            .with_request_id(),
    );
    let (events, error) = drain(openai(&server).stream(hello("m"), CancellationToken::new())).await;

    assert_eq!(events, vec![text("Par")]);
    let error = error.unwrap();
    assert_eq!(
        error,
        LlmError::Api(Box::new(ApiError {
            provider: "openai".into(),
            status: None,
            error_type: Some("server_error".into()),
            code: Some("502".into()),
            message: "Upstream provider overloaded".into(),
            request_id: Some("req_stream".into()),
        }))
    );
    assert!(error.is_retryable());
    assert_eq!(server.requests().len(), 1);
}

trait WithRequestId {
    fn with_request_id(self) -> MockResponse;
}

impl WithRequestId for OpenAiStream {
    fn with_request_id(self) -> MockResponse {
        MockResponse::from(self).with_header("x-request-id", "req_stream")
    }
}

#[tokio::test]
async fn lists_models_and_sends_no_key_to_keyless_servers() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(MockResponse::json(200, &json!({"object": "list", "data": [{"id": "llama3.2", "object": "model"}, {"id": "qwen3", "object": "model"}]})));
    server.enqueue(OpenAiStream::text_answer("llama3.2", &["hi"], 1, 1));
    let client =
        OpenAiClient::new(ClientOptions::new("local", &server.url_with("/v1")).unwrap()).unwrap();

    assert_eq!(
        client.list_models(CancellationToken::new()).await.unwrap(),
        vec!["llama3.2".to_owned(), "qwen3".to_owned()]
    );
    let (_, error) = drain(client.stream(hello("llama3.2"), CancellationToken::new())).await;
    assert_eq!(error, None);

    let requests = server.requests();
    assert_eq!(
        (requests[0].method.as_str(), requests[0].path.as_str()),
        ("GET", "/v1/models")
    );
    assert!(
        requests
            .iter()
            .all(|request| request.header("authorization").is_none())
    );
}

#[tokio::test]
async fn complete_assembles_the_response_and_arguments_parse() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        OpenAiStream::new("m")
            .text("Checking")
            .tool_call(0, "call_1", "weather")
            .tool_arguments(0, "```json\n{'city': 'Lima',}\n```")
            .finish("tool_calls")
            .done(),
    );
    let request = hello("m").with_tool(weather_tool());
    let response = openai(&server)
        .complete(request.clone(), CancellationToken::new())
        .await
        .unwrap();

    assert_eq!(response.text, "Checking");
    assert_eq!(response.finish_reason, Some(FinishReason::ToolUse));
    let call = &response.tool_calls[0];
    let tool = request.tool(&call.name).unwrap();
    assert_eq!(
        parse_tool_arguments(tool, &call.arguments).unwrap().value,
        json!({"city": "Lima"})
    );
}
