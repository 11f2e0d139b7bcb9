//! Hearth's iCalendar layer: RFC 5545 text and what it means, with no storage.
//!
//! Owns:
//! - content lines and the component tree ([`parse_tree`]), with the byte span and line
//!   of everything, so writes splice the original text: properties, parameters and
//!   components Hearth does not understand, folding and line endings survive every write;
//! - reading events from a text with per-item warnings ([`read_ics`], [`LoadWarning`]):
//!   a bad line, rule or zone skips that item, never the calendar; what major producers
//!   write beyond RFC 5545 (`X-WR-TIMEZONE`, `COUNT=-1`, a date start with a timed end, a
//!   misspelled `END`) is read as other calendar apps read it; of several copies of one
//!   event the current revision (`SEQUENCE`, then `DTSTAMP`, then `LAST-MODIFIED`) is the
//!   event;
//! - writing: events created, updated, deleted, or one occurrence changed or removed, as
//!   minimal splices of the text ([`create_events`], [`update_event`], …, [`Rewrite`]),
//!   from the exact event a change writes ([`EventSpec`]); fingerprints of the events a
//!   change touches ([`event_fingerprints`]);
//! - RRULE ([`RecurrenceRule`]), recurrence expansion (RRULE, RDATE and
//!   `RDATE;VALUE=PERIOD`, EXDATE, RECURRENCE-ID overrides and `RANGE=THISANDFUTURE`) and
//!   the event index ([`EventIndex`]): range queries proportional to the range, a runaway
//!   rule cut off and flagged ([`EventIndex::limited`]);
//! - event times and zones ([`EventTime`], [`Zone`]): IANA, Windows and custom
//!   `VTIMEZONE` zones, DST gaps and overlaps ([`parse_time_zone`]);
//! - the event model every calendar kind shares ([`Event`], [`Recurrence`]).
//!
//! It does not own calendars, files, note folders, the network, staging or tools
//! (hearth-calendar), nor CalDAV (hearth-caldav). It does no I/O and needs no runtime.

mod component;
mod contentline;
mod error;
mod event;
mod expand;
mod fingerprint;
mod ics_read;
mod ics_write;
mod index;
mod revision;
mod rrule;
pub mod series;
mod spec;
mod time;
mod timezone;

pub use component::{Component, Issue, Property, Tree, parse_tree};
pub use contentline::{ContentLine, Param};
pub use error::{IcalError, LoadWarning, Result};
pub use event::{Event, EventId, EventSource, OverrideRange, Period, Recurrence};
pub use fingerprint::{ABSENT, content_fingerprint, parts_fingerprint};
pub use ics_read::{ParsedCalendar, component_uid, read_ics, read_tree};
pub use ics_write::{
    Rewrite, append_components, create_events, delete_event, delete_occurrence, empty_calendar,
    event_fingerprints, update_event, update_occurrence, write_blocker,
};
pub use index::{EventIndex, LimitedSeries, Occurrence, sort_occurrences};
pub use rrule::{Frequency, RecurrenceRule, Until, WeekdayNum};
pub use spec::{EventSpec, RecurrenceSpec, SpecTime};
pub use time::{EventTime, Zone, resolve_local};
pub use timezone::parse_time_zone;
