//! Keeping a turn's model calls inside the model's context window: compaction before a
//! call that would not fit, and once more when the provider refuses one as too long.

use hearth_core::Signal;
use hearth_llm::{LlmError, Message};

use crate::compaction::{Budget, CompactionRecord, Compactor, Trigger};
use crate::conversation::TurnRecord;
use crate::turn::{Step, Tally, TurnLoop};

impl TurnLoop<'_> {
    /// The compactor of this loop's chat and model.
    pub(crate) fn compactor(&self) -> Compactor<'_> {
        Compactor {
            inner: self.inner,
            chat: &self.chat,
            model: &self.model,
            cancel: self.cancel.clone(),
        }
    }

    /// One model call that fits the window: earlier turns are summarised first when the
    /// request would not fit, and when the provider refuses it as too long they all are
    /// and the call is made once more. A second refusal fails the turn.
    pub(crate) async fn call_model(
        &self,
        prior: &mut Vec<Message>,
        record: &mut TurnRecord,
        tally: &mut Tally,
    ) -> Step {
        if let Err(error) = self.fit(prior, record, Trigger::Estimate).await {
            // The request may still fit as it is: the provider has the last word.
            self.signal(Signal::Error {
                turn_id: self.turn_id.clone(),
                message: format!(
                    "could not summarise the earlier turns ({error}); sending the whole conversation"
                ),
            })
            .await;
        }
        let error = match self.call_once(prior, record, tally).await {
            Step::Failed(error) if error.is_context_overflow() => error,
            step => return step,
        };
        match self.fit(prior, record, Trigger::Everything).await {
            Ok(true) => {}
            Ok(false) => return Step::Failed(too_long(error, &self.explain(false))),
            Err(failed) => return Step::Failed(failed),
        }
        match self.call_once(prior, record, tally).await {
            Step::Failed(error) if error.is_context_overflow() => {
                Step::Failed(too_long(error, &self.explain(true)))
            }
            step => step,
        }
    }

    /// Why a request that is too long could not be made to fit, and what to do.
    fn explain(&self, summarised: bool) -> String {
        let window = self.compactor().budget().window;
        let what = if summarised {
            "even after Hearth summarised the earlier turns and tried once more"
        } else {
            "and there are no earlier turns left to summarise"
        };
        format!(
            "the request is longer than the model's context window {what} (Hearth assumes \
             {window} tokens for `{}`): start a new chat, send less at once, or set \
             `context_window` for provider `{}` in config.toml",
            self.model,
            self.inner.provider()
        )
    }

    /// Summarises earlier turns when `trigger` says so: for an estimate only when the
    /// next request would not fit. `Ok(true)` when a summary now stands for more turns.
    async fn fit(
        &self,
        prior: &mut Vec<Message>,
        record: &mut TurnRecord,
        trigger: Trigger,
    ) -> Result<bool, LlmError> {
        let compactor = self.compactor();
        let budget = compactor.budget();
        if trigger == Trigger::Estimate {
            let estimate = compactor.estimate(&self.request(prior, record));
            if estimate <= budget.prompt() {
                return Ok(false);
            }
        }
        let Some(compaction) = compactor.compact(trigger, keep(budget, record)).await? else {
            return Ok(false);
        };
        self.compacted(prior, record, compaction).await;
        Ok(true)
    }

    /// Shows a compaction and sends its summary from now on.
    async fn compacted(
        &self,
        prior: &mut Vec<Message>,
        record: &mut TurnRecord,
        compaction: CompactionRecord,
    ) {
        let messages = self
            .inner
            .chats
            .with(&self.chat, |entry| entry.conversation.model_messages());
        match messages {
            Ok(messages) => *prior = messages,
            Err(error) => tracing::debug!(chat = %self.chat, %error, "the chat went away"),
        }
        let mark = crate::compaction::CompactionMark {
            turns: compaction.turns,
            summary: compaction.summary,
        };
        self.signal(Signal::Compacted {
            turn_id: self.turn_id.clone(),
            turns: Some(mark.turns),
            summary: mark.summary.clone(),
        })
        .await;
        record.compaction = Some(mark);
    }
}

/// What the turns left as they are may take: a third of the prompt's budget, less what
/// the running turn holds already.
fn keep(budget: Budget, record: &TurnRecord) -> u64 {
    let running: u64 = record
        .messages
        .iter()
        .map(hearth_llm::estimate_message_tokens)
        .sum();
    (budget.prompt() / 3).saturating_sub(running)
}

/// A refusal for length, with what Hearth tried and what the user can do.
fn too_long(error: LlmError, explanation: &str) -> LlmError {
    match error {
        LlmError::Api(mut api) => {
            api.message = format!("{}; {explanation}", api.message);
            LlmError::Api(api)
        }
        other => other,
    }
}
