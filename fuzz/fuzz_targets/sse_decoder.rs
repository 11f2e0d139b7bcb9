//! The SSE decoder: bytes of a model's event stream, as they arrive from the network.
//!
//! Input: one selector byte, then the stream. The selector's lowest bit picks the
//! protocol (OpenAI Chat Completions or Anthropic Messages); the rest sets how the stream
//! is cut into chunks. Checks that the event-stream parser finds the same events however
//! the bytes are cut, and that decoding the provider's events and assembling a response
//! from them never panics.

#![no_main]

use bytes::Bytes;
use futures::StreamExt;
use hearth_llm::{Protocol, ResponseAssembler, SseEvent, SseParser, decode_recorded};
use libfuzzer_sys::fuzz_target;

/// Cuts `stream` into chunks of varying sizes, up to `longest` bytes each.
fn chunks(stream: &[u8], longest: usize, seed: usize) -> Vec<&[u8]> {
    let mut chunks = Vec::new();
    let mut rest = stream;
    let mut index = seed;
    while !rest.is_empty() {
        let size = (1 + index.wrapping_mul(7) % longest).min(rest.len());
        let (chunk, after) = rest.split_at(size);
        chunks.push(chunk);
        rest = after;
        index += 1;
    }
    chunks
}

/// The events the parser dispatches for `chunks` fed in order, then the end of stream;
/// `None` when it refuses the stream.
fn events(chunks: &[&[u8]]) -> Option<Vec<(String, String)>> {
    let mut parser = SseParser::new();
    let mut events = Vec::new();
    let mut collect = |event: SseEvent<'_>| -> Result<(), std::convert::Infallible> {
        events.push((event.event.to_owned(), event.data.to_owned()));
        Ok(())
    };
    for chunk in chunks {
        parser.feed(chunk, &mut collect).ok()?;
    }
    parser.finish(&mut collect).ok()?;
    Some(events)
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, stream)) = data.split_first() else {
        return;
    };
    let protocol = if selector & 1 == 0 {
        Protocol::OpenAiChat
    } else {
        Protocol::AnthropicMessages
    };
    let longest = usize::from(selector >> 1) + 1;
    let cut = chunks(stream, longest, usize::from(selector));

    let whole = events(&[stream]);
    assert_eq!(
        events(&cut),
        whole,
        "the events depend on how the stream was cut ({longest}-byte chunks)"
    );

    let recorded: Vec<Bytes> = cut
        .iter()
        .map(|chunk| Bytes::copy_from_slice(chunk))
        .collect();
    let mut decoded = decode_recorded(protocol, futures::stream::iter(recorded));
    let mut assembler = ResponseAssembler::new();
    futures::executor::block_on(async {
        while let Some(event) = decoded.next().await {
            match event {
                Ok(event) => assembler.push(&event),
                Err(error) => {
                    // Errors are values the user reads: rendering one must not panic.
                    std::hint::black_box(error.to_string());
                }
            }
        }
    });
    std::hint::black_box(assembler.finish());
});
