//! The exact event a write makes ([`EventSpec`]): its times as they are recorded
//! ([`SpecTime`], a zone by its IANA name) and what happens to its recurrence
//! ([`RecurrenceSpec`]). A staged change stores these, and the writers of iCalendar
//! text write them.

use chrono::{NaiveDate, NaiveDateTime};
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::time::{EventTime, Zone, resolve_local};
use crate::timezone::parse_time_zone;

/// A start or end as a staged change records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SpecTime {
    /// A date (all-day events).
    Date {
        /// The date.
        date: NaiveDate,
    },
    /// A wall-clock time in an IANA zone.
    Zoned {
        /// The wall-clock time.
        local: NaiveDateTime,
        /// The zone's IANA name.
        time_zone: String,
    },
    /// A wall-clock time in no zone (wherever the reader is).
    Floating {
        /// The wall-clock time.
        local: NaiveDateTime,
    },
    /// A UTC time.
    Utc {
        /// The time in UTC.
        utc: NaiveDateTime,
    },
}

impl SpecTime {
    /// How `time` is recorded (a fixed offset as the UTC time it denotes).
    pub fn from_event_time(time: EventTime) -> Self {
        match time {
            EventTime::Date(date) => Self::Date { date },
            EventTime::DateTime { local, zone } => match zone {
                Zone::Utc => Self::Utc { utc: local },
                Zone::Floating => Self::Floating { local },
                Zone::Named(tz) => Self::Zoned {
                    local,
                    time_zone: tz.name().to_owned(),
                },
                Zone::Fixed(offset) => Self::Utc {
                    utc: resolve_local(&offset, local).naive_utc(),
                },
            },
        }
    }

    /// The time recorded; fails when the zone's name is not a known IANA zone.
    pub fn to_event_time(&self) -> Result<EventTime> {
        Ok(match self {
            Self::Date { date } => EventTime::Date(*date),
            Self::Zoned { local, time_zone } => EventTime::DateTime {
                local: *local,
                zone: Zone::Named(parse_time_zone(time_zone)?),
            },
            Self::Floating { local } => EventTime::DateTime {
                local: *local,
                zone: Zone::Floating,
            },
            Self::Utc { utc } => EventTime::DateTime {
                local: *utc,
                zone: Zone::Utc,
            },
        })
    }
}

/// What happens to an event's recurrence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RecurrenceSpec {
    /// Leave the recurrence (rules, extra dates, exceptions) as it is.
    Unchanged,
    /// No recurrence.
    None,
    /// Repeat by this rule.
    Rule {
        /// The RRULE's value (`FREQ=WEEKLY;BYDAY=MO`).
        rule: String,
    },
}

/// The exact event a staged change writes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventSpec {
    /// Its UID.
    pub uid: String,
    /// Its title (`SUMMARY`).
    pub title: String,
    /// Its start.
    pub start: SpecTime,
    /// Its end (exclusive; for all-day events the day after the last day).
    pub end: SpecTime,
    /// Its location.
    pub location: Option<String>,
    /// Its description.
    pub description: Option<String>,
    /// What happens to its recurrence.
    pub recurrence: RecurrenceSpec,
}

impl EventSpec {
    /// Its start as an event time.
    pub fn start_time(&self) -> Result<EventTime> {
        self.start.to_event_time()
    }

    /// Its end as an event time.
    pub fn end_time(&self) -> Result<EventTime> {
        self.end.to_event_time()
    }

    /// Whether it lasts whole days.
    pub fn is_all_day(&self) -> bool {
        matches!(self.start, SpecTime::Date { .. })
    }
}
