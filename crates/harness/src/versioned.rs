//! Versioned provider data: a harness's backing stored as a JSON object with a `format`
//! number, so that a build refuses data a newer build wrote instead of misreading it.

use hearth_core::{ChatUri, HarnessData, HarnessError};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The key of the layout version in every encoded backing.
const FORMAT_KEY: &str = "format";

/// A backing stored as versioned provider data: it serializes to a JSON object, which
/// [`encode`] writes with a `format` key first (overwriting a `format` field of the
/// backing's own, if it has one) and [`decode`] checks before reading the rest.
///
/// Raise [`FORMAT`](Self::FORMAT) when older builds could misread the new layout; keep
/// new fields `#[serde(default)]` so that older data still reads. The backing must not
/// deny unknown fields unless it declares `format` itself.
pub trait VersionedBacking: Serialize + DeserializeOwned {
    /// The layout version this build writes and the newest it reads.
    const FORMAT: u32;
    /// Who wrote it, for messages (e.g. "Hearth agent", "replay").
    const WHAT: &'static str;
}

/// Why a backing could not be encoded or decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BackingError {
    /// The backing could not be serialized.
    #[error("could not encode the {what} backing of chat `{chat}`: {reason}")]
    Encode {
        /// The chat.
        chat: ChatUri,
        /// Who the backing belongs to ([`VersionedBacking::WHAT`]).
        what: &'static str,
        /// What the encoder said.
        reason: String,
    },
    /// Stored provider data that is not a backing of this kind.
    #[error(
        "cannot restore chat `{chat}`: its stored provider data ({bytes} bytes) is not what the {what} harness writes ({reason}); its turns are still in Hearth's store, but the harness cannot continue it"
    )]
    Unreadable {
        /// The chat.
        chat: ChatUri,
        /// Who the backing would belong to ([`VersionedBacking::WHAT`]).
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
        /// Who the backing belongs to ([`VersionedBacking::WHAT`]).
        what: &'static str,
        /// The version found.
        found: u32,
        /// The newest version this build reads.
        supported: u32,
    },
}

impl From<BackingError> for HarnessError {
    fn from(error: BackingError) -> Self {
        match error {
            BackingError::Encode { .. } => HarnessError::internal(error.to_string()),
            BackingError::Unreadable { .. } | BackingError::Newer { .. } => {
                HarnessError::invalid(error.to_string())
            }
        }
    }
}

/// The provider data of a chat's backing: its JSON object, `format` first.
pub fn encode<B: VersionedBacking>(
    chat: &ChatUri,
    backing: &B,
) -> Result<HarnessData, BackingError> {
    let failed = |reason: String| BackingError::Encode {
        chat: chat.clone(),
        what: B::WHAT,
        reason,
    };
    let fields = match serde_json::to_value(backing) {
        Ok(Value::Object(fields)) => fields,
        Ok(other) => {
            return Err(failed(format!(
                "a versioned backing must serialize to a JSON object, not {}",
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

/// Reads a chat's backing back from its provider data, refusing data without a `format`
/// and data of a newer format than [`VersionedBacking::FORMAT`].
pub fn decode<B: VersionedBacking>(chat: &ChatUri, data: &HarnessData) -> Result<B, BackingError> {
    #[derive(serde::Deserialize)]
    struct Version {
        format: u32,
    }
    let unreadable = |error: serde_json::Error| BackingError::Unreadable {
        chat: chat.clone(),
        what: B::WHAT,
        bytes: data.as_bytes().len(),
        reason: error.to_string(),
    };
    let version: Version = data.decode().map_err(unreadable)?;
    if version.format > B::FORMAT {
        return Err(BackingError::Newer {
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

    impl VersionedBacking for Notes {
        const FORMAT: u32 = 2;
        const WHAT: &'static str = "notes";
    }

    /// A backing that keeps its own (stale) `format` field.
    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Stamped {
        format: u32,
        title: String,
    }

    impl VersionedBacking for Stamped {
        const FORMAT: u32 = 3;
        const WHAT: &'static str = "stamped";
    }

    /// A backing that is not a JSON object.
    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Bare(u32);

    impl VersionedBacking for Bare {
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
            BackingError::Newer {
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
            let BackingError::Unreadable {
                what,
                bytes,
                reason: found,
                ..
            } = &error
            else {
                panic!("expected an unreadable backing, got {error:?}");
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
    fn a_backing_that_is_not_an_object_is_not_encoded() {
        let error = encode(&chat(), &Bare(7)).unwrap_err();
        assert_eq!(
            error,
            BackingError::Encode {
                chat: chat(),
                what: "bare",
                reason: "a versioned backing must serialize to a JSON object, not a number".into()
            }
        );
        assert_eq!(HarnessError::from(error).kind, HarnessErrorKind::Internal);
    }
}
