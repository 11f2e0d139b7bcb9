//! The provider-neutral request: what the agent loop asks a model.

use hearth_core::ToolHandler;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One model call.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    /// The model id as the provider names it.
    pub model: String,
    /// System prompt; omitted when `None` or empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The conversation so far, oldest first.
    #[serde(default)]
    pub messages: Vec<Message>,
    /// Tools the model may call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
    /// Output token limit; the client's default when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Sampling temperature; the provider's default when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
}

impl ModelRequest {
    /// A request for `model` with no messages yet.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            ..Self::default()
        }
    }

    /// Sets the system prompt.
    pub fn with_system(mut self, system: impl Into<String>) -> Self {
        self.system = Some(system.into());
        self
    }

    /// Appends a message.
    pub fn with_message(mut self, message: Message) -> Self {
        self.messages.push(message);
        self
    }

    /// Appends a tool.
    pub fn with_tool(mut self, tool: ToolSpec) -> Self {
        self.tools.push(tool);
        self
    }

    /// Sets the output token limit.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Sets the temperature.
    pub fn with_temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// The tool with this name, if offered.
    pub fn tool(&self, name: &str) -> Option<&ToolSpec> {
        self.tools.iter().find(|tool| tool.name == name)
    }
}

/// An image in a user message, as the providers take it inline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Image {
    /// Its media type (`image/png`, `image/jpeg`, `image/gif`, `image/webp`).
    pub media_type: String,
    /// Its bytes, base64-encoded.
    pub data: String,
}

impl Image {
    /// A `data:` URL of the image (OpenAI-compatible APIs).
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.data)
    }
}

/// One message of the conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// What the user wrote, and the images they attached.
    User {
        /// The text.
        text: String,
        /// Images for a model that takes them, after the text.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<Image>,
    },
    /// What the model answered: text, then the tools it called.
    Assistant {
        /// The answer text (may be empty when the model only called tools).
        #[serde(default)]
        text: String,
        /// Tool calls, in the order the model made them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call, given back to the model.
    ToolResult {
        /// The id of the call it answers.
        call_id: String,
        /// The text the model reads.
        content: String,
        /// Whether the content describes a failure.
        #[serde(default)]
        is_error: bool,
    },
}

impl Message {
    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Self::User {
            text: text.into(),
            images: Vec::new(),
        }
    }

    /// An assistant message without tool calls.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self::Assistant {
            text: text.into(),
            tool_calls: Vec::new(),
        }
    }

    /// A successful tool result.
    pub fn tool_result(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self::ToolResult {
            call_id: call_id.into(),
            content: content.into(),
            is_error: false,
        }
    }

    /// A failed tool result.
    pub fn tool_error(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self::ToolResult {
            call_id: call_id.into(),
            content: content.into(),
            is_error: true,
        }
    }
}

/// A tool call the model made, as sent back in the history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The model's call id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments object (after repair).
    pub arguments: Value,
}

/// A tool offered to the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Unique name.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
}

impl ToolSpec {
    /// A tool spec.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters,
        }
    }

    /// The spec of a Hearth tool.
    pub fn from_handler(handler: &dyn ToolHandler) -> Self {
        Self::new(handler.name(), handler.description(), handler.parameters())
    }
}

/// A temperature as JSON, in its shortest decimal form (`0.7`, not `0.699999988`).
pub(crate) fn temperature_json(temperature: f32) -> Value {
    temperature
        .to_string()
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map_or(Value::Null, Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn temperatures_are_sent_in_shortest_form() {
        assert_eq!(temperature_json(0.7), json!(0.7));
        assert_eq!(temperature_json(f32::NAN), Value::Null);
    }

    #[test]
    fn messages_round_trip_as_tagged_json() {
        let messages = vec![
            Message::user("hi"),
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: "c1".into(),
                    name: "clock".into(),
                    arguments: json!({}),
                }],
            },
            Message::tool_error("c1", "no clock"),
        ];
        let value = serde_json::to_value(&messages).unwrap();
        assert_eq!(
            value,
            json!([
                {"role": "user", "text": "hi"},
                {"role": "assistant", "text": "", "tool_calls": [{"id": "c1", "name": "clock", "arguments": {}}]},
                {"role": "tool_result", "call_id": "c1", "content": "no clock", "is_error": true},
            ])
        );
        assert_eq!(
            serde_json::from_value::<Vec<Message>>(value).unwrap(),
            messages
        );
    }
}
