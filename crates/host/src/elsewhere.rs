//! Asks for the node answering a chat. On a team server a chat's turn runs on the node
//! holding its lease, while its clients may be on any node: one that does not run the
//! turn passes a stop or an answer to the agent's permission request on through the
//! database ([`Store::ask_holder`](hearth_store::Store::ask_holder)), and the node that
//! runs it acts on it as if asked by its own client ([`Host::take_ask`]).

use hearth_core::{ChatUri, PERMISSION_BY_POLICY, PermissionAnswer, now};
use hearth_store::HolderAsk;

use crate::error::HostResult;
use crate::host::Host;

impl Host {
    /// Whether another host holds the chat's lease now: it answers the chat's turn.
    async fn answered_by_another(&self, chat: &ChatUri) -> HostResult<bool> {
        let ours = &self.inner.instance.holder.instance;
        let at = now();
        let leases = self.inner.store.leases(chat.session_ref()).await?;
        Ok(leases.iter().any(|lease| {
            &lease.chat == chat && lease.is_live(at) && &lease.holder.instance != ours
        }))
    }

    /// Passes `ask` on when another host answers its chat; whether it was passed on.
    pub(crate) async fn ask_answering_host(&self, ask: HolderAsk) -> HostResult<bool> {
        if !self.answered_by_another(ask.chat()).await? {
            return Ok(false);
        }
        tracing::debug!(chat = %ask.chat(), "passing an ask on to the host answering the chat");
        Ok(self.inner.store.ask_holder(&ask).await?)
    }

    /// Acts on an ask another host passed on, when this host runs the chat's turn (every
    /// host hears every ask; the others leave it).
    pub async fn take_ask(&self, ask: &HolderAsk) -> HostResult<()> {
        let runs_here = self
            .inner
            .lock()
            .chats
            .get(ask.chat())
            .is_some_and(|entry| entry.running.is_some());
        if !runs_here {
            return Ok(());
        }
        match ask {
            HolderAsk::Abort { chat } => {
                self.abort(chat).await?;
            }
            HolderAsk::Answer {
                chat,
                request_id,
                option_id,
                by_policy,
            } => {
                let answer = PermissionAnswer {
                    option_id: option_id.clone(),
                    via: if *by_policy {
                        PERMISSION_BY_POLICY
                    } else {
                        "server"
                    }
                    .to_owned(),
                };
                self.respond_permission(chat, request_id, &answer).await?;
            }
        }
        Ok(())
    }
}
