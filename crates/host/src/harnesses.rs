//! The harnesses a host routes to, by provider id: fixed at start, and grown (or an
//! entry replaced) while it runs, as when a model provider is set up from a client.
//!
//! A lookup takes a read lock for as long as it takes to clone one `Arc`; no lock is
//! held across an await (callers get the harness, then call it).

use std::collections::HashMap;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use futures::FutureExt;
use hearth_core::{Action, EventSink, Harness, HarnessDescriptor, HarnessId, ResourceUri};
use tokio::sync::mpsc;

use crate::error::{HostError, HostResult};
use crate::events::HostEvent;
use crate::host::Host;

/// The harnesses by provider id.
#[derive(Default)]
pub(crate) struct Harnesses(RwLock<HashMap<HarnessId, Arc<dyn Harness>>>);

impl Harnesses {
    pub fn new(agents: Vec<Arc<dyn Harness>>) -> Self {
        Self(RwLock::new(
            agents
                .into_iter()
                .map(|agent| (agent.descriptor().id, agent))
                .collect(),
        ))
    }

    // A panic while holding the lock leaves the map whole (one insert at a time).
    fn read(&self) -> RwLockReadGuard<'_, HashMap<HarnessId, Arc<dyn Harness>>> {
        self.0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, HashMap<HarnessId, Arc<dyn Harness>>> {
        self.0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The harness of a provider id, or which ones there are.
    pub fn get(&self, provider: &HarnessId) -> HostResult<Arc<dyn Harness>> {
        let agents = self.read();
        agents.get(provider).cloned().ok_or_else(|| {
            let mut available: Vec<_> = agents.keys().map(HarnessId::as_str).collect();
            available.sort_unstable();
            HostError::UnknownProvider {
                provider: provider.clone(),
                available: available.join(", "),
            }
        })
    }

    /// Every harness, at this moment.
    pub fn all(&self) -> Vec<Arc<dyn Harness>> {
        self.read().values().cloned().collect()
    }

    /// Adds a harness, or replaces the one with its id (returned).
    pub fn insert(&self, agent: Arc<dyn Harness>) -> Option<Arc<dyn Harness>> {
        self.write().insert(agent.descriptor().id, agent)
    }

    /// Takes the harness with this id out (returned).
    pub fn remove(&self, provider: &HarnessId) -> Option<Arc<dyn Harness>> {
        self.write().remove(provider)
    }
}

/// Sends what a harness emits to the host's event loop.
pub(crate) fn attach(agent: &dyn Harness, events: &mpsc::Sender<HostEvent>) {
    let sender = events.clone();
    agent.attach(EventSink::new(move |event| {
        let sender = sender.clone();
        async move {
            if sender.send(HostEvent::Harness(event)).await.is_err() {
                tracing::debug!("host stopped; dropping a harness event");
            }
        }
        .boxed()
    }));
}

impl Host {
    /// Registers a harness while the host runs (a model provider set up from a client),
    /// or replaces the harness with its id. New sessions and chats can use it at once;
    /// the root's subscribers are told the new list of harnesses. Returns the harness it
    /// replaced, whose running turns and processes the caller ends (or lets finish).
    pub fn register_harness(&self, agent: Arc<dyn Harness>) -> Option<Arc<dyn Harness>> {
        attach(agent.as_ref(), &self.inner.events);
        let replaced = self.inner.agents.insert(agent);
        let harnesses = self.descriptors();
        self.inner
            .lock()
            .publish(ResourceUri::Root, Action::HarnessesChanged { harnesses });
        replaced
    }

    /// Takes a harness out while the host runs (a user removed their own provider): new
    /// sessions and turns can no longer use it, and the root's subscribers are told the
    /// new list. Returns it, for the caller to end its running turns and processes (or
    /// let them finish); `None` when no harness had that id.
    pub fn unregister_harness(&self, provider: &str) -> Option<Arc<dyn Harness>> {
        let provider = HarnessId::parse(provider).ok()?;
        let removed = self.inner.agents.remove(&provider)?;
        let harnesses = self.descriptors();
        self.inner
            .lock()
            .publish(ResourceUri::Root, Action::HarnessesChanged { harnesses });
        Some(removed)
    }

    /// The registered harnesses, by id.
    pub fn descriptors(&self) -> Vec<HarnessDescriptor> {
        let mut descriptors: Vec<_> = self
            .inner
            .agents
            .all()
            .iter()
            .map(|agent| agent.descriptor())
            .collect();
        descriptors.sort_by(|a, b| a.id.cmp(&b.id));
        descriptors
    }

    /// A registered harness.
    pub fn agent(&self, provider: &str) -> Option<Arc<dyn Harness>> {
        let provider = HarnessId::parse(provider).ok()?;
        self.inner.agents.get(&provider).ok()
    }
}
