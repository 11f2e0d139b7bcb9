//! Broken connections and broken streams.

use std::time::Duration;

use futures::StreamExt;
use hearth_llm::{
    CancellationToken, FinishReason, LlmError, ModelClient, OpenAiClient, StreamEvent,
    TimeoutPhase, ToolSpec, parse_tool_arguments,
};
use hearth_test_support::model_server::Outcome;
use hearth_test_support::{Gate, MockModelServer, MockResponse, OpenAiStream};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{WAIT, drain, hello, openai, options, text, without_backoff};

fn finished() -> StreamEvent {
    StreamEvent::Finished {
        reason: FinishReason::EndTurn,
    }
}

#[tokio::test]
async fn a_reset_before_the_response_is_retried() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(MockResponse::reset());
    server.enqueue(MockResponse::close());
    server.enqueue(OpenAiStream::new("m").text("ok").finish("stop").done());
    let (events, error) = drain(openai(&server).stream(hello("m"), CancellationToken::new())).await;

    assert_eq!(error, None);
    let events = without_backoff(events);
    assert!(
        matches!(
            &events[..],
            [
                StreamEvent::Retrying { attempt: 1, .. },
                StreamEvent::Retrying { attempt: 2, .. },
                _,
                _
            ]
        ),
        "{events:?}"
    );
    for event in &events[..2] {
        let StreamEvent::Retrying { reason, .. } = event else {
            unreachable!()
        };
        assert!(
            reason.starts_with("cannot reach openai at http://127.0.0.1:"),
            "{reason}"
        );
    }
    assert_eq!(events[2..], [text("ok"), finished()]);
    assert_eq!(server.requests().len(), 3);
    assert_eq!(server.outcome(0), Some(Outcome::Reset));
    assert_eq!(server.outcome(1), Some(Outcome::Closed));
    assert_eq!(server.requests()[0].body, server.requests()[2].body);
}

#[tokio::test]
async fn a_reset_during_the_stream_is_never_retried() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        OpenAiStream::new("m")
            .role()
            .text("Half an ")
            .pause(Duration::from_millis(20))
            .reset(),
    );
    server.set_fallback(
        OpenAiStream::new("m")
            .text("second attempt")
            .finish("stop")
            .done(),
    );
    let (events, error) = drain(openai(&server).stream(hello("m"), CancellationToken::new())).await;

    assert_eq!(events, vec![text("Half an ")]);
    let error = error.unwrap();
    assert!(
        matches!(&error, LlmError::Disconnected { provider, .. } if provider == "openai"),
        "{error:?}"
    );
    assert!(error.is_retryable());
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn lines_that_are_not_sse_fields_are_ignored() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        OpenAiStream::new("m")
            .text("one ")
            .raw(": keep-alive comment\n\n")
            .raw("this line is no field at all\n\n")
            .raw("retry: soon\nid\n\n")
            .text("two")
            .finish("stop")
            .done(),
    );
    let (events, error) = drain(openai(&server).stream(hello("m"), CancellationToken::new())).await;

    assert_eq!(error, None);
    assert_eq!(events, vec![text("one "), text("two"), finished()]);
}

#[tokio::test]
async fn a_malformed_data_line_ends_the_stream_with_a_decode_error() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        OpenAiStream::new("m")
            .text("before")
            .raw("data: {\"choices\": [{\"delta\": {\"content\": \"x\"\n\n")
            .text("after")
            .done(),
    );
    let (events, error) = drain(openai(&server).stream(hello("m"), CancellationToken::new())).await;

    assert_eq!(events, vec![text("before")]);
    let Some(LlmError::Decode { provider, message }) = error else {
        panic!("expected a decode error, got {error:?}");
    };
    assert_eq!(provider, "openai");
    assert!(
        message.starts_with("invalid JSON (EOF while parsing"),
        "{message}"
    );
    assert!(
        message.ends_with("in `{\"choices\": [{\"delta\": {\"content\": \"x\"`"),
        "{message}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn truncated_tool_json_is_completed_then_repaired_and_validated() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        OpenAiStream::new("m")
            .tool_call(0, "call_1", "weather")
            .tool_arguments(0, "{\"city\": \"Par")
            .finish("tool_calls")
            .done(),
    );
    let tool = ToolSpec::new(
        "weather",
        "Weather",
        json!({"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city", "days"]}),
    );
    let response = openai(&server)
        .complete(hello("m").with_tool(tool.clone()), CancellationToken::new())
        .await
        .unwrap();

    assert_eq!(response.tool_calls[0].arguments, "{\"city\": \"Par");
    let error = parse_tool_arguments(&tool, &response.tool_calls[0].arguments).unwrap_err();
    assert_eq!(
        error.problems,
        vec!["arguments: missing required property `days`".to_owned()]
    );
    assert!(
        error
            .message
            .starts_with("The arguments for tool `weather` are invalid:\n"),
        "{}",
        error.message
    );
    let fixed = ToolSpec {
        parameters: json!({"type": "object", "required": ["city"]}),
        ..tool
    };
    assert_eq!(
        parse_tool_arguments(&fixed, &response.tool_calls[0].arguments)
            .unwrap()
            .value,
        json!({"city": "Par"})
    );
}

#[tokio::test]
async fn very_slow_tokens_arrive_one_by_one() {
    let server = MockModelServer::start().await.unwrap();
    // The server holds back everything after each token until the test has seen it.
    let gates = [Gate::new(), Gate::new(), Gate::new()];
    server.enqueue(
        OpenAiStream::new("m")
            .text("slow ")
            .hold(&gates[0])
            .text("and ")
            .hold(&gates[1])
            .text("steady")
            .hold(&gates[2])
            .finish("stop")
            .done(),
    );
    let client =
        OpenAiClient::new(options("openai", &server.url_with("/v1")).with_idle_timeout(WAIT))
            .unwrap();
    let mut stream = client.stream(hello("m"), CancellationToken::new());
    for (token, gate) in ["slow ", "and ", "steady"].into_iter().zip(&gates) {
        // Each token reaches the caller while the server sends nothing after it: a
        // client that buffered tokens would wait here until the bound.
        let event = tokio::time::timeout(WAIT, stream.next())
            .await
            .unwrap_or_else(|_| panic!("{token:?} was held back: tokens were buffered"));
        assert_eq!(event.unwrap().unwrap(), text(token));
        gate.open();
    }
    let (events, error) = drain(stream).await;
    assert_eq!(error, None);
    assert_eq!(events, vec![finished()]);
}

#[tokio::test]
async fn a_stream_that_goes_quiet_times_out_without_retrying() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        OpenAiStream::new("m")
            .text("then silence")
            .pause(Duration::from_secs(5))
            .done(),
    );
    let idle = Duration::from_millis(150);
    let client =
        OpenAiClient::new(options("openai", &server.url_with("/v1")).with_idle_timeout(idle))
            .unwrap();
    let (events, error) = drain(client.stream(hello("m"), CancellationToken::new())).await;

    assert_eq!(events, vec![text("then silence")]);
    assert_eq!(
        error,
        Some(LlmError::Timeout {
            provider: "openai".into(),
            phase: TimeoutPhase::Idle,
            after: idle
        })
    );
    assert_eq!(server.requests().len(), 1);
    assert_eq!(
        server.wait_for_outcome(0, WAIT).await,
        Some(Outcome::ClientGone)
    );
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_and_is_retried() {
    let server = MockModelServer::start().await.unwrap();
    server.set_fallback(MockResponse::hang());
    let idle = Duration::from_millis(100);
    let client =
        OpenAiClient::new(options("openai", &server.url_with("/v1")).with_idle_timeout(idle))
            .unwrap();
    let (events, error) = drain(client.stream(hello("m"), CancellationToken::new())).await;

    let timeout = LlmError::Timeout {
        provider: "openai".into(),
        phase: TimeoutPhase::Response,
        after: idle,
    };
    let retry = |attempt| StreamEvent::Retrying {
        attempt,
        delay: Duration::ZERO,
        reason: timeout.to_string(),
    };
    assert_eq!(without_backoff(events), vec![retry(1), retry(2)]);
    assert_eq!(error, Some(timeout));
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn nothing_listening_is_a_connection_error_after_retries() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let client = OpenAiClient::new(options("openai", &format!("http://{address}/v1"))).unwrap();
    let (events, error) = drain(client.stream(hello("m"), CancellationToken::new())).await;

    assert_eq!(events.len(), 2, "{events:?}");
    let Some(LlmError::Connect {
        provider,
        url,
        message,
    }) = error
    else {
        panic!("expected a connection error, got {error:?}");
    };
    assert_eq!(
        (provider.as_str(), url),
        ("openai", format!("http://{address}/v1/chat/completions"))
    );
    assert!(message.to_lowercase().contains("refused"), "{message}");
}

#[tokio::test]
async fn an_empty_stream_is_incomplete() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(MockResponse::sse(vec![]));
    server.enqueue(OpenAiStream::new("m").text("no finish"));
    let client = openai(&server);
    for expected_events in [vec![], vec![text("no finish")]] {
        let (events, error) = drain(client.stream(hello("m"), CancellationToken::new())).await;
        assert_eq!(events, expected_events);
        assert_eq!(
            error,
            Some(LlmError::Incomplete {
                provider: "openai".into()
            })
        );
    }
    assert_eq!(server.requests().len(), 2);
}
