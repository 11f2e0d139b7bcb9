//! Reading across calendars: calendar summaries, events in a range (with text search,
//! category filter and a limit), one event's details, category counts.

use std::sync::Arc;

use chrono::{DateTime, Duration, NaiveTime, Utc};
use chrono_tz::Tz;
use hearth_ical::{
    Event, EventId, EventSource, EventTime, LoadWarning, Occurrence, Zone, sort_occurrences,
};
use serde::Serialize;

use crate::error::{CalendarError, Result};
use crate::presence::StorageState;
use crate::spec::{InputTime, parse_input_time};
use crate::store::{CalendarInfo, Calendars, LoadedCalendar};
use crate::taxonomy::{CategoryCount, Taxonomy, count_categories};

/// Parses a range bound: a date (midnight in `zone`), a wall-clock date-time in `zone`,
/// or an RFC 3339 time.
pub fn parse_time_bound(field: &str, text: &str, zone: Tz) -> Result<DateTime<Utc>> {
    Ok(match parse_input_time(field, text)? {
        InputTime::Date(date) => Zone::Named(zone).to_utc(date.and_time(NaiveTime::MIN), zone),
        InputTime::Local(local) => Zone::Named(zone).to_utc(local, zone),
        InputTime::Instant(instant) => instant.with_timezone(&Utc),
    })
}

/// A calendar with what loading it found.
#[derive(Clone, Debug, Serialize)]
pub struct CalendarSummary {
    /// The calendar.
    #[serde(flatten)]
    pub info: CalendarInfo,
    /// Events (series count once), when it loaded.
    pub events: Option<usize>,
    /// Of which repeat.
    pub recurring: Option<usize>,
    /// Problems with single items.
    pub warnings: Vec<LoadWarning>,
    /// Whether its file or folder is there.
    pub storage: StorageState,
    /// Why it did not load, if it did not.
    pub error: Option<String>,
    /// Its categories.
    pub categories: Vec<CategoryCount>,
    /// When a CalDAV calendar last synced with its server (its events are as of then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synced_at: Option<DateTime<Utc>>,
}

/// Which events to list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventQuery {
    /// Range start (inclusive).
    pub from: DateTime<Utc>,
    /// Range end (exclusive).
    pub to: DateTime<Utc>,
    /// Words to find in title, description or location (case-insensitive).
    pub text: Option<String>,
    /// Category (`Work`, `Work - Meetings`, or a `CATEGORIES` value).
    pub category: Option<String>,
    /// Only this calendar.
    pub calendar: Option<String>,
    /// At most this many occurrences.
    pub limit: usize,
}

/// One occurrence, for listings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OccurrenceInfo {
    /// The event's id (`<calendar>/<uid>`).
    pub id: String,
    /// Its calendar.
    pub calendar: String,
    /// Title.
    pub title: String,
    /// Category and sub-category.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Whether it lasts whole days.
    pub all_day: bool,
    /// Start: a date, or a wall-clock time in the display zone.
    pub start: String,
    /// End: the last day (inclusive) for all-day occurrences, else a wall-clock time.
    pub end: String,
    /// Start instant.
    pub start_utc: DateTime<Utc>,
    /// End instant.
    pub end_utc: DateTime<Utc>,
    /// Whether the event repeats.
    pub recurring: bool,
    /// Names this occurrence of a repeating event (pass it as `occurrence`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub occurrence: Option<String>,
    /// Location.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// Status, when not confirmed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

/// Events found in a range.
#[derive(Clone, Debug, Serialize)]
pub struct EventListing {
    /// The first `limit` occurrences, by start.
    pub occurrences: Vec<OccurrenceInfo>,
    /// How many there are in all.
    pub total: usize,
    /// Calendars that could not be read, and why; their events are not listed.
    pub unavailable: Vec<UnavailableCalendar>,
    /// CalDAV calendars that could not sync: their events are listed as of their last
    /// sync.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub offline: Vec<OfflineCalendar>,
}

/// A CalDAV calendar read from its last sync because it could not sync now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OfflineCalendar {
    /// Its id.
    pub calendar: String,
    /// When it last synced.
    pub synced_at: Option<DateTime<Utc>>,
    /// Why it could not sync now.
    pub error: String,
}

/// A calendar a listing could not read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UnavailableCalendar {
    /// Its id.
    pub calendar: String,
    /// Whether its file or folder is there (`missing` when not).
    pub storage: StorageState,
    /// Why it could not be read.
    pub error: String,
}

/// All about one event.
#[derive(Clone, Debug, Serialize)]
pub struct EventDetails {
    /// Its id.
    pub id: String,
    /// Its calendar.
    pub calendar: String,
    /// Title.
    pub title: String,
    /// The title's taxonomy.
    pub taxonomy: Taxonomy,
    /// Whether it lasts whole days.
    pub all_day: bool,
    /// Start, in its own zone.
    pub start: String,
    /// End (last day, inclusive, for all-day events).
    pub end: String,
    /// Its zone.
    pub time_zone: String,
    /// Recurrence, described.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeats: Option<String>,
    /// The rules as written.
    pub rules: Vec<String>,
    /// Removed occurrences.
    pub exceptions: Vec<String>,
    /// Occurrences changed on their own.
    pub overridden: usize,
    /// Location.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `CATEGORIES`.
    pub categories: Vec<String>,
    /// Status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Where it is stored.
    pub source: String,
    /// The next occurrences from now.
    pub upcoming: Vec<OccurrenceInfo>,
}

fn format_local(instant: DateTime<Utc>, zone: Tz) -> String {
    instant
        .with_timezone(&zone)
        .format("%Y-%m-%dT%H:%M")
        .to_string()
}

/// The display form of an occurrence's start, end and handle.
pub(crate) fn occurrence_info(occurrence: &Occurrence<'_>, zone: Tz) -> OccurrenceInfo {
    let event = occurrence.event;
    let (start, end) = if event.is_all_day() {
        // Dates stay dates: an all-day event is on its day in every zone.
        let first = match occurrence.recurrence_id {
            Some(EventTime::Date(date)) if event.recurrence_id.is_none() => date,
            _ => event.start.date(),
        };
        let days = (event.end.date() - event.start.date()).num_days().max(1);
        (
            first.to_string(),
            (first + Duration::days(days - 1)).to_string(),
        )
    } else {
        (
            format_local(occurrence.start, zone),
            format_local(occurrence.end, zone),
        )
    };
    let handle = occurrence.recurrence_id.map(|rid| match rid {
        EventTime::Date(date) => date.to_string(),
        time => format_local(time.to_utc(zone), zone),
    });
    let taxonomy = Taxonomy::of(event);
    OccurrenceInfo {
        id: event.id().to_string(),
        calendar: event.calendar.clone(),
        title: event.title.clone(),
        category: taxonomy.category.map(|c| match taxonomy.sub_category {
            Some(sub) => format!("{c} - {sub}"),
            None => c,
        }),
        all_day: event.is_all_day(),
        start,
        end,
        start_utc: occurrence.start,
        end_utc: occurrence.end,
        recurring: event.is_recurring() || event.recurrence_id.is_some(),
        occurrence: handle,
        location: event.location.clone(),
        status: event.status.clone().filter(|s| s != "CONFIRMED"),
    }
}

fn describe_time(time: &EventTime, all_day_end: bool) -> String {
    match time {
        EventTime::Date(date) if all_day_end => (*date - Duration::days(1)).to_string(),
        EventTime::Date(date) => date.to_string(),
        EventTime::DateTime { local, .. } => local.format("%Y-%m-%dT%H:%M").to_string(),
    }
}

fn source_of(loaded: &LoadedCalendar, event: &Event) -> String {
    match &event.source {
        EventSource::Ics { line } => format!("{}:{line}", loaded.info.location),
        EventSource::Note { path } => std::path::Path::new(&loaded.info.location)
            .join(path)
            .display()
            .to_string(),
    }
}

impl Calendars {
    /// Every calendar, loaded, with its counts, warnings and categories.
    pub async fn summaries(&self) -> Vec<CalendarSummary> {
        let mut summaries = Vec::new();
        for info in self.calendars() {
            let mut summary = CalendarSummary {
                info: info.clone(),
                events: None,
                recurring: None,
                warnings: Vec::new(),
                storage: info.storage_state(),
                error: None,
                categories: Vec::new(),
                synced_at: None,
            };
            if summary.storage == StorageState::Missing {
                summary.info.writable = false;
                summary.info.read_only_reason = Some("missing".to_owned());
            }
            match self.load(&info.id).await {
                Ok(loaded) => {
                    let masters = loaded
                        .index
                        .events()
                        .iter()
                        .filter(|e| e.recurrence_id.is_none());
                    let (mut count, mut recurring) = (0, 0);
                    for event in masters {
                        count += 1;
                        recurring += usize::from(event.is_recurring());
                    }
                    summary.events = Some(count);
                    summary.recurring = Some(recurring);
                    summary.warnings = loaded.warnings.clone();
                    summary.synced_at = loaded.synced_at;
                    summary.categories = count_categories(
                        loaded
                            .index
                            .events()
                            .iter()
                            .filter(|e| e.recurrence_id.is_none())
                            .map(|e| e.title.as_str()),
                    );
                    if let crate::store::Content::Ics {
                        blocker: Some(reason),
                        ..
                    } = &loaded.content
                    {
                        summary.info.writable = false;
                        summary.info.read_only_reason = Some(reason.clone());
                    }
                }
                Err(error) => summary.error = Some(error.to_string()),
            }
            summaries.push(summary);
        }
        summaries
    }

    /// Loads the calendars a query covers; those that fail are reported, not fatal.
    async fn load_for(
        &self,
        calendar: Option<&str>,
    ) -> Result<(Vec<Arc<LoadedCalendar>>, Vec<UnavailableCalendar>)> {
        let ids: Vec<String> = match calendar {
            Some(id) => vec![self.calendar(id)?.id.clone()],
            None => self.calendars().iter().map(|c| c.id.clone()).collect(),
        };
        let (mut loaded, mut unavailable) = (Vec::new(), Vec::new());
        for id in ids {
            match self.load(&id).await {
                Ok(calendar) => loaded.push(calendar),
                Err(error) if calendar.is_some() => return Err(error),
                Err(error) => unavailable.push(UnavailableCalendar {
                    storage: self.calendar(&id)?.storage_state(),
                    calendar: id,
                    error: error.to_string(),
                }),
            }
        }
        Ok((loaded, unavailable))
    }

    /// The occurrences in a range that match the query, first `limit` by start.
    pub async fn events(&self, query: &EventQuery) -> Result<EventListing> {
        if query.to <= query.from {
            return Err(CalendarError::InvalidInput(
                "the range is empty: `to` must be after `from`".to_owned(),
            ));
        }
        let (loaded, unavailable) = self.load_for(query.calendar.as_deref()).await?;
        let text = query
            .text
            .as_deref()
            .map(|t| t.trim().to_lowercase())
            .filter(|t| !t.is_empty());
        let category = query
            .category
            .as_deref()
            .map(|c| c.trim().to_lowercase())
            .filter(|c| !c.is_empty());
        let keep = |event: &Event| {
            text.as_deref().is_none_or(|t| event.matches_text(t))
                && category
                    .as_deref()
                    .is_none_or(|c| Taxonomy::event_in(event, c))
        };
        let limit = query.limit.max(1);
        let mut found: Vec<Occurrence<'_>> = Vec::new();
        let mut total = 0usize;
        for calendar in &loaded {
            calendar
                .index
                .visit(query.from, query.to, &keep, &mut |occurrence| {
                    total += 1;
                    found.push(occurrence);
                    if found.len() > limit * 2 + 1024 {
                        sort_occurrences(&mut found);
                        found.truncate(limit);
                    }
                });
        }
        sort_occurrences(&mut found);
        found.truncate(limit);
        let zone = self.time_zone();
        let offline = loaded
            .iter()
            .filter_map(|calendar| {
                calendar.offline.as_ref().map(|error| OfflineCalendar {
                    calendar: calendar.info.id.clone(),
                    synced_at: calendar.synced_at,
                    error: error.clone(),
                })
            })
            .collect();
        Ok(EventListing {
            occurrences: found.iter().map(|o| occurrence_info(o, zone)).collect(),
            total,
            unavailable,
            offline,
        })
    }

    /// One event (series or single event).
    pub async fn event(&self, id: &EventId) -> Result<EventDetails> {
        let loaded = self.load(&id.calendar).await?;
        let event = loaded
            .index
            .get(&id.calendar, &id.uid)
            .ok_or_else(|| CalendarError::UnknownEvent { id: id.to_string() })?;
        let zone = self.time_zone();
        let now = Utc::now();
        // The next five, looking a day ahead first: a rule repeating every second has
        // its five within the day, and its ten years are never expanded.
        let mut upcoming = Vec::new();
        for days in [1, 31, 366, 3660] {
            upcoming =
                loaded
                    .index
                    .occurrences_of(&id.calendar, &id.uid, now, now + Duration::days(days));
            if upcoming.len() >= 5 {
                break;
            }
        }
        upcoming.truncate(5);
        let recurrence = event.recurrence.as_ref();
        Ok(EventDetails {
            id: id.to_string(),
            calendar: id.calendar.clone(),
            title: event.title.clone(),
            taxonomy: Taxonomy::of(event),
            all_day: event.is_all_day(),
            start: describe_time(&event.start, false),
            end: describe_time(&event.end, true),
            time_zone: match event.start.zone() {
                Zone::Floating => format!("floating (shown in {})", loaded.info.zone.name()),
                zone => zone.name(),
            },
            repeats: recurrence.map(|r| {
                let described: Vec<String> = r.rules.iter().map(|rule| rule.describe()).collect();
                let mut text = if described.is_empty() {
                    "on extra dates".to_owned()
                } else {
                    described.join("; ")
                };
                if !r.rdates.is_empty() {
                    text.push_str(&format!(", plus {} extra dates", r.rdates.len()));
                }
                text
            }),
            rules: recurrence
                .map(|r| r.rules.iter().map(ToString::to_string).collect())
                .unwrap_or_default(),
            exceptions: recurrence
                .map(|r| r.exdates.iter().map(|e| e.to_string()).collect())
                .unwrap_or_default(),
            overridden: loaded.index.overrides(&id.calendar, &id.uid).count(),
            location: event.location.clone(),
            description: event.description.clone(),
            categories: event.categories.clone(),
            status: event.status.clone(),
            source: source_of(&loaded, event),
            upcoming: upcoming.iter().map(|o| occurrence_info(o, zone)).collect(),
        })
    }

    /// Category counts over one calendar or all.
    pub async fn categories(&self, calendar: Option<&str>) -> Result<Vec<CategoryCount>> {
        let (loaded, _) = self.load_for(calendar).await?;
        Ok(count_categories(
            loaded
                .iter()
                .flat_map(|c| c.index.events().iter())
                .filter(|e| e.recurrence_id.is_none())
                .map(|e| e.title.as_str()),
        ))
    }
}
