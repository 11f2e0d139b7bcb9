//! What a series' rules produce, asked outside the index: its first start, its starts on
//! one day, whether a time is one of them. Converting between iCalendar, where DTSTART
//! is always an occurrence, and Full Calendar notes, where the start is one only when the
//! rule produces it, needs exactly these answers.

use chrono::{Duration, NaiveDate, NaiveDateTime, NaiveTime};
use chrono_tz::Tz;

use crate::event::Event;
use crate::expand::{Expander, Visit};
use crate::rrule::{RecurrenceRule, Until};
use crate::time::{EventTime, Zone};

/// A rule's UNTIL in the wall clock of a series starting in `zone` (midnight-based for
/// all-day series), as the index bounds the expansion.
pub fn until_local(
    rule: &RecurrenceRule,
    zone: Zone,
    all_day: bool,
    floating: Tz,
) -> Option<NaiveDateTime> {
    rule.until().map(|until| match until {
        Until::Date(date) if all_day => date.and_time(NaiveTime::MIN),
        Until::Date(date) => date
            .and_hms_opt(23, 59, 59)
            .unwrap_or(date.and_time(NaiveTime::MIN)),
        Until::Floating(time) => time,
        Until::Utc(time) if all_day => time,
        Until::Utc(time) => zone.to_local(time.and_utc(), floating),
    })
}

/// A time of `series` in the wall clock of its start (midnight of the date for all-day
/// series), as the index places RDATEs and EXDATEs.
pub fn series_local(series: &Event, time: &EventTime, floating: Tz) -> NaiveDateTime {
    let zone = series.start.zone();
    if series.is_all_day() {
        time.date().and_time(NaiveTime::MIN)
    } else if time.zone() == zone {
        time.local()
    } else {
        zone.to_local(time.to_utc(floating), floating)
    }
}

/// The time of `series`' kind (a date, or a date-time in its start's zone) at `local`.
pub fn series_time(series: &Event, local: NaiveDateTime) -> EventTime {
    match series.start {
        EventTime::Date(_) => EventTime::Date(local.date()),
        EventTime::DateTime { zone, .. } => EventTime::DateTime { local, zone },
    }
}

/// The starts the rules of `series` produce in `[from, to)` (its start's wall clock), in
/// order, at most `limit` of them. Its start counts only when a rule produces it (whatever
/// `start_is_occurrence` says); RDATEs and EXDATEs are not applied.
pub fn rule_starts(
    series: &Event,
    floating: Tz,
    from: NaiveDateTime,
    to: NaiveDateTime,
    limit: usize,
) -> Vec<NaiveDateTime> {
    let Some(recurrence) = &series.recurrence else {
        return Vec::new();
    };
    let all_day = series.is_all_day();
    let zone = series.start.zone();
    let dtstart = series.start.local();
    let mut starts = Vec::new();
    for rule in &recurrence.rules {
        let until = until_local(rule, zone, all_day, floating);
        let expander = Expander::new(rule, dtstart, until, all_day);
        let mut found = 0;
        expander.expand(false, from, to, &mut |start| {
            starts.push(start);
            found += 1;
            if found >= limit {
                Visit::Stop
            } else {
                Visit::Continue
            }
        });
    }
    starts.sort_unstable();
    starts.dedup();
    starts.truncate(limit);
    starts
}

/// The first start the rules of `series` produce (see [`rule_starts`]), if any.
pub fn first_rule_start(series: &Event, floating: Tz) -> Option<NaiveDateTime> {
    let far = NaiveDate::MAX.and_time(NaiveTime::MIN);
    let from = series.start.local();
    rule_starts(series, floating, from, far, 1).first().copied()
}

/// Whether a rule of `series` produces a start at `local` (its start's wall clock).
pub fn rules_produce(series: &Event, local: NaiveDateTime, floating: Tz) -> bool {
    !rule_starts(series, floating, local, local + Duration::seconds(1), 1).is_empty()
}

/// The starts the rules of `series` produce on `date` (its start's wall clock).
pub fn rule_starts_on(series: &Event, date: NaiveDate, floating: Tz) -> Vec<NaiveDateTime> {
    let from = date.and_time(NaiveTime::MIN);
    rule_starts(series, floating, from, from + Duration::days(1), usize::MAX)
}

/// Whether an EXDATE of `series` removes its occurrence starting at `local` (its
/// start's wall clock): the same instant, or — for a timed series — a date-only EXDATE
/// on that day, as the index reads them.
pub fn excluded(series: &Event, local: NaiveDateTime, floating: Tz) -> bool {
    let Some(recurrence) = &series.recurrence else {
        return false;
    };
    let all_day = series.is_all_day();
    recurrence.exdates.iter().any(|exdate| {
        if all_day || exdate.is_date() {
            exdate.date() == local.date()
        } else {
            series_local(series, exdate, floating) == local
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{EventSource, Recurrence};
    use pretty_assertions::assert_eq;

    fn at(text: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M").unwrap()
    }

    fn series(start: &str, rule: &str, start_is_occurrence: bool) -> Event {
        let start = at(start);
        Event {
            calendar: "home".into(),
            uid: "1".into(),
            recurrence_id: None,
            range: crate::event::OverrideRange::ThisOccurrence,
            title: "Gym".into(),
            description: None,
            location: None,
            categories: Vec::new(),
            status: None,
            start: EventTime::DateTime {
                local: start,
                zone: Zone::Floating,
            },
            end: EventTime::DateTime {
                local: start + Duration::hours(1),
                zone: Zone::Floating,
            },
            recurrence: Some(Recurrence {
                rules: vec![rule.parse().unwrap()],
                rdates: Vec::new(),
                periods: Vec::new(),
                exdates: vec![EventTime::Date(
                    NaiveDate::from_ymd_opt(2026, 1, 12).unwrap(),
                )],
                start_is_occurrence,
            }),
            source: EventSource::Ics { line: 1 },
        }
    }

    #[test]
    fn finds_what_the_rules_produce_whatever_the_start_says() {
        // 2026-01-01 is a Thursday; the rule repeats on Mondays.
        let utc = chrono_tz::UTC;
        for start_is_occurrence in [true, false] {
            let gym = series(
                "2026-01-01T18:00",
                "FREQ=WEEKLY;BYDAY=MO",
                start_is_occurrence,
            );
            assert_eq!(first_rule_start(&gym, utc), Some(at("2026-01-05T18:00")));
            assert!(!rules_produce(&gym, at("2026-01-01T18:00"), utc));
            assert!(rules_produce(&gym, at("2026-01-05T18:00"), utc));
            assert_eq!(
                rule_starts_on(&gym, NaiveDate::from_ymd_opt(2026, 1, 12).unwrap(), utc),
                [at("2026-01-12T18:00")]
            );
            assert!(excluded(&gym, at("2026-01-12T18:00"), utc));
            assert!(!excluded(&gym, at("2026-01-05T18:00"), utc));
        }
        let never = series(
            "2026-01-01T18:00",
            "FREQ=WEEKLY;BYDAY=MO;UNTIL=20260104T000000",
            false,
        );
        assert_eq!(first_rule_start(&never, utc), None);
    }
}
