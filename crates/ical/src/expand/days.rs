//! The calendar arithmetic of expansion: which period (year, month, week, day) a date
//! is in, where a period starts, and the days of a period the rule's day parts allow.

use chrono::{Datelike, Duration, NaiveDate, Weekday};

use super::{Expander, OrdinalScope, bit};
use crate::rrule::Frequency;

impl Expander {
    /// The index of the period holding `date`.
    pub(super) fn period_of(&self, date: NaiveDate) -> i64 {
        match self.freq {
            Frequency::Yearly => i64::from(date.year()),
            Frequency::Monthly => i64::from(date.year()) * 12 + i64::from(date.month0()),
            Frequency::Weekly => {
                let day = i64::from(date.num_days_from_ce());
                let offset = (day - 1 - i64::from(self.wkst.num_days_from_monday())).rem_euclid(7);
                (day - offset - 1 - i64::from(self.wkst.num_days_from_monday())) / 7
            }
            _ => i64::from(date.num_days_from_ce()),
        }
    }

    /// The first day of a period.
    pub(super) fn period_start(&self, period: i64) -> Option<NaiveDate> {
        match self.freq {
            Frequency::Yearly => NaiveDate::from_ymd_opt(i32::try_from(period).ok()?, 1, 1),
            Frequency::Monthly => NaiveDate::from_ymd_opt(
                i32::try_from(period.div_euclid(12)).ok()?,
                u32::try_from(period.rem_euclid(12)).ok()? + 1,
                1,
            ),
            Frequency::Weekly => NaiveDate::from_num_days_from_ce_opt(
                i32::try_from(period * 7 + 1 + i64::from(self.wkst.num_days_from_monday())).ok()?,
            ),
            _ => NaiveDate::from_num_days_from_ce_opt(i32::try_from(period).ok()?),
        }
    }

    /// Calls `each` with the days of a period that pass every day-level part, in order,
    /// until it returns false.
    /// `bounds` (first and last day, inclusive) narrows the days visited.
    pub(super) fn each_period_day(
        &self,
        start: NaiveDate,
        bounds: Option<(NaiveDate, NaiveDate)>,
        each: &mut dyn FnMut(NaiveDate) -> bool,
    ) {
        match self.freq {
            Frequency::Yearly => {
                for month in 1..=12u32 {
                    if self.months != 0 && self.months & (1 << month) == 0 {
                        continue;
                    }
                    if let Some(first) = NaiveDate::from_ymd_opt(start.year(), month, 1)
                        && !self.each_month_day(first, bounds, each)
                    {
                        return;
                    }
                }
            }
            Frequency::Monthly => {
                if self.months == 0 || self.months & (1 << start.month()) != 0 {
                    self.each_month_day(start, bounds, each);
                }
            }
            Frequency::Weekly => {
                let mut day = start;
                for _ in 0..7 {
                    let inside = bounds.is_none_or(|(from, to)| day >= from && day <= to);
                    if inside && self.day_matches(day) && !each(day) {
                        return;
                    }
                    match day.succ_opt() {
                        Some(next) => day = next,
                        None => return,
                    }
                }
            }
            _ => {
                if self.day_matches(start) {
                    each(start);
                }
            }
        }
    }

    /// Calls `each` with the matching days of the month starting at `first`; false when
    /// `each` stopped.
    fn each_month_day(
        &self,
        first: NaiveDate,
        bounds: Option<(NaiveDate, NaiveDate)>,
        each: &mut dyn FnMut(NaiveDate) -> bool,
    ) -> bool {
        let length = days_in_month(first);
        let (mut low, mut high) = (1, length);
        if let Some((from, to)) = bounds {
            let month_end = first.with_day(length).unwrap_or(first);
            if to < first || from > month_end {
                return true;
            }
            if from > first {
                low = from.day();
            }
            if to < month_end {
                high = to.day();
            }
        }
        // Fast path: only BYMONTHDAY restricts the days.
        if self.weekdays == 0
            && self.ordinals.is_empty()
            && self.year_days.is_empty()
            && self.week_nos.is_empty()
            && !self.month_days.is_empty()
        {
            let mut wanted = [false; 32];
            for &d in &self.month_days {
                let d = i32::from(d);
                let day = if d > 0 { d } else { length as i32 + 1 + d };
                if let Ok(day) = usize::try_from(day)
                    && (1..=length as usize).contains(&day)
                {
                    wanted[day] = true;
                }
            }
            for (day, _) in wanted
                .iter()
                .enumerate()
                .filter(|(day, w)| **w && (low..=high).contains(&(*day as u32)))
            {
                if let Some(date) = first.with_day(day as u32)
                    && !each(date)
                {
                    return false;
                }
            }
            return true;
        }
        for day in low..=high {
            if let Some(date) = first.with_day(day)
                && self.day_matches(date)
                && !each(date)
            {
                return false;
            }
        }
        true
    }

    /// Whether a day passes the day-level parts (BYMONTH, BYWEEKNO, BYYEARDAY,
    /// BYMONTHDAY, BYDAY).
    pub(super) fn day_matches(&self, date: NaiveDate) -> bool {
        if self.months != 0 && self.months & (1 << date.month()) == 0 {
            return false;
        }
        if !self.week_nos.is_empty() {
            let (week, weeks) = week_number(date, self.wkst);
            if !self
                .week_nos
                .iter()
                .any(|&n| i32::from(n) == week || (n < 0 && weeks + 1 + i32::from(n) == week))
            {
                return false;
            }
        }
        if !self.year_days.is_empty() {
            let ordinal = date.ordinal() as i32;
            let length = if date.leap_year() { 366 } else { 365 };
            if !self.year_days.iter().any(|&d| {
                i32::from(d) == ordinal || (d < 0 && length + 1 + i32::from(d) == ordinal)
            }) {
                return false;
            }
        }
        if !self.month_days.is_empty() {
            let day = date.day() as i32;
            let length = days_in_month(date) as i32;
            if !self
                .month_days
                .iter()
                .any(|&d| i32::from(d) == day || (d < 0 && length + 1 + i32::from(d) == day))
            {
                return false;
            }
        }
        if self.weekdays != 0 || !self.ordinals.is_empty() {
            let weekday = date.weekday();
            if self.weekdays & bit(weekday) != 0 {
                return true;
            }
            return self.ordinals.iter().any(|&(n, wd)| {
                wd == weekday && {
                    let (index, length) = match self.scope {
                        OrdinalScope::Month => (date.day0() as i32, days_in_month(date) as i32),
                        _ => (
                            date.ordinal0() as i32,
                            if date.leap_year() { 366 } else { 365 },
                        ),
                    };
                    if n > 0 {
                        index / 7 + 1 == i32::from(n)
                    } else {
                        (length - 1 - index) / 7 + 1 == -i32::from(n)
                    }
                }
            });
        }
        true
    }
}

fn days_in_month(date: NaiveDate) -> u32 {
    match date.month() {
        4 | 6 | 9 | 11 => 30,
        2 if date.leap_year() => 29,
        2 => 28,
        _ => 31,
    }
}

/// The week number of `date` (weeks start on `wkst`; week 1 holds at least four days
/// of its year) and the number of weeks of that week-numbering year.
pub(super) fn week_number(date: NaiveDate, wkst: Weekday) -> (i32, i32) {
    let first_week_start = |year: i32| -> Option<NaiveDate> {
        let jan4 = NaiveDate::from_ymd_opt(year, 1, 4)?;
        let back = (jan4.weekday().num_days_from_monday() + 7 - wkst.num_days_from_monday()) % 7;
        Some(jan4 - Duration::days(i64::from(back)))
    };
    let year = date.year();
    let (Some(this), Some(next), Some(previous)) = (
        first_week_start(year),
        first_week_start(year + 1),
        first_week_start(year - 1),
    ) else {
        return (0, 52);
    };
    let (start, end) = if date < this {
        (previous, this)
    } else if date >= next {
        let after = first_week_start(year + 2).unwrap_or(next + Duration::days(364));
        (next, after)
    } else {
        (this, next)
    };
    (
        ((date - start).num_days() / 7 + 1) as i32,
        ((end - start).num_days() / 7) as i32,
    )
}
