//! Stream benchmarks, printing figures (run with `cargo bench -p hearth-llm`):
//!
//! 1. SSE parse + delta assembly throughput on a recorded ~10 MB stream (tokens/s),
//!    for OpenAI and Anthropic, fed as the network delivers it (one chunk per event)
//!    and in 16 KiB blocks. Target: at least 1M tokens/s.
//! 2. The SSE layer alone, Hearth's parser against the `eventsource-stream` crate.
//! 3. The time Hearth adds between a loopback server writing the first streamed byte
//!    and the first event the client yields, next to a bare reqwest read of the same
//!    chunk. Target: at most 1 ms.

#![allow(clippy::print_stdout)]

use std::convert::Infallible;
use std::error::Error;
use std::time::{Duration, Instant};

use bytes::Bytes;
use eventsource_stream::Eventsource;
use futures::StreamExt;
use hearth_llm::{
    AnthropicClient, CancellationToken, ClientOptions, Message, ModelClient, ModelRequest,
    OpenAiClient, Protocol, ResponseAssembler, SseParser, StreamEvent, decode_recorded,
};
use hearth_test_support::{AnthropicStream, MockModelServer, OpenAiStream};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

const TARGET_BYTES: usize = 10 * 1024 * 1024;
const TOOL_FRAGMENTS: &[&str] = &["{\"ci", "ty\": ", "\"Par", "is\"}"];
const WORDS: &[&str] = &[
    "The",
    " quick",
    " brown",
    " fox",
    " jumps",
    " over",
    " the",
    " lazy",
    " dog",
    ".",
    "\n\n",
    " Ça",
    " marche",
    " «",
    "très",
    "» ",
    " bien",
    ",",
    " \"quoted\"",
    " 42",
];

/// A recorded answer: the body as the server sent it, event by event, and its token count.
struct Recording {
    events: Vec<Bytes>,
    tokens: usize,
    bytes: usize,
}

fn openai_recording() -> Recording {
    let model = "gpt-4.1-mini-2025-04-14";
    let per_event = OpenAiStream::new(model).text(" quick").to_bytes().len();
    let count = TARGET_BYTES / per_event;
    let mut stream = OpenAiStream::new(model).role();
    for (position, word) in WORDS.iter().cycle().take(count).enumerate() {
        // One delta in five is reasoning, as a reasoning model streams it.
        stream = if position % 5 == 0 {
            stream.reasoning_content(word)
        } else {
            stream.text(word)
        };
    }
    stream = stream.tool_call(0, "call_bench", "weather");
    for fragment in TOOL_FRAGMENTS {
        stream = stream.tool_arguments(0, fragment);
    }
    let tokens = count + TOOL_FRAGMENTS.len();
    finish(
        stream
            .finish("tool_calls")
            .usage(1000, tokens as u64)
            .done()
            .steps(),
        tokens,
    )
}

fn anthropic_recording() -> Recording {
    let model = "claude-sonnet-4-5";
    let per_event = AnthropicStream::new(model)
        .block_delta(
            0,
            &serde_json::json!({"type": "text_delta", "text": " quick"}),
        )
        .to_bytes()
        .len();
    let count = TARGET_BYTES / per_event;
    let pieces: Vec<&str> = WORDS.iter().copied().cycle().take(count).collect();
    let tokens = count + TOOL_FRAGMENTS.len();
    let stream = AnthropicStream::new(model)
        .message_start(1000)
        .ping()
        .text_block(&pieces)
        .tool_use_block("toolu_bench", "weather", TOOL_FRAGMENTS)
        .message_delta("tool_use", tokens as u64)
        .message_stop();
    finish(stream.steps(), tokens)
}

fn finish(steps: Vec<hearth_test_support::model_server::Step>, tokens: usize) -> Recording {
    let events: Vec<Bytes> = steps
        .into_iter()
        .filter_map(|step| match step {
            hearth_test_support::model_server::Step::Send(bytes) => Some(Bytes::from(bytes)),
            _ => None,
        })
        .collect();
    let bytes = events.iter().map(Bytes::len).sum();
    Recording {
        events,
        tokens,
        bytes,
    }
}

fn blocks(recording: &Recording, size: usize) -> Vec<Bytes> {
    let whole: Vec<u8> = recording
        .events
        .iter()
        .flat_map(|event| event.iter().copied())
        .collect();
    whole.chunks(size).map(Bytes::copy_from_slice).collect()
}

/// Decodes and assembles once; returns the elapsed time and the delta count.
fn decode_once(protocol: Protocol, chunks: &[Bytes]) -> Result<(Duration, usize)> {
    let chunks = chunks.to_vec();
    let started = Instant::now();
    let mut stream = decode_recorded(protocol, futures::stream::iter(chunks));
    let mut assembler = ResponseAssembler::new();
    let mut deltas = 0;
    futures::executor::block_on(async {
        while let Some(event) = stream.next().await {
            let event = event?;
            if matches!(
                event,
                StreamEvent::TextDelta { .. }
                    | StreamEvent::ReasoningDelta { .. }
                    | StreamEvent::ToolCallDelta { .. }
            ) {
                deltas += 1;
            }
            assembler.push(&event);
        }
        Ok::<_, Box<dyn Error>>(())
    })?;
    let elapsed = started.elapsed();
    std::hint::black_box(assembler.finish());
    Ok((elapsed, deltas))
}

fn best_of<F: FnMut() -> Result<Duration>>(runs: usize, mut run: F) -> Result<Duration> {
    let mut best = Duration::MAX;
    for _ in 0..runs {
        best = best.min(run()?);
    }
    Ok(best)
}

fn throughput(name: &str, protocol: Protocol, recording: &Recording) -> Result<()> {
    for (label, chunks) in [
        ("one chunk per event", recording.events.clone()),
        ("16 KiB blocks", blocks(recording, 16 * 1024)),
    ] {
        let (_, deltas) = decode_once(protocol, &chunks)?;
        if deltas != recording.tokens {
            return Err(format!(
                "{name}: decoded {deltas} deltas, expected {}",
                recording.tokens
            )
            .into());
        }
        let best = best_of(15, || Ok(decode_once(protocol, &chunks)?.0))?;
        let seconds = best.as_secs_f64();
        println!(
            "  {name:<9} {label:<20} {:>6.1} MB in {:>6.1} ms: {:>5.2} M tokens/s, {:>6.0} MB/s ({} tokens)",
            recording.bytes as f64 / 1e6,
            seconds * 1e3,
            recording.tokens as f64 / seconds / 1e6,
            recording.bytes as f64 / seconds / 1e6,
            recording.tokens,
        );
    }
    Ok(())
}

fn sse_layer(recording: &Recording) -> Result<()> {
    for (label, chunks) in [
        ("one chunk per event", recording.events.clone()),
        ("16 KiB blocks", blocks(recording, 16 * 1024)),
    ] {
        let hearth = best_of(15, || {
            let started = Instant::now();
            let mut parser = SseParser::new();
            let mut count = 0usize;
            for chunk in &chunks {
                parser
                    .feed(chunk, &mut |event| {
                        count += event.data.len();
                        Ok::<(), ()>(())
                    })
                    .map_err(|_| "parse failed")?;
            }
            std::hint::black_box(count);
            Ok(started.elapsed())
        })?;
        let crate_time = best_of(5, || {
            let stream = futures::stream::iter(chunks.iter().cloned().map(Ok::<Bytes, Infallible>));
            let started = Instant::now();
            let count = futures::executor::block_on(stream.eventsource().fold(
                0usize,
                |count, event| async move {
                    count + event.map(|event| event.data.len()).unwrap_or_default()
                },
            ));
            std::hint::black_box(count);
            Ok(started.elapsed())
        })?;
        let rate = |elapsed: Duration| recording.bytes as f64 / elapsed.as_secs_f64() / 1e6;
        println!(
            "  {label:<20} Hearth SseParser {:>7.0} MB/s   eventsource-stream {:>6.0} MB/s",
            rate(hearth),
            rate(crate_time)
        );
    }
    Ok(())
}

struct Latencies(Vec<Duration>);

impl Latencies {
    fn report(mut self, label: &str) {
        self.0.sort_unstable();
        let at = |q: f64| self.0[((self.0.len() - 1) as f64 * q).round() as usize];
        let micros = |d: Duration| d.as_secs_f64() * 1e6;
        println!(
            "  {label:<44} median {:>6.1} µs   p90 {:>6.1} µs   p99 {:>6.1} µs   max {:>7.1} µs",
            micros(at(0.5)),
            micros(at(0.9)),
            micros(at(0.99)),
            micros(at(1.0))
        );
    }
}

const LATENCY_RUNS: usize = 200;
const PAUSE: Duration = Duration::from_millis(5);

async fn client_latency(
    server: &MockModelServer,
    client: &dyn ModelClient,
    script: impl Fn() -> hearth_test_support::MockResponse,
) -> Result<Latencies> {
    let mut samples = Vec::new();
    for run in 0..LATENCY_RUNS + 10 {
        let index = server.requests().len();
        server.enqueue(script());
        let request = ModelRequest::new("m").with_message(Message::user("say ping"));
        let mut stream = client.stream(request, CancellationToken::new());
        let first = stream.next().await.ok_or("no event")??;
        let at = Instant::now();
        std::hint::black_box(first);
        while let Some(event) = stream.next().await {
            event?;
        }
        let timing = server.timing(index).ok_or("no timing")?;
        let sent = *timing.chunks_sent_at.first().ok_or("nothing sent")?;
        if run >= 10 {
            samples.push(at.saturating_duration_since(sent));
        }
    }
    Ok(Latencies(samples))
}

async fn raw_latency(server: &MockModelServer) -> Result<Latencies> {
    let http = reqwest::Client::builder()
        .no_proxy()
        .tcp_nodelay(true)
        .build()?;
    let mut samples = Vec::new();
    for run in 0..LATENCY_RUNS + 10 {
        let index = server.requests().len();
        server.enqueue(
            OpenAiStream::new("m")
                .pause(PAUSE)
                .text("ping")
                .finish("stop")
                .done(),
        );
        let mut response = http
            .post(server.url_with("/v1/chat/completions"))
            .body("{}")
            .send()
            .await?;
        response.chunk().await?.ok_or("empty body")?;
        let at = Instant::now();
        while response.chunk().await?.is_some() {}
        let timing = server.timing(index).ok_or("no timing")?;
        let sent = *timing.chunks_sent_at.first().ok_or("nothing sent")?;
        if run >= 10 {
            samples.push(at.saturating_duration_since(sent));
        }
    }
    Ok(Latencies(samples))
}

async fn latency() -> Result<()> {
    let server = MockModelServer::start().await?;
    raw_latency(&server)
        .await?
        .report("bare reqwest: first chunk read");
    let openai = OpenAiClient::new(ClientOptions::new("bench", &server.url_with("/v1"))?)?;
    client_latency(&server, &openai, || {
        OpenAiStream::new("m")
            .pause(PAUSE)
            .text("ping")
            .finish("stop")
            .done()
            .into()
    })
    .await?
    .report("Hearth OpenAI client: first event");
    let anthropic = AnthropicClient::new(ClientOptions::new("bench", &server.url())?)?;
    client_latency(&server, &anthropic, || {
        AnthropicStream::new("m")
            .pause(PAUSE)
            .message_start(1)
            .text_block(&["ping"])
            .message_delta("end_turn", 1)
            .message_stop()
            .into()
    })
    .await?
    .report("Hearth Anthropic client: first event");
    Ok(())
}

fn main() -> Result<()> {
    println!("SSE parse + delta assembly throughput (recorded stream, best of 15):");
    let openai = openai_recording();
    throughput("OpenAI", Protocol::OpenAiChat, &openai)?;
    let anthropic = anthropic_recording();
    throughput("Anthropic", Protocol::AnthropicMessages, &anthropic)?;

    println!("SSE layer alone on the OpenAI recording:");
    sse_layer(&openai)?;

    println!(
        "Time from the server's first streamed byte to the first event ({LATENCY_RUNS} calls on a warm loopback connection, {} ms after the headers):",
        PAUSE.as_millis()
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(latency())?;
    Ok(())
}
