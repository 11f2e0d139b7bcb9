//! Chat leases: this host answers in a chat only while it holds the chat's lease in the
//! store, so two processes never run turns in one chat at once — the second is refused,
//! with the process that answers named. The lease is taken before a turn's prompt is
//! stored, renewed while the turn runs, and released through the write queue, after the
//! turn's own writes. A lease whose holder stopped without releasing it ends when it
//! expires, or at once when its holder ran on this machine and no longer runs.
//!
//! Taking the lease also tells whether another process wrote the chat since this host read
//! it (the lease's epoch moved on): then the chat's turns and provider data are read again
//! and the harness re-attached to them, so the turn builds on everything said in the chat.
//! Provider data a harness hands over outside a turn (a title made afterwards) is written
//! only while the lease has not passed to another owner since, so an older blob never
//! replaces a newer one.
//!
//! Turns a harness starts by itself (a subagent's, an agent speaking between turns) are
//! recorded without taking the lease.

use std::collections::BTreeSet;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use hearth_core::{Action, ChatUri, ResourceUri, now};
use hearth_store::{ChatLease, LeaseGrant, LeaseHolder, Store, StoreError, StoreResult, Takeover};
use tokio::sync::oneshot;

use crate::chats::publish_chat_summary;
use crate::durability::{Persistence, with_retries};
use crate::error::{HostError, HostResult};
use crate::host::{Host, Inner};
use crate::sessions::settle_stale_turns;
use crate::state::{HostState, LeaseHold};
use crate::writer::WriteJob;

/// The hosts of this process that have not been dropped, by instance id.
static RUNNING: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

fn running() -> std::sync::MutexGuard<'static, BTreeSet<String>> {
    RUNNING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A host of this process as a lease holder, counted as running until it is dropped: a
/// lease left by a host of this process that was dropped (without shutting down, as in a
/// crash) may be taken over at once, as that of a process that stopped.
pub(crate) struct Instance {
    /// The identity leases are taken with.
    pub holder: LeaseHolder,
}

impl Instance {
    /// A new identity: a random instance id, this process, this machine (or the node
    /// name given).
    pub fn new(node: Option<String>) -> Self {
        let holder = LeaseHolder {
            instance: uuid::Uuid::now_v7().to_string(),
            pid: std::process::id(),
            host: node.unwrap_or_else(|| {
                rustix::system::uname()
                    .nodename()
                    .to_string_lossy()
                    .into_owned()
            }),
        };
        running().insert(holder.instance.clone());
        Self { holder }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        running().remove(&self.holder.instance);
    }
}

/// Whether a process with this id runs on this machine; one that cannot be checked
/// counts as running.
fn process_runs(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return true;
    };
    !matches!(
        rustix::process::test_kill_process(pid),
        Err(rustix::io::Errno::SRCH)
    )
}

/// Whether `other` held its lease from a process of this machine that no longer runs, or
/// from a host of this process that was dropped.
fn has_stopped(other: &LeaseHolder, ours: &LeaseHolder) -> bool {
    if other.host != ours.host {
        return false;
    }
    if other.pid == ours.pid {
        return !running().contains(&other.instance);
    }
    !process_runs(other.pid)
}

/// Takes (or renews) a chat's lease, taking it over from a holder that stopped.
pub(crate) async fn take(
    store: &dyn Store,
    chat: &ChatUri,
    holder: &LeaseHolder,
    ttl: Duration,
) -> StoreResult<LeaseGrant> {
    let ended = Takeover::Ended;
    let taken = with_retries(Persistence::Routine, "a chat lease", || {
        store.take_lease(chat, holder, ttl, &ended)
    })
    .await;
    match taken {
        Err(StoreError::Leased { holder: other, .. }) if has_stopped(&other, holder) => {
            tracing::info!(%chat, pid = other.pid, "taking over the lease of a Hearth process that stopped");
            let stopped = Takeover::Stopped(other.instance);
            with_retries(Persistence::Routine, "a chat lease", || {
                store.take_lease(chat, holder, ttl, &stopped)
            })
            .await
        }
        taken => taken,
    }
}

/// The epoch at which a chat read now is what the store holds: `None` while another host
/// that still runs holds its lease (it may be in the middle of a turn).
pub(crate) fn known_epoch(leases: &[ChatLease], chat: &ChatUri, ours: &LeaseHolder) -> Option<i64> {
    match leases.iter().find(|lease| &lease.chat == chat) {
        None => Some(0),
        Some(lease)
            if lease.holder.instance != ours.instance
                && lease.is_live(now())
                && !has_stopped(&lease.holder, ours) =>
        {
            None
        }
        Some(lease) => Some(lease.epoch),
    }
}

impl Host {
    /// Takes `chat`'s lease for a turn (refused while another process answers in it) and,
    /// when another process wrote the chat since this host read it, reads it again.
    pub(crate) async fn take_chat_lease(&self, chat: &ChatUri) -> HostResult<()> {
        let (reply, granted) = oneshot::channel();
        self.inner.queue(WriteJob::TakeLease {
            chat: chat.clone(),
            reply,
        });
        let grant = granted.await.map_err(|_| HostError::ShuttingDown)??;
        let known = {
            let mut state = self.inner.lock();
            let Some(entry) = state.chats.get_mut(chat) else {
                self.inner
                    .queue(WriteJob::ReleaseLease { chat: chat.clone() });
                return Err(HostError::NotFound {
                    what: "chat",
                    key: chat.to_string(),
                });
            };
            entry.lease = LeaseHold::Held {
                renewed: Instant::now(),
            };
            entry.lease_epoch
        };
        if known != Some(grant.previous_epoch) {
            tracing::info!(%chat, "the chat changed in another process; reading it again");
            if let Err(error) = self.reread_chat(chat).await {
                self.release_chat_lease(&mut self.inner.lock(), chat);
                return Err(error);
            }
        }
        if let Some(entry) = self.inner.lock().chats.get_mut(chat) {
            entry.lease_epoch = Some(grant.epoch);
        }
        Ok(())
    }

    /// Releases a chat's lease if this host holds it. Queued, so the writes queued before
    /// (the turn's final state, the harness's provider data) are stored first.
    pub(crate) fn release_chat_lease(&self, state: &mut HostState, chat: &ChatUri) {
        if let Some(entry) = state.chats.get_mut(chat)
            && matches!(entry.lease, LeaseHold::Held { .. })
        {
            entry.lease = LeaseHold::Free;
            self.inner
                .queue(WriteJob::ReleaseLease { chat: chat.clone() });
        }
    }

    /// Renews the lease of every running turn a third of the lease's time after it was
    /// taken or last renewed.
    pub(crate) fn renew_leases_due(&self) {
        let every = self.inner.config.lease_ttl / 3;
        let mut state = self.inner.lock();
        for (chat, entry) in &mut state.chats {
            if entry.running.is_none() {
                continue;
            }
            if let LeaseHold::Held { renewed } = &mut entry.lease
                && renewed.elapsed() >= every
            {
                *renewed = Instant::now();
                self.inner
                    .queue(WriteJob::RenewLease { chat: chat.clone() });
            }
        }
    }

    /// Reads a chat's turns and provider data again and re-attaches the harness to them.
    /// Turns whose final state this host still keeps unsaved keep that state; turns that
    /// are new are announced to the chat's subscribers.
    pub(crate) async fn reread_chat(&self, chat: &ChatUri) -> HostResult<()> {
        let store = &self.inner.store;
        let record = store
            .chats(chat.session_ref())
            .await?
            .into_iter()
            .find(|record| &record.summary.uri == chat)
            .ok_or_else(|| HostError::NotFound {
                what: "chat",
                key: chat.to_string(),
            })?;
        let mut turns = store.turns(chat).await?;
        settle_stale_turns(&mut turns);
        for kept in self.inner.ledger.kept_turns(chat) {
            if let Some(turn) = turns.iter_mut().find(|turn| turn.id == kept.id) {
                *turn = kept;
            }
        }
        let context = self.inner.context_for(chat)?;
        let agent = self.inner.agent_for(chat.session_ref())?;
        let recovered = agent
            .materialize_chat(&context, record.provider_data.clone())
            .await
            .map_err(|error| Inner::agent_error(chat.harness(), error))?;
        let mut state = self.inner.lock();
        let Some(entry) = state.chats.get_mut(chat) else {
            return Err(HostError::NotFound {
                what: "chat",
                key: chat.to_string(),
            });
        };
        entry.provider_data = record.provider_data.or(recovered);
        let cached = &entry.state.turns;
        let extends = turns.len() >= cached.len()
            && turns
                .iter()
                .zip(cached)
                .all(|(fresh, old)| fresh.id == old.id);
        let added = if extends {
            turns.split_off(cached.len())
        } else {
            Vec::new()
        };
        // A turn this host followed while another answered it goes on to its end as its
        // clients saw it go (see `catch_up`), rather than changing under them.
        let followed = match (extends, cached.last(), turns.last()) {
            (true, Some(old), Some(fresh)) if old != fresh => {
                crate::catch_up::catch_up(&entry.state, old, fresh)
                    .map(|actions| (old.clone(), actions))
            }
            _ => None,
        };
        entry.state.turns = turns;
        if let Some((old, _)) = &followed
            && let Some(last) = entry.state.turns.last_mut()
        {
            *last = old.clone();
        }
        let summary = &entry.state.summary;
        let renamed = (summary.title != record.summary.title
            || summary.model != record.summary.model)
            .then(|| record.summary.clone());
        for action in followed.into_iter().flat_map(|(_, actions)| actions) {
            state.publish(ResourceUri::Chat(chat.clone()), action);
        }
        for turn in added {
            state.publish(
                ResourceUri::Chat(chat.clone()),
                Action::TurnStarted { turn },
            );
        }
        if let Some(summary) = renamed {
            publish_chat_summary(&mut state, &summary);
        }
        Ok(())
    }
}
