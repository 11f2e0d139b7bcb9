//! Compaction: before a request would not fit the model's context window, the chat's
//! older turns are summarised by the model, and the summary is sent instead of them.
//!
//! 1. The window is the model's (configured for it, else listed by the provider, else
//!    [`hearth_llm::ContextWindows::for_model`]); a quarter of it (at most
//!    16,384 tokens) is left for the answer, the rest is the prompt's budget.
//! 2. A request is estimated at a token per four bytes, scaled by what the provider
//!    reported for the chat's last request ([`TokenScale`]).
//! 3. When the estimate is over the budget, the turns not yet summarised are, except the
//!    newest that fit in a third of the budget; the previous summary is summarised with
//!    them, in batches that each fit the window.
//! 4. When the provider refuses a request as too long anyway, every turn not yet
//!    summarised is, and the request is sent once more.
//! 5. The turns stay in the chat (shown, stored, searchable); the summary is kept as a
//!    [`CompactionRecord`] with the range of turns it covers, and shown in the turn it
//!    happened in as a compaction part.

use hearth_core::{ChatUri, ResponsePart, Timestamp, TurnId, now};
use hearth_llm::{LlmError, Message, ModelRequest, estimate_request_tokens, estimate_text_tokens};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::agent::Inner;
use crate::conversation::TurnRecord;

/// What the model is told when it summarises.
const SUMMARY_PROMPT: &str = "You compact conversations. Summarise the conversation below \
so that it can be continued from your summary alone: the user's goals and preferences, \
decisions made, facts, names, numbers, file paths and results found, and what is still \
open. If a previous summary is given, fold it in. Write plain prose or short lists, no \
preamble.";

/// The first words of every summary the model reads, so it knows what it is.
pub(crate) const SUMMARY_HEADING: &str = "Summary of the earlier conversation";

/// A summary of a chat's earliest turns, which the model reads instead of them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CompactionRecord {
    /// The summary.
    pub summary: String,
    /// The first turn it covers (the chat's first).
    pub first: TurnId,
    /// The last turn it covers.
    pub through: TurnId,
    /// How many turns it covers.
    pub turns: u32,
    /// When it was made.
    pub compacted_at: Timestamp,
}

impl CompactionRecord {
    /// The message that stands for the covered turns.
    pub fn message(&self) -> Message {
        Message::user(format!(
            "[{SUMMARY_HEADING} ({} turns), written when it grew too long for the context \
             window]\n{}",
            self.turns, self.summary
        ))
    }
}

/// What a turn shows of the compaction that happened in it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CompactionMark {
    /// How many turns the summary covers.
    pub turns: u32,
    /// The summary.
    pub summary: String,
}

impl CompactionMark {
    pub fn part(&self) -> ResponsePart {
        ResponsePart::Compaction {
            turns: Some(self.turns),
            summary: self.summary.clone(),
        }
    }
}

/// How the provider's token counts compare with Hearth's estimates, in percent (never
/// below 100: an estimate is only ever raised by what the provider reports).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TokenScale(u64);

impl Default for TokenScale {
    fn default() -> Self {
        Self(100)
    }
}

impl TokenScale {
    /// The highest scale learned (4×): beyond it the report is more likely wrong.
    const MOST: u64 = 400;

    /// An estimate, scaled.
    pub fn apply(self, estimate: u64) -> u64 {
        estimate.saturating_mul(self.0) / 100
    }

    /// What the provider reported for a request of `estimate` tokens.
    pub fn learn(estimate: u64, reported: u64) -> Self {
        if estimate == 0 || reported == 0 {
            return Self::default();
        }
        Self((reported.saturating_mul(100) / estimate).clamp(100, Self::MOST))
    }
}

/// The token budget of one model's requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Budget {
    /// The context window.
    pub window: u64,
}

impl Budget {
    /// What is left for the answer.
    pub fn answer(self) -> u64 {
        (self.window / 4).min(16_384)
    }

    /// What a request's prompt may take.
    pub fn prompt(self) -> u64 {
        self.window - self.answer()
    }

    /// The longest summary asked for.
    pub fn summary(self) -> u64 {
        (self.window / 8).clamp(32, 4_096)
    }

    /// What the text of one summarising request may take (its prompt, the previous
    /// summary and the turns), leaving room for the summary it answers.
    fn summarising(self) -> u64 {
        self.window
            .saturating_sub(self.summary())
            .saturating_sub(estimate_text_tokens(SUMMARY_PROMPT) + 64)
    }
}

/// Why a compaction runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Trigger {
    /// The next request was estimated over the budget: the newest turns that fit in a
    /// third of it stay as they are.
    Estimate,
    /// The provider refused a request as too long, or the user asked: every turn not
    /// yet summarised is.
    Everything,
}

/// Tokens of a turn's messages, estimated.
fn turn_tokens(turn: &TurnRecord) -> u64 {
    turn.messages
        .iter()
        .map(hearth_llm::estimate_message_tokens)
        .sum()
}

/// How many of the oldest `unsummarised` turns to summarise, keeping the newest that
/// fit in `keep` tokens (all of them when none would be summarised otherwise).
fn to_summarise(unsummarised: &[TurnRecord], keep: u64) -> usize {
    let mut kept = 0;
    let mut count = unsummarised.len();
    for turn in unsummarised.iter().rev() {
        kept += turn_tokens(turn);
        if kept > keep {
            break;
        }
        count -= 1;
    }
    if count == 0 {
        unsummarised.len()
    } else {
        count
    }
}

/// Cuts a text to about `tokens` tokens, keeping its start and end.
fn clip(text: &str, tokens: u64) -> String {
    let bytes = usize::try_from(tokens.saturating_mul(4)).unwrap_or(usize::MAX);
    if text.len() <= bytes {
        return text.to_owned();
    }
    let half = bytes / 2;
    let mut head = half;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - half;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!("{} […] {}", &text[..head], &text[tail..])
}

/// A turn as the summarising model reads it, at most `tokens` tokens.
fn transcript(turn: &TurnRecord, tokens: u64) -> String {
    let mut text = String::new();
    for message in &turn.messages {
        match message {
            Message::User { text: said, .. } => text.push_str(&format!("User: {said}\n")),
            Message::Assistant {
                text: said,
                tool_calls,
            } => {
                if !said.is_empty() {
                    text.push_str(&format!("Assistant: {said}\n"));
                }
                for call in tool_calls {
                    text.push_str(&format!(
                        "Assistant called {}({})\n",
                        call.name, call.arguments
                    ));
                }
            }
            Message::ToolResult {
                content, is_error, ..
            } => {
                let kind = if *is_error {
                    "Tool error"
                } else {
                    "Tool result"
                };
                text.push_str(&format!("{kind}: {}\n", clip(content, tokens / 4)));
            }
        }
    }
    clip(&text, tokens)
}

/// What a compaction starts from: the chat's latest summary and the turns after it.
struct Snapshot {
    previous: Option<CompactionRecord>,
    unsummarised: Vec<TurnRecord>,
    scale: TokenScale,
}

/// Summarises one chat's older turns with its model.
pub(crate) struct Compactor<'a> {
    pub inner: &'a Inner,
    pub chat: &'a ChatUri,
    pub model: &'a str,
    pub cancel: CancellationToken,
}

impl Compactor<'_> {
    pub fn budget(&self) -> Budget {
        Budget {
            window: u64::from(self.inner.context_window(self.model)),
        }
    }

    /// A request's estimated tokens, scaled by what the provider reported before.
    pub fn estimate(&self, request: &ModelRequest) -> u64 {
        let scale = self
            .inner
            .chats
            .with(self.chat, |entry| entry.conversation.scale)
            .unwrap_or_default();
        scale.apply(estimate_request_tokens(request))
    }

    /// Learns from the provider's count of the input tokens of a request estimated at
    /// `estimate` (unscaled).
    pub fn learn(&self, estimate: u64, reported: u64) {
        let scale = TokenScale::learn(estimate, reported);
        if let Err(error) = self
            .inner
            .chats
            .with(self.chat, |entry| entry.conversation.scale = scale)
        {
            tracing::debug!(chat = %self.chat, %error, "the chat went away during its turn");
        }
    }

    fn snapshot(&self) -> Option<Snapshot> {
        self.inner
            .chats
            .with(self.chat, |entry| {
                let conversation = &entry.conversation;
                Snapshot {
                    previous: conversation.compactions.last().cloned(),
                    unsummarised: conversation.turns[conversation.summarised()..].to_vec(),
                    scale: conversation.scale,
                }
            })
            .ok()
    }

    /// Summarises the turns `trigger` picks; the new record, or `None` when there was
    /// nothing to summarise. `keep` is what the turns left as they are may take.
    pub async fn compact(
        &self,
        trigger: Trigger,
        keep: u64,
    ) -> Result<Option<CompactionRecord>, LlmError> {
        let Some(snapshot) = self.snapshot() else {
            return Ok(None);
        };
        let count = match trigger {
            Trigger::Estimate => to_summarise(&snapshot.unsummarised, keep),
            Trigger::Everything => snapshot.unsummarised.len(),
        };
        let (Some(first_new), Some(last)) = (
            snapshot.unsummarised.first(),
            snapshot.unsummarised.get(count.wrapping_sub(1)),
        ) else {
            return Ok(None);
        };
        let turns = &snapshot.unsummarised[..count];
        let previous = snapshot.previous.as_ref();
        let summary = self
            .summarise(
                previous.map(|record| record.summary.as_str()),
                turns,
                snapshot.scale,
            )
            .await?;
        let record = CompactionRecord {
            summary,
            first: previous.map_or_else(|| first_new.id.clone(), |record| record.first.clone()),
            through: last.id.clone(),
            turns: previous.map_or(0, |record| record.turns)
                + u32::try_from(count).unwrap_or(u32::MAX),
            compacted_at: now(),
        };
        let stored = self.inner.chats.with(self.chat, |entry| {
            entry.conversation.compactions.push(record.clone());
        });
        Ok(stored.ok().map(|()| record))
    }

    /// The previous summary and `turns`, summarised in batches that each fit the window.
    async fn summarise(
        &self,
        previous: Option<&str>,
        turns: &[TurnRecord],
        scale: TokenScale,
    ) -> Result<String, LlmError> {
        let budget = self.budget();
        let room = budget.summarising() * 100 / scale.apply(100);
        let per_turn = room.saturating_sub(budget.summary()).max(16);
        let mut summary = previous.map(str::to_owned);
        let mut batch = String::new();
        for turn in turns {
            let text = transcript(turn, per_turn);
            let held = summary.as_deref().map_or(0, estimate_text_tokens)
                + estimate_text_tokens(&batch)
                + estimate_text_tokens(&text);
            if !batch.is_empty() && held > room {
                summary = Some(self.summarise_once(summary.as_deref(), &batch).await?);
                batch.clear();
            }
            batch.push_str(&text);
            batch.push('\n');
        }
        if !batch.is_empty() {
            summary = Some(self.summarise_once(summary.as_deref(), &batch).await?);
        }
        Ok(summary.unwrap_or_default())
    }

    /// One summarising model call.
    async fn summarise_once(
        &self,
        previous: Option<&str>,
        batch: &str,
    ) -> Result<String, LlmError> {
        let mut text = String::new();
        if let Some(previous) = previous {
            text.push_str(&format!(
                "<previous_summary>\n{previous}\n</previous_summary>\n\n"
            ));
        }
        text.push_str(&format!("<conversation>\n{batch}</conversation>"));
        let max_tokens = u32::try_from(self.budget().summary()).unwrap_or(u32::MAX);
        let request = ModelRequest::new(self.model)
            .with_system(SUMMARY_PROMPT)
            .with_message(Message::user(text))
            .with_max_tokens(max_tokens);
        let response = self
            .inner
            .client
            .complete(request, self.cancel.clone())
            .await?;
        let summary = response.text.trim();
        if summary.is_empty() {
            return Err(LlmError::Decode {
                provider: self.inner.provider().to_owned(),
                message: "the summary of the earlier turns came back empty".to_owned(),
            });
        }
        Ok(summary.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_core::UserMessage;
    use pretty_assertions::assert_eq;

    fn turn(words: usize) -> TurnRecord {
        let mut turn = TurnRecord::new(TurnId::generate(), UserMessage::text("q"));
        turn.messages
            .push(Message::assistant("word ".repeat(words)));
        turn
    }

    #[test]
    fn the_newest_turns_that_fit_are_kept() {
        // Each turn is about 4 + 1 + 4 + 5 × words / 4 tokens.
        let turns = vec![turn(40), turn(40), turn(40), turn(40)];
        let size = turn_tokens(&turns[0]);
        assert_eq!(to_summarise(&turns, size * 2), 2);
        assert_eq!(to_summarise(&turns, size * 2 - 1), 3);
        // Nothing would be summarised: everything is.
        assert_eq!(to_summarise(&turns, size * 10), 4);
        assert_eq!(to_summarise(&[], 100), 0);
    }

    #[test]
    fn scales_are_learned_only_upwards_and_bounded() {
        assert_eq!(TokenScale::learn(100, 150).apply(1000), 1500);
        assert_eq!(TokenScale::learn(100, 50).apply(1000), 1000);
        assert_eq!(TokenScale::learn(100, 10_000).apply(1000), 4000);
        assert_eq!(TokenScale::learn(0, 10).apply(1000), 1000);
    }

    #[test]
    fn long_texts_are_clipped_at_both_ends() {
        assert_eq!(clip("short", 10), "short");
        let clipped = clip(&format!("{}{}", "a".repeat(100), "z".repeat(100)), 10);
        assert_eq!(
            clipped,
            format!("{} […] {}", "a".repeat(20), "z".repeat(20))
        );
        // Never in the middle of a character.
        assert!(clip(&"é".repeat(100), 5).contains("[…]"));
    }

    #[test]
    fn a_window_leaves_room_for_the_answer_and_the_summary() {
        let budget = Budget { window: 4_000 };
        assert_eq!(
            (budget.answer(), budget.prompt(), budget.summary()),
            (1_000, 3_000, 500)
        );
        let big = Budget { window: 1_000_000 };
        assert_eq!((big.answer(), big.summary()), (16_384, 4_096));
    }
}
