//! The `Host` handle, its configuration, and what every operation shares: harness
//! lookup by a URI's provider, the one derivation of a chat's context, subscriptions.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use hearth_core::{
    Action, ChatContext, ChatUri, Envelope, Harness, HarnessId, ResourceUri, Scopes, SessionUri,
    Snapshot,
};
use hearth_store::Store;
use tokio::sync::mpsc;

use crate::durability::{Ledger, Unsaved};
use crate::error::{HostError, HostResult};
use crate::events::{HostEvent, run_events, run_ticker};
use crate::harnesses::{Harnesses, attach};
use crate::lease::Instance;
use crate::receiver::EnvelopeReceiver;
use crate::sessions::make_context;
use crate::state::HostState;
use crate::writer::{WriteJob, Writer, WriterContext, run_writer};

/// Harness events queued before a harness that emits more has to wait for the host.
pub(crate) const EVENT_QUEUE: usize = 1024;

/// How the host behaves.
#[derive(Clone, Debug)]
pub struct HostConfig {
    /// Label recorded as the source of sessions created here (`cli`, `server`).
    pub source: String,
    /// Working directories of new sessions that name none (and of sessions stored
    /// before they were recorded per session); index 0 is where their harness runs.
    pub working_directories: Vec<PathBuf>,
    /// Longest time streamed text stays unsaved.
    pub checkpoint_interval: Duration,
    /// Streamed bytes that trigger a checkpoint before the interval ends.
    pub checkpoint_bytes: usize,
    /// How long an aborted turn may take to stop before the host ends it itself.
    pub abort_grace: Duration,
    /// The largest message accepted.
    pub limits: crate::limits::MessageLimits,
    /// How much of an agent's output one turn keeps: past it, what streams is dropped
    /// (counted, and marked in the turn).
    pub output_limits: hearth_core::OutputLimits,
    /// How long a chat's lease lasts unless renewed: how long a process that stopped
    /// without releasing it (on another machine, or one whose end was not seen) keeps
    /// others from answering in the chat. Running turns renew it a third of the way.
    pub lease_ttl: Duration,
    /// The name leases give this host's machine (default: the machine's name): hosts of
    /// one name see each other's processes stop.
    pub node: Option<String>,
    /// What the scopes of sessions (projects) give their sessions and turns.
    pub scopes: ScopeSeam,
}

/// The host's [`Scopes`], if any: without one every session runs on the host's
/// defaults and no scope is refused.
#[derive(Clone, Default)]
pub struct ScopeSeam(pub Option<Arc<dyn Scopes>>);

impl std::fmt::Debug for ScopeSeam {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(if self.0.is_some() {
            "ScopeSeam(Some)"
        } else {
            "ScopeSeam(None)"
        })
    }
}

impl Default for HostConfig {
    fn default() -> Self {
        Self {
            source: "hearth".into(),
            working_directories: std::env::current_dir().into_iter().collect(),
            checkpoint_interval: Duration::from_millis(200),
            checkpoint_bytes: 2048,
            abort_grace: Duration::from_secs(5),
            limits: crate::limits::MessageLimits::default(),
            output_limits: hearth_core::OutputLimits::default(),
            lease_ttl: Duration::from_secs(30),
            node: None,
            scopes: ScopeSeam::default(),
        }
    }
}

pub(crate) struct Inner {
    pub store: Arc<dyn Store>,
    pub agents: Harnesses,
    pub config: HostConfig,
    pub state: Mutex<HostState>,
    pub events: mpsc::Sender<HostEvent>,
    pub writer: Writer,
    /// What the store refused, kept in memory.
    pub ledger: Arc<Ledger>,
    /// This host, as the holder of chat leases.
    pub instance: Instance,
    /// The newest session start seen when looking for sessions made beside this host.
    pub outside_sessions_seen: Mutex<Option<hearth_core::Timestamp>>,
}

/// A subscription: the resource's state and the envelopes that follow it.
#[derive(Debug)]
pub struct Subscription {
    /// State at `snapshot.seq`.
    pub snapshot: Snapshot,
    /// Envelopes with seq > `snapshot.seq`. A `Lagged` error means the subscriber fell
    /// behind: subscribe again for a fresh snapshot.
    pub receiver: EnvelopeReceiver,
    /// A chat snapshot taken with [`TurnWindow::Latest`](crate::TurnWindow) leaves out
    /// earlier turns.
    pub older_turns: bool,
}

/// What a client reconnecting with its last seq gets.
#[derive(Debug)]
pub enum Resumed {
    /// The envelopes it missed (still buffered), then live ones.
    Replay {
        /// Missed envelopes, in order.
        missed: Vec<Envelope>,
        /// Live envelopes after them.
        receiver: EnvelopeReceiver,
    },
    /// Too much was missed: a fresh snapshot.
    Snapshot(Box<Subscription>),
}

/// The orchestrator. Cheap to clone; all clones share one state.
#[derive(Clone)]
pub struct Host {
    pub(crate) inner: Arc<Inner>,
}

impl Host {
    /// Starts a host over a store with the given harnesses. Must run inside a Tokio
    /// runtime: it spawns the event loop, the write-behind queue and the checkpoint
    /// ticker.
    pub fn start(store: Arc<dyn Store>, agents: Vec<Arc<dyn Harness>>, config: HostConfig) -> Self {
        let (events, event_receiver) = mpsc::channel(EVENT_QUEUE);
        let (writer, write_receiver) = Writer::new();
        let ledger = Arc::new(Ledger::default());
        let instance = Instance::new(config.node.clone());
        let writer_context = WriterContext {
            store: Arc::clone(&store),
            ledger: Arc::clone(&ledger),
            holder: instance.holder.clone(),
            lease_ttl: config.lease_ttl,
        };
        let agents = Harnesses::new(agents);
        let inner = Arc::new(Inner {
            store: Arc::clone(&store),
            agents,
            config,
            state: Mutex::new(HostState::default()),
            events: events.clone(),
            writer,
            ledger,
            instance,
            outside_sessions_seen: Mutex::new(None),
        });
        for agent in inner.agents.all() {
            attach(agent.as_ref(), &events);
        }
        tokio::spawn(run_writer(writer_context, write_receiver));
        tokio::spawn(run_events(Arc::downgrade(&inner), event_receiver));
        tokio::spawn(run_ticker(Arc::downgrade(&inner)));
        Self { inner }
    }

    /// Tells the root's subscribers that a proposal was staged or decided, so the pages
    /// that show proposals read them again instead of polling.
    pub fn proposal_changed(&self, proposal_id: &str) {
        self.inner.lock().publish(
            ResourceUri::Root,
            Action::ProposalChanged {
                proposal_id: proposal_id.to_owned(),
            },
        );
    }

    /// The context the host hands the harness for operations on a loaded chat.
    pub fn chat_context(&self, chat: &ChatUri) -> HostResult<ChatContext> {
        self.inner.context_for(chat)
    }

    /// The largest message the host accepts.
    pub fn limits(&self) -> crate::limits::MessageLimits {
        self.inner.config.limits
    }

    /// The store behind the host.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.inner.store
    }

    /// Subscribes to a resource: loads (and for chats resolves) it, then returns its
    /// snapshot and the envelopes that follow.
    pub async fn subscribe(&self, resource: &ResourceUri) -> HostResult<Subscription> {
        self.load_resource(resource).await?;
        let mut state = self.inner.lock();
        Self::subscribe_locked(&mut state, resource)
    }

    /// Resumes a subscription from the last seq a client saw.
    pub async fn resume(&self, resource: &ResourceUri, last_seq: u64) -> HostResult<Resumed> {
        self.load_resource(resource).await?;
        let mut state = self.inner.lock();
        if let Some(missed) = state.replay_since(resource, last_seq) {
            let receiver = state.receiver(resource);
            return Ok(Resumed::Replay { missed, receiver });
        }
        Self::subscribe_locked(&mut state, resource)
            .map(|subscription| Resumed::Snapshot(Box::new(subscription)))
    }

    fn subscribe_locked(state: &mut HostState, resource: &ResourceUri) -> HostResult<Subscription> {
        let snapshot = state
            .snapshot(resource)
            .ok_or_else(|| HostError::NotFound {
                what: "resource",
                key: resource.to_string(),
            })?;
        if let ResourceUri::Session(session) = resource {
            state.touch(session);
        }
        if let ResourceUri::Chat(chat) = resource {
            state.touch(chat.session_ref());
        }
        let receiver = state.receiver(resource);
        Ok(Subscription {
            snapshot,
            receiver,
            older_turns: false,
        })
    }

    async fn load_resource(&self, resource: &ResourceUri) -> HostResult<()> {
        match resource {
            ResourceUri::Root => Ok(()),
            ResourceUri::Session(session) => self.ensure_session(session).await,
            ResourceUri::Chat(chat) => self.resolve_chat(chat).await,
        }
    }

    /// Waits until every harness event emitted so far is applied and every resulting
    /// write reached the store.
    pub async fn flush(&self) {
        let (done, applied) = tokio::sync::oneshot::channel();
        if self
            .inner
            .events
            .send(HostEvent::Barrier(done))
            .await
            .is_ok()
            && applied.await.is_err()
        {
            tracing::debug!("the event loop stopped before the barrier");
        }
        self.inner.writer.flush().await;
    }

    /// What the store could not save of a chat (after retries), if anything: the host
    /// keeps it in memory and tries again before the chat's next turn and at shutdown.
    /// Call after [`flush`](Self::flush) to know about a turn that just completed.
    pub fn unsaved(&self, chat: &ChatUri) -> Option<Unsaved> {
        self.inner.ledger.unsaved(chat)
    }

    /// What the store could not save, per chat.
    pub fn unsaved_chats(&self) -> Vec<Unsaved> {
        self.inner.ledger.all()
    }

    /// Tries once more to store everything the store refused before; returns what is
    /// still not saved.
    pub async fn save_unsaved(&self) -> Vec<Unsaved> {
        self.inner.queue(WriteJob::RetryUnsaved);
        self.flush().await;
        self.unsaved_chats()
    }

    /// Starts a harness on purpose (its agent process, for an external agent) and lets
    /// the conversations it finds in its own catalog join the registry as external
    /// sessions. Harnesses also start by themselves on first use.
    pub async fn start_harness(&self, provider: &HarnessId) -> HostResult<()> {
        self.inner.check_running()?;
        let agent = self.inner.agent(provider)?;
        agent
            .start()
            .await
            .map_err(|error| Inner::agent_error(provider, error))?;
        self.flush().await;
        Ok(())
    }

    /// Aborts every running turn, waits for them to end (bounded by the abort grace),
    /// stops every harness (their agent processes with them) and flushes all writes,
    /// trying once more what the store refused before ([`unsaved_chats`](Self::unsaved_chats)
    /// says what is lost). Later operations fail with `ShuttingDown`.
    pub async fn shutdown(&self) {
        let running: Vec<ChatUri> = {
            let mut state = self.inner.lock();
            state.shutting_down = true;
            state
                .chats
                .iter()
                .filter(|(_, entry)| entry.running.is_some())
                .map(|(uri, _)| uri.clone())
                .collect()
        };
        for chat in running {
            if let Err(error) = self.abort(&chat).await {
                tracing::warn!(%chat, %error, "could not abort a turn at shutdown");
            }
        }
        let deadline = tokio::time::Instant::now() + self.inner.config.abort_grace;
        while self
            .inner
            .lock()
            .chats
            .values()
            .any(|entry| entry.running.is_some())
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.flush().await;
        for agent in self.inner.agents.all() {
            agent.shutdown().await;
        }
        // One last attempt at what the store refused before: after this it is lost.
        self.inner.queue(WriteJob::RetryUnsaved);
        self.flush().await;
    }
}

impl Inner {
    /// Locks the state. A panic while holding the lock must not take the host down with
    /// it: the state is still consistent action by action.
    pub fn lock(&self) -> MutexGuard<'_, HostState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The harness of a session, by its URI's provider (also for sessions not created
    /// by this process).
    pub fn agent_for(&self, session: &SessionUri) -> HostResult<Arc<dyn Harness>> {
        self.agent(session.harness())
    }

    pub fn agent(&self, provider: &HarnessId) -> HostResult<Arc<dyn Harness>> {
        self.agents.get(provider)
    }

    /// The scope of a chat's session.
    pub fn scope_of(&self, chat: &ChatUri) -> HostResult<hearth_core::Scope> {
        let state = self.lock();
        Ok(session_of(&state, chat)?.state.summary.scope.clone())
    }

    /// The one derivation of a chat's context from the catalog.
    pub fn context_for(&self, chat: &ChatUri) -> HostResult<ChatContext> {
        let state = self.lock();
        let session = session_of(&state, chat)?;
        let entry = state.chat(chat)?;
        Ok(make_context(
            &self.config,
            &session.state.summary,
            &entry.state.summary,
        ))
    }

    pub fn agent_error(provider: &HarnessId, source: hearth_core::HarnessError) -> HostError {
        HostError::Harness {
            provider: provider.clone(),
            source,
        }
    }

    pub fn check_running(&self) -> HostResult<()> {
        if self.lock().shutting_down {
            Err(HostError::ShuttingDown)
        } else {
            Ok(())
        }
    }

    pub fn queue(&self, job: WriteJob) {
        self.writer.push(job);
    }
}

/// Keeps the event loop from holding the host alive.
pub(crate) fn upgrade(inner: &Weak<Inner>) -> Option<Host> {
    inner.upgrade().map(|inner| Host { inner })
}

/// The loaded session a chat belongs to.
fn session_of<'a>(
    state: &'a HostState,
    chat: &ChatUri,
) -> HostResult<&'a crate::state::SessionEntry> {
    state.session(chat.session_ref())
}
