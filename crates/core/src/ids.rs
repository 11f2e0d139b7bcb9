//! Identities: provider ids, session and chat URIs, turn, project and proposal ids.
//!
//! `SessionUri` and `ChatUri` are distinct types. The only ways across are
//! [`ChatUri::default_for`], [`ChatUri::peer`] and [`ChatUri::session`]; passing one where
//! the other is expected does not compile, and parsing one as the other fails with a
//! message that says which was given.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::UriError;

/// Scheme of a session URI: `hearth-session:<provider>/<session-id>`.
pub const SESSION_SCHEME: &str = "hearth-session:";
/// Scheme of a chat URI: `hearth-chat:<provider>/<session-id>/<chat-id>`.
pub const CHAT_SCHEME: &str = "hearth-chat:";
/// The chat id of every session's default chat.
pub const DEFAULT_CHAT_ID: &str = "default";

const MAX_ID_LEN: usize = 128;

fn valid_provider(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 64
        && text.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && text
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

fn valid_id(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= MAX_ID_LEN
        && text.starts_with(|c: char| c.is_ascii_alphanumeric())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
}

/// A fresh identifier: a random UUID (v4, hyphenated). Random from its first character,
/// so a few characters tell ids apart (8 hex characters are 32 random bits), as people
/// type them; ids made before were time-ordered (v7) and stay valid. Nothing orders by
/// id except to break ties.
pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

macro_rules! string_id {
    ($(#[$meta:meta])* $name:ident, $what:literal, $check:ident) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            /// Parses and validates an identifier.
            pub fn parse(text: &str) -> Result<Self, UriError> {
                if $check(text) {
                    Ok(Self(text.to_owned()))
                } else {
                    Err(UriError::InvalidId { what: $what, value: text.to_owned() })
                }
            }

            /// The identifier as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl FromStr for $name {
            type Err = UriError;
            fn from_str(text: &str) -> Result<Self, Self::Err> {
                Self::parse(text)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = String::deserialize(deserializer)?;
                Self::parse(&text).map_err(serde::de::Error::custom)
            }
        }
    };
}

string_id!(
    /// A harness's provider id (`replay`, `openai`, `claude-code`): lower-case ASCII,
    /// digits, `-` and `_`.
    HarnessId,
    "provider id",
    valid_provider
);
string_id!(
    /// The id part of a session URI.
    SessionId,
    "session id",
    valid_id
);
string_id!(
    /// The id part of a chat URI, unique within its session.
    ChatId,
    "chat id",
    valid_id
);
string_id!(
    /// A turn's id, unique within its chat.
    TurnId,
    "turn id",
    valid_id
);
string_id!(
    /// A project's id; sessions without one are in the global scope.
    ProjectId,
    "project id",
    valid_id
);
string_id!(
    /// A staged proposal's id.
    ProposalId,
    "proposal id",
    valid_id
);
string_id!(
    /// The id of a harness's own conversation behind a chat (an LLM transcript, an ACP
    /// session, a thread). Used to keep such conversations out of the top-level session
    /// list.
    ConversationId,
    "conversation id",
    valid_id
);

impl SessionId {
    /// A fresh, random session id.
    pub fn generate() -> Self {
        Self(new_id())
    }
}

impl ChatId {
    /// A fresh, random chat id.
    pub fn generate() -> Self {
        Self(new_id())
    }

    /// The id of every session's default chat.
    pub fn default_chat() -> Self {
        Self(DEFAULT_CHAT_ID.to_owned())
    }
}

impl TurnId {
    /// A fresh, random turn id.
    pub fn generate() -> Self {
        Self(new_id())
    }
}

impl ProjectId {
    /// A fresh, random project id.
    pub fn generate() -> Self {
        Self(new_id())
    }
}

impl ProposalId {
    /// A fresh, random proposal id.
    pub fn generate() -> Self {
        Self(new_id())
    }
}

/// Identifies a session: `hearth-session:<provider>/<session-id>`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionUri {
    provider: HarnessId,
    id: SessionId,
}

impl SessionUri {
    /// A session URI from its parts.
    pub fn new(provider: HarnessId, id: SessionId) -> Self {
        Self { provider, id }
    }

    /// The harness that owns this session; routing uses it even for sessions that were
    /// not created by this process.
    pub fn harness(&self) -> &HarnessId {
        &self.provider
    }

    /// The session's id.
    pub fn id(&self) -> &SessionId {
        &self.id
    }

    /// Parses `hearth-session:<provider>/<id>`; a chat URI is refused with a message
    /// that says so.
    pub fn parse(text: &str) -> Result<Self, UriError> {
        let text = text.trim();
        if text.starts_with(CHAT_SCHEME) {
            return Err(UriError::ChatWhereSessionExpected {
                value: text.to_owned(),
            });
        }
        let rest = text
            .strip_prefix(SESSION_SCHEME)
            .ok_or_else(|| UriError::Malformed {
                expected: "session",
                value: text.to_owned(),
            })?;
        let (provider, id) = rest.split_once('/').ok_or_else(|| UriError::Malformed {
            expected: "session",
            value: text.to_owned(),
        })?;
        Ok(Self {
            provider: HarnessId::parse(provider)?,
            id: SessionId::parse(id)?,
        })
    }
}

impl fmt::Display for SessionUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SESSION_SCHEME}{}/{}", self.provider, self.id)
    }
}

/// Identifies a chat: `hearth-chat:<provider>/<session-id>/<chat-id>`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChatUri {
    session: SessionUri,
    chat: ChatId,
}

impl ChatUri {
    /// The default chat of a session (derived, never stored separately).
    pub fn default_for(session: &SessionUri) -> Self {
        Self {
            session: session.clone(),
            chat: ChatId::default_chat(),
        }
    }

    /// A peer chat of a session.
    pub fn peer(session: &SessionUri, chat: ChatId) -> Self {
        Self {
            session: session.clone(),
            chat,
        }
    }

    /// The session this chat belongs to.
    pub fn session(&self) -> SessionUri {
        self.session.clone()
    }

    /// The session this chat belongs to, borrowed.
    pub fn session_ref(&self) -> &SessionUri {
        &self.session
    }

    /// The harness that owns the chat's session.
    pub fn harness(&self) -> &HarnessId {
        self.session.harness()
    }

    /// The chat's id within its session.
    pub fn chat_id(&self) -> &ChatId {
        &self.chat
    }

    /// Whether this is its session's default chat.
    pub fn is_default(&self) -> bool {
        self.chat.as_str() == DEFAULT_CHAT_ID
    }

    /// Parses `hearth-chat:<provider>/<session-id>/<chat-id>`; a session URI is refused
    /// with a message that says so.
    pub fn parse(text: &str) -> Result<Self, UriError> {
        let text = text.trim();
        if text.starts_with(SESSION_SCHEME) {
            return Err(UriError::SessionWhereChatExpected {
                value: text.to_owned(),
            });
        }
        let malformed = || UriError::Malformed {
            expected: "chat",
            value: text.to_owned(),
        };
        let rest = text.strip_prefix(CHAT_SCHEME).ok_or_else(malformed)?;
        let mut pieces = rest.split('/');
        let (Some(provider), Some(session), Some(chat), None) =
            (pieces.next(), pieces.next(), pieces.next(), pieces.next())
        else {
            return Err(malformed());
        };
        Ok(Self {
            session: SessionUri::new(HarnessId::parse(provider)?, SessionId::parse(session)?),
            chat: ChatId::parse(chat)?,
        })
    }
}

impl fmt::Display for ChatUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{CHAT_SCHEME}{}/{}/{}",
            self.session.provider, self.session.id, self.chat
        )
    }
}

macro_rules! uri_serde {
    ($name:ident) => {
        impl FromStr for $name {
            type Err = UriError;
            fn from_str(text: &str) -> Result<Self, Self::Err> {
                Self::parse(text)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = String::deserialize(deserializer)?;
                Self::parse(&text).map_err(serde::de::Error::custom)
            }
        }
    };
}

uri_serde!(SessionUri);
uri_serde!(ChatUri);

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn session() -> SessionUri {
        SessionUri::parse("hearth-session:replay/abc-1").unwrap()
    }

    #[test]
    fn session_uri_round_trips() {
        let uri = session();
        assert_eq!(uri.to_string(), "hearth-session:replay/abc-1");
        assert_eq!(uri.harness().as_str(), "replay");
        assert_eq!(SessionUri::parse(&uri.to_string()).unwrap(), uri);
    }

    #[test]
    fn default_chat_is_derived_and_maps_back() {
        let chat = ChatUri::default_for(&session());
        assert_eq!(chat.to_string(), "hearth-chat:replay/abc-1/default");
        assert!(chat.is_default());
        assert_eq!(chat.session(), session());
        assert_eq!(ChatUri::parse(&chat.to_string()).unwrap(), chat);
    }

    #[test]
    fn a_chat_uri_is_refused_where_a_session_is_expected() {
        let error = SessionUri::parse("hearth-chat:replay/abc-1/default").unwrap_err();
        assert_eq!(
            error,
            UriError::ChatWhereSessionExpected {
                value: "hearth-chat:replay/abc-1/default".into()
            }
        );
        assert!(error.to_string().contains("is a chat URI"));
        let error = ChatUri::parse("hearth-session:replay/abc-1").unwrap_err();
        assert!(error.to_string().contains("is a session URI"));
    }

    #[test]
    fn malformed_uris_are_refused() {
        for bad in [
            "",
            "hearth-session:",
            "hearth-session:replay",
            "hearth-session:replay/",
            "hearth-session:Replay/x",
            "hearth-session:replay/x/y",
            "hearth-session:replay/../etc",
            "hearth-chat:replay/x",
            "hearth-chat:replay/x/y/z",
            "http://example.com",
        ] {
            assert!(
                SessionUri::parse(bad).is_err() || ChatUri::parse(bad).is_err(),
                "{bad}"
            );
            assert!(SessionUri::parse(bad).is_err(), "{bad} parsed as a session");
        }
        assert!(ChatUri::parse("hearth-chat:replay/x/y/z").is_err());
    }

    #[test]
    fn serde_validates() {
        let json = serde_json::to_string(&session()).unwrap();
        assert_eq!(json, "\"hearth-session:replay/abc-1\"");
        let back: SessionUri = serde_json::from_str(&json).unwrap();
        assert_eq!(back, session());
        assert!(serde_json::from_str::<ChatUri>(&json).is_err());
    }

    #[test]
    fn new_ids_are_told_apart_by_their_first_characters() {
        // Made as fast as possible, so in the same millisecond: time-ordered ids shared
        // their first 8+ characters there.
        let ids: Vec<String> = (0..1000).map(|_| new_id()).collect();
        for id in &ids {
            assert!(valid_id(id), "{id}");
            assert!(SessionId::parse(id).is_ok(), "{id}");
        }
        let starts: std::collections::HashSet<&str> = ids.iter().map(|id| &id[..8]).collect();
        // 1000 random 32-bit starts collide with a chance of about 1 in 10,000.
        assert!(starts.len() >= 999, "{} distinct of 1000", starts.len());
        let firsts: std::collections::HashSet<&str> = ids.iter().map(|id| &id[..1]).collect();
        assert_eq!(firsts.len(), 16, "the first character is random too");
    }

    #[test]
    fn time_ordered_ids_of_before_stay_valid() {
        let old = "019a3f2e-7c41-7b3a-9d2e-4f5a6b7c8d9e";
        assert_eq!(SessionId::parse(old).unwrap().as_str(), old);
        assert!(ChatUri::parse(&format!("hearth-chat:openai/{old}/{old}")).is_ok());
    }

    proptest::proptest! {
        #[test]
        fn parsing_never_panics(text in ".{0,80}") {
            let _ignored = SessionUri::parse(&text);
            let _ignored = ChatUri::parse(&text);
        }

        #[test]
        fn valid_chat_uris_round_trip(provider in "[a-z][a-z0-9_-]{0,10}", session in "[A-Za-z0-9][A-Za-z0-9._-]{0,20}", chat in "[A-Za-z0-9][A-Za-z0-9._-]{0,20}") {
            let text = format!("hearth-chat:{provider}/{session}/{chat}");
            let uri = ChatUri::parse(&text).unwrap();
            proptest::prop_assert_eq!(uri.to_string(), text);
        }
    }
}
