//! A model that plays a script of turns to a real agent, in the agent's wire format.
//!
//! A real agent sends two kinds of requests to its model. Those of its own loop carry
//! the agent's tools: each is answered with the next scripted [`ModelTurn`] (after a
//! tool call, the agent sends the tool's result in its next request, which takes the
//! next turn). The others — token counts, title generation, model lists, connectivity
//! checks — come in an order that is not fixed; they are answered from their contents,
//! the same way every time, and take no turn.

use std::collections::VecDeque;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::Notify;

use super::wire::{self, Incoming};
use crate::model_server::{MockModelServer, MockResponse, RecordedRequest, Responder};

/// The wire format an agent speaks to its model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WireFormat {
    /// Anthropic Messages: `POST /v1/messages` (SSE), `/v1/messages/count_tokens`.
    AnthropicMessages,
    /// OpenAI Responses: `POST /v1/responses` (SSE).
    OpenAiResponses,
    /// Gemini: `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`,
    /// `:generateContent`, `:countTokens`.
    GeminiGenerateContent,
    /// OpenAI Chat Completions: `POST /v1/chat/completions` (SSE).
    OpenAiChat,
}

/// One answer of the model to a request of the agent's loop.
#[derive(Clone, Debug)]
pub enum ModelTurn {
    /// A text answer, in one delta.
    Text(String),
    /// A text answer streamed in these pieces.
    Chunks(Vec<String>),
    /// A text answer streamed in these pieces by a slow model: `pause` before every
    /// event of the stream after the first (a non-streamed answer comes whole).
    Paced {
        /// The pieces, one delta each.
        pieces: Vec<String>,
        /// The pause between events.
        pause: Duration,
    },
    /// A call of the agent's own file-writing tool that creates `path` (absolute) with
    /// `content`, with the name and arguments that agent advertises:
    ///
    /// - Claude (`claude`): `Write {file_path, content}`;
    /// - Claude (`claude-code`): `mcp__acp__Write {file_path, content}` (taken when the
    ///   request advertises it, else `Write`);
    /// - Codex: `apply_patch`, a freeform tool, with `*** Begin Patch`, `*** Add File:
    ///   <path>`, one `+` line per line of `content`, `*** End Patch` (so the file ends
    ///   with a newline, and `content` must not be empty);
    /// - Gemini: `write_file {file_path, content}`;
    /// - OpenCode: `write {filePath, content}`;
    /// - Copilot: `create {path, file_text}` (taken when the request advertises it and
    ///   no `write`).
    WriteFile {
        /// The file, absolute.
        path: PathBuf,
        /// Its content.
        content: String,
    },
    /// A call of any tool of the agent, by name, with these arguments (an object; for a
    /// freeform tool of Codex, a string).
    ToolCall {
        /// The tool's name, as the agent advertises it.
        name: String,
        /// Its arguments.
        arguments: Value,
    },
    /// A call of the tool the request advertises whose name ends with `suffix` (after
    /// a separator: `_`, `-`, `.`, `:` or `/`, or the whole name), with these arguments:
    /// how a test calls a tool of an MCP server lent to the agent, which each agent
    /// names its own way (Claude `mcp__<server>__<tool>`, OpenCode `<server>_<tool>`,
    /// ...). When no advertised tool fits, the model answers with a text that says so
    /// and lists the tools it was offered.
    ToolCallEndingWith {
        /// The end of the tool's name (the tool's own name on its server).
        suffix: String,
        /// Its arguments (an object).
        arguments: Value,
    },
    /// This response, as it is (an error, a fault, an unusual stream).
    Response(MockResponse),
}

impl ModelTurn {
    /// [`ModelTurn::Text`].
    pub fn text(text: &str) -> Self {
        ModelTurn::Text(text.to_owned())
    }

    /// [`ModelTurn::Paced`].
    pub fn paced(pieces: &[&str], pause: Duration) -> Self {
        ModelTurn::Paced {
            pieces: pieces.iter().map(|piece| (*piece).to_owned()).collect(),
            pause,
        }
    }

    /// [`ModelTurn::ToolCallEndingWith`].
    pub fn tool_call_ending_with(suffix: &str, arguments: Value) -> Self {
        ModelTurn::ToolCallEndingWith {
            suffix: suffix.to_owned(),
            arguments,
        }
    }

    /// [`ModelTurn::WriteFile`].
    pub fn write_file(path: impl Into<PathBuf>, content: &str) -> Self {
        ModelTurn::WriteFile {
            path: path.into(),
            content: content.to_owned(),
        }
    }
}

/// A request of the agent's loop, and the turn it was answered with (`None`: the script
/// was empty, and the agent was told so in a text answer).
#[derive(Clone, Debug)]
pub struct ServedTurn {
    /// The request.
    pub request: RecordedRequest,
    /// The turn that answered it.
    pub turn: Option<ModelTurn>,
}

/// The text an agent receives for a turn that was not scripted.
pub const UNSCRIPTED_TEXT: &str = "Hearth's mock model has no turn scripted for this request.";

/// A scripted model for one wire format. Clones share the script.
#[derive(Clone)]
pub struct ScriptedModel {
    script: Arc<Script>,
}

struct Script {
    format: WireFormat,
    state: Mutex<State>,
    changed: Notify,
}

#[derive(Default)]
struct State {
    turns: VecDeque<ModelTurn>,
    served: Vec<ServedTurn>,
    incidental: Vec<RecordedRequest>,
    calls: u64,
}

impl fmt::Debug for ScriptedModel {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.lock();
        formatter
            .debug_struct("ScriptedModel")
            .field("format", &self.script.format)
            .field("pending", &state.turns.len())
            .field("served", &state.served.len())
            .finish()
    }
}

impl ScriptedModel {
    /// An empty script in `format`.
    pub fn new(format: WireFormat) -> Self {
        Self {
            script: Arc::new(Script {
                format,
                state: Mutex::new(State::default()),
                changed: Notify::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.script
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The wire format.
    pub fn format(&self) -> WireFormat {
        self.script.format
    }

    /// Appends a turn to the script.
    pub fn push(&self, turn: ModelTurn) -> &Self {
        self.lock().turns.push_back(turn);
        self
    }

    /// Makes this script the responder of `server`.
    pub fn install(&self, server: &MockModelServer) {
        server.set_responder(self.responder());
    }

    /// This script as a responder, for [`MockModelServer::set_responder`].
    pub fn responder(&self) -> Responder {
        let model = self.clone();
        Arc::new(move |request: &RecordedRequest| model.respond(request))
    }

    /// Turns not served yet.
    pub fn pending(&self) -> usize {
        self.lock().turns.len()
    }

    /// The requests of the agent's loop so far, with what answered each.
    pub fn served(&self) -> Vec<ServedTurn> {
        self.lock().served.clone()
    }

    /// The requests answered without taking a turn (token counts, titles, ...).
    pub fn incidental(&self) -> Vec<RecordedRequest> {
        self.lock().incidental.clone()
    }

    /// The names of the tools a request of this wire format advertises, in order (a
    /// tool inside a Responses `namespace` tool, as Codex offers an MCP server's, as
    /// `<namespace>/<tool>`).
    pub fn advertised_tools(&self, request: &RecordedRequest) -> Vec<String> {
        wire::advertised(self.script.format, &request.json())
            .into_iter()
            .map(|(name, _)| name)
            .collect()
    }

    /// The tool of `request` that [`ModelTurn::ToolCallEndingWith`] with `suffix`
    /// calls, if the request advertises one.
    pub fn tool_ending_with(&self, request: &RecordedRequest, suffix: &str) -> Option<String> {
        wire::ending_with(&self.advertised_tools(request), suffix).map(str::to_owned)
    }

    /// Waits (at most `timeout`) until `count` requests of the agent's loop have been
    /// answered; returns whether they have.
    pub async fn wait_for_served(&self, count: usize, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let changed = self.script.changed.notified();
            if self.lock().served.len() >= count {
                return true;
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                return self.lock().served.len() >= count;
            }
        }
    }

    /// The answer to `request`: the next turn for a request of the agent's loop, a fixed
    /// answer for an incidental one, `None` for a request this wire format does not
    /// know (the server's queues answer it).
    pub fn respond(&self, request: &RecordedRequest) -> Option<MockResponse> {
        let format = self.script.format;
        let response = match wire::classify(format, request) {
            Incoming::Unknown => return None,
            Incoming::Incidental(response) => {
                self.lock().incidental.push(request.clone());
                response
            }
            Incoming::Turn(call) => {
                let mut state = self.lock();
                state.calls += 1;
                let number = state.calls;
                let turn = state.turns.pop_front();
                state.served.push(ServedTurn {
                    request: request.clone(),
                    turn: turn.clone(),
                });
                drop(state);
                let turn = turn.unwrap_or_else(|| ModelTurn::text(UNSCRIPTED_TEXT));
                wire::render(format, &call, &turn, number)
            }
        };
        self.script.changed.notify_waiters();
        Some(response)
    }
}
