//! The crate's one error type, what the iCalendar and CalDAV layers' errors become in
//! it, and its mapping onto the tool seam's [`ToolError`].

use std::io;
use std::path::PathBuf;

use hearth_caldav::CalDavError;
use hearth_core::ToolError;
use hearth_ical::IcalError;
use thiserror::Error;

/// Result of a calendar operation.
pub type Result<T, E = CalendarError> = std::result::Result<T, E>;

/// Something a calendar operation could not do. Messages say what failed, on what, and
/// what to do; the tools hand them to the model unchanged.
#[derive(Debug, Error)]
pub enum CalendarError {
    /// A file or folder could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A file could not be written; nothing was changed.
    #[error("cannot write {}: {source}; the file was left as it was", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A calendar is larger than Hearth loads.
    #[error(
        "{what} is {size} bytes, over the limit of {limit} bytes; split it into smaller calendars"
    )]
    TooLarge {
        /// The file or subscription.
        what: String,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// What the iCalendar layer refused: a calendar's content that cannot be read as a
    /// calendar at all, a recurrence rule that cannot be parsed, a time zone name that
    /// is not a known IANA zone.
    #[error(transparent)]
    Ical(IcalError),
    /// No calendar has this id.
    #[error("no calendar `{id}`; the calendars are: {}", known.join(", "))]
    UnknownCalendar {
        /// The id asked for.
        id: String,
        /// The ids that exist.
        known: Vec<String>,
    },
    /// The calendar cannot be written.
    #[error("calendar `{id}` is read-only ({reason}); choose a writable calendar")]
    ReadOnly {
        /// The calendar.
        id: String,
        /// Why it is read-only.
        reason: String,
    },
    /// A configured calendar is unusable.
    #[error("calendar `{id}` is misconfigured: {message}")]
    Misconfigured {
        /// The calendar.
        id: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// No event has this id.
    #[error("no event `{id}`; list events with `events_list` to find its id")]
    UnknownEvent {
        /// The id asked for.
        id: String,
    },
    /// An argument is wrong; the message says which and how to fix it.
    #[error("{0}")]
    InvalidInput(String),
    /// A calendar's folder (for an iCalendar file, the folder it is in) does not exist;
    /// nothing was read or written, and Hearth does not create it.
    #[error(
        "calendar `{id}` is missing: {} does not exist; create it (or reconnect the drive it is on), or set `path` in [calendars.{id}] of the configuration to where the calendar is. Hearth does not create folders outside its data directory",
        path.display()
    )]
    Missing {
        /// The calendar.
        id: String,
        /// The folder that does not exist.
        path: PathBuf,
    },
    /// An event a staged change touches changed since staging; nothing was written.
    #[error("{}", describe_event_conflict(title, event, path, *kind))]
    EventConflict {
        /// The event's title when the change was staged.
        title: String,
        /// The event's id (`<calendar>/<uid>`).
        event: String,
        /// The file it is in.
        path: PathBuf,
        /// What happened to it.
        kind: ConflictKind,
    },
    /// The storage changed since the change was staged; nothing was written.
    #[error(
        "{} changed on disk since this change was staged; nothing was written. Stage the change again against the current calendar",
        path.display()
    )]
    Conflict {
        /// The file that changed.
        path: PathBuf,
    },
    /// A subscription could not be fetched.
    #[error(
        "cannot fetch subscription `{id}` ({}): {}",
        hearth_core::redact_userinfo(url),
        hearth_core::redact_userinfo(message)
    )]
    Fetch {
        /// The calendar.
        id: String,
        /// Its URL (shown with its credentials redacted).
        url: String,
        /// Why.
        message: String,
    },
    /// A CalDAV server could not be reached, refused a request, or answered wrongly.
    #[error(
        "CalDAV calendar `{}` ({}): {}",
        hearth_core::redact_userinfo(id),
        hearth_core::redact_userinfo(url),
        hearth_core::redact_userinfo(message)
    )]
    Server {
        /// The calendar.
        id: String,
        /// Its URL (shown with its credentials redacted).
        url: String,
        /// What failed and what to do.
        message: String,
    },
    /// A CalDAV server refused a write because the event changed there since staging
    /// (`412 Precondition Failed`): the server's copy was kept.
    #[error(
        "event '{title}' ({event}) changed on the server since this change was staged (HTTP 412 Precondition Failed); the server's copy was kept{written}. Stage the change again against the calendar as it is now"
    )]
    ServerConflict {
        /// Its title.
        title: String,
        /// The event's id (`<calendar>/<uid>`).
        event: String,
        /// What of the change was written before the conflict, if any.
        written: String,
    },
    /// A batch of writes failed part-way and undoing its first writes failed too, so
    /// some of them stayed.
    #[error(
        "{error} — and undoing the batch's earlier writes failed ({}); check those files by hand",
        problems.join("; ")
    )]
    PartlyWritten {
        /// Why the batch failed.
        error: Box<CalendarError>,
        /// The files that could not be restored, and why.
        problems: Vec<String>,
    },
    /// A staged payload is not one this crate produced.
    #[error("invalid calendar change payload: {0}")]
    InvalidPayload(String),
    /// A blocking task failed to complete.
    #[error("calendar task failed: {0}")]
    Task(String),
}

/// What happened to an event since a change to it was staged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConflictKind {
    /// It was edited.
    Changed,
    /// It was removed.
    Removed,
    /// An event with the uid (or note name) of an event to create appeared.
    Appeared,
    /// It is as it was, but applying now would write it differently from the approved
    /// diff (the calendar's settings changed since staging).
    WouldDiffer,
}

fn describe_event_conflict(
    title: &str,
    event: &str,
    path: &std::path::Path,
    kind: ConflictKind,
) -> String {
    let path = path.display();
    let what = match kind {
        ConflictKind::Changed => format!("event '{title}' ({event}) was changed in {path}"),
        ConflictKind::Removed => format!("event '{title}' ({event}) was removed from {path}"),
        ConflictKind::Appeared => {
            format!("an event with the id of the new event '{title}' ({event}) appeared in {path}")
        }
        ConflictKind::WouldDiffer => format!(
            "event '{title}' ({event}) in {path} would now be written differently from the approved diff (the calendar's settings changed)"
        ),
    };
    format!(
        "{what} since this change was staged; nothing was written. Stage the change again against the calendar as it is now"
    )
}

impl CalendarError {
    /// Whether retrying the same operation unchanged may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Read { .. }
            | Self::Write { .. }
            | Self::Fetch { .. }
            | Self::Server { .. }
            | Self::Task(_) => true,
            Self::TooLarge { .. }
            | Self::Ical(_)
            | Self::UnknownCalendar { .. }
            | Self::ReadOnly { .. }
            | Self::Misconfigured { .. }
            | Self::UnknownEvent { .. }
            | Self::InvalidInput(_)
            | Self::Missing { .. }
            | Self::EventConflict { .. }
            | Self::Conflict { .. }
            | Self::ServerConflict { .. }
            | Self::PartlyWritten { .. }
            | Self::InvalidPayload(_) => false,
        }
    }
}

impl From<CalendarError> for ToolError {
    fn from(error: CalendarError) -> Self {
        let message = error.to_string();
        match error {
            CalendarError::UnknownCalendar { .. }
            | CalendarError::UnknownEvent { .. }
            | CalendarError::InvalidInput(_)
            | CalendarError::Ical(
                IcalError::InvalidRule { .. } | IcalError::UnknownTimeZone { .. },
            ) => ToolError::InvalidArguments(message),
            CalendarError::ReadOnly { .. } => ToolError::Refused(message),
            CalendarError::Conflict { .. }
            | CalendarError::EventConflict { .. }
            | CalendarError::ServerConflict { .. } => ToolError::Conflict(message),
            CalendarError::Missing { .. } => ToolError::Refused(message),
            CalendarError::InvalidPayload(_) => ToolError::InvalidArguments(message),
            CalendarError::Read { .. }
            | CalendarError::Write { .. }
            | CalendarError::TooLarge { .. }
            | CalendarError::Ical(_)
            | CalendarError::Misconfigured { .. }
            | CalendarError::Fetch { .. }
            | CalendarError::Server { .. }
            | CalendarError::PartlyWritten { .. }
            | CalendarError::Task(_) => ToolError::Failed(message),
        }
    }
}

impl From<IcalError> for CalendarError {
    fn from(error: IcalError) -> Self {
        match error {
            IcalError::NotACalendar { .. }
            | IcalError::InvalidRule { .. }
            | IcalError::UnknownTimeZone { .. } => Self::Ical(error),
            IcalError::InvalidEventId { text } => Self::InvalidInput(format!(
                "`{text}` is not an event id; ids look like `<calendar>/<uid>` as `events_list` shows them"
            )),
            IcalError::UnknownEvent { uid } => Self::UnknownEvent { id: uid },
            IcalError::Refused(message) => Self::InvalidInput(message),
        }
    }
}

impl From<CalDavError> for CalendarError {
    fn from(error: CalDavError) -> Self {
        match error {
            CalDavError::Server { id, url, message } => Self::Server { id, url, message },
            CalDavError::InvalidUrl(message) => Self::InvalidInput(message),
        }
    }
}
