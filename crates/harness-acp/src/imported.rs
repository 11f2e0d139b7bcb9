//! Sessions imported from an agent's own store (`hearth-history`) as conversations of
//! this harness: the agent's session id, folder, title and the imported turns. Opening
//! one reopens the agent's session (`session/load` or `session/resume`) when the agent
//! can; otherwise a new session takes over and gets the imported turns as the
//! transcript of its first prompt (see `attach` and `revive`).

use hearth_core::{ChatUri, HarnessData, Turn};
use hearth_history::{ConversationData, NativeSession};

use crate::conversation::{AcpConversation, TurnRecord};

/// Encodes imported sessions as this harness's conversations.
#[derive(Clone, Copy, Debug, Default)]
pub struct ImportedConversations;

fn record(turn: &Turn) -> TurnRecord {
    TurnRecord {
        id: turn.id.clone(),
        user: turn.user.clone(),
        answer: turn.response_text(),
        stop_reason: turn.stop_reason.clone(),
        started_at: turn.started_at,
        completed_at: turn.completed_at,
    }
}

impl ConversationData for ImportedConversations {
    fn imported(
        &self,
        chat: &ChatUri,
        session: &NativeSession,
        turns: &[Turn],
    ) -> Result<HarnessData, String> {
        let directories = session.folder.clone().into_iter().collect();
        let mut conversation = AcpConversation::new(chat.harness().as_str(), directories);
        conversation.session_id = Some(session.native_id.clone());
        conversation.title.clone_from(&session.title);
        conversation.external = true;
        conversation.turns = turns.iter().map(record).collect();
        conversation.updated_at = session.updated_at;
        hearth_harness::encode(chat, &conversation).map_err(|error| error.to_string())
    }

    fn with_turns(
        &self,
        chat: &ChatUri,
        data: &HarnessData,
        turns: &[Turn],
    ) -> Result<HarnessData, String> {
        let mut conversation: AcpConversation =
            hearth_harness::decode(chat, data).map_err(|error| error.to_string())?;
        conversation.turns.extend(turns.iter().map(record));
        if let Some(last) = turns.last() {
            conversation.updated_at = conversation.updated_at.max(last.started_at);
        }
        hearth_harness::encode(chat, &conversation).map_err(|error| error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_core::{ResponsePart, SessionId, SessionUri, StopReason, TurnId, UserMessage};

    #[test]
    fn an_imported_session_is_an_external_conversation_with_its_turns() {
        let uri = SessionUri::new(
            hearth_core::HarnessId::parse("codex").unwrap(),
            SessionId::parse("019a-native").unwrap(),
        );
        let chat = ChatUri::default_for(&uri);
        let at = hearth_core::now();
        let session = NativeSession {
            agent: hearth_history::Agent::Codex,
            native_id: "019a-native".into(),
            source: "/s/rollout.jsonl".into(),
            folder: Some("/work".into()),
            title: Some("Apples".into()),
            started_at: at,
            updated_at: at,
            turns: Vec::new(),
        };
        let mut turn = Turn::started(TurnId::generate(), UserMessage::text("Tell me"), at);
        turn.parts.push(ResponsePart::Text {
            text: "Red.".into(),
        });
        turn.stop_reason = Some(StopReason::EndTurn);
        let data = ImportedConversations
            .imported(&chat, &session, &[turn.clone()])
            .unwrap();
        let data = ImportedConversations
            .with_turns(&chat, &data, &[turn])
            .unwrap();
        let conversation: AcpConversation = hearth_harness::decode(&chat, &data).unwrap();
        assert_eq!(conversation.session_id.as_deref(), Some("019a-native"));
        assert!(conversation.external);
        assert_eq!(
            conversation.directories,
            vec![std::path::PathBuf::from("/work")]
        );
        assert_eq!(conversation.title.as_deref(), Some("Apples"));
        let answers: Vec<&str> = conversation
            .turns
            .iter()
            .map(|turn| turn.answer.as_str())
            .collect();
        assert_eq!(answers, ["Red.", "Red."]);
    }
}
