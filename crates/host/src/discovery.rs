//! External discovery: conversations a harness finds in its own catalog join the
//! registry additively, marked external, never over a tombstone, and never when they
//! back a chat.

use hearth_core::{
    Action, ChatOrigin, ChatSummary, ChatUri, DiscoveredChat, HarnessId, Provenance, ResourceUri,
    Scope, SessionId, SessionSummary, SessionUri,
};
use hearth_store::{ChatRecord, NewSession, Registration};

use crate::error::HostResult;
use crate::host::Host;

/// A harness `create_chat` call in flight, from before the call until its conversation is
/// marked (or the creation failed). While one is, discoveries from that provider wait:
/// the new conversation may already be in the harness's catalog but not yet known as a
/// chat's conversation.
pub(crate) struct CreatingChat {
    host: Host,
    provider: HarnessId,
}

impl Host {
    pub(crate) fn creating_chat(&self, provider: &HarnessId) -> CreatingChat {
        *self
            .inner
            .lock()
            .creating
            .entry(provider.clone())
            .or_default() += 1;
        CreatingChat {
            host: self.clone(),
            provider: provider.clone(),
        }
    }
}

impl Drop for CreatingChat {
    fn drop(&mut self) {
        let deferred = {
            let mut state = self.host.inner.lock();
            let remaining = match state.creating.get_mut(&self.provider) {
                Some(count) => {
                    *count = count.saturating_sub(1);
                    *count
                }
                None => 0,
            };
            if remaining > 0 {
                return;
            }
            state.creating.remove(&self.provider);
            state.deferred_discoveries.remove(&self.provider)
        };
        let Some(deferred) = deferred else { return };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                let host = self.host.clone();
                let provider = self.provider.clone();
                runtime.spawn(async move {
                    host.register_discovered(&provider, deferred.chats, deferred.peers)
                        .await;
                });
            }
            Err(_) => tracing::warn!(
                provider = %self.provider,
                "dropping discovered conversations: no runtime to register them on"
            ),
        }
    }
}

impl Host {
    /// Registers conversations a harness found in its own catalog: additive, marked
    /// external, never over a tombstone, never for a conversation that backs a chat.
    /// While the provider is creating chats, they wait until it is done. A conversation
    /// one of `peers` (harnesses reading the same catalog) already has is left out: one
    /// native session is listed once.
    pub(crate) async fn register_discovered(
        &self,
        provider: &HarnessId,
        chats: Vec<DiscoveredChat>,
        peers: Vec<HarnessId>,
    ) {
        {
            let mut state = self.inner.lock();
            if state.creating.contains_key(provider) {
                let deferred = state
                    .deferred_discoveries
                    .entry(provider.clone())
                    .or_default();
                deferred.chats.extend(chats);
                for peer in peers {
                    if !deferred.peers.contains(&peer) {
                        deferred.peers.push(peer);
                    }
                }
                return;
            }
        }
        for discovered in chats {
            if let Err(error) = self
                .register_one_discovered(provider, discovered, &peers)
                .await
            {
                tracing::warn!(%provider, %error, "could not register a discovered conversation");
            }
        }
    }

    async fn register_one_discovered(
        &self,
        provider: &HarnessId,
        discovered: DiscoveredChat,
        peers: &[HarnessId],
    ) -> HostResult<()> {
        let store = &self.inner.store;
        for owner in std::iter::once(provider).chain(peers) {
            if store
                .is_conversation(owner, &discovered.conversation)
                .await?
            {
                return Ok(());
            }
        }
        let uri = SessionUri::new(
            provider.clone(),
            SessionId::parse(discovered.conversation.as_str())?,
        );
        let summary = SessionSummary {
            uri: uri.clone(),
            harness: provider.clone(),
            title: discovered.title.clone(),
            provenance: Provenance::External,
            source: "discovery".into(),
            scope: Scope::Global,
            model: None,
            working_directories: discovered.working_directory.clone().into_iter().collect(),
            started_at: discovered.started_at,
            updated_at: discovered.updated_at,
            pinned: false,
            archived: false,
            owner: None,
        };
        let chat = ChatSummary {
            uri: ChatUri::default_for(&uri),
            origin: ChatOrigin::User,
            title: discovered.title,
            model: None,
            created_at: discovered.started_at,
            updated_at: discovered.updated_at,
        };
        let record = ChatRecord {
            summary: chat,
            provider_data: Some(discovered.provider_data),
            conversation: Some(discovered.conversation.clone()),
            draft: None,
            queued: Vec::new(),
        };
        let registration = store
            .register_discovered(&NewSession {
                summary: summary.clone(),
                default_chat: record,
            })
            .await?;
        if registration == Registration::Added {
            store
                .mark_conversation(
                    provider,
                    &discovered.conversation,
                    &ChatUri::default_for(&uri),
                )
                .await?;
            self.inner
                .lock()
                .publish(ResourceUri::Root, Action::SessionAdded { summary });
        }
        Ok(())
    }
}
