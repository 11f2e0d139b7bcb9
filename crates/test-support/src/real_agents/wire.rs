//! Each wire format's side of a scripted model: which requests are turns of the
//! agent's loop, the fixed answers to the incidental ones, and a turn rendered as the
//! agent expects it (streamed or whole, with the tool names the request advertises).

use std::path::Path;

use serde_json::{Value, json};

use super::scripted::{ModelTurn, WireFormat};
use crate::model_server::{
    AnthropicStream, GeminiStream, MockResponse, OpenAiStream, RecordedRequest, ResponsesStream,
    anthropic_count_tokens, gemini_count_tokens, gemini_response, openai_completion,
};

/// What incidental requests that want text (titles, summaries) are answered with.
pub(super) const INCIDENTAL_TEXT: &str = "Hearth test session";

/// What Gemini CLI's JSON-mode checks (next speaker, loop detection) are answered with.
const GEMINI_JSON_TEXT: &str = r#"{"next_speaker": "user", "reasoning": "Hearth's mock model hands every turn back to the user."}"#;

/// The kind of a tool of the Responses API that holds other tools (an MCP server's, for
/// Codex).
const NAMESPACE: &str = "namespace";

/// How a request is answered.
pub(super) enum Incoming {
    /// A request of the agent's loop: it takes the next turn.
    Turn(TurnRequest),
    /// An incidental request, answered at once.
    Incidental(MockResponse),
    /// Not a request of this wire format.
    Unknown,
}

/// What rendering a turn needs from its request.
pub(super) struct TurnRequest {
    stream: bool,
    model: String,
    /// The tools advertised: (name, kind) with kind `function` or `custom`.
    tools: Vec<(String, String)>,
    input_tokens: u64,
}

impl TurnRequest {
    fn advertises(&self, name: &str) -> bool {
        self.tools.iter().any(|(tool, _)| tool == name)
    }

    fn is_custom(&self, name: &str) -> bool {
        self.tools
            .iter()
            .any(|(tool, kind)| tool == name && kind == "custom")
    }

    /// The namespace and the tool's own name, for a tool listed as `<namespace>/<tool>`.
    fn namespaced<'a>(&self, name: &'a str) -> Option<(&'a str, &'a str)> {
        self.tools
            .iter()
            .any(|(tool, kind)| tool == name && kind == NAMESPACE)
            .then(|| name.rsplit_once('/'))
            .flatten()
    }
}

/// The reply a turn becomes, before it is put in a wire format.
enum Reply {
    Text(Vec<String>),
    Call {
        id: String,
        name: String,
        arguments: Arguments,
    },
}

enum Arguments {
    Json(Value),
    Freeform(String),
}

impl Arguments {
    fn to_json_text(&self) -> String {
        match self {
            Arguments::Json(value) => value.to_string(),
            Arguments::Freeform(text) => Value::String(text.clone()).to_string(),
        }
    }

    fn to_value(&self) -> Value {
        match self {
            Arguments::Json(value) => value.clone(),
            Arguments::Freeform(text) => Value::String(text.clone()),
        }
    }
}

fn estimate_tokens(bytes: usize) -> u64 {
    u64::try_from(bytes / 4).unwrap_or(u64::MAX).max(1)
}

fn is_post(request: &RecordedRequest) -> bool {
    request.method == "POST"
}

fn is_read(request: &RecordedRequest) -> bool {
    request.method == "GET" || request.method == "HEAD"
}

fn route(request: &RecordedRequest) -> &str {
    request.path.split('?').next().unwrap_or_default()
}

fn text_of(value: &Value, key: &str) -> String {
    value[key].as_str().unwrap_or_default().to_owned()
}

/// The tools advertised in a request body, as (name, kind).
pub(super) fn advertised(format: WireFormat, body: &Value) -> Vec<(String, String)> {
    let tools = body["tools"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    match format {
        WireFormat::AnthropicMessages => tools
            .iter()
            .map(|tool| (text_of(tool, "name"), "function".to_owned()))
            .collect(),
        // Codex offers an MCP server's tools in a `namespace` tool: each is listed as
        // `<namespace>/<tool>`, of kind `namespace`.
        WireFormat::OpenAiResponses => tools
            .iter()
            .flat_map(|tool| match text_of(tool, "type").as_str() {
                NAMESPACE => {
                    let namespace = text_of(tool, "name");
                    tool["tools"]
                        .as_array()
                        .map(Vec::as_slice)
                        .unwrap_or_default()
                        .iter()
                        .map(|inner| {
                            (
                                format!("{namespace}/{}", text_of(inner, "name")),
                                NAMESPACE.to_owned(),
                            )
                        })
                        .collect::<Vec<_>>()
                }
                kind => vec![(text_of(tool, "name"), kind.to_owned())],
            })
            .collect(),
        WireFormat::GeminiGenerateContent => tools
            .iter()
            .flat_map(|tool| {
                tool["functionDeclarations"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .map(|declaration| (text_of(&declaration, "name"), "function".to_owned()))
            .collect(),
        WireFormat::OpenAiChat => tools
            .iter()
            .map(|tool| (text_of(&tool["function"], "name"), "function".to_owned()))
            .collect(),
    }
}

/// The name among `tools` that ends with `suffix` after a separator (or is `suffix`).
pub(super) fn ending_with<'a>(tools: &'a [String], suffix: &str) -> Option<&'a str> {
    tools
        .iter()
        .map(String::as_str)
        .find(|name| name == &suffix)
        .or_else(|| {
            tools.iter().map(String::as_str).find(|name| {
                name.strip_suffix(suffix)
                    .and_then(|head| head.chars().last())
                    .is_some_and(|separator| matches!(separator, '_' | '-' | '.' | ':' | '/'))
            })
        })
}

/// Sorts a request: a turn (it advertises the agent's tools), an incidental request of
/// this format, or unknown.
pub(super) fn classify(format: WireFormat, request: &RecordedRequest) -> Incoming {
    let body = request.json();
    let tools = advertised(format, &body);
    let input_tokens = estimate_tokens(request.body.len());
    let model_in_body = text_of(&body, "model");
    let path = route(request);
    match format {
        WireFormat::AnthropicMessages => {
            if is_read(request) && path == "/" {
                // Claude Code checks that the base URL answers before its first call.
                return Incoming::Incidental(MockResponse::text(200, "text/plain", ""));
            }
            if is_read(request) && path == "/v1/models" {
                return Incoming::Incidental(MockResponse::json(
                    200,
                    &json!({"data": [], "has_more": false, "first_id": null, "last_id": null}),
                ));
            }
            if is_post(request) && path == "/v1/messages/count_tokens" {
                return Incoming::Incidental(MockResponse::json(
                    200,
                    &anthropic_count_tokens(input_tokens),
                ));
            }
            if !(is_post(request) && path == "/v1/messages") {
                return Incoming::Unknown;
            }
        }
        WireFormat::OpenAiResponses => {
            if is_read(request) && path == "/v1/models" {
                return Incoming::Incidental(MockResponse::json(200, &json!({"models": []})));
            }
            if !(is_post(request) && path == "/v1/responses") {
                return Incoming::Unknown;
            }
        }
        WireFormat::GeminiGenerateContent => {
            if is_read(request) && path.starts_with("/v1beta/models") && !path.contains(':') {
                return Incoming::Incidental(MockResponse::json(200, &json!({"models": []})));
            }
            if !is_post(request) || !path.starts_with("/v1beta/models/") {
                return Incoming::Unknown;
            }
            if path.ends_with(":countTokens") {
                return Incoming::Incidental(MockResponse::json(
                    200,
                    &gemini_count_tokens(input_tokens),
                ));
            }
            if !(path.ends_with(":streamGenerateContent") || path.ends_with(":generateContent")) {
                return Incoming::Unknown;
            }
        }
        WireFormat::OpenAiChat => {
            if is_read(request) && path == "/v1/models" {
                return Incoming::Incidental(MockResponse::json(
                    200,
                    &json!({"object": "list", "data": [
                        {"id": super::setup::OPENCODE_MODEL, "object": "model", "created": 0, "owned_by": "hearth"},
                    ]}),
                ));
            }
            if !(is_post(request) && path == "/v1/chat/completions") {
                return Incoming::Unknown;
            }
        }
    }
    let stream = match format {
        WireFormat::GeminiGenerateContent => path.ends_with(":streamGenerateContent"),
        _ => body["stream"].as_bool().unwrap_or(false),
    };
    let model = match format {
        // The model is in the path: /v1beta/models/<model>:<method>.
        WireFormat::GeminiGenerateContent => path
            .trim_start_matches("/v1beta/models/")
            .split(':')
            .next()
            .unwrap_or_default()
            .to_owned(),
        _ => model_in_body,
    };
    let call = TurnRequest {
        stream,
        model,
        tools,
        input_tokens,
    };
    if call.tools.is_empty() {
        let text = match format {
            WireFormat::GeminiGenerateContent if wants_json(&body) => GEMINI_JSON_TEXT,
            _ => INCIDENTAL_TEXT,
        };
        let reply = Reply::Text(vec![text.to_owned()]);
        return Incoming::Incidental(render_reply(format, &call, reply));
    }
    Incoming::Turn(call)
}

/// Whether a Gemini request asks for a JSON answer (`responseMimeType` or a schema).
fn wants_json(body: &Value) -> bool {
    let config = &body["generationConfig"];
    config["responseMimeType"].as_str() == Some("application/json")
        || !config["responseSchema"].is_null()
        || !config["responseJsonSchema"].is_null()
}

/// A patch of Codex's `apply_patch` that creates `path` with `content`.
fn add_file_patch(path: &Path, content: &str) -> String {
    let mut patch = format!("*** Begin Patch\n*** Add File: {}\n", path.display());
    for line in content.lines() {
        patch.push('+');
        patch.push_str(line);
        patch.push('\n');
    }
    patch.push_str("*** End Patch\n");
    patch
}

/// What a turn becomes: a reply to put in the wire format, or a response sent as it is.
enum Answer {
    Reply(Reply),
    AsIs(MockResponse),
}

/// The turn as an answer to this request of this format.
fn answer(format: WireFormat, call: &TurnRequest, turn: &ModelTurn, number: u64) -> Answer {
    let id = match format {
        WireFormat::AnthropicMessages => format!("toolu_hearth_{number}"),
        _ => format!("call_hearth_{number}"),
    };
    let reply = match turn {
        ModelTurn::Text(text) => Reply::Text(vec![text.clone()]),
        ModelTurn::Chunks(pieces) | ModelTurn::Paced { pieces, .. } => Reply::Text(pieces.clone()),
        ModelTurn::Response(response) => return Answer::AsIs(response.clone()),
        ModelTurn::ToolCall { name, arguments } => {
            let arguments = match arguments {
                Value::String(text) if call.is_custom(name) => Arguments::Freeform(text.clone()),
                other => Arguments::Json(other.clone()),
            };
            Reply::Call {
                id,
                name: name.clone(),
                arguments,
            }
        }
        ModelTurn::ToolCallEndingWith { suffix, arguments } => {
            let names: Vec<String> = call.tools.iter().map(|(name, _)| name.clone()).collect();
            match ending_with(&names, suffix) {
                Some(name) => Reply::Call {
                    id,
                    name: name.to_owned(),
                    arguments: Arguments::Json(arguments.clone()),
                },
                None => Reply::Text(vec![format!(
                    "Hearth's mock model was to call a tool ending with `{suffix}`, and none of the tools offered is one: {}",
                    names.join(", ")
                )]),
            }
        }
        ModelTurn::WriteFile { path, content } => {
            let file_path = path.to_string_lossy().into_owned();
            // Copilot advertises `create`, OpenCode `write`.
            let creates_with_create = call.advertises("create") && !call.advertises("write");
            let (name, arguments) = match format {
                WireFormat::AnthropicMessages => {
                    let name = if call.advertises("mcp__acp__Write") {
                        "mcp__acp__Write"
                    } else {
                        "Write"
                    };
                    (
                        name,
                        Arguments::Json(json!({"file_path": file_path, "content": content})),
                    )
                }
                WireFormat::OpenAiResponses => {
                    let patch = add_file_patch(path, content);
                    let arguments = if call.is_custom("apply_patch") {
                        Arguments::Freeform(patch)
                    } else {
                        Arguments::Json(json!({"input": patch}))
                    };
                    ("apply_patch", arguments)
                }
                WireFormat::GeminiGenerateContent => (
                    "write_file",
                    Arguments::Json(json!({"file_path": file_path, "content": content})),
                ),
                WireFormat::OpenAiChat if creates_with_create => (
                    "create",
                    Arguments::Json(json!({"path": file_path, "file_text": content})),
                ),
                WireFormat::OpenAiChat => (
                    "write",
                    Arguments::Json(json!({"filePath": file_path, "content": content})),
                ),
            };
            Reply::Call {
                id,
                name: name.to_owned(),
                arguments,
            }
        }
    };
    Answer::Reply(reply)
}

/// Renders a turn for a request of the agent's loop.
pub(super) fn render(
    format: WireFormat,
    call: &TurnRequest,
    turn: &ModelTurn,
    number: u64,
) -> MockResponse {
    let response = match answer(format, call, turn, number) {
        Answer::Reply(reply) => render_reply(format, call, reply),
        Answer::AsIs(response) => response,
    };
    match turn {
        ModelTurn::Paced { pause, .. } => response.paced(*pause),
        _ => response,
    }
}

fn render_reply(format: WireFormat, call: &TurnRequest, reply: Reply) -> MockResponse {
    let output_tokens = match &reply {
        Reply::Text(pieces) => estimate_tokens(pieces.iter().map(String::len).sum()),
        Reply::Call { arguments, .. } => estimate_tokens(arguments.to_json_text().len()),
    };
    let model = call.model.as_str();
    let input = call.input_tokens;
    match (format, call.stream) {
        (WireFormat::AnthropicMessages, true) => {
            let stream = AnthropicStream::new(model).message_start(input).ping();
            let (stream, stop) = match &reply {
                Reply::Text(pieces) => (stream.text_block(&as_strs(pieces)), "end_turn"),
                Reply::Call {
                    id,
                    name,
                    arguments,
                } => (
                    stream.tool_use_block(id, name, &[&arguments.to_json_text()]),
                    "tool_use",
                ),
            };
            stream
                .message_delta(stop, output_tokens)
                .message_stop()
                .into()
        }
        (WireFormat::AnthropicMessages, false) => {
            let (content, stop) = match &reply {
                Reply::Call {
                    id,
                    name,
                    arguments,
                } => (
                    json!([{"type": "tool_use", "id": id, "name": name, "input": arguments.to_value()}]),
                    "tool_use",
                ),
                Reply::Text(pieces) => (
                    json!([{"type": "text", "text": pieces.concat()}]),
                    "end_turn",
                ),
            };
            MockResponse::json(
                200,
                &json!({
                    "id": "msg_hearth", "type": "message", "role": "assistant", "model": model,
                    "content": content, "stop_reason": stop, "stop_sequence": null,
                    "usage": {"input_tokens": input, "output_tokens": output_tokens},
                }),
            )
        }
        (WireFormat::OpenAiResponses, stream) => {
            let builder = ResponsesStream::new(model).created();
            let builder = match &reply {
                Reply::Call {
                    id,
                    name,
                    arguments: Arguments::Freeform(input),
                } => builder.custom_tool_call(id, name, input),
                Reply::Call {
                    id,
                    name,
                    arguments,
                } => match call.namespaced(name) {
                    Some((namespace, name)) => builder.namespaced_function_call(
                        namespace,
                        id,
                        name,
                        &[&arguments.to_json_text()],
                    ),
                    None => builder.function_call(id, name, &[&arguments.to_json_text()]),
                },
                _ => builder.message(&as_strs(&text_pieces(&reply))),
            };
            if stream {
                builder.completed(input, output_tokens).into()
            } else {
                MockResponse::json(200, &builder.to_response(input, output_tokens))
            }
        }
        (WireFormat::GeminiGenerateContent, stream) => {
            let parts = match &reply {
                Reply::Call {
                    name, arguments, ..
                } => vec![json!({"functionCall": {"name": name, "args": arguments.to_value()}})],
                _ => Vec::new(),
            };
            match (stream, parts.is_empty()) {
                (true, true) => GeminiStream::text_answer(
                    model,
                    &as_strs(&text_pieces(&reply)),
                    input,
                    output_tokens,
                )
                .into(),
                (true, false) => GeminiStream::new(model)
                    .last_parts(&parts, "STOP", input, output_tokens)
                    .into(),
                (false, true) => MockResponse::json(
                    200,
                    &gemini_response(model, &[json!({"text": joined(&reply)})]),
                ),
                (false, false) => MockResponse::json(200, &gemini_response(model, &parts)),
            }
        }
        (WireFormat::OpenAiChat, true) => {
            let stream = OpenAiStream::new(model).role();
            let (stream, finish) = match &reply {
                Reply::Call {
                    id,
                    name,
                    arguments,
                } => (
                    stream
                        .tool_call(0, id, name)
                        .tool_arguments(0, &arguments.to_json_text()),
                    "tool_calls",
                ),
                _ => (
                    text_pieces(&reply)
                        .iter()
                        .fold(stream, |stream, piece| stream.text(piece)),
                    "stop",
                ),
            };
            stream
                .finish(finish)
                .usage(input, output_tokens)
                .done()
                .into()
        }
        (WireFormat::OpenAiChat, false) => {
            let body = match &reply {
                Reply::Call {
                    id,
                    name,
                    arguments,
                } => openai_completion(
                    model,
                    None,
                    &[(id, name, &arguments.to_json_text())],
                    "tool_calls",
                ),
                _ => openai_completion(model, Some(&joined(&reply)), &[], "stop"),
            };
            MockResponse::json(200, &body)
        }
    }
}

fn text_pieces(reply: &Reply) -> Vec<String> {
    match reply {
        Reply::Text(pieces) => pieces.clone(),
        Reply::Call { .. } => Vec::new(),
    }
}

fn joined(reply: &Reply) -> String {
    text_pieces(reply).concat()
}

fn as_strs(pieces: &[String]) -> Vec<&str> {
    pieces.iter().map(String::as_str).collect()
}
