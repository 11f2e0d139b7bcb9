//! Aborting a model call closes its connection at once.

use std::time::Duration;

use futures::StreamExt;
use hearth_llm::{CancellationToken, LlmError, ModelClient};
use hearth_test_support::model_server::Outcome;
use hearth_test_support::{AnthropicStream, MockModelServer, MockResponse, OpenAiStream};
use pretty_assertions::assert_eq;

use super::support::{WAIT, anthropic, hello, openai, text};

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
    let canceller = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            cancel.cancel();
        })
    };
    assert_eq!(
        tokio::time::timeout(WAIT, stream.next()).await.unwrap(),
        Some(Err(LlmError::Cancelled))
    );
    canceller.await.unwrap();
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
    let mut stream = openai(&server).stream(hello("m"), cancel);
    assert_eq!(
        tokio::time::timeout(WAIT, stream.next()).await.unwrap(),
        Some(Err(LlmError::Cancelled))
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(server.requests().len(), 0);
}
