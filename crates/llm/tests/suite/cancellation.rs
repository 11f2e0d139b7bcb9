//! Aborting a model call closes its connection at once.

use std::time::Duration;

use futures::StreamExt;
use hearth_llm::{CancellationToken, LlmError, ModelClient};
use hearth_test_support::model_server::Outcome;
use hearth_test_support::{AnthropicStream, MockModelServer, MockResponse, OpenAiStream};
use pretty_assertions::assert_eq;

use super::support::{WAIT, anthropic, drain, hello, openai, text};

fn endless(model: &str) -> OpenAiStream {
    OpenAiStream::new(model)
        .role()
        .text("first")
        .pause(Duration::from_secs(30))
        .text("never")
}

#[tokio::test]
async fn cancelling_the_token_aborts_the_request() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(endless("m"));
    let cancel = CancellationToken::new();
    let mut stream = openai(&server).stream(hello("m"), cancel.clone());

    assert_eq!(
        tokio::time::timeout(WAIT, stream.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap(),
        text("first")
    );
    cancel.cancel();
    assert_eq!(
        tokio::time::timeout(WAIT, stream.next())
            .await
            .unwrap()
            .unwrap(),
        Err(LlmError::Cancelled)
    );
    assert!(
        tokio::time::timeout(WAIT, stream.next())
            .await
            .unwrap()
            .is_none()
    );
    drop(stream);
    assert_eq!(
        server.wait_for_outcome(0, WAIT).await,
        Some(Outcome::ClientGone)
    );
}

#[tokio::test]
async fn dropping_the_stream_aborts_the_request() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        AnthropicStream::new("claude-test")
            .message_start(1)
            .text_block(&["first"])
            .pause(Duration::from_secs(30))
            .message_stop(),
    );
    let mut stream = anthropic(&server).stream(hello("claude-test"), CancellationToken::new());
    while let Some(event) = tokio::time::timeout(WAIT, stream.next()).await.unwrap() {
        if event.unwrap() == text("first") {
            break;
        }
    }
    drop(stream);
    assert_eq!(
        server.wait_for_outcome(0, WAIT).await,
        Some(Outcome::ClientGone)
    );
}

#[tokio::test]
async fn cancelling_while_waiting_for_headers_aborts() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(MockResponse::hang());
    let cancel = CancellationToken::new();
    let mut stream = openai(&server).stream(hello("m"), cancel.clone());
    // Cancelled once the request has reached the server, which never answers it.
    let cancel_once_asked = async {
        let asked = server.wait_for_request(WAIT, |_| true).await;
        assert!(asked.is_some(), "the request never reached the server");
        cancel.cancel();
    };
    let (next, ()) = tokio::join!(tokio::time::timeout(WAIT, stream.next()), cancel_once_asked);
    assert_eq!(next.unwrap(), Some(Err(LlmError::Cancelled)));
    drop(stream);
    assert_eq!(
        server.wait_for_outcome(0, WAIT).await,
        Some(Outcome::ClientGone)
    );
}

#[tokio::test]
async fn cancelling_during_a_retry_wait_stops_at_once() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        MockResponse::openai_error(429, "slow down", "rate_limit").with_header("retry-after", "30"),
    );
    let cancel = CancellationToken::new();
    let mut stream = openai(&server).stream(hello("m"), cancel.clone());

    let first = tokio::time::timeout(WAIT, stream.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        matches!(first, hearth_llm::StreamEvent::Retrying { attempt: 1, delay, .. } if delay == Duration::from_secs(30))
    );
    cancel.cancel();
    assert_eq!(
        tokio::time::timeout(WAIT, stream.next()).await.unwrap(),
        Some(Err(LlmError::Cancelled))
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_cancelled_token_sends_nothing() {
    let server = MockModelServer::start().await.unwrap();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let client = openai(&server);
    let mut stream = client.stream(hello("m"), cancel);
    assert_eq!(
        tokio::time::timeout(WAIT, stream.next()).await.unwrap(),
        Some(Err(LlmError::Cancelled))
    );
    // A later request through the same client is the marker: the cancelled one, had it
    // been sent, would have reached the server before it.
    server.enqueue(OpenAiStream::text_answer("marker", &["ok"], 1, 1));
    let (_, error) = drain(client.stream(hello("marker"), CancellationToken::new())).await;
    assert_eq!(error, None);
    let models: Vec<_> = server
        .requests()
        .iter()
        .map(|request| request.json()["model"].clone())
        .collect();
    assert_eq!(models, ["marker"], "only the marker was sent");
}
