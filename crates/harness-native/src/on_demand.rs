//! `/compact`: the user asks for the chat's earlier turns to be summarised now.

use hearth_core::{ChatContext, Compacted, HarnessError, HarnessResult, Signal, TurnId};
use tokio_util::sync::CancellationToken;

use crate::agent::NativeHarness;
use crate::compaction::{Compactor, Trigger};
use crate::error::Error;

impl NativeHarness {
    /// Summarises every turn of the chat not yet summarised, while no turn runs (the
    /// chat is busy meanwhile), and hands the host the new conversation.
    pub(crate) async fn compact_now(&self, context: &ChatContext) -> HarnessResult<Compacted> {
        let inner = &self.inner;
        let chat = &context.chat;
        inner.discover_model(context).await?;
        let cancel = CancellationToken::new();
        let (run, (model, before)) =
            inner
                .chats
                .try_start_run(chat, &TurnId::generate(), &cancel, |conversation| {
                    let before = conversation
                        .compactions
                        .last()
                        .map_or(0, |record| record.turns);
                    Ok::<_, Error>((
                        inner.model_for(context.model.as_deref(), conversation)?,
                        before,
                    ))
                })?;
        let compactor = Compactor {
            inner,
            chat,
            model: &model,
            cancel,
        };
        let compacted = compactor.compact(Trigger::Everything, 0).await;
        let finished = inner.chats.finish_run(chat, run, |conversation| {
            let latest = conversation.compactions.last().cloned();
            (conversation.encode(chat), latest)
        });
        let Some((encoded, latest)) = finished else {
            return Err(Error::NotOpen { chat: chat.clone() }.into());
        };
        let new = compacted.map_err(HarnessError::from)?;
        if new.is_some() {
            let provider_data = encoded?;
            inner
                .sink
                .get()
                .progress(chat, Signal::ProviderDataChanged { provider_data })
                .await;
        }
        Ok(Compacted {
            turns: latest.as_ref().map_or(0, |record| record.turns),
            summarised: new.map_or(0, |record| record.turns.saturating_sub(before)),
            summary: latest.map(|record| record.summary).unwrap_or_default(),
        })
    }
}
