//! Anthropic Messages (`/v1/messages`), streamed.

mod decode;

use std::sync::Arc;

use futures::future::BoxFuture;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;
use url::Url;

use crate::client::{ClientOptions, ModelClient, Protocol, endpoint};
use crate::driver::{DecodeContext, Decoder, StreamExchange, event_stream};
use crate::error::{LlmError, Result};
use crate::event::EventStream;
use crate::openai::model_ids;
use crate::request::{Message, ModelRequest, ToolSpec, temperature_json};
use crate::transport::{Auth, Exchange, Transport};

pub(crate) use decode::stream_decoder;

/// The API version Hearth speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Output limit when neither the request nor the settings give one.
const DEFAULT_MAX_TOKENS: u32 = 4096;

/// A client of the Anthropic Messages API.
#[derive(Debug, Clone)]
pub struct AnthropicClient {
    transport: Arc<Transport>,
}

impl AnthropicClient {
    /// A client with these settings.
    pub fn new(options: ClientOptions) -> Result<Self> {
        let transport = Transport::new(
            options,
            Auth::XApiKey,
            &[("anthropic-version", ANTHROPIC_VERSION)],
        )?;
        Ok(Self {
            transport: Arc::new(transport),
        })
    }
}

/// `v1/<path>` below the base URL, which may or may not already end in `/v1`.
fn api_url(base: &Url, path: &str) -> Url {
    if base.path().trim_end_matches('/').ends_with("/v1") {
        endpoint(base, path)
    } else {
        endpoint(base, &format!("v1/{path}"))
    }
}

impl ModelClient for AnthropicClient {
    fn provider(&self) -> &str {
        self.transport.provider()
    }

    fn protocol(&self) -> Protocol {
        Protocol::AnthropicMessages
    }

    fn stream(&self, request: ModelRequest, cancel: CancellationToken) -> EventStream {
        let exchange = MessagesExchange {
            request,
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
}

struct ListModels;

impl Exchange for ListModels {
    fn build(&self, transport: &Transport) -> Result<reqwest::Request> {
        let mut url = api_url(&transport.options.base_url, "models");
        url.set_query(Some("limit=1000"));
        transport
            .http()?
            .get(url)
            .build()
            .map_err(|error| LlmError::InvalidRequest(error.to_string()))
    }

    fn streaming(&self) -> bool {
        false
    }
}

struct MessagesExchange {
    request: ModelRequest,
    default_max_tokens: Option<u32>,
}

impl Exchange for MessagesExchange {
    fn build(&self, transport: &Transport) -> Result<reqwest::Request> {
        let body = messages_body(&self.request, self.default_max_tokens);
        let body = serde_json::to_vec(&body)
            .map_err(|error| LlmError::InvalidRequest(error.to_string()))?;
        transport
            .http()?
            .post(api_url(&transport.options.base_url, "messages"))
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .header(ACCEPT, HeaderValue::from_static("text/event-stream"))
            .body(body)
            .build()
            .map_err(|error| LlmError::InvalidRequest(error.to_string()))
    }

    fn streaming(&self) -> bool {
        true
    }
}

impl StreamExchange for MessagesExchange {
    fn decoder(&self, _content_type: &str, context: DecodeContext) -> Box<dyn Decoder> {
        decode::stream_decoder(context)
    }
}

/// The Messages request body: model, token limit, system prompt, the conversation as
/// [`conversation_turns`] shapes it, tools and temperature, streamed.
fn messages_body(request: &ModelRequest, default_max_tokens: Option<u32>) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), request.model.clone().into());
    body.insert(
        "max_tokens".into(),
        request
            .max_tokens
            .or(default_max_tokens)
            .unwrap_or(DEFAULT_MAX_TOKENS)
            .into(),
    );
    if let Some(system) = request.system.as_deref().filter(|text| !text.is_empty()) {
        body.insert("system".into(), system.into());
    }
    body.insert(
        "messages".into(),
        Value::Array(conversation_turns(&request.messages)),
    );
    if !request.tools.is_empty() {
        let tools = request.tools.iter().map(tool_json).collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(temperature) = request.temperature {
        body.insert("temperature".into(), temperature_json(temperature));
    }
    body.insert("stream".into(), true.into());
    Value::Object(body)
}

/// The conversation as Messages turns. Consecutive messages of one role are merged (tool
/// results and the next user text form one user turn), tool results first in a user
/// turn, and empty text blocks are left out, as the API requires.
fn conversation_turns(messages: &[Message]) -> Vec<Value> {
    let mut turns: Vec<(&str, Vec<Value>)> = Vec::new();
    for (role, block) in messages.iter().flat_map(message_blocks) {
        match turns.last_mut() {
            Some((last, blocks)) if *last == role => blocks.push(block),
            _ => turns.push((role, vec![block])),
        }
    }
    turns
        .into_iter()
        .map(|(role, mut blocks)| {
            if role == "user" {
                blocks.sort_by_key(|block| block["type"] != "tool_result");
            }
            json!({"role": role, "content": blocks})
        })
        .collect()
}

/// The content blocks one message contributes, each with the role of the turn it
/// belongs to; empty text gives no block.
fn message_blocks(message: &Message) -> Vec<(&'static str, Value)> {
    let mut blocks = Vec::new();
    match message {
        Message::User { text, images } => {
            if !text.is_empty() {
                blocks.push(("user", json!({"type": "text", "text": text})));
            }
            for image in images {
                blocks.push((
                    "user",
                    json!({"type": "image", "source": {
                        "type": "base64",
                        "media_type": image.media_type,
                        "data": image.data,
                    }}),
                ));
            }
        }
        Message::Assistant { text, tool_calls } => {
            if !text.is_empty() {
                blocks.push(("assistant", json!({"type": "text", "text": text})));
            }
            for call in tool_calls {
                let input = if call.arguments.is_object() {
                    call.arguments.clone()
                } else {
                    json!({})
                };
                blocks.push((
                    "assistant",
                    json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}),
                ));
            }
        }
        Message::ToolResult {
            call_id,
            content,
            is_error,
        } => {
            let mut block = Map::new();
            block.insert("type".into(), "tool_result".into());
            block.insert("tool_use_id".into(), call_id.clone().into());
            if !content.is_empty() {
                block.insert("content".into(), content.clone().into());
            }
            if *is_error {
                block.insert("is_error".into(), true.into());
            }
            blocks.push(("user", Value::Object(block)));
        }
    }
    blocks
}

/// One tool as the Messages API declares it; a tool without an object schema takes an
/// empty object.
fn tool_json(tool: &ToolSpec) -> Value {
    let schema = if tool.parameters.is_object() {
        tool.parameters.clone()
    } else {
        json!({"type": "object", "properties": {}})
    };
    json!({"name": tool.name, "description": tool.description, "input_schema": schema})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::ToolCall;
    use pretty_assertions::assert_eq;

    #[test]
    fn an_image_follows_the_users_text_as_a_base64_block() {
        let message = Message::User {
            text: "what is this?".into(),
            images: vec![crate::Image {
                media_type: "image/png".into(),
                data: "iVBORw0K".into(),
            }],
        };
        assert_eq!(
            message_blocks(&message),
            vec![
                ("user", json!({"type": "text", "text": "what is this?"})),
                (
                    "user",
                    json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"}})
                ),
            ]
        );
    }

    #[test]
    fn body_merges_turns_and_puts_tool_results_first() {
        let request = ModelRequest::new("claude-test")
            .with_system("be brief")
            .with_message(Message::user("time?"))
            .with_message(Message::Assistant {
                text: "Checking.".into(),
                tool_calls: vec![
                    ToolCall {
                        id: "t1".into(),
                        name: "clock".into(),
                        arguments: json!({"zone": "UTC"}),
                    },
                    ToolCall {
                        id: "t2".into(),
                        name: "clock".into(),
                        arguments: json!(null),
                    },
                ],
            })
            .with_message(Message::tool_result("t1", "12:00"))
            .with_message(Message::tool_error("t2", ""))
            .with_message(Message::user("thanks"))
            .with_tool(ToolSpec::new("clock", "tells time", json!(null)))
            .with_temperature(0.2);
        assert_eq!(
            messages_body(&request, None),
            json!({
                "model": "claude-test",
                "max_tokens": 4096,
                "system": "be brief",
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "time?"}]},
                    {"role": "assistant", "content": [
                        {"type": "text", "text": "Checking."},
                        {"type": "tool_use", "id": "t1", "name": "clock", "input": {"zone": "UTC"}},
                        {"type": "tool_use", "id": "t2", "name": "clock", "input": {}},
                    ]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "t1", "content": "12:00"},
                        {"type": "tool_result", "tool_use_id": "t2", "is_error": true},
                        {"type": "text", "text": "thanks"},
                    ]},
                ],
                "tools": [{"name": "clock", "description": "tells time", "input_schema": {"type": "object", "properties": {}}}],
                "temperature": 0.2,
                "stream": true,
            })
        );
    }

    #[test]
    fn api_urls_accept_bases_with_or_without_v1() {
        let with = Url::parse("https://proxy.example/anthropic/v1").unwrap();
        let without = Url::parse("https://api.anthropic.com").unwrap();
        assert_eq!(
            api_url(&with, "messages").as_str(),
            "https://proxy.example/anthropic/v1/messages"
        );
        assert_eq!(
            api_url(&without, "messages").as_str(),
            "https://api.anthropic.com/v1/messages"
        );
    }
}
