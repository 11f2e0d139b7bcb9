//! Builders of genuine OpenAI Chat Completions answers: `chat.completion.chunk` SSE
//! streams and whole `chat.completion` bodies.

use std::time::Duration;

use serde_json::{Value, json};

use super::{Gate, MockResponse, Step};

/// A Chat Completions SSE stream, event by event. Each event is sent as its own chunk.
#[derive(Clone, Debug)]
pub struct OpenAiStream {
    model: String,
    steps: Vec<Step>,
}

impl OpenAiStream {
    /// An empty stream for `model`.
    pub fn new(model: &str) -> Self {
        Self {
            model: model.to_owned(),
            steps: Vec::new(),
        }
    }

    /// A text stream as OpenAI sends it: role, the pieces, `stop`, usage, `[DONE]`.
    pub fn text_answer(
        model: &str,
        pieces: &[&str],
        prompt_tokens: u64,
        completion_tokens: u64,
    ) -> Self {
        pieces
            .iter()
            .fold(Self::new(model).role(), |stream, piece| stream.text(piece))
            .finish("stop")
            .usage(prompt_tokens, completion_tokens)
            .done()
    }

    /// A whole chunk object as one `data:` event.
    pub fn chunk(self, chunk: &Value) -> Self {
        self.raw(&format!("data: {chunk}\n\n"))
    }

    fn delta(self, delta: Value, finish_reason: Value) -> Self {
        let chunk = json!({
            "id": "chatcmpl-mock",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": self.model,
            "system_fingerprint": "fp_mock",
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}],
        });
        self.chunk(&chunk)
    }

    /// The opening delta: `{"role": "assistant", "content": ""}`.
    pub fn role(self) -> Self {
        self.delta(json!({"role": "assistant", "content": ""}), Value::Null)
    }

    /// A text delta.
    pub fn text(self, text: &str) -> Self {
        self.delta(json!({"content": text}), Value::Null)
    }

    /// A reasoning delta in `reasoning_content` (DeepSeek, vLLM, llama.cpp).
    pub fn reasoning_content(self, text: &str) -> Self {
        self.delta(json!({"reasoning_content": text}), Value::Null)
    }

    /// A reasoning delta in `reasoning` (OpenRouter, Ollama).
    pub fn reasoning(self, text: &str) -> Self {
        self.delta(json!({"reasoning": text}), Value::Null)
    }

    /// The first delta of a tool call: id and name, empty arguments.
    pub fn tool_call(self, index: usize, id: &str, name: &str) -> Self {
        self.delta(
            json!({"tool_calls": [{"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}),
            Value::Null,
        )
    }

    /// More arguments of tool call `index`.
    pub fn tool_arguments(self, index: usize, fragment: &str) -> Self {
        self.delta(
            json!({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]}),
            Value::Null,
        )
    }

    /// An empty delta with this `finish_reason` (any string, including empty).
    pub fn finish(self, reason: &str) -> Self {
        self.delta(json!({}), Value::String(reason.to_owned()))
    }

    /// The usage chunk sent for `stream_options.include_usage` (empty `choices`).
    pub fn usage(self, prompt_tokens: u64, completion_tokens: u64) -> Self {
        let chunk = json!({
            "id": "chatcmpl-mock",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": self.model,
            "choices": [],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        });
        self.chunk(&chunk)
    }

    /// `data: [DONE]`.
    pub fn done(self) -> Self {
        self.raw("data: [DONE]\n\n")
    }

    /// Any bytes, sent as one chunk (malformed lines, comments, partial events).
    pub fn raw(mut self, text: &str) -> Self {
        self.steps.push(Step::Send(text.as_bytes().to_vec()));
        self
    }

    /// A pause before the next step.
    pub fn pause(mut self, duration: Duration) -> Self {
        self.steps.push(Step::Pause(duration));
        self
    }

    /// A stop before the next step until `gate` opens.
    pub fn hold(mut self, gate: &Gate) -> Self {
        self.steps.push(Step::Hold(gate.clone()));
        self
    }

    /// A connection reset at this point.
    pub fn reset(mut self) -> Self {
        self.steps.push(Step::Reset);
        self
    }

    /// The steps.
    pub fn steps(self) -> Vec<Step> {
        self.steps
    }

    /// The body as one byte string (pauses, holds and resets left out), e.g. a recording.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.steps
            .iter()
            .filter_map(|step| match step {
                Step::Send(bytes) => Some(bytes.as_slice()),
                Step::Pause(_) | Step::Hold(_) | Step::Reset => None,
            })
            .collect::<Vec<_>>()
            .concat()
    }
}

impl From<OpenAiStream> for MockResponse {
    fn from(stream: OpenAiStream) -> Self {
        MockResponse::sse(stream.steps)
    }
}

/// A whole `chat.completion` body; `tool_calls` are `(id, name, arguments)`.
pub fn openai_completion(
    model: &str,
    content: Option<&str>,
    tool_calls: &[(&str, &str, &str)],
    finish_reason: &str,
) -> Value {
    let calls: Vec<Value> = tool_calls
        .iter()
        .map(|(id, name, arguments)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}))
        .collect();
    let mut message = json!({"role": "assistant", "content": content});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    json!({
        "id": "chatcmpl-mock",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12},
    })
}

/// An OpenAI error body.
pub fn openai_error_body(message: &str, error_type: &str, code: Option<&str>) -> Value {
    json!({"error": {"message": message, "type": error_type, "param": null, "code": code}})
}
