//! Anthropic Messages stream events read into [`StreamEvent`]s: `message_start`,
//! `content_block_start/delta/stop` (`text_delta`, `input_json_delta`, `thinking_delta`),
//! `message_delta`, `message_stop`, `ping`, and `error` arriving after a 200.

use hearth_core::Usage;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::diagnostics::{describe_error_value, excerpt};
use crate::driver::{DecodeContext, Decoder, SseAssembly, SseDecoder};
use crate::error::{ApiError, LlmError, Result};
use crate::event::{CompletedToolCall, FinishReason, StreamEvent};
use crate::lenient;

#[derive(Deserialize)]
struct TypeProbe {
    #[serde(default, rename = "type", deserialize_with = "lenient::text")]
    kind: Option<String>,
}

#[derive(Deserialize)]
struct MessageStart {
    #[serde(default)]
    message: Option<StartMessage>,
}

#[derive(Deserialize)]
struct StartMessage {
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct BlockStart {
    #[serde(default, deserialize_with = "lenient::index")]
    index: Option<usize>,
    #[serde(default)]
    content_block: Option<Block>,
}

#[derive(Deserialize)]
struct Block {
    #[serde(default, rename = "type", deserialize_with = "lenient::text")]
    kind: Option<String>,
    #[serde(default, deserialize_with = "lenient::text")]
    text: Option<String>,
    #[serde(default, deserialize_with = "lenient::text")]
    thinking: Option<String>,
    #[serde(default, deserialize_with = "lenient::text")]
    id: Option<String>,
    #[serde(default, deserialize_with = "lenient::text")]
    name: Option<String>,
    #[serde(default)]
    input: Option<Value>,
}

#[derive(Deserialize)]
struct BlockDelta {
    #[serde(default, deserialize_with = "lenient::index")]
    index: Option<usize>,
    #[serde(default)]
    delta: Option<DeltaBody>,
}

#[derive(Deserialize)]
struct DeltaBody {
    #[serde(default, rename = "type", deserialize_with = "lenient::text")]
    kind: Option<String>,
    #[serde(default, deserialize_with = "lenient::text")]
    text: Option<String>,
    #[serde(default, deserialize_with = "lenient::text")]
    thinking: Option<String>,
    #[serde(default, deserialize_with = "lenient::text")]
    partial_json: Option<String>,
}

#[derive(Deserialize)]
struct BlockStop {
    #[serde(default, deserialize_with = "lenient::index")]
    index: Option<usize>,
}

#[derive(Deserialize)]
struct MessageDelta {
    #[serde(default)]
    delta: Option<MessageDeltaBody>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct MessageDeltaBody {
    #[serde(default, deserialize_with = "lenient::text")]
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct ErrorEvent {
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default, deserialize_with = "lenient::count")]
    input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "lenient::count")]
    output_tokens: Option<u64>,
    #[serde(default, deserialize_with = "lenient::count")]
    cache_read_input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "lenient::count")]
    cache_creation_input_tokens: Option<u64>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    Text,
    Thinking,
    Tool(usize),
    Other,
}

struct Call {
    id: String,
    name: String,
    arguments: String,
    input: Option<Value>,
    completed: bool,
}

#[derive(Default)]
struct Assembly {
    context: DecodeContext,
    blocks: Vec<(Option<usize>, BlockKind)>,
    calls: Vec<Call>,
    input_tokens: u64,
    cache_read: u64,
    cache_creation: u64,
    output_tokens: u64,
    finish: Option<FinishReason>,
    done: bool,
}

/// The decoder of a streamed Messages answer.
pub(crate) fn stream_decoder(context: DecodeContext) -> Box<dyn Decoder> {
    SseDecoder::boxed(Assembly {
        context,
        ..Assembly::default()
    })
}

impl Assembly {
    fn parse<T: DeserializeOwned>(&self, data: &str) -> Result<T> {
        serde_json::from_str(data).map_err(|error| LlmError::Decode {
            provider: self.context.provider.clone(),
            message: format!("invalid JSON ({error}) in {}", excerpt(data)),
        })
    }

    fn event(&mut self, name: &str, data: &str, out: &mut Vec<StreamEvent>) -> Result<()> {
        if self.done {
            return Ok(());
        }
        let probed;
        let name = if name == "message" {
            probed = self.parse::<TypeProbe>(data)?.kind.unwrap_or_default();
            probed.as_str()
        } else {
            name
        };
        match name {
            "message_start" => {
                let start: MessageStart = self.parse(data)?;
                if let Some(usage) = start.message.and_then(|message| message.usage) {
                    self.usage(&usage, out);
                }
            }
            "content_block_start" => {
                let start: BlockStart = self.parse(data)?;
                if let Some(block) = start.content_block {
                    self.block_start(start.index, block, out);
                }
            }
            "content_block_delta" => {
                let delta: BlockDelta = self.parse(data)?;
                if let Some(body) = delta.delta {
                    self.block_delta(delta.index, body, out);
                }
            }
            "content_block_stop" => {
                let stop: BlockStop = self.parse(data)?;
                if let Some(BlockKind::Tool(slot)) = self.block(stop.index) {
                    self.complete(slot, out);
                }
            }
            "message_delta" => {
                let delta: MessageDelta = self.parse(data)?;
                if let Some(reason) = delta.delta.and_then(|body| body.stop_reason) {
                    self.finish = Some(FinishReason::from_anthropic(&reason));
                }
                if let Some(usage) = delta.usage {
                    self.usage(&usage, out);
                }
            }
            "message_stop" => self.finalize(out),
            "error" => {
                let event: ErrorEvent = self.parse(data)?;
                let error = event.error.unwrap_or(Value::Null);
                let (message, error_type, code) = describe_error_value(&error);
                return Err(LlmError::Api(Box::new(ApiError {
                    provider: self.context.provider.clone(),
                    status: None,
                    error_type,
                    code,
                    message,
                    request_id: self.context.request_id.clone(),
                })));
            }
            // `ping` and event types added after this client was written.
            _ => {}
        }
        Ok(())
    }

    fn block(&self, index: Option<usize>) -> Option<BlockKind> {
        self.blocks
            .iter()
            .rev()
            .find(|(block, _)| *block == index)
            .map(|(_, kind)| *kind)
    }

    fn block_start(&mut self, index: Option<usize>, block: Block, out: &mut Vec<StreamEvent>) {
        let kind = match block.kind.as_deref() {
            Some("text") => {
                if let Some(text) = block.text.filter(|text| !text.is_empty()) {
                    out.push(StreamEvent::TextDelta { text });
                }
                BlockKind::Text
            }
            Some("thinking") => {
                if let Some(text) = block.thinking.filter(|text| !text.is_empty()) {
                    out.push(StreamEvent::ReasoningDelta { text });
                }
                BlockKind::Thinking
            }
            Some("tool_use") => {
                let slot = self.calls.len();
                let id = block
                    .id
                    .filter(|id| !id.is_empty())
                    .unwrap_or_else(|| format!("toolu_{slot}"));
                let name = block.name.unwrap_or_default();
                out.push(StreamEvent::ToolCallStarted {
                    index: slot,
                    id: id.clone(),
                    name: name.clone(),
                });
                self.calls.push(Call {
                    id,
                    name,
                    arguments: String::new(),
                    input: block.input,
                    completed: false,
                });
                BlockKind::Tool(slot)
            }
            _ => BlockKind::Other,
        };
        self.blocks.push((index, kind));
    }

    fn block_delta(&mut self, index: Option<usize>, body: DeltaBody, out: &mut Vec<StreamEvent>) {
        let kind = self.block(index);
        match body.kind.as_deref() {
            Some("text_delta") => {
                if let Some(text) = body.text.filter(|text| !text.is_empty()) {
                    out.push(StreamEvent::TextDelta { text });
                }
            }
            Some("thinking_delta") => {
                if let Some(text) = body.thinking.filter(|text| !text.is_empty()) {
                    out.push(StreamEvent::ReasoningDelta { text });
                }
            }
            Some("input_json_delta") => {
                if let (Some(BlockKind::Tool(slot)), Some(fragment)) = (kind, body.partial_json)
                    && !fragment.is_empty()
                    && let Some(call) = self.calls.get_mut(slot)
                {
                    call.arguments.push_str(&fragment);
                    out.push(StreamEvent::ToolCallDelta {
                        index: slot,
                        arguments: fragment,
                    });
                }
            }
            // `signature_delta`, `citations_delta` and newer kinds carry nothing shown.
            _ => {}
        }
    }

    fn complete(&mut self, slot: usize, out: &mut Vec<StreamEvent>) {
        let Some(call) = self.calls.get_mut(slot).filter(|call| !call.completed) else {
            return;
        };
        call.completed = true;
        let arguments = if call.arguments.is_empty() {
            match &call.input {
                Some(input @ Value::Object(map)) if !map.is_empty() => input.to_string(),
                _ => "{}".to_owned(),
            }
        } else {
            call.arguments.clone()
        };
        out.push(StreamEvent::ToolCallCompleted(CompletedToolCall {
            index: slot,
            id: call.id.clone(),
            name: call.name.clone(),
            arguments,
        }));
    }

    fn usage(&mut self, usage: &WireUsage, out: &mut Vec<StreamEvent>) {
        if let Some(tokens) = usage.input_tokens {
            self.input_tokens = tokens;
        }
        if let Some(tokens) = usage.cache_read_input_tokens {
            self.cache_read = tokens;
        }
        if let Some(tokens) = usage.cache_creation_input_tokens {
            self.cache_creation = tokens;
        }
        if let Some(tokens) = usage.output_tokens {
            self.output_tokens = tokens;
        }
        out.push(StreamEvent::Usage(Usage {
            input_tokens: self.input_tokens + self.cache_read + self.cache_creation,
            output_tokens: self.output_tokens,
            cached_input_tokens: self.cache_read,
            reasoning_tokens: 0,
            ..Usage::default()
        }));
    }

    fn finalize(&mut self, out: &mut Vec<StreamEvent>) {
        for slot in 0..self.calls.len() {
            self.complete(slot, out);
        }
        let reason = self.finish.take().unwrap_or(FinishReason::Unspecified);
        out.push(StreamEvent::Finished { reason });
        self.done = true;
    }
}

impl SseAssembly for Assembly {
    fn event(&mut self, name: &str, data: &str, out: &mut Vec<StreamEvent>) -> Result<()> {
        Self::event(self, name, data, out)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn has_finished(&self) -> bool {
        self.finish.is_some()
    }

    fn finalize(&mut self, out: &mut Vec<StreamEvent>) {
        Self::finalize(self, out);
    }

    fn context(&self) -> &DecodeContext {
        &self.context
    }
}
