//! Builders of genuine OpenAI Responses API answers (`POST /v1/responses`): the SSE
//! stream of typed events (`event: <type>` plus `data: {"type": <type>,
//! "sequence_number": n, ...}`), and the whole `response` object of a non-streamed call.
//!
//! Output items are numbered in order (`output_index`); the items a stream has sent are
//! repeated, completed, in the final `response.completed` event, as OpenAI does.

use std::time::Duration;

use serde_json::{Value, json};

use super::{MockResponse, Step};

/// A Responses API SSE stream, event by event. Each event is sent as its own chunk.
#[derive(Clone, Debug)]
pub struct ResponsesStream {
    model: String,
    steps: Vec<Step>,
    sequence: u64,
    output: Vec<Value>,
}

impl ResponsesStream {
    /// An empty stream for `model`.
    pub fn new(model: &str) -> Self {
        Self {
            model: model.to_owned(),
            steps: Vec::new(),
            sequence: 0,
            output: Vec::new(),
        }
    }

    /// A text answer as OpenAI sends it: created, one message item with a delta per
    /// piece, completed with usage.
    pub fn text_answer(
        model: &str,
        pieces: &[&str],
        input_tokens: u64,
        output_tokens: u64,
    ) -> Self {
        Self::new(model)
            .created()
            .message(pieces)
            .completed(input_tokens, output_tokens)
    }

    /// One event: `event: <type>` and `data:` the object with its `sequence_number`.
    pub fn event(mut self, mut data: Value) -> Self {
        let kind = data["type"].as_str().unwrap_or("unknown").to_owned();
        data["sequence_number"] = json!(self.sequence);
        self.sequence += 1;
        self.steps.push(Step::Send(
            format!("event: {kind}\ndata: {data}\n\n").into_bytes(),
        ));
        self
    }

    fn response_object(&self, status: &str, usage: Value) -> Value {
        json!({
            "id": "resp_mock", "object": "response", "created_at": 1_700_000_000,
            "status": status, "error": null, "incomplete_details": null,
            "model": self.model, "output": self.output, "parallel_tool_calls": false,
            "tool_choice": "auto", "tools": [], "usage": usage,
        })
    }

    /// `response.created` (status `in_progress`, no output yet).
    pub fn created(self) -> Self {
        let response = self.response_object("in_progress", Value::Null);
        self.event(json!({"type": "response.created", "response": response}))
    }

    fn next_output(&self) -> usize {
        self.output.len()
    }

    /// A whole assistant message item: added, its `output_text` part, one
    /// `response.output_text.delta` per piece, then the part and the item done.
    pub fn message(self, pieces: &[&str]) -> Self {
        let index = self.next_output();
        let id = format!("msg_mock_{index}");
        let text: String = pieces.concat();
        let part = json!({"type": "output_text", "text": text, "annotations": []});
        let item = json!({
            "id": id, "type": "message", "status": "completed", "role": "assistant",
            "content": [part],
        });
        let added = json!({
            "id": id, "type": "message", "status": "in_progress", "role": "assistant",
            "content": [],
        });
        let stream = self
            .event(
                json!({"type": "response.output_item.added", "output_index": index, "item": added}),
            )
            .event(json!({
                "type": "response.content_part.added", "item_id": id, "output_index": index,
                "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []},
            }));
        let stream = pieces.iter().fold(stream, |stream, piece| {
            stream.event(json!({
                "type": "response.output_text.delta", "item_id": id, "output_index": index,
                "content_index": 0, "delta": piece,
            }))
        });
        stream
            .event(json!({
                "type": "response.output_text.done", "item_id": id, "output_index": index,
                "content_index": 0, "text": text,
            }))
            .event(json!({
                "type": "response.content_part.done", "item_id": id, "output_index": index,
                "content_index": 0, "part": part,
            }))
            .item_done(item)
    }

    /// A whole `function_call` item: added with empty arguments, one
    /// `response.function_call_arguments.delta` per fragment, then done.
    pub fn function_call(self, call_id: &str, name: &str, fragments: &[&str]) -> Self {
        self.function_call_in(None, call_id, name, fragments)
    }

    /// [`ResponsesStream::function_call`] of a tool of a `namespace` tool (the way Codex
    /// offers an MCP server's tools: `{"type": "namespace", "name": "mcp__<server>",
    /// "tools": [...]}`): the item names the namespace and the tool apart.
    pub fn namespaced_function_call(
        self,
        namespace: &str,
        call_id: &str,
        name: &str,
        fragments: &[&str],
    ) -> Self {
        self.function_call_in(Some(namespace), call_id, name, fragments)
    }

    fn function_call_in(
        self,
        namespace: Option<&str>,
        call_id: &str,
        name: &str,
        fragments: &[&str],
    ) -> Self {
        let index = self.next_output();
        let id = format!("fc_mock_{index}");
        let arguments: String = fragments.concat();
        let with_namespace = |mut item: Value| {
            if let Some(namespace) = namespace {
                item["namespace"] = json!(namespace);
            }
            item
        };
        let added = with_namespace(json!({
            "id": id, "type": "function_call", "status": "in_progress", "call_id": call_id,
            "name": name, "arguments": "",
        }));
        let stream = self.event(
            json!({"type": "response.output_item.added", "output_index": index, "item": added}),
        );
        let stream = fragments.iter().fold(stream, |stream, fragment| {
            stream.event(json!({
                "type": "response.function_call_arguments.delta", "item_id": id,
                "output_index": index, "delta": fragment,
            }))
        });
        let item = with_namespace(json!({
            "id": id, "type": "function_call", "status": "completed", "call_id": call_id,
            "name": name, "arguments": arguments,
        }));
        stream
            .event(json!({
                "type": "response.function_call_arguments.done", "item_id": id,
                "output_index": index, "arguments": arguments,
            }))
            .item_done(item)
    }

    /// A whole `custom_tool_call` item (a freeform tool such as Codex's `apply_patch`):
    /// added with empty input, the input in one `response.custom_tool_call_input.delta`,
    /// then done.
    pub fn custom_tool_call(self, call_id: &str, name: &str, input: &str) -> Self {
        let index = self.next_output();
        let id = format!("ctc_mock_{index}");
        let added = json!({
            "id": id, "type": "custom_tool_call", "status": "in_progress", "call_id": call_id,
            "name": name, "input": "",
        });
        let item = json!({
            "id": id, "type": "custom_tool_call", "status": "completed", "call_id": call_id,
            "name": name, "input": input,
        });
        self.event(
            json!({"type": "response.output_item.added", "output_index": index, "item": added}),
        )
        .event(json!({
            "type": "response.custom_tool_call_input.delta", "item_id": id,
            "output_index": index, "delta": input,
        }))
        .event(json!({
            "type": "response.custom_tool_call_input.done", "item_id": id,
            "output_index": index, "input": input,
        }))
        .item_done(item)
    }

    /// `response.output_item.done` for a whole item, which joins the final output.
    pub fn item_done(mut self, item: Value) -> Self {
        let index = self.next_output();
        self.output.push(item.clone());
        self.event(
            json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        )
    }

    /// `response.completed` with every item sent and this usage.
    pub fn completed(self, input_tokens: u64, output_tokens: u64) -> Self {
        let response =
            self.response_object("completed", responses_usage(input_tokens, output_tokens));
        self.event(json!({"type": "response.completed", "response": response}))
    }

    /// `response.failed` with this error (as sent after a 200 when the model fails).
    pub fn failed(self, code: &str, message: &str) -> Self {
        let mut response = self.response_object("failed", Value::Null);
        response["error"] = json!({"code": code, "message": message});
        self.event(json!({"type": "response.failed", "response": response}))
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

    /// The whole `response` object of what was sent, for a non-streamed call.
    pub fn to_response(&self, input_tokens: u64, output_tokens: u64) -> Value {
        self.response_object("completed", responses_usage(input_tokens, output_tokens))
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

impl From<ResponsesStream> for MockResponse {
    fn from(stream: ResponsesStream) -> Self {
        MockResponse::sse(stream.steps)
    }
}

fn responses_usage(input_tokens: u64, output_tokens: u64) -> Value {
    json!({
        "input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_tokens + output_tokens,
    })
}

/// A whole non-streamed `response` object with one assistant message.
pub fn responses_response(model: &str, text: &str) -> Value {
    ResponsesStream::new(model)
        .message(&[text])
        .to_response(5, 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The (event name, data) pairs of a stream.
    fn events(stream: &ResponsesStream) -> Vec<(String, Value)> {
        String::from_utf8(stream.to_bytes())
            .unwrap()
            .split_terminator("\n\n")
            .map(|event| {
                let (name, data) = event.split_once('\n').unwrap();
                let name = name.strip_prefix("event: ").unwrap().to_owned();
                let data = serde_json::from_str(data.strip_prefix("data: ").unwrap()).unwrap();
                (name, data)
            })
            .collect()
    }

    #[test]
    fn a_text_answer_is_numbered_in_order_and_completed_with_its_output() {
        let stream = ResponsesStream::text_answer("m", &["po", "ng"], 7, 2);
        let events = events(&stream);
        let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(
            names,
            [
                "response.created",
                "response.output_item.added",
                "response.content_part.added",
                "response.output_text.delta",
                "response.output_text.delta",
                "response.output_text.done",
                "response.content_part.done",
                "response.output_item.done",
                "response.completed",
            ]
        );
        for (index, (name, data)) in events.iter().enumerate() {
            assert_eq!(data["type"], json!(name));
            assert_eq!(data["sequence_number"], json!(index));
        }
        let completed = &events[8].1["response"];
        assert_eq!(completed["status"], json!("completed"));
        assert_eq!(completed["output"][0]["content"][0]["text"], json!("pong"));
        assert_eq!(completed["usage"]["total_tokens"], json!(9));
    }

    #[test]
    fn tool_calls_take_the_next_output_index() {
        let stream = ResponsesStream::new("m")
            .created()
            .message(&["patching"])
            .custom_tool_call("call_1", "apply_patch", "*** Begin Patch\n")
            .function_call("call_2", "exec_command", &["{\"cmd\":", "\"ls\"}"])
            .completed(1, 1);
        let events = events(&stream);
        let done: Vec<&Value> = events
            .iter()
            .filter(|(name, _)| name == "response.output_item.done")
            .map(|(_, data)| data)
            .collect();
        assert_eq!(done.len(), 3);
        assert_eq!(done[1]["output_index"], json!(1));
        assert_eq!(done[1]["item"]["input"], json!("*** Begin Patch\n"));
        assert_eq!(done[2]["output_index"], json!(2));
        assert_eq!(done[2]["item"]["arguments"], json!("{\"cmd\":\"ls\"}"));
        let output = &events.last().unwrap().1["response"]["output"];
        assert_eq!(output.as_array().unwrap().len(), 3);
    }
}
