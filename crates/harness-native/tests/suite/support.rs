//! Shared helpers: a recording sink, a test toolbox, agents pointed at the mock model
//! server, contexts.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{TimeZone, Utc};
use futures::future::BoxFuture;
use hearth_config::ClockFormat;
use hearth_core::{
    ChatContext, ChatOrigin, ChatSeed, ChatUri, CreateChatRequest, EventSink, Harness, HarnessData,
    HarnessEvent, HarnessId, ProposalId, Scope, SessionId, SessionUri, Signal, StagedProposal,
    ToolCallContext, ToolCallOutcome, ToolDescription, Toolbox, TurnId, TurnOutcome, UserMessage,
};
use hearth_harness_native::{AgentSettings, Clock, NativeHarness, UserTimeZone};
use hearth_llm::{AnthropicClient, ClientOptions, ModelClient, OpenAiClient, RetryPolicy};
use hearth_test_support::{MockModelServer, RecordedRequest};
use serde_json::{Value, json};

/// Every wait in these tests is bounded by this.
pub const WAIT: Duration = hearth_test_support::WAIT;

/// The model every mock answer names and every test agent uses by default.
pub const MODEL: &str = "mock-model";

/// Every event an agent emitted, in order.
#[derive(Clone, Default)]
pub struct Recorder {
    events: Arc<Mutex<Vec<HarnessEvent>>>,
}

impl Recorder {
    pub fn sink(&self) -> EventSink {
        let events = Arc::clone(&self.events);
        EventSink::from_fn(move |event| events.lock().unwrap().push(event))
    }

    pub fn events(&self) -> Vec<HarnessEvent> {
        self.events.lock().unwrap().clone()
    }

    /// The signals of one chat, in order.
    pub fn signals(&self, chat: &ChatUri) -> Vec<Signal> {
        self.events()
            .into_iter()
            .filter_map(|event| match event {
                HarnessEvent::Progress { chat: of, signal } if &of == chat => Some(signal),
                _ => None,
            })
            .collect()
    }

    /// The text deltas of one chat, joined.
    pub fn text(&self, chat: &ChatUri) -> String {
        self.signals(chat)
            .into_iter()
            .filter_map(|signal| match signal {
                Signal::TextDelta { text, .. } => Some(text),
                _ => None,
            })
            .collect()
    }

    /// The last blob the agent asked the host to store for a chat.
    pub fn last_blob(&self, chat: &ChatUri) -> HarnessData {
        self.signals(chat)
            .into_iter()
            .rev()
            .find_map(|signal| match signal {
                Signal::ProviderDataChanged { provider_data } => Some(provider_data),
                _ => None,
            })
            .expect("no provider data was emitted")
    }

    /// Waits (bounded) until the recorded events satisfy `ready`.
    pub async fn wait_until(&self, what: &str, ready: impl Fn(&[HarnessEvent]) -> bool) {
        let waited = tokio::time::timeout(WAIT, async {
            loop {
                if ready(&self.events()) {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        })
        .await;
        assert!(waited.is_ok(), "timed out waiting for {what}");
    }
}

/// One call the test toolbox received.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCallSeen {
    pub context: ToolCallContext,
    pub name: String,
    pub arguments: Value,
}

/// A toolbox with a read tool (`lookup`), a mutating tool (`create_event`, which only
/// stages a proposal) and a tool that never finishes (`wait`).
#[derive(Default)]
pub struct TestToolbox {
    pub calls: Mutex<Vec<ToolCallSeen>>,
}

impl TestToolbox {
    pub fn calls(&self) -> Vec<ToolCallSeen> {
        self.calls.lock().unwrap().clone()
    }

    pub fn lookup() -> ToolDescription {
        ToolDescription {
            name: "lookup".into(),
            description: "Looks up a fact.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
                "additionalProperties": false,
            }),
            mutates: false,
        }
    }

    pub fn create_event() -> ToolDescription {
        ToolDescription {
            name: "create_event".into(),
            description: "Creates a calendar event.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"title": {"type": "string"}, "start": {"type": "string"}},
                "required": ["title", "start"],
            }),
            mutates: true,
        }
    }

    pub fn wait() -> ToolDescription {
        ToolDescription {
            name: "wait".into(),
            description: "Waits for a long time.".into(),
            parameters: json!({"type": "object"}),
            mutates: false,
        }
    }
}

impl Toolbox for TestToolbox {
    fn tools(&self) -> Vec<ToolDescription> {
        vec![Self::lookup(), Self::create_event(), Self::wait()]
    }

    fn call<'a>(
        &'a self,
        call: &'a ToolCallContext,
        name: &'a str,
        arguments: Value,
    ) -> BoxFuture<'a, ToolCallOutcome> {
        self.calls.lock().unwrap().push(ToolCallSeen {
            context: call.clone(),
            name: name.to_owned(),
            arguments: arguments.clone(),
        });
        Box::pin(async move {
            match name {
                "lookup" => ToolCallOutcome {
                    content: format!(
                        "{}: high tide at 10:00",
                        arguments["query"].as_str().unwrap()
                    ),
                    is_error: false,
                    proposal: None,
                },
                "create_event" => {
                    let summary = format!(
                        "Create event '{}' at {}",
                        arguments["title"].as_str().unwrap(),
                        arguments["start"].as_str().unwrap()
                    );
                    ToolCallOutcome {
                        content: format!("Staged: {summary}. The user must approve it."),
                        is_error: false,
                        proposal: Some(StagedProposal {
                            id: ProposalId::parse("proposal-1").unwrap(),
                            summary,
                        }),
                    }
                }
                "wait" => {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                    ToolCallOutcome {
                        content: "waited".into(),
                        is_error: false,
                        proposal: None,
                    }
                }
                other => ToolCallOutcome {
                    content: format!("no tool {other}"),
                    is_error: true,
                    proposal: None,
                },
            }
        })
    }
}

/// Settings with a fixed clock in Berlin on a 24-hour clock, without titles.
pub fn settings() -> AgentSettings {
    AgentSettings::default()
        .with_time_zone(UserTimeZone::Named(chrono_tz::Tz::Europe__Berlin))
        .with_clock_format(ClockFormat::Hours24)
        .with_clock(Clock::Fixed(
            Utc.with_ymd_and_hms(2026, 3, 3, 9, 0, 0).unwrap(),
        ))
        .with_titles(false)
}

fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        max_retries: 2,
        initial_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(4),
        max_retry_after: Duration::from_secs(60),
    }
}

pub fn openai_client(server: &MockModelServer) -> Arc<dyn ModelClient> {
    let options = ClientOptions::new("mock", &server.url_with("/v1"))
        .unwrap()
        .with_retry(fast_retry());
    Arc::new(OpenAiClient::new(options).unwrap())
}

pub fn anthropic_client(server: &MockModelServer) -> Arc<dyn ModelClient> {
    let options = ClientOptions::new("claude", &server.url())
        .unwrap()
        .with_retry(fast_retry());
    Arc::new(AnthropicClient::new(options).unwrap())
}

/// An agent on `client` with the test toolbox, attached to a recorder.
pub fn agent_with(
    provider: &str,
    client: Arc<dyn ModelClient>,
    toolbox: Arc<TestToolbox>,
    settings: AgentSettings,
) -> (Arc<NativeHarness>, Recorder) {
    let agent = Arc::new(NativeHarness::new(
        HarnessId::parse(provider).unwrap(),
        client,
        Some(MODEL.into()),
        toolbox,
        settings,
    ));
    let recorder = Recorder::default();
    agent.attach(recorder.sink());
    (agent, recorder)
}

/// An OpenAI-compatible agent on the mock server with the test toolbox.
pub fn openai_agent(
    server: &MockModelServer,
    settings: AgentSettings,
) -> (Arc<NativeHarness>, Recorder, Arc<TestToolbox>) {
    let toolbox = Arc::new(TestToolbox::default());
    let (agent, recorder) = agent_with(
        "mock",
        openai_client(server),
        Arc::clone(&toolbox),
        settings,
    );
    (agent, recorder, toolbox)
}

pub fn session(provider: &str) -> SessionUri {
    SessionUri::new(HarnessId::parse(provider).unwrap(), SessionId::generate())
}

pub fn context(chat: &ChatUri, origin: ChatOrigin) -> ChatContext {
    ChatContext {
        session: chat.session(),
        chat: chat.clone(),
        origin,
        scope: Scope::Global,
        working_directories: Vec::new(),
        customizations: None,
        model: None,
    }
}

/// Creates a session's default chat in the agent.
pub async fn default_chat(agent: &NativeHarness) -> ChatContext {
    let chat = ChatUri::default_for(&session(agent.provider().as_str()));
    let context = context(&chat, ChatOrigin::User);
    create(agent, &context, ChatSeed::Fresh).await;
    context
}

pub async fn create(agent: &NativeHarness, context: &ChatContext, seed: ChatSeed) -> HarnessData {
    agent
        .create_chat(context, CreateChatRequest { seed, title: None })
        .await
        .unwrap()
        .provider_data
}

/// Sends a prompt and waits (bounded) for the turn.
pub async fn send(
    agent: &NativeHarness,
    context: &ChatContext,
    prompt: &str,
) -> (TurnId, TurnOutcome) {
    let turn_id = TurnId::generate();
    let outcome = tokio::time::timeout(
        WAIT,
        agent.send(context, turn_id.clone(), UserMessage::text(prompt)),
    )
    .await
    .expect("the turn did not end in time")
    .unwrap();
    (turn_id, outcome)
}

/// The chat messages of a recorded OpenAI request.
pub fn messages(request: &RecordedRequest) -> Vec<Value> {
    request.json()["messages"].as_array().unwrap().clone()
}

/// The same messages without the system prompt.
pub fn conversation(request: &RecordedRequest) -> Vec<Value> {
    let all = messages(request);
    assert_eq!(all[0]["role"], "system", "{all:?}");
    all[1..].to_vec()
}

/// The system prompt of a recorded OpenAI request.
pub fn system(request: &RecordedRequest) -> String {
    messages(request)[0]["content"].as_str().unwrap().to_owned()
}

/// The tool names a recorded OpenAI request offered.
pub fn tool_names(request: &RecordedRequest) -> Vec<String> {
    request.json()["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

pub fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

pub fn assistant(text: &str) -> Value {
    json!({"role": "assistant", "content": text})
}

/// What the code under test logs (info and above) on this thread while it is held:
/// every task of a test, which runs them all on its one thread.
pub struct Logs {
    text: Arc<Mutex<Vec<u8>>>,
    _guard: tracing::subscriber::DefaultGuard,
}

impl Logs {
    /// Starts capturing.
    pub fn capture() -> Self {
        let text = Arc::new(Mutex::new(Vec::new()));
        let writer = LogWriter(Arc::clone(&text));
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_max_level(tracing::Level::INFO)
            .with_ansi(false)
            .finish();
        Self {
            text,
            _guard: tracing::subscriber::set_default(subscriber),
        }
    }

    /// Everything logged so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.text.lock().unwrap()).into_owned()
    }

    /// Waits (bounded) until a log line contains `needle`.
    pub async fn wait_for(&self, needle: &str) {
        hearth_test_support::eventually(&format!("a log line with {needle:?}"), || {
            self.text().contains(needle)
        })
        .await;
    }
}

#[derive(Clone)]
struct LogWriter(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for LogWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
