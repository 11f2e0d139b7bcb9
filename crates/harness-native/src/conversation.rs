//! A chat's conversation as the agent keeps it — the model messages of every turn, hidden
//! context, model, title — and its `provider_data` encoding.

use hearth_core::{
    ChatUri, HarnessData, ResponsePart, StopReason, Timestamp, ToolCallPart, ToolCallStatus,
    ToolResult, Turn, TurnId, Usage, UserMessage, now,
};
use hearth_harness::VersionedConversation;
use hearth_llm::Message;
use serde::{Deserialize, Serialize};

use crate::compaction::{CompactionMark, CompactionRecord, TokenScale};
use crate::error::{Error, Result};

/// What kind of conversation a chat is; it shapes the system prompt and the tools.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Role {
    /// A conversation with the user (fresh or forked).
    #[default]
    Main,
    /// A side chat: earlier messages are another conversation's context.
    Side,
    /// A subagent working on one task for another chat.
    Subagent {
        /// 1 for a subagent of a user's chat, 2 for its subagent, ...
        depth: u32,
    },
}

impl Role {
    /// How deep in a chain of subagents the chat is.
    pub fn depth(self) -> u32 {
        match self {
            Self::Main | Self::Side => 0,
            Self::Subagent { depth } => depth,
        }
    }
}

/// One turn of a chat: the host's turn id, the user's message, and every model message
/// the turn added (its user message first).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct TurnRecord {
    /// The host's turn id.
    pub id: TurnId,
    /// What the user sent.
    pub user: UserMessage,
    /// The model messages of the turn, oldest first; the first is the user's.
    pub messages: Vec<Message>,
    /// Why the turn ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<StopReason>,
    /// Token usage of the turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// When it started.
    pub started_at: Timestamp,
    /// When it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<Timestamp>,
    /// The compaction that happened in the turn, before its model calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compaction: Option<CompactionMark>,
}

/// The most bytes of a text attachment put in the model's text (the host's limits refuse
/// larger attachments before a turn starts; this bounds what one message carries).
const EMBEDDED_TEXT_BYTES: u64 = 512 * 1024;

/// Whether an attachment's media type is text the model can read inline.
fn is_text(media_type: &str) -> bool {
    media_type.starts_with("text/")
        || matches!(
            media_type,
            "application/json" | "application/toml" | "application/yaml" | "application/xml"
        )
}

/// A text attachment's content, when it is a readable file of text within
/// [`EMBEDDED_TEXT_BYTES`]; read when the turn starts, and kept with the turn's messages.
fn embedded_text(attachment: &hearth_core::Attachment) -> Option<String> {
    let path = std::path::Path::new(&attachment.uri);
    if !is_text(&attachment.media_type) || !path.is_absolute() {
        return None;
    }
    let size = std::fs::metadata(path).ok()?.len();
    if size > EMBEDDED_TEXT_BYTES {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

/// The user's message as the model reads it: the text, then attachments (the content of
/// text files, the place of others) and references.
pub(crate) fn model_text(user: &UserMessage) -> String {
    let mut text = user.text.clone();
    for attachment in &user.attachments {
        text.push_str(&format!(
            "\n\n[Attached file: {} ({}) at {}]",
            attachment.name, attachment.media_type, attachment.uri
        ));
        if let Some(content) = embedded_text(attachment) {
            text.push_str(&format!(
                "\n<file name=\"{}\">\n{}\n</file>",
                attachment.name,
                content.trim_end_matches('\n')
            ));
        }
    }
    for reference in &user.context {
        text.push_str(&format!(
            "\n\n[Context: {} at {}]",
            reference.label, reference.uri
        ));
    }
    text
}

/// The most bytes of an attached image sent to the model (Anthropic's limit per image).
const IMAGE_BYTES: u64 = 5 * 1024 * 1024;

/// The media types of images the providers take inline.
const IMAGE_TYPES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];

/// The attached images the model sees: readable files of a type the providers take, up to
/// [`IMAGE_BYTES`] each (others stay named in the text only).
fn images(user: &UserMessage) -> Vec<hearth_llm::Image> {
    use base64::Engine as _;
    user.attachments
        .iter()
        .filter(|attachment| IMAGE_TYPES.contains(&attachment.media_type.as_str()))
        .filter_map(|attachment| {
            let path = std::path::Path::new(&attachment.uri);
            let size = std::fs::metadata(path).ok()?.len();
            if !path.is_absolute() || size > IMAGE_BYTES {
                return None;
            }
            let bytes = std::fs::read(path).ok()?;
            Some(hearth_llm::Image {
                media_type: attachment.media_type.clone(),
                data: base64::engine::general_purpose::STANDARD.encode(bytes),
            })
        })
        .collect()
}

impl TurnRecord {
    /// A turn that has just started.
    pub fn new(id: TurnId, user: UserMessage) -> Self {
        let messages = vec![Message::User {
            text: model_text(&user),
            images: images(&user),
        }];
        Self {
            id,
            user,
            messages,
            stop_reason: None,
            usage: None,
            started_at: now(),
            completed_at: None,
            compaction: None,
        }
    }

    /// Ends the turn.
    pub fn finish(&mut self, stop_reason: StopReason, usage: Option<Usage>) {
        self.stop_reason = Some(stop_reason);
        self.usage = usage;
        self.completed_at = Some(now());
    }

    /// The text of the model's last answer in this turn.
    pub fn final_text(&self) -> String {
        self.messages
            .iter()
            .rev()
            .find_map(|message| match message {
                Message::Assistant { text, .. } if !text.is_empty() => Some(text.clone()),
                _ => None,
            })
            .unwrap_or_default()
    }

    /// The turn as Hearth shows it, rebuilt from the model messages.
    pub fn to_turn(&self) -> Turn {
        let mut parts: Vec<ResponsePart> =
            self.compaction.iter().map(CompactionMark::part).collect();
        for message in self.messages.iter().skip(1) {
            match message {
                Message::User { text, .. } => parts.push(ResponsePart::Text { text: text.clone() }),
                Message::Assistant { text, tool_calls } => {
                    if !text.is_empty() {
                        parts.push(ResponsePart::Text { text: text.clone() });
                    }
                    for call in tool_calls {
                        parts.push(ResponsePart::ToolCall(ToolCallPart {
                            call_id: call.id.clone(),
                            name: call.name.clone(),
                            arguments: call.arguments.clone(),
                            status: ToolCallStatus::Pending,
                            result: None,
                            title: None,
                            kind: None,
                            locations: Vec::new(),
                            content: Vec::new(),
                        }));
                    }
                }
                Message::ToolResult {
                    call_id,
                    content,
                    is_error,
                } => {
                    let call = parts.iter_mut().rev().find_map(|part| match part {
                        ResponsePart::ToolCall(call) if &call.call_id == call_id => Some(call),
                        _ => None,
                    });
                    if let Some(call) = call {
                        call.status = if *is_error {
                            ToolCallStatus::Failed
                        } else {
                            ToolCallStatus::Completed
                        };
                        call.result = Some(ToolResult {
                            content: content.clone(),
                            is_error: *is_error,
                        });
                    }
                }
            }
        }
        Turn {
            id: self.id.clone(),
            user: self.user.clone(),
            parts,
            usage: self.usage.clone(),
            stop_reason: self.stop_reason.clone(),
            started_at: self.started_at,
            completed_at: self.completed_at,
        }
    }
}

/// Everything a chat is: stored verbatim by the host as `provider_data` (with its layout
/// version, see [`VersionedConversation`]), and all that `materialize_chat` needs to bring the
/// chat back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Conversation {
    /// The provider id that wrote it.
    pub provider: String,
    /// The chat's model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The chat's title, once generated (or a subagent's task).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What kind of conversation it is.
    #[serde(default)]
    pub role: Role,
    /// Hidden context (a side chat's view of its source), never shown as history.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<Message>,
    /// The visible history, finished turns with the host's turn ids.
    #[serde(default)]
    pub turns: Vec<TurnRecord>,
    /// Summaries of earlier turns, oldest first; the model reads the last one instead of
    /// the turns it covers (which stay in `turns`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compactions: Vec<CompactionRecord>,
    /// How the provider's token counts compare with Hearth's estimates, learned from its
    /// reported usage (not stored: learned again after a restart).
    #[serde(skip)]
    pub scale: TokenScale,
    /// When the conversation last changed.
    pub updated_at: Timestamp,
}

impl Conversation {
    /// An empty chat.
    pub fn fresh(provider: &str, model: Option<String>, title: Option<String>, role: Role) -> Self {
        Self {
            provider: provider.to_owned(),
            model,
            title,
            role,
            context: Vec::new(),
            turns: Vec::new(),
            compactions: Vec::new(),
            scale: TokenScale::default(),
            updated_at: now(),
        }
    }

    /// The visible turns up to and including a turn.
    pub fn turns_through(&self, chat: &ChatUri, turn_id: &TurnId) -> Result<&[TurnRecord]> {
        self.turns
            .iter()
            .position(|turn| &turn.id == turn_id)
            .map(|position| &self.turns[..=position])
            .ok_or_else(|| Error::UnknownTurn {
                chat: chat.clone(),
                turn: turn_id.clone(),
            })
    }

    /// The whole conversation the model sees before a new turn: hidden context, then the
    /// messages of every turn.
    ///
    /// Turns covered by the latest compaction are replaced by its summary.
    pub fn model_messages(&self) -> Vec<Message> {
        let mut messages = self.context.clone();
        if let Some(compaction) = self.compactions.last() {
            messages.push(compaction.message());
        }
        for turn in &self.turns[self.summarised()..] {
            messages.extend(turn.messages.iter().cloned());
        }
        messages
    }

    /// How many of the oldest turns the latest summary covers.
    pub fn summarised(&self) -> usize {
        self.compactions.last().map_or(0, |compaction| {
            self.turns
                .iter()
                .position(|turn| turn.id == compaction.through)
                .map_or(0, |position| position + 1)
        })
    }

    /// The blob the host stores.
    pub fn encode(&self, chat: &ChatUri) -> Result<HarnessData> {
        Ok(hearth_harness::encode(chat, self)?)
    }

    /// Reads a stored blob back.
    pub fn decode(chat: &ChatUri, data: &HarnessData) -> Result<Self> {
        Ok(hearth_harness::decode(chat, data)?)
    }
}

impl VersionedConversation for Conversation {
    const FORMAT: u32 = 1;
    const WHAT: &'static str = "Hearth agent";
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_core::{Attachment, SessionUri};
    use hearth_llm::ToolCall;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn chat() -> ChatUri {
        ChatUri::default_for(&SessionUri::parse("hearth-session:openai/s1").unwrap())
    }

    #[test]
    fn round_trips_and_refuses_garbage_and_newer_layouts() {
        let mut conversation = Conversation::fresh("openai", Some("gpt".into()), None, Role::Side);
        conversation.context.push(Message::user("earlier"));
        let mut turn = TurnRecord::new(TurnId::generate(), UserMessage::text("hi"));
        turn.messages.push(Message::assistant("hello"));
        turn.finish(StopReason::EndTurn, None);
        conversation.turns.push(turn);
        let data = conversation.encode(&chat()).unwrap();
        assert_eq!(Conversation::decode(&chat(), &data).unwrap(), conversation);

        let garbage = HarnessData::from_bytes(b"\x00not json".to_vec());
        let error = Conversation::decode(&chat(), &garbage).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("not a Hearth agent conversation"),
            "{error}"
        );
        let newer = HarnessData::from_bytes(br#"{"format": 99}"#.to_vec());
        let error = Conversation::decode(&chat(), &newer).unwrap_err();
        assert!(error.to_string().contains("version 99"), "{error}");
    }

    #[test]
    fn a_text_attachment_is_read_into_the_message_and_others_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let notes = dir.path().join("notes.md");
        std::fs::write(&notes, "# Plan\nship it\n").unwrap();
        let attached = |name: &str, media_type: &str, path: &std::path::Path| Attachment {
            name: name.into(),
            media_type: media_type.into(),
            uri: path.display().to_string(),
        };
        let user = UserMessage {
            text: "summarize".into(),
            attachments: vec![
                attached("notes.md", "text/markdown", &notes),
                attached("gone.txt", "text/plain", &dir.path().join("gone.txt")),
            ],
            context: Vec::new(),
        };
        let text = model_text(&user);
        assert_eq!(
            text,
            format!(
                "summarize\n\n[Attached file: notes.md (text/markdown) at {}]\n<file name=\"notes.md\">\n# Plan\nship it\n</file>\n\n[Attached file: gone.txt (text/plain) at {}]",
                notes.display(),
                dir.path().join("gone.txt").display()
            )
        );
    }

    #[test]
    fn turns_are_rebuilt_from_model_messages() {
        let user = UserMessage {
            text: "look".into(),
            attachments: vec![Attachment {
                name: "a.pdf".into(),
                media_type: "application/pdf".into(),
                uri: "/tmp/a.pdf".into(),
            }],
            context: Vec::new(),
        };
        let mut turn = TurnRecord::new(TurnId::generate(), user.clone());
        assert_eq!(
            turn.messages[0],
            Message::user("look\n\n[Attached file: a.pdf (application/pdf) at /tmp/a.pdf]")
        );
        turn.messages.push(Message::Assistant {
            text: "checking".into(),
            tool_calls: vec![ToolCall {
                id: "c1".into(),
                name: "lookup".into(),
                arguments: json!({"q": "x"}),
            }],
        });
        turn.messages.push(Message::tool_error("c1", "nope"));
        turn.messages.push(Message::assistant("done"));
        turn.finish(StopReason::EndTurn, None);
        let shown = turn.to_turn();
        assert_eq!(shown.user, user);
        assert_eq!(
            shown.parts,
            vec![
                ResponsePart::Text {
                    text: "checking".into()
                },
                ResponsePart::ToolCall(ToolCallPart {
                    call_id: "c1".into(),
                    name: "lookup".into(),
                    arguments: json!({"q": "x"}),
                    status: ToolCallStatus::Failed,
                    result: Some(ToolResult {
                        content: "nope".into(),
                        is_error: true
                    }),
                    title: None,
                    kind: None,
                    locations: Vec::new(),
                    content: Vec::new(),
                }),
                ResponsePart::Text {
                    text: "done".into()
                },
            ]
        );
        assert_eq!(turn.final_text(), "done");
    }
}
