//! `chat/compact`: the chat's harness summarises its earlier turns now.

use hearth_core::{ChatUri, Compacted};

use crate::error::HostResult;
use crate::host::{Host, Inner};

impl Host {
    /// Has the chat's harness summarise the chat's earlier turns now, so its next turns
    /// send the summary instead of them. The turns stay in the chat (shown, stored,
    /// searchable); the harness hands over its new conversation, which is stored as
    /// any other. Harnesses whose agents manage their own context refuse.
    pub async fn compact(&self, chat: &ChatUri) -> HostResult<Compacted> {
        self.resolve_chat(chat).await?;
        let context = self.inner.context_for(chat)?;
        let agent = self.inner.agent_for(chat.session_ref())?;
        agent
            .compact(&context)
            .await
            .map_err(|error| Inner::agent_error(chat.harness(), error))
    }
}
