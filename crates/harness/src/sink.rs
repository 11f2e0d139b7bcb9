//! The event sink the host attached to a harness.

use std::sync::{PoisonError, RwLock};

use hearth_core::EventSink;

/// The sink the host attached (discarding until then).
#[derive(Debug)]
pub struct SinkCell(RwLock<EventSink>);

impl Default for SinkCell {
    fn default() -> Self {
        Self::new()
    }
}

impl SinkCell {
    /// A cell that discards events until a sink is attached.
    pub fn new() -> Self {
        Self(RwLock::new(EventSink::discard()))
    }

    /// Attaches the host's sink, replacing the one before.
    pub fn attach(&self, sink: EventSink) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = sink;
    }

    /// The attached sink (a cheap clone).
    pub fn get(&self) -> EventSink {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use hearth_core::{HarnessEvent, HarnessId};
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn events_reach_the_attached_sink_only() {
        let cell = SinkCell::new();
        let event = HarnessEvent::DiscoverChats {
            provider: HarnessId::parse("test").unwrap(),
            chats: Vec::new(),
            peers: Vec::new(),
        };
        let before = cell.get();
        let received = Arc::new(Mutex::new(Vec::new()));
        let store = Arc::clone(&received);
        cell.attach(EventSink::from_fn(move |event| {
            store.lock().unwrap().push(event)
        }));
        futures::executor::block_on(before.send(event.clone()));
        assert_eq!(*received.lock().unwrap(), Vec::new());
        futures::executor::block_on(cell.get().send(event.clone()));
        assert_eq!(*received.lock().unwrap(), vec![event]);
    }
}
