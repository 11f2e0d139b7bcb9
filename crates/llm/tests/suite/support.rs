//! Shared test code: clients pointed at the mock server, and bounded stream collection.

use std::time::Duration;

use futures::StreamExt;
use hearth_llm::{
    AnthropicClient, ApiKey, ClientOptions, EventStream, LlmError, Message, ModelRequest,
    OpenAiClient, RetryPolicy, StreamEvent,
};
use hearth_test_support::MockModelServer;

/// Every wait in these tests is bounded by this.
pub const WAIT: Duration = hearth_test_support::WAIT;

/// The key the tests send; it must never appear in an error.
pub const KEY: &str = "sk-test-key-0123456789";

/// Retries with tiny backoff delays, so tests stay fast.
pub fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        max_retries: 2,
        initial_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(4),
        max_retry_after: Duration::from_secs(60),
    }
}

pub fn options(provider: &str, base_url: &str) -> ClientOptions {
    ClientOptions::new(provider, base_url)
        .unwrap()
        .with_api_key(ApiKey::new(KEY))
        .with_retry(fast_retry())
}

pub fn openai(server: &MockModelServer) -> OpenAiClient {
    OpenAiClient::new(options("openai", &server.url_with("/v1"))).unwrap()
}

pub fn anthropic(server: &MockModelServer) -> AnthropicClient {
    AnthropicClient::new(options("anthropic", &server.url())).unwrap()
}

pub fn hello(model: &str) -> ModelRequest {
    ModelRequest::new(model).with_message(Message::user("Say hello"))
}

/// Every item of a stream until it ends or fails: the events and the error, if any.
pub async fn drain(mut stream: EventStream) -> (Vec<StreamEvent>, Option<LlmError>) {
    let mut events = Vec::new();
    let collect = async {
        while let Some(item) = stream.next().await {
            match item {
                Ok(event) => events.push(event),
                Err(error) => return Some(error),
            }
        }
        None
    };
    let error = tokio::time::timeout(WAIT, collect)
        .await
        .expect("the stream did not end in time");
    (events, error)
}

/// The events with the delays of backoff retries (which are jittered) set to zero.
pub fn without_backoff(events: Vec<StreamEvent>) -> Vec<StreamEvent> {
    events
        .into_iter()
        .map(|event| match event {
            StreamEvent::Retrying {
                attempt,
                delay,
                reason,
            } => {
                assert!(delay <= Duration::from_millis(4), "{delay:?}");
                StreamEvent::Retrying {
                    attempt,
                    delay: Duration::ZERO,
                    reason,
                }
            }
            other => other,
        })
        .collect()
}

pub fn text(text: &str) -> StreamEvent {
    StreamEvent::TextDelta { text: text.into() }
}

pub fn reasoning(text: &str) -> StreamEvent {
    StreamEvent::ReasoningDelta { text: text.into() }
}
