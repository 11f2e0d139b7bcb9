//! The calendars, read-only: which calendars there are, the events of a window with
//! repeating events expanded, and the pending proposals drawn as the events they would
//! create, move or delete.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `calendar/list` params.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CalendarListParams {}

/// What `calendar/list` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CalendarListResponse {
    /// The configured calendars (plus Hearth's default one when none is a writable
    /// default), and those configured but unusable, with their `error`.
    pub calendars: Vec<CalendarEntry>,
    /// The IANA zone times are shown in: `[defaults] time_zone`, else the system's.
    pub timezone: String,
    /// Whether the user wants a 12-hour clock (`[defaults] clock = "12h"`).
    pub hour12: bool,
}

/// The storage behind a calendar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CalendarKind {
    /// A local iCalendar file.
    Ics,
    /// A folder of Full Calendar notes.
    Notes,
    /// A read-only iCalendar subscription.
    Subscription,
    /// A calendar on a CalDAV server, read from its last sync.
    Caldav,
}

/// One calendar.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CalendarEntry {
    /// Its id (the `[calendars.<id>]` key).
    pub id: String,
    /// Display name.
    pub name: String,
    /// The storage behind it.
    pub kind: CalendarKind,
    /// Whether agents may not stage changes to it.
    pub read_only: bool,
    /// Whether new events go here by default.
    pub default: bool,
    /// A display color, when the configuration gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    /// Problems with single items or the configuration; the rest of it is read.
    pub warnings: Vec<String>,
    /// Why it cannot be read at all (a missing or unreadable file), and what to do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// When a CalDAV calendar last synced with its server (RFC 3339): its events are
    /// as of then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synced_at: Option<String>,
}

/// `calendar/events`: the events of a window, repeating events expanded, and the pending
/// calendar proposals that touch it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CalendarEventsParams {
    /// Start (inclusive): a date (`2026-12-01`, midnight in the calendar zone) or an
    /// RFC 3339 date-time.
    pub from: String,
    /// End (exclusive), same forms; at most 400 days after `from`.
    pub to: String,
    /// Only these calendar ids (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calendars: Option<Vec<String>>,
}

/// What `calendar/events` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CalendarEventsResponse {
    /// The occurrences in the window, by start.
    pub events: Vec<CalendarEvent>,
    /// Pending proposals as the events they would create, move (the new time) or delete
    /// (the current time), when those fall in the window.
    pub proposed: Vec<ProposedEvent>,
    /// What could not be read or shown (a calendar, a proposal), and why.
    pub warnings: Vec<String>,
}

/// One occurrence of an event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CalendarEvent {
    /// Its calendar's id.
    pub calendar: String,
    /// The event's UID.
    pub uid: String,
    /// Names this occurrence of a repeating event (a date, or a date and wall-clock time
    /// in the calendar zone), as the calendar tools take it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recurrence_id: Option<String>,
    /// Title.
    pub title: String,
    /// RFC 3339 with the offset of the calendar zone (`2026-12-01T09:00:00+01:00`), or
    /// `YYYY-MM-DD` for an all-day event.
    pub start: String,
    /// Same form; for an all-day event the day after its last (exclusive).
    pub end: String,
    /// Whether it lasts whole days.
    pub all_day: bool,
    /// Location.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

/// What a proposal would do to an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ProposedAction {
    /// Add it.
    Create,
    /// Change it (shown at its new time).
    Update,
    /// Remove it (shown at its current time).
    Delete,
}

/// A pending proposal drawn as an event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProposedEvent {
    /// The proposal (`proposal/approve`, `proposal/reject`).
    pub proposal_id: String,
    /// Its payload hash, which an approval names.
    pub payload_hash: String,
    /// The proposal's one line.
    pub summary: String,
    /// What it would do.
    pub action: ProposedAction,
    /// The calendar it changes.
    pub calendar: String,
    /// The event's UID (the one a created event would get, when known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// Title (the new one for an update).
    pub title: String,
    /// Same forms as [`CalendarEvent::start`].
    pub start: String,
    /// Same forms as [`CalendarEvent::end`].
    pub end: String,
    /// Whether it lasts whole days.
    pub all_day: bool,
}
