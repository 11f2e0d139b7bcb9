//! Finding one occurrence of a repeating event from what an agent or user wrote
//! (`2026-03-10`, `2026-03-10T09:00`), and the event that occurrence is on its own.

use chrono::{Duration, NaiveTime};
use chrono_tz::Tz;
use hearth_ical::{Event, EventTime, Occurrence, Zone};

use crate::error::{CalendarError, Result};
use crate::query::occurrence_info;
use crate::spec::{InputTime, parse_input_time};
use crate::store::LoadedCalendar;

/// An occurrence found.
#[derive(Clone, Debug)]
pub(crate) struct FoundOccurrence {
    /// Its original start, which names it.
    pub recurrence_id: EventTime,
    /// The override that already changes it, if any.
    pub override_event: Option<Event>,
}

/// The occurrence of `event` that `text` names, in the user's `zone`.
pub(crate) fn find_occurrence(
    loaded: &LoadedCalendar,
    event: &Event,
    text: &str,
    zone: Tz,
) -> Result<FoundOccurrence> {
    if !event.is_recurring() {
        return Err(CalendarError::InvalidInput(format!(
            "event `{}` does not repeat; leave out `occurrence` to change or delete the event itself",
            event.id()
        )));
    }
    let wanted = parse_input_time("occurrence", text)?;
    let date = match wanted {
        InputTime::Date(date) => date,
        InputTime::Local(local) => local.date(),
        InputTime::Instant(instant) => instant.with_timezone(&zone).date_naive(),
    };
    let around = Zone::Named(zone).to_utc(date.and_time(NaiveTime::MIN), zone);
    let nearby = loaded.index.occurrences_of(
        &event.calendar,
        &event.uid,
        around - Duration::days(3),
        around + Duration::days(4),
    );
    let instant = match wanted {
        InputTime::Date(_) => None,
        InputTime::Local(local) => Some(Zone::Named(zone).to_utc(local, zone)),
        InputTime::Instant(instant) => Some(instant.to_utc()),
    };
    let matches = |o: &&Occurrence<'_>| {
        let Some(rid) = o.recurrence_id else {
            return false;
        };
        match instant {
            Some(instant) => rid.to_utc(zone) == instant || o.start == instant,
            None => {
                rid.date() == date
                    || (!o.is_all_day() && o.start.with_timezone(&zone).date_naive() == date)
            }
        }
    };
    let found: Vec<&Occurrence<'_>> = nearby.iter().filter(matches).collect();
    match found.as_slice() {
        [one] => Ok(FoundOccurrence {
            recurrence_id: one.recurrence_id.unwrap_or(event.start),
            override_event: one.event.recurrence_id.is_some().then(|| one.event.clone()),
        }),
        [] => {
            let listed: Vec<String> = nearby
                .iter()
                .map(|o| occurrence_info(o, zone).occurrence.unwrap_or_default())
                .collect();
            let hint = if listed.is_empty() {
                "it has none within three days of it".to_owned()
            } else {
                format!("occurrences near it: {}", listed.join(", "))
            };
            Err(CalendarError::InvalidInput(format!(
                "event `{}` has no occurrence at `{text}`; {hint}",
                event.id()
            )))
        }
        several => {
            let listed: Vec<String> = several
                .iter()
                .map(|o| occurrence_info(o, zone).occurrence.unwrap_or_default())
                .collect();
            Err(CalendarError::InvalidInput(format!(
                "event `{}` occurs several times on {date}; give the time too: {}",
                event.id(),
                listed.join(", ")
            )))
        }
    }
}

/// The event the occurrence is: its override, or the series moved to the occurrence
/// and without recurrence.
pub(crate) fn base_for_occurrence(master: &Event, found: &FoundOccurrence, floating: Tz) -> Event {
    if let Some(existing) = &found.override_event {
        return existing.clone();
    }
    let mut base = master.clone();
    base.recurrence = None;
    base.recurrence_id = Some(found.recurrence_id);
    base.range = hearth_ical::OverrideRange::ThisOccurrence;
    base.start = found.recurrence_id;
    base.end = match found.recurrence_id {
        EventTime::Date(date) => EventTime::Date(date + master.duration(floating)),
        EventTime::DateTime { local, zone } => {
            let end = zone.to_local(
                zone.to_utc(local, floating) + master.duration(floating),
                floating,
            );
            EventTime::DateTime { local: end, zone }
        }
    };
    base
}
