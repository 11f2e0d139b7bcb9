//! The crate's one error type and the per-item load warnings.

use std::fmt;

use thiserror::Error;

/// Result of an iCalendar operation.
pub type Result<T, E = IcalError> = std::result::Result<T, E>;

/// Something an iCalendar text, rule or zone name did not allow. Messages say what
/// failed, on what, and what to do.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum IcalError {
    /// A text cannot be read as a calendar at all.
    #[error("{what} is not a calendar: {message}")]
    NotACalendar {
        /// The file or subscription.
        what: String,
        /// What is wrong, with the line when known.
        message: String,
    },
    /// A recurrence rule cannot be parsed.
    #[error("invalid recurrence rule `{rule}`: {reason}")]
    InvalidRule {
        /// The rule text.
        rule: String,
        /// What is wrong.
        reason: String,
    },
    /// A time zone name is not a known IANA zone.
    #[error("unknown time zone `{name}`{}; use an IANA name such as `Europe/Berlin` or `America/New_York`",
        suggestion.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default())]
    UnknownTimeZone {
        /// The name given.
        name: String,
        /// A close match, if any.
        suggestion: Option<String>,
    },
    /// A text is not an event id (`<calendar>/<uid>`).
    #[error("`{text}` is not an event id; ids look like `<calendar>/<uid>`")]
    InvalidEventId {
        /// The text given.
        text: String,
    },
    /// The text holds no event with this UID.
    #[error("no event with UID `{uid}` in the calendar")]
    UnknownEvent {
        /// The UID asked for.
        uid: String,
    },
    /// A write this text cannot take (it is damaged where the write goes, or the write
    /// would be ambiguous); the message says why and what to do. Nothing was written.
    #[error("{0}")]
    Refused(String),
}

/// Something wrong with one item of a calendar; the item is skipped or loaded in part,
/// the rest of the calendar loads, and nothing on disk is changed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LoadWarning {
    /// Where: `file:line` or a note's path.
    pub location: String,
    /// What is wrong and what Hearth did about it.
    pub message: String,
}

impl LoadWarning {
    /// A warning about the item at `location`.
    pub fn new(location: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            location: location.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for LoadWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}
