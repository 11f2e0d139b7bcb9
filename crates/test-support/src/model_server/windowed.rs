//! A model with a context window, for long scripted chats: it counts a request's tokens
//! (a token per four bytes of the whole JSON body, so more than a client that counts
//! only the text), refuses a request over its window with the provider's real
//! context-length error, summarises when asked to compact, and otherwise answers with a
//! reply that echoes the prompt's first words.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use hearth_test_support::{MockModelServer, model_server::WindowedModel};
//! let server = MockModelServer::start().await?;
//! server.set_responder(WindowedModel::openai(4_000).responder());
//! # Ok(()) }
//! ```

use std::sync::Arc;

use serde_json::{Value, json};

use super::{AnthropicStream, MockResponse, OpenAiStream, RecordedRequest, Responder};

/// The first words of the system prompt of Hearth's summarising requests.
pub const SUMMARY_PROMPT_START: &str = "You compact conversations";

/// The first words of the system prompt of Hearth's title requests.
const TITLE_PROMPT_START: &str = "You name conversations";

/// The summary the model writes, whatever it is given.
pub const WINDOWED_SUMMARY: &str = "The user is working through a numbered list of \
questions; each was answered briefly. Nothing is left open.";

/// Which API the model speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Api {
    OpenAi,
    Anthropic,
}

/// A model with a context window of `window` tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowedModel {
    api: Api,
    window: u64,
    /// Words of filler in every reply, so the conversation grows.
    reply_words: usize,
}

/// The tokens the model counts in a request: a token per four bytes of its body.
pub fn counted_tokens(request: &RecordedRequest) -> u64 {
    (request.body.len() as u64).div_ceil(4)
}

/// Whether a request asks for a summary of earlier turns.
pub fn is_summary_request(request: &RecordedRequest) -> bool {
    system_text(&request.json()).starts_with(SUMMARY_PROMPT_START)
}

/// The system prompt of an OpenAI or Anthropic request.
fn system_text(body: &Value) -> String {
    let system = match &body["system"] {
        Value::Null => &body["messages"][0]["content"],
        system => system,
    };
    match system {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect(),
        _ => String::new(),
    }
}

/// The text of the last user message.
fn last_user_text(body: &Value) -> String {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let Some(last) = messages
        .iter()
        .rev()
        .find(|message| message["role"] == "user")
    else {
        return String::new();
    };
    match &last["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect(),
        _ => String::new(),
    }
}

impl WindowedModel {
    /// An OpenAI Chat Completions model.
    pub fn openai(window: u64) -> Self {
        Self {
            api: Api::OpenAi,
            window,
            reply_words: 40,
        }
    }

    /// An Anthropic Messages model.
    pub fn anthropic(window: u64) -> Self {
        Self {
            api: Api::Anthropic,
            window,
            reply_words: 40,
        }
    }

    /// Replies with `words` words of filler.
    #[must_use]
    pub fn with_reply_words(mut self, words: usize) -> Self {
        self.reply_words = words;
        self
    }

    /// The responder to install with `MockModelServer::set_responder`.
    pub fn responder(self) -> Responder {
        Arc::new(move |request| self.answer(request))
    }

    /// The answer to one request; `None` for requests that are not model calls.
    pub fn answer(&self, request: &RecordedRequest) -> Option<MockResponse> {
        let path = request.path.split('?').next().unwrap_or_default();
        let wanted = match self.api {
            Api::OpenAi => "/chat/completions",
            Api::Anthropic => "/messages",
        };
        if request.method != "POST" || !path.ends_with(wanted) {
            return None;
        }
        let tokens = counted_tokens(request);
        if tokens > self.window {
            return Some(self.too_long(tokens));
        }
        let body = request.json();
        let system = system_text(&body);
        let text = if system.starts_with(SUMMARY_PROMPT_START) {
            WINDOWED_SUMMARY.to_owned()
        } else if system.starts_with(TITLE_PROMPT_START) {
            "A numbered list".to_owned()
        } else {
            self.reply(&last_user_text(&body))
        };
        let output = (text.len() as u64).div_ceil(4);
        let model = body["model"].as_str().unwrap_or("mock-model").to_owned();
        Some(match self.api {
            Api::OpenAi => OpenAiStream::text_answer(&model, &[&text], tokens, output).into(),
            Api::Anthropic => AnthropicStream::text_answer(&model, &[&text], tokens, output).into(),
        })
    }

    fn reply(&self, prompt: &str) -> String {
        let echo: Vec<&str> = prompt.split_whitespace().take(6).collect();
        format!(
            "About {}: {}",
            echo.join(" "),
            "noted and answered "
                .repeat(self.reply_words / 3)
                .trim_end()
        )
    }

    /// The provider's own refusal of a request over the window.
    fn too_long(&self, tokens: u64) -> MockResponse {
        let window = self.window;
        match self.api {
            Api::OpenAi => MockResponse::json(
                400,
                &json!({"error": {
                    "message": format!(
                        "This model's maximum context length is {window} tokens. However, your \
                         messages resulted in {tokens} tokens. Please reduce the length of the \
                         messages."
                    ),
                    "type": "invalid_request_error",
                    "param": "messages",
                    "code": "context_length_exceeded",
                }}),
            ),
            Api::Anthropic => MockResponse::anthropic_error(
                400,
                "invalid_request_error",
                &format!("prompt is too long: {tokens} tokens > {window} maximum"),
            ),
        }
    }
}
