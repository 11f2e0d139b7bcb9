//! Shared helpers: a recording sink, contexts, and a harness with a scenario.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hearth_core::{
    ChatContext, ChatOrigin, ChatSeed, ChatUri, CreateChatRequest, EventSink, Harness, HarnessData,
    HarnessEvent, HarnessId, Scope, SessionId, SessionUri, Signal, TurnId, TurnOutcome,
    UserMessage,
};
use hearth_harness_replay::{ReplayHarness, Scenario};

/// Every event a harness emitted, in order.
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

    pub fn clear(&self) {
        self.events.lock().unwrap().clear();
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

    /// The last blob the harness asked the host to store for a chat.
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
        let waited = tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                if ready(&self.events()) {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        })
        .await;
        assert!(waited.is_ok(), "timed out waiting for {what}");
    }
}

pub fn session() -> SessionUri {
    SessionUri::new(HarnessId::parse("replay").unwrap(), SessionId::generate())
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

/// A harness playing `yaml`, attached to a recorder.
pub fn harness(yaml: &str, scale: f64) -> (Arc<ReplayHarness>, Recorder) {
    let scenario = Scenario::from_yaml(yaml, "test.yaml").unwrap();
    attach(ReplayHarness::new(scenario).with_delay_scale(scale))
}

pub fn attach(agent: ReplayHarness) -> (Arc<ReplayHarness>, Recorder) {
    let agent = Arc::new(agent);
    let recorder = Recorder::default();
    agent.attach(recorder.sink());
    (agent, recorder)
}

/// Creates a session's default chat in the harness.
pub async fn default_chat(agent: &ReplayHarness) -> ChatContext {
    let chat = ChatUri::default_for(&session());
    let context = context(&chat, ChatOrigin::User);
    agent
        .create_chat(
            &context,
            CreateChatRequest {
                seed: ChatSeed::Fresh,
                title: None,
            },
        )
        .await
        .unwrap();
    context
}

/// Sends a prompt and waits for the turn.
pub async fn send(
    agent: &ReplayHarness,
    context: &ChatContext,
    prompt: &str,
) -> (TurnId, TurnOutcome) {
    let turn_id = TurnId::generate();
    let outcome = agent
        .send(context, turn_id.clone(), UserMessage::text(prompt))
        .await
        .unwrap();
    (turn_id, outcome)
}
