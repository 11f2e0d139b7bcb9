//! Hearth's calendars.
//!
//! Owns the calendars of `config.toml` and everything done to them:
//! - the calendar kinds — local iCalendar files, Full Calendar note folders (one
//!   Markdown note per event, YAML front matter, body kept), read-only iCalendar
//!   subscriptions (bytes from a [`SubscriptionSource`]; [`LocalSource`] until the guarded
//!   fetcher is plugged in) and CalDAV calendars (each synced into a cache file, read
//!   offline from it when the server cannot be reached) — plus a default writable
//!   calendar created on first write ([`Calendars`]); a calendar whose folder is missing
//!   is reported ([`StorageState`]) and refused, never created — Hearth makes folders
//!   only inside its data directory;
//! - loading each into an event index, cached and reloaded when its file or folder
//!   changes, with per-item warnings: a bad line, rule, zone or note skips that item,
//!   never the calendar ([`LoadWarning`]); queries over them ([`EventQuery`]), text
//!   search and category filters;
//! - the `Category - SubCategory - Title` taxonomy ([`Taxonomy`], [`count_categories`]);
//! - staging changes (validated; described as fields before/after and as the exact
//!   unified diff of each file; each touched event fingerprinted) and applying them
//!   atomically, writing exactly the staged edits and refusing, naming the event, only
//!   when an event they touch changed since staging — so pending changes to one file
//!   compose ([`Calendars::stage`], [`Calendars::apply`]); import and export of
//!   iCalendar text;
//! - the agent's calendar tools on Hearth's tool seam ([`calendar_tools`]).
//!
//! iCalendar text itself — parsing, writing by splicing, RRULE, recurrence expansion,
//! zones, the event index — is hearth-ical's; talking to CalDAV servers is
//! hearth-caldav's. Their types are re-exported here for this crate's users.
//!
//! It does not own the tool registry, the approval gate, proposal storage or the audit
//! log (hearth-tools), the CLI, or network access (subscriptions and CalDAV go through
//! the source and transport they are given). It touches nothing but calendar storage.

mod atomic;
mod caldav;
mod change;
mod configure;
mod diff;
mod error;
mod file_diff;
mod loading;
mod note_conversion;
mod notes;
mod notes_write;
mod occurrence;
mod presence;
mod query;
mod source;
mod spec;
mod store;
mod taxonomy;
mod tools;
mod transfer;
mod yaml_edit;

pub use change::{
    AppliedChange, ChangeRequest, MAX_BATCH, ProposedChange, ProposedEvent, ProposedRecurrence,
    StagedChange, read_proposal,
};
pub use error::{CalendarError, ConflictKind, Result};
pub use hearth_caldav::{
    CalDavAccount, DavRequest, DavResponse, DavTransport, DiscoveredCalendar, NoNetwork,
    PasswordSource, SyncMethod, SyncReport,
};
pub use hearth_ical::{
    Event, EventId, EventIndex, EventSource, EventTime, Frequency, LimitedSeries, LoadWarning,
    Occurrence, OverrideRange, ParsedCalendar, Period, Recurrence, RecurrenceRule, Until,
    WeekdayNum, Zone, parse_time_zone,
};
pub use presence::StorageState;
pub use query::{
    CalendarSummary, EventDetails, EventListing, EventQuery, OccurrenceInfo, OfflineCalendar,
    UnavailableCalendar, parse_time_bound,
};
pub use source::{LocalSource, Subscription, SubscriptionSource};
pub use spec::{EventInput, EventPatch};
pub use store::{
    CalendarInfo, CalendarOptions, Calendars, ConfigProblem, DEFAULT_MAX_CALENDAR_BYTES,
    LoadedCalendar, StorageKind,
};
pub use taxonomy::{CategoryCount, SubCategoryCount, Taxonomy, count_categories};
pub use tools::{
    CalendarListTool, EventCreateTool, EventDeleteTool, EventGetTool, EventUpdateTool,
    EventsCreateBatchTool, EventsListTool, calendar_tools, names as tool_names,
};
pub use transfer::ImportReport;

/// Finds the account's calendars on its server (see [`hearth_caldav::discover`]).
pub async fn discover(
    transport: &dyn DavTransport,
    account: &CalDavAccount,
) -> Result<Vec<DiscoveredCalendar>> {
    Ok(hearth_caldav::discover(transport, account).await?)
}

/// Reads the events of an iCalendar text (see [`hearth_ical::read_ics`]). `calendar`
/// becomes the events' calendar id; `origin` (a path or URL) names the text in warnings.
pub fn read_ics(calendar: &str, origin: &str, text: &str) -> Result<ParsedCalendar> {
    Ok(hearth_ical::read_ics(calendar, origin, text)?)
}

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
