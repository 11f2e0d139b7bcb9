//! Chat Completions answers, streamed (`chat.completion.chunk` events) or whole, read
//! into [`StreamEvent`]s with lenient types.

use hearth_core::Usage;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::diagnostics::{describe_error_value, excerpt};
use crate::driver::{DecodeContext, Decoder, SseAssembly, SseDecoder};
use crate::error::{ApiError, LlmError, Result};
use crate::event::{CompletedToolCall, FinishReason, StreamEvent};
use crate::lenient;

/// Largest non-streamed answer read.
const MAX_BODY: usize = 64 * 1024 * 1024;

#[derive(Deserialize)]
struct Chunk {
    /// The first choice (`n` is never above 1 in Hearth's requests).
    #[serde(default, rename = "choices", deserialize_with = "first_choice")]
    choice: Option<Choice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default, deserialize_with = "lenient::index")]
    index: Option<usize>,
    #[serde(default, alias = "message")]
    delta: Option<Delta>,
    #[serde(default, deserialize_with = "lenient::text")]
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct Delta {
    #[serde(default, deserialize_with = "lenient::text")]
    content: Option<String>,
    #[serde(default, deserialize_with = "lenient::text")]
    reasoning_content: Option<String>,
    #[serde(default, deserialize_with = "lenient::text")]
    reasoning: Option<String>,
    #[serde(default, deserialize_with = "lenient::text")]
    refusal: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Deserialize)]
struct ToolCallDelta {
    #[serde(default, deserialize_with = "lenient::index")]
    index: Option<usize>,
    #[serde(default, deserialize_with = "lenient::text")]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    #[serde(default, deserialize_with = "lenient::text")]
    name: Option<String>,
    #[serde(default, deserialize_with = "lenient::arguments")]
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default, deserialize_with = "lenient::count")]
    prompt_tokens: Option<u64>,
    #[serde(default, deserialize_with = "lenient::count")]
    completion_tokens: Option<u64>,
    #[serde(default)]
    prompt_tokens_details: Option<Details>,
    #[serde(default)]
    completion_tokens_details: Option<Details>,
}

#[derive(Deserialize)]
struct Details {
    #[serde(default, deserialize_with = "lenient::count")]
    cached_tokens: Option<u64>,
    #[serde(default, deserialize_with = "lenient::count")]
    reasoning_tokens: Option<u64>,
}

impl WireUsage {
    fn to_usage(&self) -> Usage {
        Usage {
            input_tokens: self.prompt_tokens.unwrap_or_default(),
            output_tokens: self.completion_tokens.unwrap_or_default(),
            cached_input_tokens: self
                .prompt_tokens_details
                .as_ref()
                .and_then(|details| details.cached_tokens)
                .unwrap_or_default(),
            reasoning_tokens: self
                .completion_tokens_details
                .as_ref()
                .and_then(|details| details.reasoning_tokens)
                .unwrap_or_default(),
            ..Usage::default()
        }
    }
}

/// The choice with index 0 (or without index) of a `choices` array, without collecting
/// the array; anything but an array reads as no choice.
fn first_choice<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Choice>, D::Error> {
    struct FirstChoice;

    impl<'de> Visitor<'de> for FirstChoice {
        type Value = Option<Choice>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an array of choices")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut first = None;
            while let Some(choice) = seq.next_element::<Choice>()? {
                if first.is_none() && choice.index.is_none_or(|index| index == 0) {
                    first = Some(choice);
                }
            }
            Ok(first)
        }

        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(None)
        }
    }

    deserializer.deserialize_any(FirstChoice)
}

#[derive(Default)]
struct Call {
    /// Server-side index this call arrived under.
    wire_index: Option<usize>,
    id: String,
    name: String,
    arguments: String,
    started: bool,
    completed: bool,
}

/// Assembly state shared by the streamed and the whole-answer decoders.
#[derive(Default)]
struct Assembly {
    context: DecodeContext,
    calls: Vec<Call>,
    finish: Option<FinishReason>,
    done: bool,
    /// A whole answer: each listed tool call is complete on its own.
    whole: bool,
}

impl Assembly {
    fn chunk(&mut self, chunk: Chunk, out: &mut Vec<StreamEvent>) -> Result<()> {
        if let Some(error) = chunk.error.filter(|error| !error.is_null()) {
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
        if let Some(choice) = chunk.choice {
            if let Some(delta) = choice.delta {
                self.delta(delta, out);
            }
            if let Some(reason) = choice.finish_reason {
                self.finish = Some(FinishReason::from_openai(&reason));
                self.complete_calls(out);
            }
        }
        if let Some(usage) = chunk.usage {
            out.push(StreamEvent::Usage(usage.to_usage()));
        }
        Ok(())
    }

    fn delta(&mut self, delta: Delta, out: &mut Vec<StreamEvent>) {
        let reasoning = delta
            .reasoning_content
            .filter(|text| !text.is_empty())
            .or(delta.reasoning);
        if let Some(text) = reasoning.filter(|text| !text.is_empty()) {
            out.push(StreamEvent::ReasoningDelta { text });
        }
        if let Some(text) = delta.content.filter(|text| !text.is_empty()) {
            out.push(StreamEvent::TextDelta { text });
        }
        if let Some(text) = delta.refusal.filter(|text| !text.is_empty()) {
            out.push(StreamEvent::TextDelta { text });
        }
        for (position, mut call) in delta.tool_calls.into_iter().flatten().enumerate() {
            if self.whole {
                call.index = Some(position);
            }
            self.tool_delta(call, out);
        }
    }

    fn tool_delta(&mut self, delta: ToolCallDelta, out: &mut Vec<StreamEvent>) {
        let id = delta.id.filter(|id| !id.is_empty());
        let slot = self.slot_for(delta.index, id.as_deref());
        let call = &mut self.calls[slot];
        if call.id.is_empty()
            && let Some(id) = id
        {
            call.id = id;
        }
        let (name, fragment) = match delta.function {
            Some(function) => (function.name, function.arguments.unwrap_or_default()),
            None => (None, String::new()),
        };
        if call.name.is_empty()
            && let Some(name) = name.filter(|name| !name.is_empty())
        {
            call.name = name;
        }
        call.arguments.push_str(&fragment);
        if call.started {
            if !fragment.is_empty() {
                out.push(StreamEvent::ToolCallDelta {
                    index: slot,
                    arguments: fragment,
                });
            }
        } else if !call.name.is_empty() {
            start_call(slot, call, out);
        }
    }

    /// The call a delta belongs to: by server index, unless it carries a new id (some
    /// servers restart indexes per chunk); without index, by id, else the last call.
    fn slot_for(&mut self, wire_index: Option<usize>, id: Option<&str>) -> usize {
        let open = |call: &Call| !call.completed;
        let found = match wire_index {
            Some(index) => self
                .calls
                .iter()
                .rposition(|call| call.wire_index == Some(index) && open(call)),
            None => match id {
                Some(id) => self.calls.iter().rposition(|call| call.id == id),
                None => self.calls.iter().rposition(open),
            },
        };
        match found {
            Some(slot)
                if id.is_none_or(|id| {
                    self.calls[slot].id.is_empty() || self.calls[slot].id == id
                }) =>
            {
                slot
            }
            _ => {
                self.calls.push(Call {
                    wire_index,
                    ..Call::default()
                });
                self.calls.len() - 1
            }
        }
    }

    fn complete_calls(&mut self, out: &mut Vec<StreamEvent>) {
        for (slot, call) in self.calls.iter_mut().enumerate() {
            if call.completed {
                continue;
            }
            if !call.started {
                start_call(slot, call, out);
            }
            call.completed = true;
            out.push(StreamEvent::ToolCallCompleted(CompletedToolCall {
                index: slot,
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
            }));
        }
    }

    fn finalize(&mut self, out: &mut Vec<StreamEvent>) {
        self.complete_calls(out);
        let reason = match self.finish.take() {
            Some(FinishReason::EndTurn | FinishReason::Unspecified) | None
                if !self.calls.is_empty() =>
            {
                FinishReason::ToolUse
            }
            Some(reason) => reason,
            None => FinishReason::Unspecified,
        };
        out.push(StreamEvent::Finished { reason });
        self.done = true;
    }

    fn decode_error(&self, error: &serde_json::Error, data: &str) -> LlmError {
        LlmError::Decode {
            provider: self.context.provider.clone(),
            message: format!("invalid JSON ({error}) in {}", excerpt(data)),
        }
    }
}

fn start_call(slot: usize, call: &mut Call, out: &mut Vec<StreamEvent>) {
    if call.id.is_empty() {
        call.id = format!("call_{slot}");
    }
    call.started = true;
    out.push(StreamEvent::ToolCallStarted {
        index: slot,
        id: call.id.clone(),
        name: call.name.clone(),
    });
    if !call.arguments.is_empty() {
        out.push(StreamEvent::ToolCallDelta {
            index: slot,
            arguments: call.arguments.clone(),
        });
    }
}

/// The decoder of a streamed Chat Completions answer.
pub(crate) fn stream_decoder(context: DecodeContext) -> Box<dyn Decoder> {
    SseDecoder::boxed(Assembly {
        context,
        ..Assembly::default()
    })
}

/// A streamed answer's events, whatever their names: each a chunk, or `[DONE]`.
impl SseAssembly for Assembly {
    fn event(&mut self, _name: &str, data: &str, out: &mut Vec<StreamEvent>) -> Result<()> {
        if self.done {
            return Ok(());
        }
        let data = data.trim();
        if data == "[DONE]" {
            self.finalize(out);
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        let chunk: Chunk =
            serde_json::from_str(data).map_err(|error| self.decode_error(&error, data))?;
        self.chunk(chunk, out)
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

/// Reads a whole `chat.completion` answer (non-streaming).
struct CompletionDecoder {
    body: Vec<u8>,
    assembly: Assembly,
}

/// The decoder of a non-streamed Chat Completions answer.
pub(crate) fn completion_decoder(context: DecodeContext) -> Box<dyn Decoder> {
    Box::new(CompletionDecoder {
        body: Vec::new(),
        assembly: Assembly {
            context,
            whole: true,
            ..Assembly::default()
        },
    })
}

impl Decoder for CompletionDecoder {
    fn feed(&mut self, bytes: &[u8], _out: &mut Vec<StreamEvent>) -> Result<()> {
        if self.body.len() + bytes.len() > MAX_BODY {
            return Err(LlmError::Decode {
                provider: self.assembly.context.provider.clone(),
                message: "the answer exceeded 64 MiB".to_owned(),
            });
        }
        self.body.extend_from_slice(bytes);
        Ok(())
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<()> {
        let text = String::from_utf8_lossy(&self.body);
        let chunk: Chunk = serde_json::from_str(&text)
            .map_err(|error| self.assembly.decode_error(&error, &text))?;
        if chunk.choice.is_none() && chunk.error.is_none() {
            return Err(LlmError::Decode {
                provider: self.assembly.context.provider.clone(),
                message: format!("the answer has no choices: {}", excerpt(&text)),
            });
        }
        self.assembly.chunk(chunk, out)?;
        self.assembly.finalize(out);
        Ok(())
    }

    fn is_done(&self) -> bool {
        self.assembly.done
    }
}

#[cfg(test)]
mod tests;
