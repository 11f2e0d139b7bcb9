//! Answers given beside this host: another Hearth process on the same data directory (a
//! `hearth chat` next to `hearth serve`) answered in a chat this host holds. The chat
//! leases say so — their epoch moves when another process takes one — so a long-running
//! host checks them now and then and reads such chats again once the other process is
//! done, and its subscribers see the turns without reloading. Sessions made beside it are
//! announced to the root's subscribers the same way.

use std::collections::BTreeSet;

use hearth_core::{Action, ChatUri, ResourceUri, SessionUri, now};
use hearth_store::SessionQuery;

use crate::error::HostResult;
use crate::host::Host;
use crate::state::{LeaseHold, Resolution};

impl Host {
    /// Reads again every loaded chat that another process answered in since this host
    /// read it, once that process is done with it, announcing the new turns to its
    /// subscribers. Returns how many chats were read again.
    pub async fn pick_up_outside_answers(&self) -> HostResult<usize> {
        let sessions: BTreeSet<SessionUri> = {
            let state = self.inner.lock();
            state
                .chats
                .iter()
                .filter(|(_, entry)| matches!(entry.resolution, Resolution::Resolved))
                .map(|(chat, _)| chat.session())
                .collect()
        };
        let ours = &self.inner.instance.holder.instance;
        let mut read_again = 0;
        for session in sessions {
            let leases = self.inner.store.leases(&session).await?;
            for lease in leases {
                if &lease.holder.instance == ours || lease.expires_at > now() {
                    // Ours, or the other process still answers: its turn is read once
                    // it is done.
                    continue;
                }
                if !self.is_stale(&lease.chat, lease.epoch) {
                    continue;
                }
                match self.reread_chat(&lease.chat).await {
                    Ok(()) => {
                        if let Some(entry) = self.inner.lock().chats.get_mut(&lease.chat) {
                            entry.lease_epoch = Some(lease.epoch);
                        }
                        read_again += 1;
                        // What this host queued behind the other's turn goes now.
                        self.drain_queue(&lease.chat).await;
                    }
                    Err(error) => {
                        tracing::warn!(chat = %lease.chat, %error, "could not read again a chat answered beside this host");
                    }
                }
            }
        }
        Ok(read_again)
    }

    /// Announces to the root's subscribers the sessions another process made since the
    /// last look (the first look only notes where things stand). Returns how many.
    pub async fn pick_up_outside_sessions(&self) -> HostResult<usize> {
        let page = self
            .inner
            .store
            .list_sessions(&SessionQuery {
                limit: 50,
                ..SessionQuery::default()
            })
            .await?;
        let newest = page.sessions.iter().map(|summary| summary.started_at).max();
        let mut seen = self
            .inner
            .outside_sessions_seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(mark) = *seen else {
            *seen = Some(newest.unwrap_or_else(now));
            return Ok(0);
        };
        let mut state = self.inner.lock();
        let mut announced = 0;
        let mut fresh: Vec<_> = page
            .sessions
            .into_iter()
            .filter(|summary| {
                summary.started_at > mark && !state.sessions.contains_key(&summary.uri)
            })
            .collect();
        fresh.sort_by_key(|summary| summary.started_at);
        for summary in fresh {
            state.publish(ResourceUri::Root, Action::SessionAdded { summary });
            announced += 1;
        }
        if let Some(newest) = newest
            && newest > mark
        {
            *seen = Some(newest);
        }
        Ok(announced)
    }

    /// Whether a loaded, idle chat was last read before the lease's `epoch`.
    fn is_stale(&self, chat: &ChatUri, epoch: i64) -> bool {
        let state = self.inner.lock();
        state.chats.get(chat).is_some_and(|entry| {
            matches!(entry.resolution, Resolution::Resolved)
                && entry.running.is_none()
                && matches!(entry.lease, LeaseHold::Free)
                && entry.lease_epoch != Some(epoch)
        })
    }
}
