//! Retries as the official SDKs do them: status rules, `x-should-retry`, `retry-after`
//! in milliseconds, seconds or as a date, the cap, the budget.

use std::time::{Duration, SystemTime};

use futures::StreamExt;

use hearth_llm::{
    ApiError, CancellationToken, ClientOptions, FinishReason, LlmError, ModelClient, OpenAiClient,
    RetryPolicy, StreamEvent,
};
use hearth_test_support::{AnthropicStream, MockModelServer, MockResponse, OpenAiStream};
use pretty_assertions::assert_eq;

use super::support::{KEY, WAIT, anthropic, drain, hello, openai, options, text, without_backoff};

fn ok_stream() -> OpenAiStream {
    OpenAiStream::new("m").text("ok").finish("stop").done()
}

fn finished() -> StreamEvent {
    StreamEvent::Finished {
        reason: FinishReason::EndTurn,
    }
}

fn api_error(status: u16, message: &str, request_id: Option<&str>) -> Box<ApiError> {
    Box::new(ApiError {
        provider: "openai".into(),
        status: Some(status),
        error_type: Some("test_error".into()),
        code: None,
        message: message.into(),
        request_id: request_id.map(str::to_owned),
    })
}

fn rejection(status: u16, message: &str) -> MockResponse {
    MockResponse::openai_error(status, message, "test_error").with_header("x-request-id", "req_1")
}

/// Every recorded request has the same body as the first one.
fn assert_identical_bodies(server: &MockModelServer, count: usize) {
    let requests = server.requests();
    assert_eq!(requests.len(), count);
    for request in &requests {
        assert_eq!(request.body, requests[0].body);
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
    }
}

#[tokio::test]
async fn rate_limit_with_retry_after_ms_waits_exactly_that_long() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        rejection(429, "Rate limit reached")
            .with_header("retry-after-ms", "30")
            .with_header("retry-after", "5"),
    );
    server.enqueue(ok_stream());
    let (events, error) = drain(openai(&server).stream(hello("m"), CancellationToken::new())).await;

    assert_eq!(error, None);
    assert_eq!(
        events,
        vec![
            StreamEvent::Retrying {
                attempt: 1,
                delay: Duration::from_millis(30),
                reason:
                    "openai answered HTTP 429 (test_error): Rate limit reached [request id req_1]"
                        .into(),
            },
            text("ok"),
            finished(),
        ]
    );
    assert_identical_bodies(&server, 2);
    let requests = server.requests();
    assert!(requests[1].received_at - requests[0].received_at >= Duration::from_millis(30));
}

#[tokio::test]
async fn rate_limit_with_retry_after_as_an_http_date() {
    let server = MockModelServer::start().await.unwrap();
    let date = (chrono::Utc::now() + chrono::Duration::seconds(2))
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    let retry_at = SystemTime::from(chrono::DateTime::parse_from_rfc2822(&date).unwrap());
    server.enqueue(rejection(429, "slow down").with_header("retry-after", &date));
    server.enqueue(ok_stream());
    let asked = SystemTime::now();
    let mut stream = openai(&server).stream(hello("m"), CancellationToken::new());
    let first = tokio::time::timeout(WAIT, stream.next())
        .await
        .expect("no first event")
        .expect("the stream ended")
        .unwrap();
    let told = SystemTime::now();
    let (events, error) = drain(stream).await;

    assert_eq!(error, None);
    let StreamEvent::Retrying {
        attempt: 1, delay, ..
    } = first
    else {
        panic!("expected a retry first: {first:?}");
    };
    // The wait runs to the date, from a moment between the request and the event
    // (however long that took): within these bounds, not the backoff's milliseconds.
    let longest = retry_at.duration_since(asked).unwrap();
    let shortest = retry_at.duration_since(told).unwrap_or_default();
    assert!(
        shortest <= delay && delay <= longest,
        "{delay:?} is not between {shortest:?} and {longest:?}"
    );
    assert_eq!(events, [text("ok"), finished()]);
    assert_identical_bodies(&server, 2);
}

#[tokio::test]
async fn retry_after_beyond_the_cap_fails_at_once() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(rejection(429, "quota").with_header("retry-after", "999"));
    let (events, error) = drain(openai(&server).stream(hello("m"), CancellationToken::new())).await;

    assert_eq!(events, vec![]);
    let error = error.unwrap();
    assert_eq!(
        error,
        LlmError::RateLimited {
            error: api_error(429, "quota", Some("req_1")),
            retry_after: Duration::from_secs(999)
        }
    );
    assert_eq!(
        error.to_string(),
        "rate limited; retry after 16m 39s (openai answered HTTP 429 (test_error): quota [request id req_1])"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn x_should_retry_false_overrides_a_retryable_status() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(rejection(503, "maintenance").with_header("x-should-retry", "false"));
    let (events, error) = drain(openai(&server).stream(hello("m"), CancellationToken::new())).await;

    assert_eq!(events, vec![]);
    assert_eq!(
        error,
        Some(LlmError::Api(api_error(503, "maintenance", Some("req_1"))))
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn x_should_retry_true_overrides_a_final_status() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(rejection(400, "try again").with_header("x-should-retry", "true"));
    server.enqueue(ok_stream());
    let (events, error) = drain(openai(&server).stream(hello("m"), CancellationToken::new())).await;

    assert_eq!(error, None);
    assert_eq!(
        without_backoff(events),
        vec![
            StreamEvent::Retrying {
                attempt: 1,
                delay: Duration::ZERO,
                reason: "openai answered HTTP 400 (test_error): try again [request id req_1]"
                    .into(),
            },
            text("ok"),
            finished(),
        ]
    );
    assert_identical_bodies(&server, 2);
}

#[tokio::test]
async fn timeouts_conflicts_and_overload_are_retried_with_backoff() {
    for status in [408, 409, 500, 502, 503, 529] {
        let server = MockModelServer::start().await.unwrap();
        server.enqueue(rejection(status, "transient"));
        server.enqueue(ok_stream());
        let (events, error) =
            drain(openai(&server).stream(hello("m"), CancellationToken::new())).await;

        assert_eq!(error, None, "{status}");
        assert_eq!(
            without_backoff(events),
            vec![
                StreamEvent::Retrying {
                    attempt: 1,
                    delay: Duration::ZERO,
                    reason: format!(
                        "openai answered HTTP {status} (test_error): transient [request id req_1]"
                    ),
                },
                text("ok"),
                finished(),
            ],
            "{status}"
        );
        assert_identical_bodies(&server, 2);
    }
}

#[tokio::test]
async fn client_errors_are_never_retried() {
    for status in [400, 401, 403, 404, 422] {
        let server = MockModelServer::start().await.unwrap();
        server.enqueue(rejection(status, "no"));
        let (events, error) =
            drain(openai(&server).stream(hello("m"), CancellationToken::new())).await;

        assert_eq!(events, vec![], "{status}");
        assert_eq!(
            error,
            Some(LlmError::Api(api_error(status, "no", Some("req_1")))),
            "{status}"
        );
        assert_eq!(server.requests().len(), 1, "{status}");
    }
}

#[tokio::test]
async fn the_retry_budget_is_max_retries_plus_one_attempts() {
    let server = MockModelServer::start().await.unwrap();
    server.set_fallback(rejection(500, "boom"));
    let (events, error) = drain(openai(&server).stream(hello("m"), CancellationToken::new())).await;

    let retry = |attempt| StreamEvent::Retrying {
        attempt,
        delay: Duration::ZERO,
        reason: "openai answered HTTP 500 (test_error): boom [request id req_1]".into(),
    };
    assert_eq!(without_backoff(events), vec![retry(1), retry(2)]);
    assert_eq!(
        error,
        Some(LlmError::Api(api_error(500, "boom", Some("req_1"))))
    );
    assert_identical_bodies(&server, 3);

    let server = MockModelServer::start().await.unwrap();
    server.set_fallback(rejection(500, "boom"));
    let no_retries = OpenAiClient::new(
        options("openai", &server.url_with("/v1")).with_retry(RetryPolicy::none()),
    )
    .unwrap();
    let (events, error) = drain(no_retries.stream(hello("m"), CancellationToken::new())).await;
    assert_eq!(
        (events, error.and_then(|error| error.status())),
        (vec![], Some(500))
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn anthropic_overload_is_retried() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        MockResponse::anthropic_error(529, "overloaded_error", "Overloaded")
            .with_header("request-id", "req_a"),
    );
    server.enqueue(AnthropicStream::text_answer("claude-test", &["ok"], 3, 1));
    let (events, error) =
        drain(anthropic(&server).stream(hello("claude-test"), CancellationToken::new())).await;

    assert_eq!(error, None);
    assert_eq!(
        without_backoff(events)[0],
        StreamEvent::Retrying {
            attempt: 1,
            delay: Duration::ZERO,
            reason: "anthropic answered HTTP 529 (overloaded_error): Overloaded [request id req_a]"
                .into(),
        }
    );
    assert_eq!(server.requests().len(), 2);
    assert_eq!(server.requests()[0].body, server.requests()[1].body);
}

#[tokio::test]
async fn the_default_policy_is_two_retries_with_half_second_backoff() {
    let policy = ClientOptions::new("x", "http://127.0.0.1:1").unwrap().retry;
    assert_eq!(
        policy,
        RetryPolicy {
            max_retries: 2,
            initial_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
        }
    );
}
