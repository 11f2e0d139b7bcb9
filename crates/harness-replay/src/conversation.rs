//! A chat's conversation as the replay harness keeps it, and its `provider_data` encoding.

use hearth_core::{
    ChatUri, HarnessData, HarnessError, HarnessResult, Timestamp, Turn, TurnId, now,
};
use hearth_harness::{ConversationError, VersionedConversation};
use serde::{Deserialize, Serialize};

/// Everything a replay chat is: stored verbatim by the host as `provider_data` (with its
/// layout version, see [`VersionedConversation`]), and all that `materialize_chat` needs to
/// bring the chat back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Conversation {
    /// The scenario the chat was played from.
    pub scenario: String,
    /// The chat's model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// A title the harness gave the chat (a subagent's task).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The visible history: finished turns with the host's turn ids.
    #[serde(default)]
    pub history: Vec<Turn>,
    /// Hidden context (a side chat's view of its source), never shown as history.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<Turn>,
    /// When the conversation last changed.
    pub updated_at: Timestamp,
}

impl Conversation {
    /// An empty chat.
    pub fn fresh(scenario: &str, model: Option<String>, title: Option<String>) -> Self {
        Self {
            scenario: scenario.to_owned(),
            model,
            title,
            history: Vec::new(),
            context: Vec::new(),
            updated_at: now(),
        }
    }

    /// The visible history up to and including a turn.
    pub fn history_through(&self, chat: &ChatUri, turn_id: &TurnId) -> HarnessResult<&[Turn]> {
        self.history
            .iter()
            .position(|turn| &turn.id == turn_id)
            .map(|position| &self.history[..=position])
            .ok_or_else(|| {
                HarnessError::invalid(format!(
                    "turn `{turn_id}` is not a finished turn of chat `{chat}` in the replay harness"
                ))
            })
    }

    /// The blob the host stores.
    pub fn encode(&self, chat: &ChatUri) -> HarnessResult<HarnessData> {
        hearth_harness::encode(chat, self).map_err(conversation_error)
    }

    /// Reads a stored blob back.
    pub fn decode(chat: &ChatUri, data: &HarnessData) -> HarnessResult<Self> {
        hearth_harness::decode(chat, data).map_err(conversation_error)
    }
}

impl VersionedConversation for Conversation {
    const FORMAT: u32 = 1;
    const WHAT: &'static str = "replay";
}

/// A conversation that cannot be stored or read, in the replay harness's words.
fn conversation_error(error: ConversationError) -> HarnessError {
    match error {
        ConversationError::Encode { .. } => HarnessError::from(error),
        ConversationError::Unreadable {
            chat,
            bytes,
            reason,
            ..
        } => HarnessError::invalid(format!(
            "cannot restore replay chat `{chat}`: its stored provider data ({bytes} bytes) is not \
             a replay conversation ({reason}); the chat's turns are still in Hearth's store, but the \
             replay harness cannot continue it"
        )),
        ConversationError::Newer {
            chat,
            found,
            supported,
            ..
        } => HarnessError::invalid(format!(
            "cannot restore replay chat `{chat}`: its provider data has layout version {found}, \
             but this Hearth reads version {supported}; use the Hearth version that wrote it"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_core::{HarnessErrorKind, SessionUri, UserMessage};
    use pretty_assertions::assert_eq;

    fn chat() -> ChatUri {
        ChatUri::default_for(&SessionUri::parse("hearth-session:replay/s1").unwrap())
    }

    #[test]
    fn round_trips_and_refuses_garbage() {
        let mut conversation = Conversation::fresh("demo", Some("demo".into()), None);
        let mut turn = Turn::started(TurnId::generate(), UserMessage::text("hi"), now());
        turn.push_text("hello");
        conversation.history.push(turn);
        let data = conversation.encode(&chat()).unwrap();
        assert_eq!(Conversation::decode(&chat(), &data).unwrap(), conversation);

        let garbage = HarnessData::from_bytes(b"\x00not json".to_vec());
        let error = Conversation::decode(&chat(), &garbage).unwrap_err();
        assert_eq!(error.kind, HarnessErrorKind::InvalidInput);
        assert!(
            error.message.contains("not a replay conversation"),
            "{error}"
        );

        let future = HarnessData::from_bytes(br#"{"format": 99}"#.to_vec());
        let error = Conversation::decode(&chat(), &future).unwrap_err();
        assert!(error.message.contains("version 99"), "{error}");
    }
}
