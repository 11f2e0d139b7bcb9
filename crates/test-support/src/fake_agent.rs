//! A fake harness the test drives: it records every call, answers `create_chat` and
//! `materialize_chat` with configurable blobs and failures, and leaves each `send`
//! pending until the test emits progress and finishes the turn.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::future::BoxFuture;
use hearth_core::{
    Capabilities, ChatContext, ChatMetadata, ChatSeed, ChatUri, ConversationId, CreateChatRequest,
    CreatedChat, EventSink, Harness, HarnessData, HarnessDescriptor, HarnessError, HarnessEvent,
    HarnessId, HarnessResult, PermissionAnswer, Signal, StopReason, Turn, TurnId, TurnOutcome,
    UserMessage,
};
use tokio::sync::{oneshot, watch};

use crate::WAIT;

/// One call the host made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Call {
    /// `create_chat` with the context it was given.
    CreateChat {
        /// The context.
        context: ChatContext,
        /// The seed.
        seed: ChatSeed,
    },
    /// `materialize_chat` with the blob it was given.
    Materialize {
        /// The chat.
        chat: ChatUri,
        /// The blob.
        provider_data: Option<HarnessData>,
    },
    /// `send`.
    Send {
        /// The chat.
        chat: ChatUri,
        /// The turn.
        turn_id: TurnId,
        /// The prompt.
        text: String,
    },
    /// `abort`.
    Abort(ChatUri),
    /// `set_model`.
    SetModel(ChatUri, String),
    /// `set_mode`.
    SetMode(ChatUri, String),
    /// `messages`.
    Messages(ChatUri),
    /// `metadata`.
    Metadata(ChatUri),
    /// `dispose_chat`.
    Dispose(ChatUri),
    /// `release_chat`.
    Release(ChatUri),
    /// `respond_permission`: chat, request, option.
    RespondPermission(ChatUri, String, String),
}

#[derive(Default)]
struct State {
    calls: Vec<Call>,
    pending: HashMap<ChatUri, (TurnId, oneshot::Sender<HarnessResult<TurnOutcome>>)>,
    materialize_failures: usize,
    materialize_delay: Duration,
    /// While closed, `materialize_chat` waits (after recording its call) until it opens.
    materialize_gate: Option<watch::Sender<bool>>,
    next_conversation: u64,
    with_conversations: bool,
    ignore_aborts: bool,
    /// Announce each new conversation through `DiscoverChats` before `create_chat` returns,
    /// then wait this long (a harness whose catalog lists a conversation at once).
    discover_on_create: Option<Duration>,
    messages: HashMap<ChatUri, Vec<Turn>>,
}

/// A harness driven by the test.
pub struct FakeAgent {
    descriptor: HarnessDescriptor,
    state: Mutex<State>,
    sink: Mutex<Option<EventSink>>,
}

impl FakeAgent {
    /// A fake with the given provider id and every multi-chat capability.
    pub fn new(provider: &str) -> Arc<Self> {
        Self::with_capabilities(provider, Capabilities::forks_and_side_chats())
    }

    /// A fake with the given capabilities.
    pub fn with_capabilities(provider: &str, capabilities: Capabilities) -> Arc<Self> {
        let id =
            HarnessId::parse(provider).unwrap_or_else(|_| panic!("bad provider id {provider}"));
        Arc::new(Self {
            descriptor: HarnessDescriptor {
                id,
                name: format!("Fake {provider}"),
                description: "a harness driven by tests".into(),
                capabilities,
                demo: false,
            },
            state: Mutex::new(State::default()),
            sink: Mutex::new(None),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Every call so far.
    pub fn calls(&self) -> Vec<Call> {
        self.lock().calls.clone()
    }

    /// Makes the next `count` materializations fail.
    pub fn fail_materialize(&self, count: usize) {
        self.lock().materialize_failures = count;
    }

    /// Makes every materialization take `delay`.
    pub fn delay_materialize(&self, delay: Duration) {
        self.lock().materialize_delay = delay;
    }

    /// Makes every materialization from now on wait, once its call is recorded, until
    /// [`FakeAgent::release_materialize`]: a resolve the test holds in flight for as
    /// long as it needs, however slow the machine.
    pub fn hold_materialize(&self) {
        self.lock().materialize_gate = Some(watch::Sender::new(false));
    }

    /// Lets the held materializations (and every later one) go on.
    pub fn release_materialize(&self) {
        if let Some(gate) = &self.lock().materialize_gate {
            gate.send_replace(true);
        }
    }

    /// Waits (bounded) until `materialize_chat` was called for `chat`.
    pub async fn wait_for_materialize(&self, chat: &ChatUri) {
        crate::eventually(&format!("materialize_chat of {chat}"), || {
            self.calls()
                .iter()
                .any(|call| matches!(call, Call::Materialize { chat: of, .. } if of == chat))
        })
        .await;
    }

    /// Returns a separately enumerable conversation id from every `create_chat`.
    pub fn give_conversations(&self) {
        self.lock().with_conversations = true;
    }

    /// Makes `create_chat` announce the new conversation through `DiscoverChats`, then pause
    /// before returning (a harness whose catalog lists a conversation at once).
    pub fn discover_on_create(&self, pause: Duration) {
        self.lock().discover_on_create = Some(pause);
    }

    /// Makes `abort` do nothing (a harness that hangs).
    pub fn ignore_aborts(&self) {
        self.lock().ignore_aborts = true;
    }

    /// What `messages` returns for a chat (external sessions' history).
    pub fn set_messages(&self, chat: &ChatUri, turns: Vec<Turn>) {
        self.lock().messages.insert(chat.clone(), turns);
    }

    /// Emits an event as the harness (waiting while the host's queue is full).
    pub async fn emit(&self, event: HarnessEvent) {
        let sink = self
            .sink
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        match sink {
            Some(sink) => sink.send(event).await,
            None => panic!("the fake harness was not attached to a host"),
        }
    }

    /// Emits a progress signal for a chat.
    pub async fn progress(&self, chat: &ChatUri, signal: Signal) {
        self.emit(HarnessEvent::Progress {
            chat: chat.clone(),
            signal,
        })
        .await;
    }

    /// Waits (bounded) until the host sent a turn to `chat`; returns its id.
    pub async fn wait_for_send(&self, chat: &ChatUri) -> TurnId {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            if let Some((turn_id, _)) = self.lock().pending.get(chat) {
                return turn_id.clone();
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no turn was sent to {chat}"
            );
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// Ends the pending turn of `chat` with an outcome.
    pub fn finish(&self, chat: &ChatUri, result: HarnessResult<TurnOutcome>) {
        let pending = self.lock().pending.remove(chat);
        let (_, done) = pending.unwrap_or_else(|| panic!("no pending turn in {chat}"));
        assert!(
            done.send(result).is_ok(),
            "the host stopped waiting for the turn"
        );
    }

    /// Ends the pending turn of `chat` normally.
    pub fn finish_ok(&self, chat: &ChatUri) {
        self.finish(
            chat,
            Ok(TurnOutcome {
                stop_reason: StopReason::EndTurn,
                usage: None,
            }),
        );
    }

    fn record(&self, call: Call) {
        self.lock().calls.push(call);
    }
}

impl Harness for FakeAgent {
    fn descriptor(&self) -> HarnessDescriptor {
        self.descriptor.clone()
    }

    fn attach(&self, sink: EventSink) {
        *self
            .sink
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(sink);
    }

    fn create_chat<'a>(
        &'a self,
        context: &'a ChatContext,
        request: CreateChatRequest,
    ) -> BoxFuture<'a, HarnessResult<CreatedChat>> {
        Box::pin(async move {
            self.record(Call::CreateChat {
                context: context.clone(),
                seed: request.seed.clone(),
            });
            let (conversation, discover) = {
                let mut state = self.lock();
                let conversation = state.with_conversations.then(|| {
                    state.next_conversation += 1;
                    ConversationId::parse(&format!("conv-{}", state.next_conversation))
                        .unwrap_or_else(|_| panic!("bad id"))
                });
                (conversation, state.discover_on_create)
            };
            let blob = format!(
                "{{\"chat\": \"{}\", \"note\": \"opaque\\u00e9\"}}  ",
                context.chat
            );
            if let (Some(pause), Some(conversation)) = (discover, &conversation) {
                self.emit(HarnessEvent::DiscoverChats {
                    provider: self.descriptor.id.clone(),
                    chats: vec![hearth_core::DiscoveredChat {
                        conversation: conversation.clone(),
                        title: Some("just created".into()),
                        started_at: hearth_core::now(),
                        updated_at: hearth_core::now(),
                        provider_data: HarnessData::from_bytes(blob.clone().into_bytes()),
                        working_directory: None,
                    }],
                    peers: Vec::new(),
                })
                .await;
                tokio::time::sleep(pause).await;
            }
            Ok(CreatedChat {
                provider_data: HarnessData::from_bytes(blob.into_bytes()),
                conversation,
                model: None,
                agent: None,
            })
        })
    }

    fn materialize_chat<'a>(
        &'a self,
        context: &'a ChatContext,
        provider_data: Option<HarnessData>,
    ) -> BoxFuture<'a, HarnessResult<Option<HarnessData>>> {
        Box::pin(async move {
            self.record(Call::Materialize {
                chat: context.chat.clone(),
                provider_data,
            });
            let (delay, gate) = {
                let state = self.lock();
                let gate = state
                    .materialize_gate
                    .as_ref()
                    .map(watch::Sender::subscribe);
                (state.materialize_delay, gate)
            };
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            if let Some(mut gate) = gate {
                // A gate replaced by a new hold lets the calls it held go on, too.
                gate.wait_for(|open| *open).await.ok();
            }
            let mut state = self.lock();
            if state.materialize_failures > 0 {
                state.materialize_failures -= 1;
                return Err(HarnessError::new(
                    hearth_core::HarnessErrorKind::Transient,
                    "conversation unavailable",
                ));
            }
            Ok(None)
        })
    }

    fn send<'a>(
        &'a self,
        context: &'a ChatContext,
        turn_id: TurnId,
        message: UserMessage,
    ) -> BoxFuture<'a, HarnessResult<TurnOutcome>> {
        Box::pin(async move {
            let (done, wait) = oneshot::channel();
            {
                let mut state = self.lock();
                state.calls.push(Call::Send {
                    chat: context.chat.clone(),
                    turn_id: turn_id.clone(),
                    text: message.text,
                });
                state.pending.insert(context.chat.clone(), (turn_id, done));
            }
            wait.await
                .unwrap_or_else(|_| Err(HarnessError::internal("the test dropped the turn")))
        })
    }

    fn abort<'a>(&'a self, context: &'a ChatContext) -> BoxFuture<'a, HarnessResult<()>> {
        Box::pin(async move {
            self.record(Call::Abort(context.chat.clone()));
            if self.lock().ignore_aborts {
                return Ok(());
            }
            if let Some((_, done)) = self.lock().pending.remove(&context.chat) {
                let aborted = Ok(TurnOutcome {
                    stop_reason: StopReason::Aborted,
                    usage: None,
                });
                if done.send(aborted).is_err() {
                    tracing::debug!("nobody waited for the aborted turn");
                }
            }
            Ok(())
        })
    }

    fn set_model<'a>(
        &'a self,
        context: &'a ChatContext,
        model: String,
    ) -> BoxFuture<'a, HarnessResult<()>> {
        Box::pin(async move {
            self.record(Call::SetModel(context.chat.clone(), model));
            Ok(())
        })
    }

    fn set_mode<'a>(
        &'a self,
        context: &'a ChatContext,
        mode: String,
    ) -> BoxFuture<'a, HarnessResult<()>> {
        Box::pin(async move {
            self.record(Call::SetMode(context.chat.clone(), mode));
            Ok(())
        })
    }

    fn messages<'a>(&'a self, context: &'a ChatContext) -> BoxFuture<'a, HarnessResult<Vec<Turn>>> {
        Box::pin(async move {
            self.record(Call::Messages(context.chat.clone()));
            Ok(self
                .lock()
                .messages
                .get(&context.chat)
                .cloned()
                .unwrap_or_default())
        })
    }

    fn metadata<'a>(
        &'a self,
        context: &'a ChatContext,
    ) -> BoxFuture<'a, HarnessResult<ChatMetadata>> {
        Box::pin(async move {
            self.record(Call::Metadata(context.chat.clone()));
            Ok(ChatMetadata::default())
        })
    }

    fn dispose_chat<'a>(&'a self, context: &'a ChatContext) -> BoxFuture<'a, HarnessResult<()>> {
        Box::pin(async move {
            self.record(Call::Dispose(context.chat.clone()));
            Ok(())
        })
    }

    fn release_chat<'a>(&'a self, context: &'a ChatContext) -> BoxFuture<'a, HarnessResult<()>> {
        Box::pin(async move {
            self.record(Call::Release(context.chat.clone()));
            Ok(())
        })
    }

    fn respond_permission<'a>(
        &'a self,
        context: &'a ChatContext,
        request_id: &'a str,
        answer: &'a PermissionAnswer,
    ) -> BoxFuture<'a, HarnessResult<()>> {
        Box::pin(async move {
            self.record(Call::RespondPermission(
                context.chat.clone(),
                request_id.to_owned(),
                answer.option_id.clone(),
            ));
            Ok(())
        })
    }
}
