//! Catching a chat's clients up with a turn another process or node answers: what that
//! process stored of the turn (its checkpoints while it runs, then its end) becomes the
//! same actions the answering host published — text and reasoning as deltas, tool calls
//! and plans as they now are, other parts added, and the end — so clients of every host
//! follow the answer as it goes, in order, through their usual envelopes.

use hearth_core::{
    Action, ChatState, ChatUri, ResourceUri, ResponsePart, Turn, TurnId, now, reduce_chat,
};

use crate::error::HostResult;
use crate::host::Host;
use crate::state::Resolution;

/// The action that brings one part of a running turn from `before` (absent: a new
/// part) to `part`: `Ok(None)` when it did not change, `Err(())` when no action does
/// (only the last part may grow; a part's kind never changes).
fn part_action(
    turn_id: &TurnId,
    before: Option<&ResponsePart>,
    part: &ResponsePart,
    last: bool,
) -> Result<Option<Action>, ()> {
    let turn_id = turn_id.clone();
    let action = match (before, part) {
        (Some(before), now) if before == now => return Ok(None),
        (Some(ResponsePart::Text { text: before }), ResponsePart::Text { text })
            if last && text.starts_with(before.as_str()) =>
        {
            Action::TextDelta {
                turn_id,
                text: text[before.len()..].to_owned(),
            }
        }
        (Some(ResponsePart::Reasoning { text: before }), ResponsePart::Reasoning { text })
            if last && text.starts_with(before.as_str()) =>
        {
            Action::ReasoningDelta {
                turn_id,
                text: text[before.len()..].to_owned(),
            }
        }
        (Some(ResponsePart::ToolCall(_)) | None, ResponsePart::ToolCall(call)) => {
            Action::ToolCallStarted {
                turn_id,
                call: call.clone(),
            }
        }
        (Some(ResponsePart::Plan { .. }) | None, ResponsePart::Plan { entries }) => {
            Action::PlanUpdated {
                turn_id,
                entries: entries.clone(),
            }
        }
        (None, ResponsePart::Text { text }) => Action::TextDelta {
            turn_id,
            text: text.clone(),
        },
        (None, ResponsePart::Reasoning { text }) => Action::ReasoningDelta {
            turn_id,
            text: text.clone(),
        },
        (None, part) => Action::PartAdded {
            turn_id,
            part: part.clone(),
        },
        (Some(_), _) => return Err(()),
    };
    Ok(Some(action))
}

/// The actions that turn `old` into `fresh` (the same turn, read again), or `None` when
/// the change is not one a turn goes through while it runs (a part rewritten, parts
/// gone): checked by applying them to `old` and comparing.
pub(crate) fn catch_up(chat: &ChatState, old: &Turn, fresh: &Turn) -> Option<Vec<Action>> {
    if fresh.id != old.id || fresh.parts.len() < old.parts.len() || old.stop_reason.is_some() {
        return None;
    }
    let turn_id = fresh.id.clone();
    let last = old.parts.len().checked_sub(1);
    let mut actions = Vec::new();
    for (position, part) in fresh.parts.iter().enumerate() {
        let before = old.parts.get(position);
        if let Some(action) = part_action(&turn_id, before, part, Some(position) == last).ok()? {
            actions.push(action);
        }
    }
    if let Some(usage) = &fresh.usage
        && fresh.usage != old.usage
        && fresh.stop_reason.is_none()
    {
        actions.push(Action::UsageUpdated {
            turn_id: turn_id.clone(),
            usage: usage.clone(),
        });
    }
    if let Some(stop_reason) = &fresh.stop_reason {
        actions.push(Action::TurnCompleted {
            turn_id,
            stop_reason: stop_reason.clone(),
            usage: fresh.usage.clone(),
            completed_at: fresh.completed_at.unwrap_or_else(now),
        });
    }
    let mut check = ChatState {
        turns: vec![old.clone()],
        ..ChatState::new(chat.summary.clone())
    };
    for action in &actions {
        reduce_chat(&mut check, action);
    }
    // A turn stored ended without its end time gets the time it was caught up at.
    let caught_up = check.turns.first_mut()?;
    if fresh.completed_at.is_none() {
        caught_up.completed_at = None;
    }
    (caught_up == fresh).then_some(actions)
}

impl Host {
    /// Publishes to a loaded chat's clients what another process or node stored of its
    /// newest turn since this host last looked: a turn it had not seen starts, one it
    /// follows goes on (see [`catch_up`]). Chats answered here, or not loaded, are left
    /// alone. Returns whether anything was published.
    pub async fn follow_outside_turn(&self, chat: &ChatUri) -> HostResult<bool> {
        if !self.follows(chat) {
            return Ok(false);
        }
        let page = self.inner.store.turn_page(chat, None, 1).await?;
        let Some(fresh) = page.turns.into_iter().next_back() else {
            return Ok(false);
        };
        let ended = fresh.stop_reason.is_some();
        if !self.publish_outside_turn(chat, fresh) {
            return Ok(false);
        }
        // A message this host queued behind that turn goes now (or, while the other
        // still holds the chat, once it lets it go).
        if ended {
            self.drain_queue(chat).await;
        }
        Ok(true)
    }

    /// Publishes what `fresh` adds to the chat's copy of it; whether it added anything.
    fn publish_outside_turn(&self, chat: &ChatUri, fresh: Turn) -> bool {
        let mut state = self.inner.lock();
        let Some(entry) = state.chats.get(chat) else {
            return false;
        };
        if entry.running.is_some() {
            return false;
        }
        let known = entry
            .state
            .turns
            .iter()
            .rev()
            .find(|turn| turn.id == fresh.id);
        let actions = match known {
            None => vec![Action::TurnStarted { turn: fresh }],
            Some(old) if *old == fresh => return false,
            Some(old) => match catch_up(&entry.state, old, &fresh) {
                Some(actions) => actions,
                None => return false,
            },
        };
        for action in actions {
            state.publish(ResourceUri::Chat(chat.clone()), action);
        }
        true
    }

    /// Whether `chat` is loaded here and not answering here.
    fn follows(&self, chat: &ChatUri) -> bool {
        let state = self.inner.lock();
        state.chats.get(chat).is_some_and(|entry| {
            matches!(entry.resolution, Resolution::Resolved) && entry.running.is_none()
        })
    }
}

#[cfg(test)]
mod tests {
    use hearth_core::{
        ChatOrigin, ChatSummary, StopReason, ToolCallPart, ToolCallStatus, TurnId, UserMessage,
    };

    use super::*;

    fn chat() -> ChatState {
        ChatState::new(ChatSummary::new(
            ChatUri::parse("hearth-chat:replay/s/default").unwrap(),
            ChatOrigin::User,
            now(),
        ))
    }

    fn call(status: ToolCallStatus) -> ToolCallPart {
        ToolCallPart::new("c1", "read_file", serde_json::json!({"path": "a"}), status)
    }

    #[test]
    fn a_turn_goes_on_as_deltas_calls_and_its_end() {
        let mut old = Turn::started(TurnId::generate(), UserMessage::text("hi"), now());
        old.push_text("Hello");
        let mut fresh = old.clone();
        fresh.push_text(", world");
        fresh
            .parts
            .push(ResponsePart::ToolCall(call(ToolCallStatus::Running)));
        fresh.push_text("Done.");
        fresh.end(StopReason::EndTurn);
        let actions = catch_up(&chat(), &old, &fresh).unwrap();
        assert!(matches!(&actions[0], Action::TextDelta { text, .. } if text == ", world"));
        assert!(matches!(&actions[1], Action::ToolCallStarted { .. }));
        assert!(matches!(&actions[2], Action::TextDelta { text, .. } if text == "Done."));
        assert!(matches!(
            &actions[3],
            Action::TurnCompleted {
                stop_reason: StopReason::EndTurn,
                ..
            }
        ));
        // A call that finished meanwhile is replaced as it now is.
        let mut running = old.clone();
        running
            .parts
            .push(ResponsePart::ToolCall(call(ToolCallStatus::Running)));
        let mut finished = old.clone();
        finished
            .parts
            .push(ResponsePart::ToolCall(call(ToolCallStatus::Completed)));
        let actions = catch_up(&chat(), &running, &finished).unwrap();
        assert_eq!(actions.len(), 1);
    }

    #[test]
    fn a_rewritten_turn_is_not_caught_up() {
        let mut old = Turn::started(TurnId::generate(), UserMessage::text("hi"), now());
        old.push_text("Hello");
        let mut fresh = Turn::started(old.id.clone(), UserMessage::text("hi"), now());
        fresh.push_text("Goodbye");
        assert_eq!(catch_up(&chat(), &old, &fresh), None);
        let mut ended = old.clone();
        ended.end(StopReason::EndTurn);
        assert_eq!(
            catch_up(&chat(), &ended, &old),
            None,
            "an ended turn does not run again"
        );
        let shorter = Turn::started(old.id.clone(), UserMessage::text("hi"), now());
        assert_eq!(catch_up(&chat(), &old, &shorter), None);
    }
}
