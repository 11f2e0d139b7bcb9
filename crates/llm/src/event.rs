//! The provider-neutral stream of what a model sends, and its assembly into a response.

use std::pin::Pin;
use std::time::Duration;

use futures::{Stream, StreamExt};
use hearth_core::{StopReason, Usage};
use serde::{Deserialize, Serialize};

use crate::error::Result;

/// The events of one model call, in order. Ends after [`StreamEvent::Finished`] or an
/// error; dropping it aborts the HTTP request.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent>> + Send>>;

/// One thing a model sent (or the client did) during a call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// The request failed before any response and is sent again after `delay`.
    Retrying {
        /// 1 for the first retry.
        attempt: u32,
        /// The wait before it.
        delay: Duration,
        /// Why the previous attempt failed.
        reason: String,
    },
    /// Answer text.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// Visible reasoning text.
    ReasoningDelta {
        /// The new text.
        text: String,
    },
    /// The model began a tool call.
    ToolCallStarted {
        /// Position of the call in this response (0, 1, ...).
        index: usize,
        /// The model's call id.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// More of a tool call's arguments (raw JSON text, possibly partial).
    ToolCallDelta {
        /// Position of the call in this response.
        index: usize,
        /// The new fragment.
        arguments: String,
    },
    /// A tool call is complete; `arguments` is the accumulated raw text, to be parsed
    /// with [`crate::parse_tool_arguments`].
    ToolCallCompleted(CompletedToolCall),
    /// Token usage of this call so far (each report replaces the previous one).
    Usage(Usage),
    /// The model finished.
    Finished {
        /// Why.
        reason: FinishReason,
    },
}

/// A finished tool call with its raw arguments.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompletedToolCall {
    /// Position of the call in this response.
    pub index: usize,
    /// The model's call id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments exactly as streamed (may need repair).
    pub arguments: String,
}

/// Why the model stopped. Unknown and empty values are kept, never rejected.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// The answer is complete.
    EndTurn,
    /// The model wants tool results before it goes on.
    ToolUse,
    /// The output token limit was reached.
    MaxTokens,
    /// A stop sequence was produced.
    StopSequence,
    /// A content filter cut the answer.
    ContentFilter,
    /// The model refused.
    Refusal,
    /// The provider gave no reason (missing, `null` or empty).
    Unspecified,
    /// A reason Hearth does not know, verbatim.
    Other(String),
}

impl FinishReason {
    /// Reads an OpenAI-compatible `finish_reason`.
    pub fn from_openai(value: &str) -> Self {
        match value.trim() {
            "stop" | "end_turn" | "eos" => Self::EndTurn,
            "tool_calls" | "function_call" | "tool_use" => Self::ToolUse,
            "length" | "max_tokens" => Self::MaxTokens,
            "content_filter" => Self::ContentFilter,
            "refusal" => Self::Refusal,
            "" => Self::Unspecified,
            other => Self::Other(other.to_owned()),
        }
    }

    /// Reads an Anthropic `stop_reason`.
    pub fn from_anthropic(value: &str) -> Self {
        match value.trim() {
            "end_turn" => Self::EndTurn,
            "tool_use" => Self::ToolUse,
            "max_tokens" => Self::MaxTokens,
            "stop_sequence" => Self::StopSequence,
            "refusal" => Self::Refusal,
            "" => Self::Unspecified,
            other => Self::Other(other.to_owned()),
        }
    }

    /// The turn-level stop reason this finish maps to when the loop ends here.
    pub fn to_stop_reason(&self) -> StopReason {
        match self {
            Self::EndTurn | Self::StopSequence | Self::Unspecified => StopReason::EndTurn,
            Self::MaxTokens => StopReason::MaxTokens,
            Self::Refusal | Self::ContentFilter => StopReason::Refusal,
            Self::ToolUse => StopReason::Other("tool_use".to_owned()),
            Self::Other(other) => StopReason::Other(other.clone()),
        }
    }
}

/// A whole response, assembled from the events.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelResponse {
    /// All answer text.
    pub text: String,
    /// All reasoning text.
    pub reasoning: String,
    /// Tool calls in order.
    pub tool_calls: Vec<CompletedToolCall>,
    /// The last usage report.
    pub usage: Option<Usage>,
    /// Why the model stopped; `None` when the stream ended without saying.
    pub finish_reason: Option<FinishReason>,
}

/// Assembles events into a [`ModelResponse`].
#[derive(Debug, Default)]
pub struct ResponseAssembler {
    response: ModelResponse,
}

impl ResponseAssembler {
    /// An empty assembler.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one event.
    pub fn push(&mut self, event: &StreamEvent) {
        let response = &mut self.response;
        match event {
            StreamEvent::TextDelta { text } => response.text.push_str(text),
            StreamEvent::ReasoningDelta { text } => response.reasoning.push_str(text),
            StreamEvent::ToolCallCompleted(call) => response.tool_calls.push(call.clone()),
            StreamEvent::Usage(usage) => response.usage = Some(usage.clone()),
            StreamEvent::Finished { reason } => response.finish_reason = Some(reason.clone()),
            StreamEvent::Retrying { .. }
            | StreamEvent::ToolCallStarted { .. }
            | StreamEvent::ToolCallDelta { .. } => {}
        }
    }

    /// What was assembled so far.
    pub fn response(&self) -> &ModelResponse {
        &self.response
    }

    /// The assembled response.
    pub fn finish(self) -> ModelResponse {
        self.response
    }
}

/// Runs a stream to its end and returns the whole response, or the first error.
pub async fn collect_response(mut stream: EventStream) -> Result<ModelResponse> {
    let mut assembler = ResponseAssembler::new();
    while let Some(event) = stream.next().await {
        assembler.push(&event?);
    }
    Ok(assembler.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn finish_reasons_tolerate_unknown_and_empty_values() {
        assert_eq!(FinishReason::from_openai("stop"), FinishReason::EndTurn);
        assert_eq!(FinishReason::from_openai(""), FinishReason::Unspecified);
        assert_eq!(
            FinishReason::from_openai("eos_token"),
            FinishReason::Other("eos_token".into())
        );
        assert_eq!(
            FinishReason::from_anthropic("pause_turn").to_stop_reason(),
            StopReason::Other("pause_turn".into())
        );
        assert_eq!(
            FinishReason::from_anthropic("max_tokens").to_stop_reason(),
            StopReason::MaxTokens
        );
    }

    #[tokio::test]
    async fn collect_assembles_a_response() {
        let events = vec![
            Ok(StreamEvent::ReasoningDelta { text: "hm".into() }),
            Ok(StreamEvent::TextDelta { text: "Hel".into() }),
            Ok(StreamEvent::TextDelta { text: "lo".into() }),
            Ok(StreamEvent::Usage(Usage {
                input_tokens: 3,
                output_tokens: 2,
                ..Usage::default()
            })),
            Ok(StreamEvent::Finished {
                reason: FinishReason::EndTurn,
            }),
        ];
        let response = collect_response(Box::pin(futures::stream::iter(events)))
            .await
            .unwrap();
        assert_eq!(
            response,
            ModelResponse {
                text: "Hello".into(),
                reasoning: "hm".into(),
                tool_calls: vec![],
                usage: Some(Usage {
                    input_tokens: 3,
                    output_tokens: 2,
                    ..Usage::default()
                }),
                finish_reason: Some(FinishReason::EndTurn),
            }
        );
    }
}
