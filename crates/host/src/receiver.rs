//! A subscriber's end of a resource's envelopes.

use std::sync::Arc;

use hearth_core::Envelope;
use tokio::sync::broadcast::{self, error::RecvError, error::TryRecvError};

/// The envelopes of one resource, in order, as a subscriber receives them.
///
/// The channel behind it holds each envelope once, shared by every subscriber: its
/// buffer is a slot per envelope of a pointer's size, so a subscribed resource costs
/// a few hundred KiB however large its envelopes are, not a copy of each per slot.
#[derive(Debug)]
pub struct EnvelopeReceiver(broadcast::Receiver<Arc<Envelope>>);

impl EnvelopeReceiver {
    pub(crate) fn new(receiver: broadcast::Receiver<Arc<Envelope>>) -> Self {
        Self(receiver)
    }

    /// The next envelope. [`RecvError::Lagged`] means the subscriber fell behind and
    /// missed some (subscribe again for a fresh snapshot); [`RecvError::Closed`] that the
    /// resource went away.
    pub async fn recv(&mut self) -> Result<Envelope, RecvError> {
        self.0.recv().await.map(Arc::unwrap_or_clone)
    }

    /// A receiver of the same resource that starts at its newest envelope (after a
    /// [`RecvError::Lagged`], to go on without falling behind again at once).
    #[must_use]
    pub fn resubscribe(&self) -> Self {
        Self(self.0.resubscribe())
    }

    /// The next envelope if one is waiting, without waiting for one.
    pub fn try_recv(&mut self) -> Result<Envelope, TryRecvError> {
        self.0.try_recv().map(Arc::unwrap_or_clone)
    }
}
