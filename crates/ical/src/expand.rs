//! Recurrence expansion: the wall-clock start times a rule produces in a window.
//!
//! Works period by period (the year, month, week, day, hour… of `FREQ`), building each
//! period's candidate set from the `BY*` parts with RFC 5545's expand/limit semantics,
//! then applying `BYSETPOS`. Without `COUNT` it jumps straight to the period holding the
//! window's start, so a daily series begun in 1900 costs the same to query in 2300 as
//! next week. Defaults follow RFC 5545 (and dateutil): a `YEARLY` rule with no day parts
//! repeats on DTSTART's month and day, `MONTHLY` on its day of month, `WEEKLY` on its
//! weekday. `DTSTART` itself is the first occurrence when asked to
//! ([`Expander::expand`]'s `include_dtstart`), as calendar programs do; it counts
//! towards `COUNT` only when the rule produces it. Every expansion takes a bounded number
//! of steps, and a `COUNT` rule's end is found by arithmetic when the rule is simple
//! ([`Expander::count_end`]), so a runaway rule costs what its window holds.

use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, NaiveTime, Timelike, Weekday};

use crate::rrule::{Frequency, RecurrenceRule};

/// Upper bound of steps (a period, a day of a sub-daily rule, or a candidate time) one
/// expansion takes unless given its own budget: far more than any query window needs,
/// and a bound on a rule that almost never matches.
const STEP_BUDGET: u64 = 50_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OrdinalScope {
    Month,
    Year,
    Ignore,
}

/// A rule prepared for expansion from one DTSTART.
#[derive(Clone, Debug)]
pub struct Expander {
    freq: Frequency,
    interval: i64,
    count: Option<u32>,
    until: Option<NaiveDateTime>,
    dtstart: NaiveDateTime,
    months: u16,
    month_days: Vec<i8>,
    year_days: Vec<i16>,
    week_nos: Vec<i8>,
    weekdays: u8,
    ordinals: Vec<(i16, Weekday)>,
    scope: OrdinalScope,
    hours: Vec<u8>,
    minutes: Vec<u8>,
    seconds: Vec<u8>,
    /// Times of day for daily-or-longer rules, ascending.
    times: Vec<NaiveTime>,
    set_pos: Vec<i16>,
    wkst: Weekday,
    /// Whether the rule has no `BY*` part: every period holds exactly one occurrence.
    plain: bool,
}

/// What an expansion visit decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visit {
    Continue,
    Stop,
}

/// How an expansion ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The rule or the window ran out.
    Complete,
    /// The visitor stopped it.
    Stopped,
    /// It used up its budget of steps without finishing (a rule that almost never
    /// matches, or a runaway `COUNT`).
    OverBudget,
}

fn sorted(mut values: Vec<u8>) -> Vec<u8> {
    values.sort_unstable();
    values.dedup();
    values
}

fn bit(weekday: Weekday) -> u8 {
    1 << weekday.num_days_from_monday()
}

/// What `BYDAY` with an ordinal (`-1FR`) counts within.
fn ordinal_scope(rule: &RecurrenceRule) -> OrdinalScope {
    match rule.freq {
        Frequency::Monthly => OrdinalScope::Month,
        Frequency::Yearly if !rule.by_week_no.is_empty() => OrdinalScope::Ignore,
        Frequency::Yearly if !rule.by_month.is_empty() => OrdinalScope::Month,
        Frequency::Yearly => OrdinalScope::Year,
        _ => OrdinalScope::Ignore,
    }
}

/// Whether the rule has no `BY*` part.
fn is_plain(rule: &RecurrenceRule) -> bool {
    rule.by_second.is_empty()
        && rule.by_minute.is_empty()
        && rule.by_hour.is_empty()
        && rule.by_day.is_empty()
        && rule.by_month_day.is_empty()
        && rule.by_year_day.is_empty()
        && rule.by_week_no.is_empty()
        && rule.by_month.is_empty()
        && rule.by_set_pos.is_empty()
}

/// The months and days a rule's day parts allow, with RFC 5545's defaults from
/// DTSTART when it has none (a yearly rule on DTSTART's month and day, a monthly one on
/// its day of month, a weekly one on its weekday).
struct DayParts {
    /// A bit per month (bit 1 is January).
    months: u16,
    month_days: Vec<i8>,
    /// A bit per weekday without an ordinal (bit 0 is Monday).
    weekdays: u8,
    ordinals: Vec<(i16, Weekday)>,
}

impl DayParts {
    fn of(rule: &RecurrenceRule, dtstart: NaiveDateTime, scope: OrdinalScope) -> Self {
        let mut parts = Self {
            months: rule.by_month.iter().fold(0, |m, &month| m | 1 << month),
            month_days: rule.by_month_day.clone(),
            weekdays: 0,
            ordinals: Vec::new(),
        };
        for day in &rule.by_day {
            match day.ordinal {
                Some(n) if scope != OrdinalScope::Ignore => parts.ordinals.push((n, day.weekday)),
                _ => parts.weekdays |= bit(day.weekday),
            }
        }
        let no_day_parts = rule.by_week_no.is_empty()
            && rule.by_year_day.is_empty()
            && rule.by_month_day.is_empty()
            && rule.by_day.is_empty();
        if no_day_parts {
            match rule.freq {
                Frequency::Yearly => {
                    if parts.months == 0 {
                        parts.months = 1 << dtstart.month();
                    }
                    parts.month_days = vec![dtstart.day() as i8];
                }
                Frequency::Monthly => parts.month_days = vec![dtstart.day() as i8],
                Frequency::Weekly => parts.weekdays = bit(dtstart.weekday()),
                _ => {}
            }
        }
        parts
    }
}

impl Expander {
    /// Prepares `rule` for DTSTART `dtstart`. `until` is the rule's UNTIL already
    /// converted to DTSTART's wall clock (`None` for none). All-day series pass
    /// `date_only`, which pins the time of day to midnight.
    pub fn new(
        rule: &RecurrenceRule,
        dtstart: NaiveDateTime,
        until: Option<NaiveDateTime>,
        date_only: bool,
    ) -> Self {
        let scope = ordinal_scope(rule);
        let days = DayParts::of(rule, dtstart, scope);
        let clock = |by: &[u8], value: u32, applies: bool| -> Vec<u8> {
            if date_only {
                vec![0]
            } else if !by.is_empty() {
                sorted(by.iter().map(|v| (*v).min(59)).collect())
            } else if applies {
                vec![value as u8]
            } else {
                Vec::new()
            }
        };
        let freq = rule.freq;
        let mut expander = Self {
            freq,
            interval: i64::from(rule.interval.max(1)),
            count: rule.count,
            until,
            dtstart,
            months: days.months,
            month_days: days.month_days,
            year_days: rule.by_year_day.clone(),
            week_nos: rule.by_week_no.clone(),
            weekdays: days.weekdays,
            ordinals: days.ordinals,
            scope,
            hours: clock(&rule.by_hour, dtstart.hour(), freq > Frequency::Hourly),
            minutes: clock(
                &rule.by_minute,
                dtstart.minute(),
                freq > Frequency::Minutely,
            ),
            seconds: clock(
                &rule.by_second,
                dtstart.second(),
                freq > Frequency::Secondly,
            ),
            times: Vec::new(),
            set_pos: rule.by_set_pos.clone(),
            wkst: rule.wkst,
            plain: is_plain(rule),
        };
        expander.times = expander.day_times();
        expander
    }

    /// The last possible occurrence (UNTIL, in DTSTART's wall clock), if bounded so.
    pub fn until(&self) -> Option<NaiveDateTime> {
        self.until
    }

    /// Whether the rule has `COUNT` (which forbids jumping ahead).
    pub fn has_count(&self) -> bool {
        self.count.is_some()
    }

    /// The same rule without its `COUNT` (one that ends beyond any date).
    pub fn without_count(mut self) -> Self {
        self.count = None;
        self
    }

    /// The same rule bounded by `until` instead of its `COUNT`.
    pub fn with_until_instead_of_count(mut self, until: NaiveDateTime) -> Self {
        self.count = None;
        self.until = Some(self.until.map_or(until, |u| u.min(until)));
        self
    }

    /// The last occurrence of a `COUNT` rule found by arithmetic, without visiting the
    /// ones before it: for a rule without `BY*` parts every period holds exactly one
    /// occurrence (monthly and yearly ones when DTSTART's day exists in every month).
    /// `None` when the rule has no COUNT or is not that simple; `NaiveDateTime::MAX`
    /// when the end lies beyond the calendar.
    pub fn count_end(&self) -> Option<NaiveDateTime> {
        let count = i64::from(self.count?);
        if !self.plain {
            return None;
        }
        let steps = (count - 1).checked_mul(self.interval)?;
        let end = match self.freq {
            Frequency::Secondly => {
                Duration::try_seconds(steps).and_then(|d| self.dtstart.checked_add_signed(d))
            }
            Frequency::Minutely => {
                Duration::try_minutes(steps).and_then(|d| self.dtstart.checked_add_signed(d))
            }
            Frequency::Hourly => {
                Duration::try_hours(steps).and_then(|d| self.dtstart.checked_add_signed(d))
            }
            Frequency::Daily => {
                Duration::try_days(steps).and_then(|d| self.dtstart.checked_add_signed(d))
            }
            Frequency::Weekly => steps
                .checked_mul(7)
                .and_then(Duration::try_days)
                .and_then(|d| self.dtstart.checked_add_signed(d)),
            Frequency::Monthly | Frequency::Yearly if self.dtstart.day() > 28 => return None,
            Frequency::Monthly => u32::try_from(steps)
                .ok()
                .and_then(|m| self.dtstart.checked_add_months(chrono::Months::new(m))),
            Frequency::Yearly => steps
                .checked_mul(12)
                .and_then(|m| u32::try_from(m).ok())
                .and_then(|m| self.dtstart.checked_add_months(chrono::Months::new(m))),
        };
        Some(end.unwrap_or(NaiveDateTime::MAX))
    }

    /// Visits, in order, the occurrences `t` with `from <= t < to`. With
    /// `include_dtstart`, DTSTART is an occurrence whether or not the rule matches it;
    /// it counts towards `COUNT` only when the rule produces it, so moving a series'
    /// first event off the pattern never drops its last one (as dateutil and the
    /// calendar apps built on it do; RFC 5545's letter counts it either way).
    pub fn expand(
        &self,
        include_dtstart: bool,
        from: NaiveDateTime,
        to: NaiveDateTime,
        visit: &mut dyn FnMut(NaiveDateTime) -> Visit,
    ) -> Ended {
        let mut budget = STEP_BUDGET;
        self.expand_within(include_dtstart, from, to, &mut budget, visit)
    }

    /// [`Self::expand`] taking at most `budget` steps (what it takes is subtracted).
    pub fn expand_within(
        &self,
        include_dtstart: bool,
        from: NaiveDateTime,
        to: NaiveDateTime,
        budget: &mut u64,
        visit: &mut dyn FnMut(NaiveDateTime) -> Visit,
    ) -> Ended {
        let mut state = State {
            emitted: 0,
            include_dtstart,
            from,
            to,
            steps_left: *budget,
        };
        let ended = self.expand_state(&mut state, visit);
        *budget = state.steps_left;
        ended
    }

    fn expand_state(
        &self,
        state: &mut State,
        visit: &mut dyn FnMut(NaiveDateTime) -> Visit,
    ) -> Ended {
        if state.include_dtstart {
            if self.until.is_some_and(|u| self.dtstart > u) {
                return Ended::Complete;
            }
            if self.dtstart >= state.from
                && self.dtstart < state.to
                && visit(self.dtstart) == Visit::Stop
            {
                return Ended::Stopped;
            }
        }
        let start = if self.count.is_some() {
            self.dtstart
        } else {
            state.from.max(self.dtstart)
        };
        match self.freq {
            Frequency::Yearly | Frequency::Monthly | Frequency::Weekly | Frequency::Daily => {
                self.expand_by_period(start, state, visit)
            }
            Frequency::Hourly | Frequency::Minutely | Frequency::Secondly => {
                self.expand_sub_daily(start, state, visit)
            }
        }
    }

    /// Handles one candidate; returns whether expansion goes on.
    fn offer(
        &self,
        candidate: NaiveDateTime,
        state: &mut State,
        visit: &mut dyn FnMut(NaiveDateTime) -> Visit,
    ) -> Option<Ended> {
        if candidate < self.dtstart {
            return None;
        }
        if self.until.is_some_and(|u| candidate > u) {
            return Some(Ended::Complete);
        }
        if !state.step() {
            return Some(Ended::OverBudget);
        }
        if let Some(count) = self.count {
            if state.emitted >= count {
                return Some(Ended::Complete);
            }
            state.emitted += 1;
        }
        // DTSTART produced by the rule counts (above) but was visited already.
        if !(state.include_dtstart && candidate == self.dtstart) {
            if candidate >= state.to {
                return Some(Ended::Complete);
            }
            if candidate >= state.from && visit(candidate) == Visit::Stop {
                return Some(Ended::Stopped);
            }
        }
        if self.count.is_some_and(|c| state.emitted >= c) {
            return Some(Ended::Complete);
        }
        None
    }

    fn expand_by_period(
        &self,
        start: NaiveDateTime,
        state: &mut State,
        visit: &mut dyn FnMut(NaiveDateTime) -> Visit,
    ) -> Ended {
        let first = self.period_of(self.dtstart.date());
        let wanted = self.period_of(start.date());
        let steps = if wanted > first {
            (wanted - first + self.interval - 1) / self.interval
        } else {
            0
        };
        let mut period = first + steps * self.interval;
        let mut candidates: Vec<NaiveDateTime> = Vec::new();
        let mut days: Vec<NaiveDate> = Vec::new();
        loop {
            if !state.step() {
                return Ended::OverBudget;
            }
            let Some(period_start) = self.period_start(period) else {
                return Ended::Complete;
            };
            if period_start.and_time(NaiveTime::MIN) >= state.to
                || self.until.is_some_and(|u| period_start > u.date())
            {
                return Ended::Complete;
            }
            let ended = if self.set_pos.is_empty() {
                self.offer_period(period_start, state, visit)
            } else {
                self.offer_positions(period_start, state, visit, &mut days, &mut candidates)
            };
            if let Some(ended) = ended {
                return ended;
            }
            period += self.interval;
        }
    }

    /// Offers a period's candidates as they come (they come in order); `Some` when the
    /// expansion ended in it. Without COUNT, days outside the window cannot matter, so
    /// they are not visited.
    fn offer_period(
        &self,
        period_start: NaiveDate,
        state: &mut State,
        visit: &mut dyn FnMut(NaiveDateTime) -> Visit,
    ) -> Option<Ended> {
        let mut ended = None;
        let bounds = self
            .count
            .is_none()
            .then(|| (state.from.date(), state.to.date()));
        self.each_period_day(period_start, bounds, &mut |day| {
            for time in &self.times {
                if let Some(end) = self.offer(day.and_time(*time), state, visit) {
                    ended = Some(end);
                    return false;
                }
            }
            true
        });
        ended
    }

    /// Offers the candidates of a period `BYSETPOS` picks; `Some` when the expansion
    /// ended in it. `days` and `candidates` are scratch space kept between periods.
    fn offer_positions(
        &self,
        period_start: NaiveDate,
        state: &mut State,
        visit: &mut dyn FnMut(NaiveDateTime) -> Visit,
        days: &mut Vec<NaiveDate>,
        candidates: &mut Vec<NaiveDateTime>,
    ) -> Option<Ended> {
        if let [time] = self.times.as_slice() {
            // One time a day (the usual case): positions pick days.
            days.clear();
            self.each_period_day(period_start, None, &mut |day| {
                days.push(day);
                true
            });
            self.apply_set_pos(days);
            return days
                .iter()
                .find_map(|day| self.offer(day.and_time(*time), state, visit));
        }
        candidates.clear();
        self.each_period_day(period_start, None, &mut |day| {
            candidates.extend(self.times.iter().map(|time| day.and_time(*time)));
            true
        });
        self.apply_set_pos(candidates);
        candidates
            .iter()
            .find_map(|candidate| self.offer(*candidate, state, visit))
    }

    /// Times of day for daily-or-longer rules, ascending.
    fn day_times(&self) -> Vec<NaiveTime> {
        let mut times =
            Vec::with_capacity(self.hours.len() * self.minutes.len() * self.seconds.len());
        for &hour in &self.hours {
            for &minute in &self.minutes {
                for &second in &self.seconds {
                    if let Some(time) = NaiveTime::from_hms_opt(
                        u32::from(hour),
                        u32::from(minute),
                        u32::from(second),
                    ) {
                        times.push(time);
                    }
                }
            }
        }
        times
    }

    /// Keeps the candidates at the BYSETPOS positions (in place, no allocation).
    fn apply_set_pos<T: Copy>(&self, candidates: &mut Vec<T>) {
        if self.set_pos.is_empty() || candidates.is_empty() {
            return;
        }
        let len = candidates.len() as i64;
        let mut chosen = [0usize; 16];
        let mut count = 0;
        for &pos in &self.set_pos {
            let index = if pos > 0 {
                i64::from(pos) - 1
            } else {
                len + i64::from(pos)
            };
            if let Ok(index) = usize::try_from(index)
                && index < candidates.len()
                && count < chosen.len()
            {
                chosen[count] = index;
                count += 1;
            }
        }
        let chosen = &mut chosen[..count];
        chosen.sort_unstable();
        let mut kept = 0;
        for position in 0..chosen.len() {
            if position > 0 && chosen[position] == chosen[position - 1] {
                continue;
            }
            candidates[kept] = candidates[chosen[position]];
            kept += 1;
        }
        candidates.truncate(kept);
    }
}

struct State {
    emitted: u32,
    include_dtstart: bool,
    from: NaiveDateTime,
    to: NaiveDateTime,
    steps_left: u64,
}

impl State {
    /// Takes one step of the budget; false when it is used up.
    fn step(&mut self) -> bool {
        match self.steps_left.checked_sub(1) {
            Some(left) => {
                self.steps_left = left;
                true
            }
            None => false,
        }
    }
}

fn seconds_of(time: NaiveDateTime) -> i64 {
    time.and_utc().timestamp()
}

mod days;
mod sub_daily;

#[cfg(test)]
mod tests;
