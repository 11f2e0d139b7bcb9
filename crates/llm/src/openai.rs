//! OpenAI-compatible Chat Completions (OpenAI, OpenRouter, Ollama `/v1`, LM Studio, vLLM,
//! llama.cpp server).
//!
//! Servers differ in what they accept. When one rejects a part of the request, the
//! client rephrases it once and remembers that for later calls: no `stream_options`,
//! `max_completion_tokens` instead of `max_tokens`, no `temperature`, and, for a server
//! that refuses `stream: true`, a non-streaming request whose answer is replayed as events.

mod decode;

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::client::{ClientOptions, ModelClient, Protocol};
use crate::driver::{DecodeContext, Decoder, StreamExchange, event_stream};
use crate::error::{ApiError, LlmError, Result};
use crate::event::EventStream;
use crate::request::{Message, ModelRequest, ToolSpec};
use crate::transport::{Auth, Exchange, Transport};
use crate::window::{ListedModel, listed_window};

pub(crate) use decode::stream_decoder;

/// What a server turned out not to accept.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Compat {
    no_stream: bool,
    no_stream_options: bool,
    max_completion_tokens: bool,
    no_temperature: bool,
}

/// A client of an OpenAI-compatible Chat Completions server.
#[derive(Debug, Clone)]
pub struct OpenAiClient {
    transport: Arc<Transport>,
    compat: Arc<Mutex<Compat>>,
}

impl OpenAiClient {
    /// A client with these settings.
    pub fn new(options: ClientOptions) -> Result<Self> {
        Ok(Self {
            transport: Arc::new(Transport::new(options, Auth::Bearer, &[])?),
            compat: Arc::default(),
        })
    }

    fn compat(&self) -> Compat {
        match self.compat.lock() {
            Ok(compat) => *compat,
            Err(poisoned) => *poisoned.into_inner(),
        }
    }
}

impl ModelClient for OpenAiClient {
    fn provider(&self) -> &str {
        self.transport.provider()
    }

    fn protocol(&self) -> Protocol {
        Protocol::OpenAiChat
    }

    fn stream(&self, request: ModelRequest, cancel: CancellationToken) -> EventStream {
        let exchange = ChatExchange {
            request,
            compat: self.compat(),
            learned: Arc::clone(&self.compat),
            default_max_tokens: self.transport.options.max_tokens,
        };
        event_stream(Arc::clone(&self.transport), Box::new(exchange), cancel)
    }

    fn list_models(&self, cancel: CancellationToken) -> BoxFuture<'_, Result<Vec<String>>> {
        Box::pin(async move {
            let value = self.transport.fetch_json(&mut ListModels, &cancel).await?;
            model_ids(&value, self.provider())
        })
    }

    fn list_models_detailed(
        &self,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<Vec<ListedModel>>> {
        Box::pin(async move {
            let value = self.transport.fetch_json(&mut ListModels, &cancel).await?;
            Ok(model_entries(&value, self.provider())?
                .iter()
                .filter_map(|entry| {
                    Some(ListedModel {
                        id: entry_id(entry)?,
                        context_window: listed_window(entry),
                    })
                })
                .collect())
        })
    }
}

/// Model ids from a `{"data": [{"id": ...}]}` listing.
pub(crate) fn model_ids(value: &Value, provider: &str) -> Result<Vec<String>> {
    Ok(model_entries(value, provider)?
        .iter()
        .filter_map(entry_id)
        .collect())
}

/// An entry's model id (`id`, or `name`).
fn entry_id(entry: &Value) -> Option<String> {
    entry
        .get("id")
        .or_else(|| entry.get("name"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// The entries of a `{"data": [...]}` (or `{"models": [...]}`) listing.
fn model_entries<'v>(value: &'v Value, provider: &str) -> Result<&'v Vec<Value>> {
    value
        .get("data")
        .or_else(|| value.get("models"))
        .and_then(Value::as_array)
        .ok_or_else(|| LlmError::Decode {
            provider: provider.to_owned(),
            message: "the model listing has no `data` array".to_owned(),
        })
}

struct ListModels;

impl Exchange for ListModels {
    fn build(&self, transport: &Transport) -> Result<reqwest::Request> {
        transport
            .http()?
            .get(transport.url("models"))
            .build()
            .map_err(|error| LlmError::InvalidRequest(error.to_string()))
    }

    fn streaming(&self) -> bool {
        false
    }
}

struct ChatExchange {
    request: ModelRequest,
    compat: Compat,
    learned: Arc<Mutex<Compat>>,
    default_max_tokens: Option<u32>,
}

impl Exchange for ChatExchange {
    fn build(&self, transport: &Transport) -> Result<reqwest::Request> {
        let body = chat_body(&self.request, self.compat, self.default_max_tokens);
        let body = serde_json::to_vec(&body)
            .map_err(|error| LlmError::InvalidRequest(error.to_string()))?;
        let accept = if self.compat.no_stream {
            "application/json"
        } else {
            "text/event-stream"
        };
        transport
            .http()?
            .post(transport.url("chat/completions"))
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .header(ACCEPT, HeaderValue::from_static(accept))
            .body(body)
            .build()
            .map_err(|error| LlmError::InvalidRequest(error.to_string()))
    }

    fn streaming(&self) -> bool {
        !self.compat.no_stream
    }

    fn adapt(&mut self, error: &ApiError) -> bool {
        if !matches!(error.status, Some(400 | 404 | 405 | 415 | 422 | 501)) {
            return false;
        }
        let message = error.message.to_ascii_lowercase();
        let refuses = [
            "not support",
            "unsupported",
            "not allowed",
            "unrecognized",
            "unknown",
            "invalid",
            "extra",
            "not permitted",
            "disabled",
        ]
        .iter()
        .any(|phrase| message.contains(phrase));
        let compat = &mut self.compat;
        let changed = if (message.contains("stream_options") || message.contains("include_usage"))
            && !compat.no_stream_options
            && !compat.no_stream
        {
            compat.no_stream_options = true;
            true
        } else if message.contains("max_completion_tokens")
            && !compat.max_completion_tokens
            && (self.request.max_tokens.or(self.default_max_tokens)).is_some()
        {
            compat.max_completion_tokens = true;
            true
        } else if message.contains("temperature")
            && refuses
            && self.request.temperature.is_some()
            && !compat.no_temperature
        {
            compat.no_temperature = true;
            true
        } else if message.contains("stream") && refuses && !compat.no_stream {
            compat.no_stream = true;
            true
        } else {
            false
        };
        if changed {
            match self.learned.lock() {
                Ok(mut learned) => *learned = *compat,
                Err(poisoned) => *poisoned.into_inner() = *compat,
            }
        }
        changed
    }
}

impl StreamExchange for ChatExchange {
    fn decoder(&self, content_type: &str, context: DecodeContext) -> Box<dyn Decoder> {
        if self.compat.no_stream || content_type.starts_with("application/json") {
            decode::completion_decoder(context)
        } else {
            decode::stream_decoder(context)
        }
    }
}

/// The Chat Completions request body.
fn chat_body(request: &ModelRequest, compat: Compat, default_max_tokens: Option<u32>) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = request.system.as_deref().filter(|text| !text.is_empty()) {
        messages.push(json!({"role": "system", "content": system}));
    }
    messages.extend(request.messages.iter().map(message_json));
    let mut body = Map::new();
    body.insert("model".into(), request.model.clone().into());
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        body.insert(
            "tools".into(),
            Value::Array(request.tools.iter().map(tool_json).collect()),
        );
    }
    if let Some(max_tokens) = request.max_tokens.or(default_max_tokens) {
        let field = if compat.max_completion_tokens {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body.insert(field.into(), max_tokens.into());
    }
    if let Some(temperature) = request.temperature.filter(|_| !compat.no_temperature) {
        body.insert(
            "temperature".into(),
            crate::request::temperature_json(temperature),
        );
    }
    if compat.no_stream {
        body.insert("stream".into(), false.into());
    } else {
        body.insert("stream".into(), true.into());
        if !compat.no_stream_options {
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
    }
    Value::Object(body)
}

/// One message of the conversation as Chat Completions reads it.
fn message_json(message: &Message) -> Value {
    match message {
        Message::User { text, images } if images.is_empty() => {
            json!({"role": "user", "content": text})
        }
        Message::User { text, images } => {
            let mut content = vec![json!({"type": "text", "text": text})];
            content.extend(
                images.iter().map(
                    |image| json!({"type": "image_url", "image_url": {"url": image.data_url()}}),
                ),
            );
            json!({"role": "user", "content": content})
        }
        Message::Assistant { text, tool_calls } => {
            let mut entry = Map::new();
            entry.insert("role".into(), "assistant".into());
            entry.insert(
                "content".into(),
                if text.is_empty() && !tool_calls.is_empty() {
                    Value::Null
                } else {
                    Value::String(text.clone())
                },
            );
            if !tool_calls.is_empty() {
                let calls = tool_calls
                    .iter()
                    .map(|call| {
                        json!({
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": call.arguments.to_string()},
                        })
                    })
                    .collect();
                entry.insert("tool_calls".into(), Value::Array(calls));
            }
            Value::Object(entry)
        }
        Message::ToolResult {
            call_id, content, ..
        } => json!({"role": "tool", "tool_call_id": call_id, "content": content}),
    }
}

fn tool_json(tool: &ToolSpec) -> Value {
    let parameters = if tool.parameters.is_object() {
        tool.parameters.clone()
    } else {
        json!({"type": "object", "properties": {}})
    };
    json!({
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": parameters},
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::ToolCall;
    use pretty_assertions::assert_eq;

    #[test]
    fn body_carries_history_tools_and_stream_options() {
        let request = ModelRequest::new("gpt-test")
            .with_system("be brief")
            .with_message(Message::user("time?"))
            .with_message(Message::Assistant {
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: "call_1".into(),
                    name: "clock".into(),
                    arguments: json!({"zone": "UTC"}),
                }],
            })
            .with_message(Message::tool_result("call_1", "12:00"))
            .with_tool(ToolSpec::new(
                "clock",
                "tells time",
                json!({"type": "object"}),
            ))
            .with_max_tokens(100)
            .with_temperature(0.5);
        assert_eq!(
            chat_body(&request, Compat::default(), None),
            json!({
                "model": "gpt-test",
                "messages": [
                    {"role": "system", "content": "be brief"},
                    {"role": "user", "content": "time?"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "call_1", "type": "function", "function": {"name": "clock", "arguments": "{\"zone\":\"UTC\"}"}}
                    ]},
                    {"role": "tool", "tool_call_id": "call_1", "content": "12:00"},
                ],
                "tools": [{"type": "function", "function": {"name": "clock", "description": "tells time", "parameters": {"type": "object"}}}],
                "max_tokens": 100,
                "temperature": 0.5,
                "stream": true,
                "stream_options": {"include_usage": true},
            })
        );
        let compat = Compat {
            no_stream: true,
            max_completion_tokens: true,
            no_temperature: true,
            ..Compat::default()
        };
        let body = chat_body(&request, compat, None);
        assert_eq!(body["stream"], json!(false));
        assert_eq!(body.get("stream_options"), None);
        assert_eq!(body["max_completion_tokens"], json!(100));
        assert_eq!(body.get("temperature"), None);
    }
}
