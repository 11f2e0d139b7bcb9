//! Converting series between Full Calendar notes and iCalendar without gaining or
//! losing occurrences.
//!
//! The two disagree about the start. In iCalendar DTSTART is always an occurrence, even
//! when the rule does not produce it (RFC 5545 §3.8.5.3); Hearth, like dateutil and the
//! apps built on it, does not count such a start towards `COUNT`.
//! In a note the start (`startRecur`, `startDate`) only anchors the rule: Full Calendar
//! shows the days the rule produces from it, and the start itself only when it is one
//! of them. So:
//! - a note exported to iCalendar gets as DTSTART the first start its rule produces
//!   (the length kept). That start is the rule's own first occurrence, so `COUNT` and
//!   every rule default taken from DTSTART (weekday, day of month, time of day, the
//!   phase of `INTERVAL`) produce exactly the same starts. A rule that produces nothing
//!   keeps the note's start, with an EXDATE on it, so it still shows nothing.
//! - an iCalendar series imported into notes whose DTSTART its rule does not produce
//!   keeps that occurrence as a separate single-event note beside the series note (a
//!   note cannot hold an extra date), the rule and its `COUNT` unchanged; its RDATEs the
//!   rule does not produce become single-event notes the same way. The import report
//!   says so. This keeps every occurrence exactly; a later change to the series does
//!   not reach those notes, which the report's message makes visible.

use chrono::{Duration, NaiveDate, NaiveDateTime};
use chrono_tz::Tz;
use hearth_ical::{
    Event, EventSpec, EventTime, Recurrence, RecurrenceSpec, SpecTime,
    series::{
        excluded, first_rule_start, rule_starts_on, rules_produce, series_local, series_time,
    },
};

use crate::occurrence::{FoundOccurrence, base_for_occurrence};
use crate::spec::validate_rule;

/// The spec of `event` as it is (its first rule, if any), and what of it is lost.
pub(crate) fn spec_of(event: &Event, uid: String) -> (EventSpec, Vec<String>) {
    let mut lost = Vec::new();
    let recurrence = match &event.recurrence {
        None => RecurrenceSpec::None,
        Some(recurrence) => {
            if recurrence.rules.len() > 1 {
                lost.push(format!(
                    "'{}': only its first rule is kept (a note holds one rule)",
                    event.title
                ));
            }
            match recurrence.rules.first() {
                Some(rule) => RecurrenceSpec::Rule {
                    rule: rule.to_string(),
                },
                None => RecurrenceSpec::None,
            }
        }
    };
    let spec = EventSpec {
        uid,
        title: event.title.clone(),
        start: SpecTime::from_event_time(event.start),
        end: SpecTime::from_event_time(event.end),
        location: event.location.clone(),
        description: event.description.clone(),
        recurrence,
    };
    (spec, lost)
}

/// `series` moved to start at `local` (its start's wall clock), its length kept.
fn moved(series: &Event, local: NaiveDateTime) -> Event {
    let shift = local - series.start.local();
    let mut moved = series.clone();
    moved.start = series_time(series, local);
    moved.end = match series.end {
        EventTime::Date(date) => EventTime::Date(
            date.checked_add_signed(Duration::days(shift.num_days()))
                .unwrap_or(date),
        ),
        EventTime::DateTime { local, zone } => EventTime::DateTime {
            local: local.checked_add_signed(shift).unwrap_or(local),
            zone,
        },
    };
    moved
}

/// A note's event as an iCalendar event: the spec to write and the occurrences to
/// exclude (EXDATEs). `floating` places floating times and dates.
pub(crate) fn note_as_ics(event: &Event, floating: Tz) -> (EventSpec, Vec<EventTime>) {
    let (mut spec, _) = spec_of(event, event.uid.clone());
    let Some(recurrence) = &event.recurrence else {
        return (spec, Vec::new());
    };
    let mut exdates = Vec::new();
    let series = if recurrence.start_is_occurrence {
        event.clone()
    } else {
        match first_rule_start(event, floating) {
            Some(first) => moved(event, first),
            None => {
                // The rule produces nothing: DTSTART would be the only occurrence.
                exdates.push(event.start);
                event.clone()
            }
        }
    };
    spec.start = SpecTime::from_event_time(series.start);
    spec.end = SpecTime::from_event_time(series.end);
    if let Some(rule) = recurrence.rules.first() {
        // UNTIL in the form RFC 5545 requires for this DTSTART (UTC for a zoned one).
        let text = rule.to_string();
        let rule = validate_rule(&text, &spec.start, floating).unwrap_or(text);
        spec.recurrence = RecurrenceSpec::Rule { rule };
    }
    for exdate in &recurrence.exdates {
        match exdate {
            // A skipped date skips every start the rule produces that day.
            EventTime::Date(date) => {
                let starts = rule_starts_on(&series, *date, floating);
                if series.is_all_day() {
                    if !starts.is_empty() {
                        exdates.push(*exdate);
                    }
                } else {
                    exdates.extend(starts.into_iter().map(|s| series_time(&series, s)));
                }
            }
            other => exdates.push(*other),
        }
    }
    (spec, exdates)
}

/// An iCalendar event as notes.
#[derive(Debug, Default)]
pub(crate) struct NoteForm {
    /// The series (or single event) note and the dates it skips; `None` when nothing
    /// is left of it but its single occurrences.
    pub main: Option<(EventSpec, Vec<NaiveDate>)>,
    /// Occurrences the main note cannot hold, each a single-event note.
    pub singles: Vec<EventSpec>,
    /// How the event was stored differently, its occurrences kept.
    pub adapted: Vec<String>,
    /// What of the event could not be kept.
    pub lost: Vec<String>,
}

/// The notes that hold the occurrences of an iCalendar `event` (not an override).
pub(crate) fn ics_as_notes(event: &Event, floating: Tz) -> NoteForm {
    let (mut spec, lost) = spec_of(event, String::new());
    let mut form = NoteForm {
        lost,
        ..NoteForm::default()
    };
    let Some(recurrence) = &event.recurrence else {
        form.main = Some((spec, Vec::new()));
        return form;
    };
    let lone = off_rule_occurrences(event, recurrence, floating);
    let skip = match recurrence.rules.first() {
        Some(rule) => {
            spec.recurrence = RecurrenceSpec::Rule {
                rule: rule.to_string(),
            };
            recurrence.exdates.iter().map(EventTime::date).collect()
        }
        None => Vec::new(),
    };
    form.main = Some((spec, skip));
    if !lone.is_empty() {
        let times: Vec<String> = lone
            .iter()
            .map(|l| series_time(event, *l).to_string())
            .collect();
        form.adapted.push(format!(
            "'{}': {} ({}) {} not produced by its rule, which is all a note can repeat; kept as separate single-event notes",
            event.title,
            if lone.len() == 1 { "the occurrence" } else { "the occurrences" },
            times.join(", "),
            if lone.len() == 1 { "is" } else { "are" },
        ));
    }
    for local in lone {
        let found = FoundOccurrence {
            recurrence_id: series_time(event, local),
            override_event: None,
        };
        let single = base_for_occurrence(event, &found, floating);
        form.singles.push(spec_of(&single, String::new()).0);
    }
    form
}

/// The occurrences of a series its note cannot repeat, in order (series wall clock):
/// with a rule, the DTSTART and RDATEs the first rule does not produce; with RDATEs
/// only, the RDATEs (the note is the DTSTART occurrence). Excluded ones are left out.
fn off_rule_occurrences(
    event: &Event,
    recurrence: &Recurrence,
    floating: Tz,
) -> Vec<NaiveDateTime> {
    let start = event.start.local();
    let mut lone: Vec<NaiveDateTime> = Vec::new();
    match recurrence.rules.first() {
        Some(rule) => {
            // The series as its note will read: its first rule, from the same start,
            // the start an occurrence only when the rule produces it.
            let mut note = event.clone();
            if let Some(note_recurrence) = &mut note.recurrence {
                note_recurrence.rules = vec![rule.clone()];
                note_recurrence.rdates.clear();
                note_recurrence.start_is_occurrence = false;
            }
            // Hearth does not count a DTSTART off the rule towards COUNT (see the
            // `expand` module), so the note's rule keeps its COUNT.
            if recurrence.start_is_occurrence
                && !rules_produce(&note, start, floating)
                && !excluded(event, start, floating)
            {
                lone.push(start);
            }
            for rdate in &recurrence.rdates {
                let local = series_local(event, rdate, floating);
                if !rules_produce(&note, local, floating) && !excluded(event, local, floating) {
                    lone.push(local);
                }
            }
        }
        None => {
            for rdate in &recurrence.rdates {
                let local = series_local(event, rdate, floating);
                if local != start && !excluded(event, local, floating) {
                    lone.push(local);
                }
            }
        }
    }
    lone.sort_unstable();
    lone.dedup();
    lone
}
