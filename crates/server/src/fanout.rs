//! Fan-out of action envelopes to connections.
//!
//! One hub per subscribed resource holds one receiver of the host's broadcast, encodes
//! each envelope once, and offers the same bytes to every subscribed connection's
//! bounded queue without waiting. A connection whose queue is full is dropped from the
//! hub and told to resync (a fresh snapshot), so a slow reader never stalls the host,
//! the hub, or any other reader. A hub that itself falls behind the host's buffer, or
//! whose resource goes away, hands every connection the same resync.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::extract::ws::Utf8Bytes;
use hearth_core::{Envelope, ResourceUri};
use hearth_host::{Host, HostResult};
use hearth_protocol::{self as wire, EnvelopeNotified, NotificationMethod, notification_text};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::{Notify, broadcast, mpsc};
use tokio_util::sync::CancellationToken;

/// A subscribed resource, shared cheaply between hubs, queues and writers.
pub(crate) type ResourceKey = Arc<ResourceUri>;

/// What a connection's writer is asked to do, in order.
#[derive(Debug)]
pub(crate) enum Frame {
    /// Write a response or a notification.
    Text(Utf8Bytes),
    /// Hold back the resource's envelopes until it opens (a subscription is starting).
    Stage(ResourceKey),
    /// Write `text` (the subscribe response or a resync), then the resource's held-back
    /// envelopes after `floor`, and from then on every envelope in order.
    Open {
        /// The resource.
        resource: ResourceKey,
        /// The seq the client's state reflects.
        floor: u64,
        /// What to write first.
        text: Utf8Bytes,
        /// For a team server's user subscribed to the root: what of it they see.
        view: Option<Box<crate::root_view::RootView>>,
    },
    /// Write `text` and forget the resource (unsubscribed or ended).
    Close {
        /// The resource.
        resource: ResourceKey,
        /// What to write.
        text: Utf8Bytes,
    },
    /// One envelope of a subscribed resource, already encoded.
    Envelope {
        /// The resource.
        resource: ResourceKey,
        /// Its seq.
        seq: u64,
        /// The encoded `subscription/envelope` notification.
        text: Utf8Bytes,
    },
}

/// Resources a connection fell behind on, and a wake-up for its resync task.
#[derive(Debug, Default)]
pub(crate) struct Lag {
    pending: Mutex<Vec<ResourceKey>>,
    notify: Notify,
}

impl Lag {
    /// Records that `resource` needs a resync.
    pub fn mark(&self, resource: &ResourceKey) {
        let mut pending = lock(&self.pending);
        if !pending.iter().any(|known| known == resource) {
            pending.push(Arc::clone(resource));
        }
        drop(pending);
        self.notify.notify_one();
    }

    /// Waits until something needs a resync, then takes the list.
    pub async fn next(&self) -> Vec<ResourceKey> {
        loop {
            let taken = std::mem::take(&mut *lock(&self.pending));
            if !taken.is_empty() {
                return taken;
            }
            self.notify.notified().await;
        }
    }
}

/// A connection as a hub sees it.
#[derive(Clone, Debug)]
pub(crate) struct Sink {
    /// The connection's id.
    pub connection: u64,
    /// Its writer's queue.
    pub queue: mpsc::Sender<Frame>,
    /// Where to report that it fell behind.
    pub lag: Arc<Lag>,
}

struct Hub {
    resource: ResourceKey,
    sinks: Mutex<Vec<Sink>>,
    stop: CancellationToken,
}

/// The hubs of every subscribed resource.
pub(crate) struct FanOut {
    host: Host,
    hubs: Mutex<HashMap<ResourceKey, Arc<Hub>>>,
    /// One lock per resource whose hub is being started, so a slow load of one
    /// resource never delays subscriptions to another.
    creating: Mutex<HashMap<ResourceKey, Arc<tokio::sync::Mutex<()>>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl FanOut {
    pub fn new(host: Host) -> Arc<Self> {
        Arc::new(Self {
            host,
            hubs: Mutex::new(HashMap::new()),
            creating: Mutex::new(HashMap::new()),
        })
    }

    /// Adds a connection to the resource's hub, starting the hub (and loading the
    /// resource) when it is the first. Envelopes after this call reach the connection's
    /// queue; the caller takes its snapshot afterwards.
    pub async fn join(self: &Arc<Self>, resource: &ResourceKey, sink: Sink) -> HostResult<()> {
        if self.try_join(resource, &sink) {
            return Ok(());
        }
        let creating = Arc::clone(
            lock(&self.creating)
                .entry(Arc::clone(resource))
                .or_default(),
        );
        let started = self.start_hub(resource, sink, &creating).await;
        {
            let mut locks = lock(&self.creating);
            // The map's copy and ours: nobody else waits on it.
            if Arc::strong_count(&creating) <= 2 {
                locks.remove(resource);
            }
        }
        started
    }

    async fn start_hub(
        self: &Arc<Self>,
        resource: &ResourceKey,
        sink: Sink,
        creating: &tokio::sync::Mutex<()>,
    ) -> HostResult<()> {
        let _creating = creating.lock().await;
        if self.try_join(resource, &sink) {
            return Ok(());
        }
        // Only the receiver is used: a chat's snapshot is left without turns, so a hub
        // neither loads a chat nor copies its history.
        let subscription = self
            .host
            .subscribe_window(resource, hearth_host::TurnWindow::Latest(0))
            .await?;
        let hub = Arc::new(Hub {
            resource: Arc::clone(resource),
            sinks: Mutex::new(vec![sink]),
            stop: CancellationToken::new(),
        });
        lock(&self.hubs).insert(Arc::clone(resource), Arc::clone(&hub));
        tokio::spawn(run_hub(Arc::downgrade(self), hub, subscription.receiver));
        Ok(())
    }

    fn try_join(&self, resource: &ResourceKey, sink: &Sink) -> bool {
        let hubs = lock(&self.hubs);
        let Some(hub) = hubs.get(resource) else {
            return false;
        };
        let mut sinks = lock(&hub.sinks);
        sinks.retain(|known| known.connection != sink.connection);
        sinks.push(sink.clone());
        true
    }

    /// Removes a connection from the resource's hub; the last one out stops the hub.
    pub fn leave(&self, resource: &ResourceKey, connection: u64) {
        let mut hubs = lock(&self.hubs);
        let Some(hub) = hubs.get(resource) else {
            return;
        };
        let empty = {
            let mut sinks = lock(&hub.sinks);
            sinks.retain(|sink| sink.connection != connection);
            sinks.is_empty()
        };
        if empty {
            hub.stop.cancel();
            hubs.remove(resource);
        }
    }

    fn remove_hub(&self, hub: &Arc<Hub>) {
        let mut hubs = lock(&self.hubs);
        if hubs
            .get(&hub.resource)
            .is_some_and(|current| Arc::ptr_eq(current, hub))
        {
            hubs.remove(&hub.resource);
        }
    }
}

/// Encodes an envelope as a `subscription/envelope` notification.
pub(crate) fn encode_envelope(envelope: Envelope) -> serde_json::Result<String> {
    notification_text(EnvelopeNotified::NAME, &wire::Envelope::from(envelope))
}

/// Envelopes a hub takes from the host's buffer before it offers them on.
const HUB_BATCH: usize = 256;

async fn run_hub(
    fanout: std::sync::Weak<FanOut>,
    hub: Arc<Hub>,
    mut receiver: hearth_host::EnvelopeReceiver,
) {
    let mut batch: Vec<(u64, Utf8Bytes)> = Vec::with_capacity(HUB_BATCH);
    loop {
        let received = tokio::select! {
            () = hub.stop.cancelled() => return,
            received = receiver.recv() => received,
        };
        let mut next = Some(received);
        while let Some(received) = next.take() {
            match received {
                Ok(envelope) => {
                    let seq = envelope.seq;
                    match encode_envelope(envelope) {
                        Ok(text) => batch.push((seq, Utf8Bytes::from(text))),
                        Err(error) => {
                            tracing::error!(resource = %hub.resource, %error, "cannot encode an envelope");
                            batch.clear();
                            resync_all(&hub);
                        }
                    }
                }
                Err(RecvError::Lagged(missed)) => {
                    tracing::warn!(resource = %hub.resource, missed, "fan-out fell behind the host; resyncing its subscribers");
                    // Go on from the newest envelope, not the oldest still buffered: that
                    // one is the next to be overwritten, and the hub would lag again.
                    receiver = receiver.resubscribe();
                    batch.clear();
                    resync_all(&hub);
                }
                Err(RecvError::Closed) => {
                    offer(&hub, &batch);
                    // Out of the registry first, so a resync joins a new hub, not this one.
                    if let Some(fanout) = fanout.upgrade() {
                        fanout.remove_hub(&hub);
                    }
                    resync_all(&hub);
                    return;
                }
            }
            if batch.len() < HUB_BATCH {
                next = match receiver.try_recv() {
                    Ok(envelope) => Some(Ok(envelope)),
                    Err(broadcast::error::TryRecvError::Lagged(missed)) => {
                        Some(Err(RecvError::Lagged(missed)))
                    }
                    Err(broadcast::error::TryRecvError::Closed) => Some(Err(RecvError::Closed)),
                    Err(broadcast::error::TryRecvError::Empty) => None,
                };
            }
        }
        offer(&hub, &batch);
        batch.clear();
    }
}

/// Offers envelopes to every connection without waiting; a full queue falls behind.
fn offer(hub: &Hub, batch: &[(u64, Utf8Bytes)]) {
    if batch.is_empty() {
        return;
    }
    let mut sinks = lock(&hub.sinks);
    sinks.retain(|sink| {
        for (seq, text) in batch {
            let frame = Frame::Envelope {
                resource: Arc::clone(&hub.resource),
                seq: *seq,
                text: text.clone(),
            };
            match sink.queue.try_send(frame) {
                Ok(()) => {}
                Err(TrySendError::Full(_)) => {
                    sink.lag.mark(&hub.resource);
                    return false;
                }
                Err(TrySendError::Closed(_)) => return false,
            }
        }
        true
    });
}

fn resync_all(hub: &Hub) {
    let sinks = std::mem::take(&mut *lock(&hub.sinks));
    for sink in sinks {
        sink.lag.mark(&hub.resource);
    }
}
