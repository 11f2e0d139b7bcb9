//! A chat's conversation as the ACP harness keeps it and hands to the host as provider data:
//! the agent's session id, where it works, its model and title, and a short record of
//! every turn (for forks, side chats and history after a restart).

use std::path::PathBuf;

use hearth_core::{ResponsePart, StopReason, Timestamp, Turn, TurnId, UserMessage, now};
use serde::{Deserialize, Serialize};

/// One turn as the harness remembers it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct TurnRecord {
    /// The host's turn id.
    pub id: TurnId,
    /// What the user sent.
    pub user: UserMessage,
    /// The agent's answer text.
    #[serde(default)]
    pub answer: String,
    /// How it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<StopReason>,
    /// When it started.
    pub started_at: Timestamp,
    /// When it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<Timestamp>,
}

impl TurnRecord {
    /// The turn as Hearth shows it.
    pub fn to_turn(&self) -> Turn {
        let mut turn = Turn::started(self.id.clone(), self.user.clone(), self.started_at);
        if !self.answer.is_empty() {
            turn.parts.push(ResponsePart::Text {
                text: self.answer.clone(),
            });
        }
        turn.stop_reason = self.stop_reason.clone();
        turn.completed_at = self.completed_at;
        turn
    }
}

/// Everything a chat is to the ACP harness.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct AcpConversation {
    /// The agent (provider id) that holds the conversation.
    pub agent: String,
    /// The agent's session id, once it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The working directory, then additional directories.
    #[serde(default)]
    pub directories: Vec<PathBuf>,
    /// The current model, when the agent says; the user's choice once they made one
    /// (set again when the session is reopened).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The mode the user chose (set again when the session is reopened); `None` while
    /// the chat is on the agent's own default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The title the agent gave.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A conversation the agent had before Hearth knew it (found by discovery).
    #[serde(default)]
    pub external: bool,
    /// Earlier conversation to hand the agent with the next prompt: a fork's copied
    /// history, or a side chat's view of its source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_context: Option<String>,
    /// The turns, oldest first.
    #[serde(default)]
    pub turns: Vec<TurnRecord>,
    /// When it last changed.
    pub updated_at: Timestamp,
    /// The connection the agent's session is open on (not stored: after a restart every
    /// session is reopened).
    #[serde(skip)]
    pub attached: Option<u64>,
    /// What to tell the user with the chat's next turn: its session could not be
    /// reopened and a new one took over (not stored).
    #[serde(skip)]
    pub notice: Option<String>,
}

impl hearth_harness::VersionedConversation for AcpConversation {
    const FORMAT: u32 = 1;
    const WHAT: &'static str = "ACP agent";
}

impl AcpConversation {
    /// A chat of `agent` working in `directories`.
    pub fn new(agent: &str, directories: Vec<PathBuf>) -> Self {
        Self {
            agent: agent.to_owned(),
            session_id: None,
            directories,
            model: None,
            mode: None,
            title: None,
            external: false,
            pending_context: None,
            turns: Vec::new(),
            updated_at: now(),
            attached: None,
            notice: None,
        }
    }

    /// The turns through `turn_id`, if it is one of them.
    pub fn turns_through(&self, turn_id: &TurnId) -> Option<&[TurnRecord]> {
        let position = self.turns.iter().position(|turn| &turn.id == turn_id)?;
        Some(&self.turns[..=position])
    }
}

/// How earlier turns are handed to an agent that did not have them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Transcript {
    /// The conversation goes on from here (a fork).
    Continue,
    /// Background only: the user asks something aside (a side chat).
    Aside,
}

/// Earlier turns as text for the agent's first prompt.
pub(crate) fn transcript(turns: &[TurnRecord], kind: Transcript) -> String {
    let mut text = String::from(match kind {
        Transcript::Continue => {
            "<conversation_so_far>\nThis conversation continues an earlier one. Its turns so far, oldest first:\n"
        }
        Transcript::Aside => {
            "<background_conversation>\nFor reference only: the conversation the user's next question is an aside to. Do not continue it; answer the question.\n"
        }
    });
    for turn in turns {
        text.push_str("\n<user>\n");
        text.push_str(turn.user.text.trim());
        text.push_str("\n</user>\n<assistant>\n");
        text.push_str(turn.answer.trim());
        text.push_str("\n</assistant>\n");
    }
    text.push_str(match kind {
        Transcript::Continue => "</conversation_so_far>\n",
        Transcript::Aside => "</background_conversation>\n",
    });
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_core::{ChatUri, SessionUri};
    use pretty_assertions::assert_eq;

    fn record(user: &str, answer: &str) -> TurnRecord {
        TurnRecord {
            id: TurnId::generate(),
            user: UserMessage::text(user),
            answer: answer.into(),
            stop_reason: Some(StopReason::EndTurn),
            started_at: now(),
            completed_at: Some(now()),
        }
    }

    #[test]
    fn conversations_round_trip_without_their_live_state() {
        let chat = ChatUri::default_for(&SessionUri::parse("hearth-session:codex/s1").unwrap());
        let mut conversation = AcpConversation::new("codex", vec!["/work".into()]);
        conversation.session_id = Some("0199-abc".into());
        conversation.turns.push(record("hi", "hello"));
        conversation.attached = Some(3);
        let data = hearth_harness::encode(&chat, &conversation).unwrap();
        let back: AcpConversation = hearth_harness::decode(&chat, &data).unwrap();
        assert_eq!(back.attached, None);
        assert_eq!(
            AcpConversation {
                attached: Some(3),
                ..back
            },
            conversation
        );
    }

    #[test]
    fn transcripts_carry_both_sides_in_order() {
        let turns = [record("first", "one"), record("second", "two")];
        let text = transcript(&turns, Transcript::Continue);
        let first = text.find("first").unwrap();
        let two = text.find("two").unwrap();
        assert!(first < two, "{text}");
        assert!(text.starts_with("<conversation_so_far>"));
        assert!(transcript(&turns, Transcript::Aside).contains("Do not continue it"));
    }
}
