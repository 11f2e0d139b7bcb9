//! Builders of genuine Anthropic Messages SSE streams: `event: <type>` plus
//! `data: {"type": <type>, ...}` per event, content blocks indexed in order.

use std::time::Duration;

use serde_json::{Value, json};

use super::{MockResponse, Step};

/// A Messages SSE stream, event by event. Each event is sent as its own chunk.
#[derive(Clone, Debug)]
pub struct AnthropicStream {
    model: String,
    steps: Vec<Step>,
    next_block: usize,
}

impl AnthropicStream {
    /// An empty stream for `model`.
    pub fn new(model: &str) -> Self {
        Self {
            model: model.to_owned(),
            steps: Vec::new(),
            next_block: 0,
        }
    }

    /// A text answer as Anthropic sends it: start, ping, one text block, end.
    pub fn text_answer(
        model: &str,
        pieces: &[&str],
        input_tokens: u64,
        output_tokens: u64,
    ) -> Self {
        Self::new(model)
            .message_start(input_tokens)
            .ping()
            .text_block(pieces)
            .message_delta("end_turn", output_tokens)
            .message_stop()
    }

    /// One event: `event: <name>` and `data: <json>`.
    pub fn event(mut self, name: &str, data: &Value) -> Self {
        self.steps.push(Step::Send(
            format!("event: {name}\ndata: {data}\n\n").into_bytes(),
        ));
        self
    }

    /// `message_start` with the input token count.
    pub fn message_start(self, input_tokens: u64) -> Self {
        let data = json!({
            "type": "message_start",
            "message": {
                "id": "msg_mock", "type": "message", "role": "assistant", "model": self.model,
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": input_tokens, "output_tokens": 1},
            },
        });
        self.event("message_start", &data)
    }

    /// `ping`.
    pub fn ping(self) -> Self {
        self.event("ping", &json!({"type": "ping"}))
    }

    /// `content_block_start` for block `index` with this block object.
    pub fn block_start(self, index: usize, block: &Value) -> Self {
        self.event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": block}),
        )
    }

    /// `content_block_delta` for block `index` with this delta object.
    pub fn block_delta(self, index: usize, delta: &Value) -> Self {
        self.event(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": index, "delta": delta}),
        )
    }

    /// `content_block_stop` for block `index`.
    pub fn block_stop(self, index: usize) -> Self {
        self.event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        )
    }

    fn take_index(&mut self) -> usize {
        self.next_block += 1;
        self.next_block - 1
    }

    /// A whole text block: start, one `text_delta` per piece, stop.
    pub fn text_block(mut self, pieces: &[&str]) -> Self {
        let index = self.take_index();
        let started = self.block_start(index, &json!({"type": "text", "text": ""}));
        pieces
            .iter()
            .fold(started, |stream, piece| {
                stream.block_delta(index, &json!({"type": "text_delta", "text": piece}))
            })
            .block_stop(index)
    }

    /// A whole thinking block: start, `thinking_delta`s, a `signature_delta`, stop.
    pub fn thinking_block(mut self, pieces: &[&str]) -> Self {
        let index = self.take_index();
        let started = self.block_start(index, &json!({"type": "thinking", "thinking": ""}));
        pieces
            .iter()
            .fold(started, |stream, piece| {
                stream.block_delta(index, &json!({"type": "thinking_delta", "thinking": piece}))
            })
            .block_delta(
                index,
                &json!({"type": "signature_delta", "signature": "c2lnbmF0dXJl"}),
            )
            .block_stop(index)
    }

    /// The start of a `tool_use` block; returns the stream and the block index.
    pub fn tool_use_start(mut self, id: &str, name: &str) -> (Self, usize) {
        let index = self.take_index();
        let stream = self.block_start(
            index,
            &json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
        );
        (stream, index)
    }

    /// A whole `tool_use` block: start, one `input_json_delta` per fragment, stop.
    pub fn tool_use_block(self, id: &str, name: &str, fragments: &[&str]) -> Self {
        let (started, index) = self.tool_use_start(id, name);
        fragments
            .iter()
            .fold(started, |stream, fragment| {
                stream.input_json_delta(index, fragment)
            })
            .block_stop(index)
    }

    /// An `input_json_delta` for block `index`.
    pub fn input_json_delta(self, index: usize, fragment: &str) -> Self {
        self.block_delta(
            index,
            &json!({"type": "input_json_delta", "partial_json": fragment}),
        )
    }

    /// `message_delta` with the stop reason and the output token count.
    pub fn message_delta(self, stop_reason: &str, output_tokens: u64) -> Self {
        self.event(
            "message_delta",
            &json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": output_tokens}}),
        )
    }

    /// `message_stop`.
    pub fn message_stop(self) -> Self {
        self.event("message_stop", &json!({"type": "message_stop"}))
    }

    /// An `error` event (as sent after a 200 when the API fails mid-stream).
    pub fn error(self, error_type: &str, message: &str) -> Self {
        self.event("error", &anthropic_error_body(error_type, message))
    }

    /// Any bytes, sent as one chunk.
    pub fn raw(mut self, text: &str) -> Self {
        self.steps.push(Step::Send(text.as_bytes().to_vec()));
        self
    }

    /// A pause before the next step.
    pub fn pause(mut self, duration: Duration) -> Self {
        self.steps.push(Step::Pause(duration));
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

    /// The body as one byte string (pauses, holds and resets left out).
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

impl From<AnthropicStream> for MockResponse {
    fn from(stream: AnthropicStream) -> Self {
        MockResponse::sse(stream.steps)
    }
}

/// An Anthropic error body.
pub fn anthropic_error_body(error_type: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": error_type, "message": message}})
}

/// A whole non-streamed `message` body with one text block.
pub fn anthropic_message(model: &str, text: &str) -> Value {
    json!({
        "id": "msg_mock", "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 5, "output_tokens": 2},
    })
}

/// A `POST /v1/messages/count_tokens` answer.
pub fn anthropic_count_tokens(input_tokens: u64) -> Value {
    json!({"input_tokens": input_tokens})
}
