//! Events as Hearth reads them from any calendar kind.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;

use crate::error::IcalError;
use crate::rrule::RecurrenceRule;
use crate::time::EventTime;

/// An event's id: `<calendar>/<uid>` (for a note calendar the uid is the note's path
/// inside the folder).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventId {
    /// The calendar's id.
    pub calendar: String,
    /// The event's UID within it.
    pub uid: String,
}

impl EventId {
    /// An id from its parts.
    pub fn new(calendar: impl Into<String>, uid: impl Into<String>) -> Self {
        Self {
            calendar: calendar.into(),
            uid: uid.into(),
        }
    }
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.calendar, self.uid)
    }
}

impl FromStr for EventId {
    type Err = IcalError;

    fn from_str(text: &str) -> Result<Self, IcalError> {
        match text.trim().split_once('/') {
            Some((calendar, uid)) if !calendar.is_empty() && !uid.is_empty() => {
                Ok(Self::new(calendar, uid))
            }
            _ => Err(IcalError::InvalidEventId {
                text: text.to_owned(),
            }),
        }
    }
}

/// Where an event is stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EventSource {
    /// A component of an iCalendar text, starting at this line.
    Ics {
        /// The line of its `BEGIN:VEVENT`.
        line: usize,
    },
    /// A note, by its path inside the calendar's folder.
    Note {
        /// The relative path.
        path: PathBuf,
    },
}

/// An `RDATE;VALUE=PERIOD` occurrence: it ends at its own end, not after the event's
/// usual length (RFC 5545 §3.8.5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Period {
    /// Its start (also listed in [`Recurrence::rdates`]).
    pub start: EventTime,
    /// Its end (for `start/duration`, the start plus the duration).
    pub end: EventTime,
}

/// Which occurrences an override changes (`RECURRENCE-ID;RANGE=`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OverrideRange {
    /// Its own occurrence only.
    #[default]
    ThisOccurrence,
    /// Its occurrence and every later one (`RANGE=THISANDFUTURE`, RFC 5545 §3.8.4.4):
    /// later occurrences move by the override's shift and take its length.
    ThisAndFuture,
}

/// How an event repeats.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recurrence {
    /// `RRULE`s (usually one).
    pub rules: Vec<RecurrenceRule>,
    /// `RDATE`s: extra occurrences.
    pub rdates: Vec<EventTime>,
    /// The `RDATE`s given as periods, with their own ends.
    pub periods: Vec<Period>,
    /// `EXDATE`s: removed occurrences.
    pub exdates: Vec<EventTime>,
    /// Whether the start itself is an occurrence even when the rules do not produce it
    /// (iCalendar: yes; Full Calendar notes: no).
    pub start_is_occurrence: bool,
}

/// One event: a single event, a recurring series, or an override of one occurrence of
/// a series (`recurrence_id` set).
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// Its calendar's id.
    pub calendar: String,
    /// Its UID (note path for notes).
    pub uid: String,
    /// For an override: the original start of the occurrence it replaces.
    pub recurrence_id: Option<EventTime>,
    /// For an override: whether it changes later occurrences too.
    pub range: OverrideRange,
    /// The title (`SUMMARY`), possibly `Category - SubCategory - Title`.
    pub title: String,
    /// Description.
    pub description: Option<String>,
    /// Location.
    pub location: Option<String>,
    /// `CATEGORIES`.
    pub categories: Vec<String>,
    /// `STATUS` (`CONFIRMED`, `TENTATIVE`, `CANCELLED`), upper-case.
    pub status: Option<String>,
    /// Start.
    pub start: EventTime,
    /// End (exclusive; for all-day events the day after the last day).
    pub end: EventTime,
    /// Recurrence, for a series.
    pub recurrence: Option<Recurrence>,
    /// Where it is stored.
    pub source: EventSource,
}

impl Event {
    /// Its id.
    pub fn id(&self) -> EventId {
        EventId::new(self.calendar.clone(), self.uid.clone())
    }

    /// Whether it is an all-day event.
    pub fn is_all_day(&self) -> bool {
        self.start.is_date()
    }

    /// Whether it repeats.
    pub fn is_recurring(&self) -> bool {
        self.recurrence.is_some()
    }

    /// Its length; floating times are placed in `floating`.
    pub fn duration(&self, floating: Tz) -> Duration {
        match (self.start, self.end) {
            (EventTime::Date(start), EventTime::Date(end)) => end - start,
            (start, end) => end.to_utc(floating) - start.to_utc(floating),
        }
    }

    /// Its first start as an instant.
    pub fn start_utc(&self, floating: Tz) -> DateTime<Utc> {
        self.start.to_utc(floating)
    }

    /// Whether the title, description or location contains `needle` (already
    /// lower-case).
    pub fn matches_text(&self, needle: &str) -> bool {
        let contains = |text: &str| text.to_lowercase().contains(needle);
        contains(&self.title)
            || self.description.as_deref().is_some_and(contains)
            || self.location.as_deref().is_some_and(contains)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;
    use pretty_assertions::assert_eq;

    #[test]
    fn ids_split_at_the_first_slash() {
        let id: EventId = "notes/2026/03 Dentist.md".parse().unwrap();
        assert_eq!(id, EventId::new("notes", "2026/03 Dentist.md"));
        assert_eq!(id.to_string(), "notes/2026/03 Dentist.md");
        assert!("nouid".parse::<EventId>().is_err());
        assert!("/x".parse::<EventId>().is_err());
    }

    #[test]
    fn matches_text_and_knows_its_length() {
        let date = NaiveDate::from_ymd_opt(2026, 3, 3).unwrap();
        let event = Event {
            calendar: "home".into(),
            uid: "1".into(),
            recurrence_id: None,
            range: OverrideRange::ThisOccurrence,
            title: "Work - Meetings - Sync".into(),
            description: Some("Quarterly numbers".into()),
            location: Some("Room 4".into()),
            categories: vec!["Important".into()],
            status: None,
            start: EventTime::Date(date),
            end: EventTime::Date(date.succ_opt().unwrap()),
            recurrence: None,
            source: EventSource::Ics { line: 1 },
        };
        assert!(event.matches_text("quarterly"));
        assert!(event.matches_text("room"));
        assert!(!event.matches_text("dentist"));
        assert_eq!(event.duration(chrono_tz::UTC), Duration::days(1));
    }
}
