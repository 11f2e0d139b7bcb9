//! Hearth's calendars.
//!
//! Owns everything about calendar storage and events:
//! - the calendar kinds of `config.toml` — local iCalendar files (RFC 5545, read and
//!   written through its own content-line layer, so properties, parameters and
//!   components Hearth does not understand, folding and line endings survive every
//!   write), Full Calendar note folders (one Markdown note per event, YAML front
//!   matter, body kept), and read-only iCalendar subscriptions (bytes from a
//!   [`SubscriptionSource`]; [`LocalSource`] until the guarded fetcher is plugged in) —
//!   plus a default writable calendar created on first write ([`Calendars`]); a
//!   calendar whose folder is missing is reported ([`StorageState`]) and refused, never
//!   created — Hearth makes folders only inside its data directory;
//! - reading with per-item warnings: a bad line, rule, zone or note skips that item,
//!   never the calendar ([`LoadWarning`]); what major producers write beyond RFC 5545
//!   (`X-WR-TIMEZONE`, `COUNT=-1`, a date start with a timed end, a misspelled `END`) is
//!   read as other calendar apps read it, with a warning quoting the line; of several
//!   copies of one event the current revision (`SEQUENCE`, then `DTSTAMP`, then
//!   `LAST-MODIFIED`) is the event;
//! - the event index: range queries with recurrence expanded (RRULE, RDATE and
//!   `RDATE;VALUE=PERIOD`, EXDATE, RECURRENCE-ID overrides and `RANGE=THISANDFUTURE`),
//!   all-day and timed events, zones and floating times ([`EventIndex`]), its work
//!   proportional to the range and bounded when indexing (a runaway rule is cut off and
//!   flagged, [`EventIndex::limited`]); text search and category filters ([`EventQuery`]);
//! - the `Category - SubCategory - Title` taxonomy ([`Taxonomy`], [`count_categories`]);
//! - staging changes (validated; described as fields before/after and as the exact
//!   unified diff of each file; each touched event fingerprinted) and applying them
//!   atomically, writing exactly the staged edits and refusing, naming the event, only
//!   when an event they touch changed since staging — so pending changes to one file
//!   compose ([`Calendars::stage`], [`Calendars::apply`]); import and export of
//!   iCalendar text;
//! - the agent's calendar tools on Hearth's tool seam ([`calendar_tools`]).
//!
//! It does not own the tool registry, the approval gate, proposal storage or the audit
//! log (hearth-tools), the CLI, or network access (subscriptions fetch through the
//! source they are given). It touches nothing but calendar storage.

mod atomic;
mod caldav;
mod change;
mod component;
mod contentline;
mod diff;
mod error;
mod event;
mod expand;
mod file_diff;
mod fingerprint;
mod ics_read;
mod ics_write;
mod index;
mod loading;
mod note_conversion;
mod notes;
mod notes_write;
mod occurrence;
mod presence;
mod query;
mod revision;
mod rrule;
mod series;
mod source;
mod spec;
mod store;
mod taxonomy;
mod time;
mod timezone;
mod tools;
mod transfer;
mod yaml_edit;

pub use caldav::{
    CalDavAccount, DavRequest, DavResponse, DavTransport, DiscoveredCalendar, NoNetwork,
    PasswordSource, SyncMethod, SyncReport, discover,
};
pub use change::{
    AppliedChange, ChangeRequest, MAX_BATCH, ProposedChange, ProposedEvent, ProposedRecurrence,
    StagedChange, read_proposal,
};
pub use error::{CalendarError, ConflictKind, LoadWarning, Result};
pub use event::{Event, EventId, EventSource, OverrideRange, Period, Recurrence};
pub use ics_read::{ParsedCalendar, read_ics};
pub use index::{EventIndex, LimitedSeries, Occurrence};
pub use presence::StorageState;
pub use query::{
    CalendarSummary, EventDetails, EventListing, EventQuery, OccurrenceInfo, OfflineCalendar,
    UnavailableCalendar, parse_time_bound,
};
pub use rrule::{Frequency, RecurrenceRule, Until, WeekdayNum};
pub use source::{LocalSource, Subscription, SubscriptionSource};
pub use spec::{EventInput, EventPatch};
pub use store::{
    CalendarInfo, CalendarOptions, Calendars, ConfigProblem, DEFAULT_MAX_CALENDAR_BYTES,
    LoadedCalendar, StorageKind,
};
pub use taxonomy::{CategoryCount, SubCategoryCount, Taxonomy, count_categories};
pub use time::{EventTime, Zone};
pub use timezone::parse_time_zone;
pub use tools::{
    CalendarListTool, EventCreateTool, EventDeleteTool, EventGetTool, EventUpdateTool,
    EventsCreateBatchTool, EventsListTool, calendar_tools, names as tool_names,
};
pub use transfer::ImportReport;

/// Reads the text of one Full Calendar note (its front matter) as an event: `Ok(None)`
/// when the note is not an event note, `Err` with the reason when it tries to be one and
/// fails. The entry point of the front-matter fuzz target; calendars read notes from
/// their folders through [`Calendars`].
#[doc(hidden)]
pub fn read_note_text(
    calendar: &str,
    relative: &std::path::Path,
    text: &str,
) -> std::result::Result<Option<Event>, String> {
    notes::read_note(calendar, relative, text)
}
