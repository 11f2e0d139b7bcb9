//! A connection's writer: the one place its frames are put in order on the wire. It
//! holds back a subscription's envelopes until its snapshot (or replay) is written, then
//! writes them in seq order from there, drops the ones the snapshot already holds, and
//! asks for a resync when it sees a gap.

use std::future::Future;
use std::io;
use std::sync::Arc;

use axum::extract::ws::Utf8Bytes;
use tokio::sync::mpsc;

use crate::fanout::{Frame, Lag, ResourceKey};
use crate::root_view::RootView;

/// Frames written between flushes, at most.
const WRITE_BATCH: usize = 64;

/// Where a connection's frames go.
pub(crate) trait Outgoing: Send + 'static {
    /// Queues one message for writing.
    fn feed(&mut self, text: Utf8Bytes) -> impl Future<Output = io::Result<()>> + Send;
    /// Writes out everything queued.
    fn flush(&mut self) -> impl Future<Output = io::Result<()>> + Send;
}

/// Where a subscribed resource is, as the writer sees it.
enum Track {
    /// Envelopes are written in order after `floor` (through a user's view of the root,
    /// when there is one).
    Open {
        floor: u64,
        view: Option<Box<RootView>>,
    },
    /// Envelopes wait for the resource to open.
    Staging(Vec<(u64, Utf8Bytes)>),
}

/// The writer's subscriptions. A connection has few, and this is looked up for every
/// envelope: a list compared by pointer, then by text, beats hashing the URI each time.
#[derive(Default)]
struct Tracks(Vec<(ResourceKey, Track)>);

impl Tracks {
    fn position(&self, resource: &ResourceKey) -> Option<usize> {
        self.0
            .iter()
            .position(|(known, _)| Arc::ptr_eq(known, resource) || known == resource)
    }

    fn get_mut(&mut self, resource: &ResourceKey) -> Option<&mut Track> {
        let index = self.position(resource)?;
        Some(&mut self.0[index].1)
    }

    /// Sets the resource's track; returns the one it replaces.
    fn insert(&mut self, resource: &ResourceKey, track: Track) -> Option<Track> {
        match self.position(resource) {
            Some(index) => Some(std::mem::replace(&mut self.0[index].1, track)),
            None => {
                self.0.push((Arc::clone(resource), track));
                None
            }
        }
    }

    fn remove(&mut self, resource: &ResourceKey) {
        if let Some(index) = self.position(resource) {
            self.0.swap_remove(index);
        }
    }
}

pub(crate) async fn write_frames<O: Outgoing>(
    mut receiver: mpsc::Receiver<Frame>,
    mut out: O,
    lag: Arc<Lag>,
) {
    let mut tracks = Tracks::default();
    let mut batch = Vec::with_capacity(WRITE_BATCH);
    let staging_limit = receiver.max_capacity();
    while receiver.recv_many(&mut batch, WRITE_BATCH).await > 0 {
        for frame in batch.drain(..) {
            let written = match frame {
                Frame::Text(text) => out.feed(text).await,
                Frame::Stage(resource) => {
                    tracks.insert(&resource, Track::Staging(Vec::new()));
                    Ok(())
                }
                Frame::Open {
                    resource,
                    floor,
                    text,
                    view,
                } => {
                    let opened = out.feed(text).await;
                    let staged = match tracks.insert(&resource, Track::Open { floor, view }) {
                        Some(Track::Staging(staged)) => staged,
                        _ => Vec::new(),
                    };
                    let mut result = opened;
                    for (seq, text) in staged {
                        if result.is_err() {
                            break;
                        }
                        result = deliver(
                            &mut tracks,
                            &resource,
                            seq,
                            text,
                            &mut out,
                            &lag,
                            staging_limit,
                        )
                        .await;
                    }
                    result
                }
                Frame::Close { resource, text } => {
                    tracks.remove(&resource);
                    out.feed(text).await
                }
                Frame::Envelope {
                    resource,
                    seq,
                    text,
                } => {
                    deliver(
                        &mut tracks,
                        &resource,
                        seq,
                        text,
                        &mut out,
                        &lag,
                        staging_limit,
                    )
                    .await
                }
            };
            if let Err(error) = written {
                tracing::debug!(%error, "the connection's transport closed");
                return;
            }
        }
        if let Err(error) = out.flush().await {
            tracing::debug!(%error, "the connection's transport closed");
            return;
        }
    }
}

async fn deliver<O: Outgoing>(
    tracks: &mut Tracks,
    resource: &ResourceKey,
    seq: u64,
    text: Utf8Bytes,
    out: &mut O,
    lag: &Lag,
    staging_limit: usize,
) -> io::Result<()> {
    let Some(track) = tracks.get_mut(resource) else {
        return Ok(());
    };
    match track {
        Track::Staging(staged) => {
            if staged.len() >= staging_limit {
                staged.clear();
                lag.mark(resource);
            } else {
                staged.push((seq, text));
            }
            Ok(())
        }
        Track::Open { floor, view } => {
            if seq <= *floor {
                Ok(())
            } else if seq == *floor + 1 {
                *floor = seq;
                match view {
                    None => out.feed(text).await,
                    Some(view) => match view.admit(&text) {
                        Some(text) => out.feed(text).await,
                        None => Ok(()),
                    },
                }
            } else {
                tracing::debug!(%resource, expected = *floor + 1, got = seq, "gap in a subscription; resyncing");
                *track = Track::Staging(vec![(seq, text)]);
                lag.mark(resource);
                Ok(())
            }
        }
    }
}
