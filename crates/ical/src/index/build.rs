//! Building a series for the index: its rules compiled (a `COUNT` rule given the end
//! it reaches, found within the index's budget), its exceptions and overrides as sorted
//! keys, and how far its occurrences reach.

use chrono::{Duration, NaiveDate, NaiveDateTime, NaiveTime};
use chrono_tz::Tz;

use super::{Future, LimitedSeries, RULE_BUDGET, Series, day_number};
use crate::event::{Event, OverrideRange, Recurrence};
use crate::expand::{Ended, Expander, Visit};
use crate::rrule::RecurrenceRule;
use crate::series::{series_local, until_local};
use crate::time::{EventTime, Zone};

/// The identity of an occurrence of `series` named by `time` (an EXDATE or a
/// RECURRENCE-ID): a day number for all-day series, a UTC second otherwise.
fn occurrence_key(time: &EventTime, all_day: bool, floating: Tz) -> i64 {
    if all_day {
        day_number(time.date())
    } else {
        time.to_utc(floating).timestamp()
    }
}

/// A series ready for range queries: its rules compiled (a `COUNT` rule ended by an
/// UNTIL found once, within the index's budget), its exceptions and overrides as sorted
/// keys, and its bounds.
pub(super) fn build_series(
    position: u32,
    event: &Event,
    overrides: &[&Event],
    floating: Tz,
    budget: &mut u64,
    limited: &mut Vec<LimitedSeries>,
) -> Series {
    let start = SeriesStart {
        event,
        floating,
        all_day: event.is_all_day(),
        zone: event.start.zone(),
        dtstart: event.start.local(),
    };
    let (length_seconds, length_days) = if start.all_day {
        (0, event.duration(floating).num_days().max(1))
    } else {
        (event.duration(floating).num_seconds().max(0), 0)
    };
    let mut series = Series {
        event: position,
        zone: start.zone,
        all_day: start.all_day,
        dtstart: start.dtstart,
        include_dtstart: true,
        rules: Vec::new(),
        rdates: Vec::new(),
        excluded: Vec::new(),
        excluded_dates: Vec::new(),
        overridden: Vec::new(),
        length_seconds,
        length_days,
        periods: Vec::new(),
        futures: Vec::new(),
        reach_before: Duration::zero(),
        reach_after: Duration::zero(),
        first_start: 0,
        last_end: 0,
    };
    if let Some(recurrence) = &event.recurrence {
        start.add_recurrence(&mut series, recurrence);
        for rule in &recurrence.rules {
            let compiled = start.compile(rule, series.include_dtstart, budget, limited);
            series.rules.push(compiled);
        }
    }
    start.add_overrides(&mut series, overrides);
    for keys in [
        &mut series.excluded,
        &mut series.excluded_dates,
        &mut series.overridden,
    ] {
        keys.sort_unstable();
        keys.dedup();
    }
    start.bound(&mut series);
    series
}

/// The series being built: its event and how its times are placed.
struct SeriesStart<'e> {
    event: &'e Event,
    floating: Tz,
    all_day: bool,
    zone: Zone,
    dtstart: NaiveDateTime,
}

impl SeriesStart<'_> {
    fn local_of(&self, time: &EventTime) -> NaiveDateTime {
        series_local(self.event, time, self.floating)
    }

    fn to_instant(&self, local: NaiveDateTime) -> i64 {
        let zone = if self.all_day {
            Zone::Floating
        } else {
            self.zone
        };
        zone.to_utc(local, self.floating).timestamp()
    }

    /// The series' EXDATEs, RDATEs and RDATE periods.
    fn add_recurrence(&self, series: &mut Series, recurrence: &Recurrence) {
        series.include_dtstart = recurrence.start_is_occurrence;
        for exdate in &recurrence.exdates {
            if !self.all_day && exdate.is_date() {
                series.excluded_dates.push(day_number(exdate.date()));
            } else {
                series
                    .excluded
                    .push(occurrence_key(exdate, self.all_day, self.floating));
            }
        }
        series.rdates = recurrence.rdates.iter().map(|t| self.local_of(t)).collect();
        series.rdates.sort_unstable();
        if !self.all_day {
            let floating = self.floating;
            series.periods = recurrence
                .periods
                .iter()
                .map(|p| {
                    let length = (p.end.to_utc(floating) - p.start.to_utc(floating)).num_seconds();
                    (self.local_of(&p.start), length.max(0))
                })
                .collect();
            series.periods.sort_unstable();
            series.periods.dedup_by_key(|p| p.0);
        }
    }

    /// `rule` compiled: a `COUNT` rule becomes one ending at its last occurrence (found
    /// by arithmetic, or by expanding within the budget — a rule cut off there is
    /// flagged in `limited`).
    fn compile(
        &self,
        rule: &RecurrenceRule,
        include_dtstart: bool,
        budget: &mut u64,
        limited: &mut Vec<LimitedSeries>,
    ) -> Expander {
        let dtstart = self.dtstart;
        let until = until_local(rule, self.zone, self.all_day, self.floating);
        let expander = Expander::new(rule, dtstart, until, self.all_day);
        if !expander.has_count() {
            return expander;
        }
        let last = match expander.count_end() {
            Some(last) => last.max(dtstart),
            None => {
                let mut last = dtstart;
                let far = NaiveDate::MAX.and_time(NaiveTime::MIN);
                let mut allowed = RULE_BUDGET.min(*budget);
                let before = allowed;
                let ended =
                    expander.expand_within(include_dtstart, dtstart, far, &mut allowed, &mut |t| {
                        last = t;
                        Visit::Continue
                    });
                *budget -= before - allowed;
                if ended == Ended::OverBudget {
                    limited.push(LimitedSeries {
                        event: self.event.id(),
                        source: self.event.source.clone(),
                        rule: rule.to_string(),
                        shown_until: last,
                    });
                }
                last
            }
        };
        if last == NaiveDateTime::MAX {
            // It ends beyond any date: as good as no end.
            expander.without_count()
        } else {
            expander.with_until_instead_of_count(last)
        }
    }

    /// The occurrences `overrides` replace, and the `THISANDFUTURE` ones' shifts.
    fn add_overrides(&self, series: &mut Series, overrides: &[&Event]) {
        let floating = self.floating;
        for changed in overrides {
            let Some(recurrence_id) = changed.recurrence_id else {
                continue;
            };
            series
                .overridden
                .push(occurrence_key(&recurrence_id, self.all_day, floating));
            if changed.range != OverrideRange::ThisAndFuture {
                continue;
            }
            let (shift, length_seconds, length_days) = if self.all_day {
                (
                    Duration::days((changed.start.date() - recurrence_id.date()).num_days()),
                    0,
                    changed.duration(floating).num_days().max(1),
                )
            } else {
                (
                    self.local_of(&changed.start) - self.local_of(&recurrence_id),
                    changed.duration(floating).num_seconds().max(0),
                    0,
                )
            };
            series.futures.push(Future {
                after: self.local_of(&recurrence_id),
                shift,
                length_seconds,
                length_days,
            });
        }
        series.futures.sort_by_key(|f| f.after);
    }

    /// The series' reach (how far from the window an occurrence may start and still
    /// show in it) and its first start and last end as instants (unbounded for a rule
    /// without an end).
    fn bound(&self, series: &mut Series) {
        let longest = series
            .periods
            .iter()
            .map(|p| p.1)
            .chain(
                series
                    .futures
                    .iter()
                    .map(|f| f.length_seconds + f.length_days * 86_400),
            )
            .fold(
                series.length_seconds + series.length_days * 86_400,
                i64::max,
            );
        let shifts = series.futures.iter().map(|f| f.shift);
        let latest_shift = shifts.clone().fold(Duration::zero(), Duration::max);
        let earliest_shift = shifts.fold(Duration::zero(), Duration::min);
        series.reach_before = Duration::seconds(longest) + latest_shift;
        series.reach_after = -earliest_shift;
        let dtstart = self.dtstart;
        let first_local = series.rdates.first().map_or(dtstart, |r| (*r).min(dtstart));
        series.first_start = self.to_instant(
            first_local
                .checked_add_signed(earliest_shift)
                .unwrap_or(first_local),
        );
        let length = series.reach_before.num_seconds() + 86_400;
        let bounded: Option<Vec<NaiveDateTime>> =
            series.rules.iter().map(Expander::until).collect();
        series.last_end = match bounded {
            Some(ends) => {
                let last = ends
                    .into_iter()
                    .chain(series.rdates.last().copied())
                    .chain(std::iter::once(dtstart))
                    .max()
                    .unwrap_or(dtstart);
                self.to_instant(last).saturating_add(length)
            }
            None => i64::MAX,
        };
    }
}
