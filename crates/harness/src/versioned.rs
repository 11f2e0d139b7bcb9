//! Versioned provider data: a harness's conversation stored as a JSON object with a `format`
//! number, so that a build refuses data a newer build wrote instead of misreading it.

use hearth_core::{ChatUri, HarnessData, HarnessError};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The key of the layout version in every encoded conversation.
const FORMAT_KEY: &str = "format";

/// A conversation stored as versioned provider data: it serializes to a JSON object, which
/// [`encode`] writes with a `format` key first (overwriting a `format` field of the
/// conversation's own, if it has one) and [`decode`] checks before reading the rest.
///
/// Raise [`FORMAT`](Self::FORMAT) when older builds could misread the new layout; keep
/// new fields `#[serde(default)]` so that older data still reads. The conversation must not
/// deny unknown fields unless it declares `format` itself.
pub trait VersionedConversation: Serialize + DeserializeOwned {
    /// The layout version this build writes and the newest it reads.
    const FORMAT: u32;
    /// Who wrote it, for messages (e.g. "Hearth agent", "replay").
    const WHAT: &'static str;
}

/// Why a conversation could not be encoded or decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConversationError {
    /// The conversation could not be serialized.
    #[error("could not encode the {what} conversation of chat `{chat}`: {reason}")]
    Encode {
        /// The chat.
        chat: ChatUri,
        /// Who the conversation belongs to ([`VersionedConversation::WHAT`]).
        what: &'static str,
        /// What the encoder said.
        reason: String,
    },
    /// Stored provider data that is not a conversation of this kind.
    #[error(
        "cannot restore chat `{chat}`: its stored provider data ({bytes} bytes) is not what the {what} harness writes ({reason}); its turns are still in Hearth's store, but the harness cannot continue it"
    )]
    Unreadable {
        /// The chat.
        chat: ChatUri,
        /// Who the conversation would belong to ([`VersionedConversation::WHAT`]).
        what: &'static str,
        /// Size of the stored data.
        bytes: usize,
        /// What the decoder said.
        reason: String,
    },
    /// Provider data written by a newer build.
    #[error(
        "cannot restore chat `{chat}`: its provider data has layout version {found}, but this Hearth's {what} harness reads up to version {supported}; use the Hearth version that wrote it"
    )]
    Newer {
        /// The chat.
        chat: ChatUri,
        /// Who the conversation belongs to ([`VersionedConversation::WHAT`]).
        what: &'static str,
        /// The version found.
        found: u32,
        /// The newest version this build reads.
        supported: u32,
    },
}

impl From<ConversationError> for HarnessError {
    fn from(error: ConversationError) -> Self {
        match error {
            ConversationError::Encode { .. } => HarnessError::internal(error.to_string()),
            ConversationError::Unreadable { .. } | ConversationError::Newer { .. } => {
                HarnessError::invalid(error.to_string())
            }
        }
    }
}

/// The provider data of a chat's conversation: its JSON object, `format` first.
pub fn encode<B: VersionedConversation>(
    chat: &ChatUri,
    conversation: &B,
) -> Result<HarnessData, ConversationError> {
    let failed = |reason: String| ConversationError::Encode {
        chat: chat.clone(),
        what: B::WHAT,
        reason,
    };
    let fields = match serde_json::to_value(conversation) {
        Ok(Value::Object(fields)) => fields,
        Ok(other) => {
            return Err(failed(format!(
                "a versioned conversation must serialize to a JSON object, not {}",
                json_kind(&other)
            )));
        }
        Err(error) => return Err(failed(error.to_string())),
    };
    let mut object = Map::with_capacity(fields.len() + 1);
    object.insert(FORMAT_KEY.to_owned(), Value::from(B::FORMAT));
    object.extend(fields.into_iter().filter(|(key, _)| key != FORMAT_KEY));
    HarnessData::encode(&Value::Object(object)).map_err(|error| failed(error.to_string()))
}

/// Reads a chat's conversation back from its provider data, refusing data without a `format`
/// and data of a newer format than [`VersionedConversation::FORMAT`].
pub fn decode<B: VersionedConversation>(
    chat: &ChatUri,
    data: &HarnessData,
) -> Result<B, ConversationError> {
    #[derive(serde::Deserialize)]
    struct Version {
        format: u32,
    }
    let unreadable = |error: serde_json::Error| ConversationError::Unreadable {
        chat: chat.clone(),
        what: B::WHAT,
        bytes: data.as_bytes().len(),
        reason: error.to_string(),
    };
    let version: Version = data.decode().map_err(unreadable)?;
    if version.format > B::FORMAT {
        return Err(ConversationError::Newer {
            chat: chat.clone(),
            what: B::WHAT,
            found: version.format,
            supported: B::FORMAT,
        });
    }
    data.decode().map_err(unreadable)
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use hearth_core::{HarnessErrorKind, SessionUri};
    use pretty_assertions::assert_eq;
    use serde::Deserialize;

    use super::*;

    fn chat() -> ChatUri {
        ChatUri::default_for(&SessionUri::parse("hearth-session:test/s1").unwrap())
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Notes {
        title: String,
        #[serde(default)]
        lines: Vec<String>,
    }

    impl VersionedConversation for Notes {
        const FORMAT: u32 = 2;
        const WHAT: &'static str = "notes";
    }

    /// A conversation that keeps its own (stale) `format` field.
    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Stamped {
        format: u32,
        title: String,
    }

    impl VersionedConversation for Stamped {
        const FORMAT: u32 = 3;
        const WHAT: &'static str = "stamped";
    }

    /// A conversation that is not a JSON object.
    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Bare(u32);

    impl VersionedConversation for Bare {
        const FORMAT: u32 = 1;
        const WHAT: &'static str = "bare";
    }

    fn data(json: &str) -> HarnessData {
        HarnessData::from_bytes(json.as_bytes().to_vec())
    }

    #[test]
    fn round_trips_with_the_format_first() {
        let notes = Notes {
            title: "plan".into(),
            lines: vec!["one".into()],
        };
        let encoded = encode(&chat(), &notes).unwrap();
        assert_eq!(
            String::from_utf8(encoded.as_bytes().to_vec()).unwrap(),
            r#"{"format":2,"title":"plan","lines":["one"]}"#
        );
        assert_eq!(decode::<Notes>(&chat(), &encoded).unwrap(), notes);

        let stamped = Stamped {
            format: 1,
            title: "old".into(),
        };
        let encoded = encode(&chat(), &stamped).unwrap();
        assert_eq!(
            String::from_utf8(encoded.as_bytes().to_vec()).unwrap(),
            r#"{"format":3,"title":"old"}"#
        );
    }

    #[test]
    fn older_formats_read_and_newer_ones_are_refused() {
        let older = decode::<Notes>(&chat(), &data(r#"{"format": 1, "title": "t"}"#)).unwrap();
        assert_eq!(
            older,
            Notes {
                title: "t".into(),
                lines: Vec::new()
            }
        );
        let error = decode::<Notes>(&chat(), &data(r#"{"format": 99, "title": "t"}"#)).unwrap_err();
        assert_eq!(
            error,
            ConversationError::Newer {
                chat: chat(),
                what: "notes",
                found: 99,
                supported: 2
            }
        );
        assert!(error.to_string().contains("version 99"), "{error}");
        assert_eq!(
            HarnessError::from(error).kind,
            HarnessErrorKind::InvalidInput
        );
    }

    #[test]
    fn garbage_and_unversioned_data_are_unreadable() {
        for (json, reason) in [
            ("\u{0}not json", "expected value at line 1 column 1"),
            (r#"{"title": "t"}"#, "missing field `format`"),
            (r#"{"format": 2}"#, "missing field `title`"),
        ] {
            let error = decode::<Notes>(&chat(), &data(json)).unwrap_err();
            let ConversationError::Unreadable {
                what,
                bytes,
                reason: found,
                ..
            } = &error
            else {
                panic!("expected an unreadable conversation, got {error:?}");
            };
            assert_eq!((*what, *bytes), ("notes", json.len()));
            assert!(found.starts_with(reason), "{found}");
            assert!(
                error
                    .to_string()
                    .contains("not what the notes harness writes"),
                "{error}"
            );
            assert_eq!(
                HarnessError::from(error).kind,
                HarnessErrorKind::InvalidInput
            );
        }
    }

    #[test]
    fn a_conversation_that_is_not_an_object_is_not_encoded() {
        let error = encode(&chat(), &Bare(7)).unwrap_err();
        assert_eq!(
            error,
            ConversationError::Encode {
                chat: chat(),
                what: "bare",
                reason: "a versioned conversation must serialize to a JSON object, not a number"
                    .into()
            }
        );
        assert_eq!(HarnessError::from(error).kind, HarnessErrorKind::Internal);
    }
}
