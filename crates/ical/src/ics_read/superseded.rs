//! Overrides a newer revision of their series took away. A client that deletes one
//! occurrence of a series adds an EXDATE (or shortens UNTIL/COUNT) and raises the
//! series' `SEQUENCE`; one that does not also delete the occurrence's override leaves
//! it behind, older than the series. Such an override is dropped, as
//! recurring-ical-events drops it, so an occurrence the user deleted does not come back.
//! An override at least as new as its series (its `SEQUENCE` equal or higher) was
//! written knowing the series as it is, and stays.

use chrono::NaiveTime;
use chrono_tz::Tz;

use super::Copies;
use crate::error::LoadWarning;
use crate::event::Event;
use crate::series::{excluded, rules_produce, series_local};
use crate::time::{EventTime, Zone};

/// The zone for comparing times of a series and its overrides. The reader does not
/// know the calendar's zone for floating times, so a floating time is compared only
/// with another floating time (see [`occurrence_local`]); any zone serves for the rest.
const COMPARE: Tz = chrono_tz::UTC;

/// Drops from `events` the overrides whose series is a newer revision (a higher
/// `SEQUENCE`) that no longer has their occurrence, warning about each.
pub(super) fn drop_superseded(
    copies: &Copies,
    events: &mut Vec<Event>,
    at: &dyn Fn(usize) -> String,
    warnings: &mut Vec<LoadWarning>,
) {
    let mut dropped: Vec<(usize, usize, String)> = Vec::new();
    for ((uid, rid), (position, revision, line)) in &copies.0 {
        if rid.is_none() {
            continue;
        }
        let Some((series_position, series_revision, _)) = copies.0.get(&(uid.clone(), None)) else {
            continue;
        };
        if series_revision.sequence <= revision.sequence {
            continue;
        }
        let (series, changed) = (&events[*series_position], &events[*position]);
        let Some(rid) = changed.recurrence_id else {
            continue;
        };
        if has_occurrence(series, &rid) == Some(false) {
            dropped.push((
                *position,
                *line,
                format!(
                    "the changed occurrence {} of `{uid}` is left out: the series was changed after it (SEQUENCE {} is higher than its {}) and no longer has that occurrence",
                    rid.ical_value(),
                    series_revision.sequence,
                    revision.sequence
                ),
            ));
        }
    }
    dropped.sort_unstable_by_key(|(position, ..)| *position);
    let mut place = 0;
    events.retain(|_| {
        let keep = dropped
            .binary_search_by_key(&place, |(position, ..)| *position)
            .is_err();
        place += 1;
        keep
    });
    for (_, line, message) in dropped {
        warnings.push(LoadWarning::new(at(line), message));
    }
}

/// Whether `series` has an occurrence named `rid`: one its start, RDATEs or rules
/// give and no EXDATE removes. `None` when it cannot be told without the calendar's
/// zone (a floating time against a zoned one).
fn has_occurrence(series: &Event, rid: &EventTime) -> Option<bool> {
    let Some(recurrence) = &series.recurrence else {
        return Some(false);
    };
    let local = occurrence_local(series, rid)?;
    if excluded(series, local, COMPARE) {
        return Some(false);
    }
    let same = |time: &EventTime| {
        if series.is_all_day() {
            time.date() == local.date()
        } else {
            !time.is_date() && series_local(series, time, COMPARE) == local
        }
    };
    Some(
        (recurrence.start_is_occurrence && same(&series.start))
            || recurrence.rdates.iter().any(same)
            || rules_produce(series, local, COMPARE),
    )
}

/// `rid` in the wall clock of the series' start (midnight of the date for an all-day
/// series); `None` when one is floating and the other is not, or a timed series names
/// an occurrence by a date.
fn occurrence_local(series: &Event, rid: &EventTime) -> Option<chrono::NaiveDateTime> {
    if series.is_all_day() {
        return Some(rid.date().and_time(NaiveTime::MIN));
    }
    if rid.is_date() {
        return None;
    }
    let floating = |zone: Zone| zone == Zone::Floating;
    if floating(series.start.zone()) != floating(rid.zone()) {
        return None;
    }
    Some(series_local(series, rid, COMPARE))
}
