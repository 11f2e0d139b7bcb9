//! External discovery: conversations a harness finds in its own catalog join the
//! registry additively, marked external, never over a tombstone, and never when they
//! back a chat.

use hearth_core::{
    Action, ChatOrigin, ChatSummary, ChatUri, DiscoveredChat, Provenance, ProviderId, ResourceUri,
    Scope, SessionId, SessionSummary, SessionUri,
};
use hearth_store::{ChatRecord, NewSession, Registration};

use crate::error::HostResult;
use crate::host::Host;

impl Host {
    /// Registers conversations a harness found in its own catalog: additive, marked
    /// external, never over a tombstone, never for a conversation that backs a chat.
    pub(crate) async fn register_discovered(
        &self,
        provider: &ProviderId,
        chats: Vec<DiscoveredChat>,
    ) {
        for discovered in chats {
            if let Err(error) = self.register_one_discovered(provider, discovered).await {
                tracing::warn!(%provider, %error, "could not register a discovered conversation");
            }
        }
    }

    async fn register_one_discovered(
        &self,
        provider: &ProviderId,
        discovered: DiscoveredChat,
    ) -> HostResult<()> {
        let store = &self.inner.store;
        if store.is_backing(provider, &discovered.backing).await? {
            return Ok(());
        }
        let uri = SessionUri::new(
            provider.clone(),
            SessionId::parse(discovered.backing.as_str())?,
        );
        let summary = SessionSummary {
            uri: uri.clone(),
            provider: provider.clone(),
            title: discovered.title.clone(),
            provenance: Provenance::External,
            source: "discovery".into(),
            scope: Scope::Global,
            model: None,
            started_at: discovered.started_at,
            updated_at: discovered.updated_at,
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
            backing: Some(discovered.backing.clone()),
            draft: None,
        };
        let registration = store
            .register_discovered(&NewSession {
                summary: summary.clone(),
                default_chat: record,
            })
            .await?;
        if registration == Registration::Added {
            store
                .mark_backing(provider, &discovered.backing, &ChatUri::default_for(&uri))
                .await?;
            self.inner
                .lock()
                .publish(ResourceUri::Root, Action::SessionAdded { summary });
        }
        Ok(())
    }
}
