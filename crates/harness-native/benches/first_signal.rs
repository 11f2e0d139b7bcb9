//! The time Hearth's agent loop adds between a loopback model server writing the first
//! streamed byte and the first progress signal the agent hands the host (a text delta
//! at the event sink), next to the model client's own first event. Target: at most
//! 1 ms added. Run with `cargo bench -p hearth-harness-native --bench first_signal`.

#![allow(clippy::print_stdout)]

use std::error::Error;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hearth_core::{
    ChatContext, ChatOrigin, ChatSeed, ChatUri, CreateChatRequest, EventSink, Harness,
    HarnessEvent, HarnessId, Scope, SessionId, SessionUri, Signal, TurnId, UserMessage,
};
use hearth_harness_native::{AgentSettings, NativeHarness, NoTools};
use hearth_llm::{ClientOptions, ModelClient, OpenAiClient};
use hearth_test_support::{MockModelServer, OpenAiStream};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

const RUNS: usize = 200;
const WARM_UP: usize = 10;
/// The server waits this long after the headers, so the first body byte is timed alone.
const PAUSE: Duration = Duration::from_millis(5);

fn report(label: &str, mut samples: Vec<Duration>) {
    samples.sort_unstable();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "  {label:<44} median {:>6.1} µs   p90 {:>6.1} µs   p99 {:>6.1} µs",
        micros(at(0.5)),
        micros(at(0.9)),
        micros(at(0.99)),
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let server = MockModelServer::start().await?;
    let client: Arc<dyn ModelClient> = Arc::new(OpenAiClient::new(ClientOptions::new(
        "bench",
        &server.url_with("/v1"),
    )?)?);
    let agent = Arc::new(NativeHarness::new(
        HarnessId::parse("bench")?,
        client,
        Some("m".into()),
        Arc::new(NoTools),
        AgentSettings::default().with_titles(false),
    ));
    let first_signal: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
    let seen = Arc::clone(&first_signal);
    agent.attach(EventSink::from_fn(move |event| {
        if let HarnessEvent::Progress {
            signal: Signal::TextDelta { .. },
            ..
        } = event
        {
            let mut first = seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            first.get_or_insert_with(Instant::now);
        }
    }));
    let session = SessionUri::new(HarnessId::parse("bench")?, SessionId::generate());
    let chat = ChatUri::default_for(&session);
    let context = ChatContext {
        session: session.clone(),
        chat: chat.clone(),
        origin: ChatOrigin::User,
        scope: Scope::Global,
        working_directories: Vec::new(),
        customizations: None,
        model: None,
    };
    agent
        .create_chat(
            &context,
            CreateChatRequest {
                seed: ChatSeed::Fresh,
                title: None,
            },
        )
        .await?;
    let mut samples = Vec::new();
    for run in 0..RUNS + WARM_UP {
        let index = server.requests().len();
        server.enqueue(
            OpenAiStream::new("m")
                .pause(PAUSE)
                .text("ping")
                .finish("stop")
                .done(),
        );
        *first_signal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        agent
            .send(&context, TurnId::generate(), UserMessage::text("say ping"))
            .await?;
        let signalled = first_signal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .ok_or("no text delta was signalled")?;
        let timing = server.timing(index).ok_or("no timing")?;
        let sent = *timing.chunks_sent_at.first().ok_or("nothing sent")?;
        if run >= WARM_UP {
            samples.push(signalled.saturating_duration_since(sent));
        }
    }
    println!(
        "Server's first streamed byte → first progress signal of the native agent ({RUNS} turns, loopback):"
    );
    report("NativeHarness over OpenAI client: first signal", samples);
    Ok(())
}
