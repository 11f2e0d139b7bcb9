//! The context window: how many tokens a model takes in one request, how many a request
//! is estimated to hold, and whether a provider's error says a request was too long.

use std::collections::BTreeMap;

use crate::error::LlmError;
use crate::request::{Message, ModelRequest};

/// The window assumed for a model nothing else describes: 128,000 tokens, the window of
/// most current hosted models. Smaller local models want `context_window` in config.
pub const DEFAULT_CONTEXT_WINDOW: u32 = 128_000;

/// Known windows by model id prefix, for models whose window differs from the default.
const KNOWN_WINDOWS: &[(&str, u32)] = &[("claude-", 200_000), ("gpt-4.1", 1_047_576)];

/// What one image is counted as (providers bill roughly this for a typical picture).
const IMAGE_TOKENS: u64 = 1_600;

/// The tokens every message costs besides its text (role, separators).
const MESSAGE_TOKENS: u64 = 4;

/// The context windows of one provider's models: configured per model, for the whole
/// provider, or known; [`DEFAULT_CONTEXT_WINDOW`] otherwise.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContextWindows {
    /// `context_window = N` on the provider: every model of it.
    pub provider: Option<u32>,
    /// `context_windows = { "model" = N }` on the provider, and what its model listing
    /// says.
    pub models: BTreeMap<String, u32>,
}

impl ContextWindows {
    /// The same window for every model.
    pub fn uniform(tokens: u32) -> Self {
        Self {
            provider: Some(tokens),
            models: BTreeMap::new(),
        }
    }

    /// The window of a model: its own, else the provider's, else a known one, else
    /// [`DEFAULT_CONTEXT_WINDOW`].
    pub fn for_model(&self, model: &str) -> u32 {
        self.models
            .get(model)
            .copied()
            .or(self.provider)
            .or_else(|| {
                KNOWN_WINDOWS
                    .iter()
                    .find(|(prefix, _)| model.starts_with(prefix))
                    .map(|(_, tokens)| *tokens)
            })
            .unwrap_or(DEFAULT_CONTEXT_WINDOW)
            .max(1)
    }
}

/// A model a provider lists, with its context window when the listing says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedModel {
    /// The model id.
    pub id: String,
    /// Its context window in tokens, when the listing says.
    pub context_window: Option<u32>,
}

/// The fields OpenAI-compatible listings give a model's context window in: OpenRouter
/// and Together (`context_length`), vLLM (`max_model_len`), LM Studio
/// (`max_context_length`), Groq (`context_window`).
const WINDOW_FIELDS: &[&str] = &[
    "context_length",
    "max_model_len",
    "max_context_length",
    "context_window",
];

/// The context window a listing entry gives, if any.
pub(crate) fn listed_window(entry: &serde_json::Value) -> Option<u32> {
    WINDOW_FIELDS
        .iter()
        .find_map(|field| entry.get(field)?.as_u64())
        .and_then(|tokens| u32::try_from(tokens).ok())
        .filter(|tokens| *tokens > 0)
}

/// Tokens of a text, estimated as one per four bytes (rounded up): close for English
/// and code with the common tokenizers, and above the count for most other text.
pub fn estimate_text_tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

/// Tokens of one message, estimated.
pub fn estimate_message_tokens(message: &Message) -> u64 {
    MESSAGE_TOKENS
        + match message {
            Message::User { text, images } => {
                estimate_text_tokens(text) + IMAGE_TOKENS * images.len() as u64
            }
            Message::Assistant { text, tool_calls } => {
                estimate_text_tokens(text)
                    + tool_calls
                        .iter()
                        .map(|call| {
                            estimate_text_tokens(&call.name)
                                + estimate_text_tokens(&call.arguments.to_string())
                                + estimate_text_tokens(&call.id)
                        })
                        .sum::<u64>()
            }
            Message::ToolResult {
                call_id, content, ..
            } => estimate_text_tokens(call_id) + estimate_text_tokens(content),
        }
}

/// Tokens of a whole request before the answer: system prompt, tools, messages.
pub fn estimate_request_tokens(request: &ModelRequest) -> u64 {
    let system = request.system.as_deref().map_or(0, estimate_text_tokens);
    let tools: u64 = request
        .tools
        .iter()
        .map(|tool| {
            estimate_text_tokens(&tool.name)
                + estimate_text_tokens(&tool.description)
                + estimate_text_tokens(&tool.parameters.to_string())
        })
        .sum();
    let messages: u64 = request.messages.iter().map(estimate_message_tokens).sum();
    system + tools + messages
}

/// Phrases providers use in the message of a request longer than the model's window.
const OVERFLOW_PHRASES: &[&str] = &[
    "prompt is too long",
    "maximum context length",
    "context length",
    "context window",
    "too many tokens",
];

impl LlmError {
    /// Whether the provider refused the request for being longer than the model's
    /// context window: OpenAI's `context_length_exceeded` (HTTP 400), Anthropic's
    /// `invalid_request_error` "prompt is too long", or a compatible server's wording.
    pub fn is_context_overflow(&self) -> bool {
        let Self::Api(error) = self else {
            return false;
        };
        if matches!(
            error.code.as_deref(),
            Some("context_length_exceeded" | "string_above_max_length")
        ) {
            return true;
        }
        let client_error = matches!(error.status, Some(400 | 413) | None);
        let message = error.message.to_ascii_lowercase();
        client_error
            && (error.error_type.as_deref() == Some("request_too_large")
                || OVERFLOW_PHRASES
                    .iter()
                    .any(|phrase| message.contains(phrase)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ApiError;
    use pretty_assertions::assert_eq;

    fn api(status: u16, error_type: &str, code: Option<&str>, message: &str) -> LlmError {
        LlmError::Api(Box::new(ApiError {
            provider: "p".into(),
            status: Some(status),
            error_type: Some(error_type.into()),
            code: code.map(str::to_owned),
            message: message.into(),
            request_id: None,
        }))
    }

    #[test]
    fn windows_come_from_the_model_then_the_provider_then_what_is_known() {
        let mut windows = ContextWindows::default();
        assert_eq!(windows.for_model("llama3"), DEFAULT_CONTEXT_WINDOW);
        assert_eq!(windows.for_model("claude-sonnet-4-5"), 200_000);
        windows.provider = Some(8_000);
        assert_eq!(windows.for_model("claude-sonnet-4-5"), 8_000);
        windows.models.insert("small".into(), 4_000);
        assert_eq!(windows.for_model("small"), 4_000);
        assert_eq!(windows.for_model("other"), 8_000);
    }

    #[test]
    fn listings_give_windows_in_the_fields_servers_use() {
        let entry = |value| serde_json::json!({"id": "m", "max_model_len": value});
        assert_eq!(listed_window(&entry(serde_json::json!(8192))), Some(8192));
        assert_eq!(listed_window(&entry(serde_json::json!(0))), None);
        assert_eq!(listed_window(&entry(serde_json::json!("8192"))), None);
        let open_router = serde_json::json!({"id": "m", "context_length": 200_000});
        assert_eq!(listed_window(&open_router), Some(200_000));
        assert_eq!(listed_window(&serde_json::json!({"id": "m"})), None);
    }

    #[test]
    fn requests_are_estimated_from_their_text() {
        assert_eq!(estimate_text_tokens(""), 0);
        assert_eq!(estimate_text_tokens("abcde"), 2);
        let request = ModelRequest::new("m")
            .with_system("12345678")
            .with_message(Message::user("abcd"));
        assert_eq!(estimate_request_tokens(&request), 2 + 4 + 1);
    }

    #[test]
    fn context_overflows_are_told_from_other_refusals() {
        let openai = api(
            400,
            "invalid_request_error",
            Some("context_length_exceeded"),
            "This model's maximum context length is 4000 tokens.",
        );
        assert!(openai.is_context_overflow());
        let anthropic = api(
            400,
            "invalid_request_error",
            None,
            "prompt is too long: 5000 tokens > 4000 maximum",
        );
        assert!(anthropic.is_context_overflow());
        let other = api(400, "invalid_request_error", None, "model not found");
        assert!(!other.is_context_overflow());
        let server = api(500, "server_error", None, "context window busy");
        assert!(!server.is_context_overflow());
        assert!(!LlmError::Cancelled.is_context_overflow());
    }
}
