//! Hourly, minutely and secondly rules: days that pass the day-level parts, then the
//! aligned hours, minutes or seconds within them.

use chrono::{Duration, NaiveDateTime, NaiveTime, Timelike};

use super::{Ended, Expander, State, Visit, seconds_of};
use crate::rrule::Frequency;

impl Expander {
    pub(super) fn expand_sub_daily(
        &self,
        start: NaiveDateTime,
        state: &mut State,
        visit: &mut dyn FnMut(NaiveDateTime) -> Visit,
    ) -> Ended {
        let unit: i64 = match self.freq {
            Frequency::Hourly => 3600,
            Frequency::Minutely => 60,
            _ => 1,
        };
        let origin = seconds_of(self.dtstart) / unit;
        let mut day = start.date();
        let mut candidates: Vec<NaiveDateTime> = Vec::new();
        loop {
            if !state.step() {
                return Ended::OverBudget;
            }
            let day_start = day.and_time(NaiveTime::MIN);
            if day_start >= state.to || self.until.is_some_and(|u| day > u.date()) {
                return Ended::Complete;
            }
            if self.day_matches(day) {
                let first_unit = seconds_of(day_start) / unit;
                let last_unit = first_unit + 86_400 / unit;
                let behind = (first_unit - origin).max(0);
                let mut current =
                    origin + (behind + self.interval - 1) / self.interval * self.interval;
                while current < last_unit {
                    if !state.step() {
                        return Ended::OverBudget;
                    }
                    let period_start = day_start + Duration::seconds((current - first_unit) * unit);
                    candidates.clear();
                    self.sub_daily_candidates(period_start, &mut candidates);
                    self.apply_set_pos(&mut candidates);
                    for candidate in &candidates {
                        if let Some(ended) = self.offer(*candidate, state, visit) {
                            return ended;
                        }
                    }
                    current += self.interval;
                }
            }
            let Some(next) = day.succ_opt() else {
                return Ended::Complete;
            };
            day = next;
        }
    }

    /// The candidates of one hour, minute or second period.
    fn sub_daily_candidates(&self, period_start: NaiveDateTime, out: &mut Vec<NaiveDateTime>) {
        let hour = period_start.hour() as u8;
        if !self.hours.is_empty() && !self.hours.contains(&hour) {
            return;
        }
        let date = period_start.date();
        let at = |h: u8, m: u8, s: u8| {
            NaiveTime::from_hms_opt(u32::from(h), u32::from(m), u32::from(s))
                .map(|t| date.and_time(t))
        };
        match self.freq {
            Frequency::Hourly => {
                for &minute in &self.minutes {
                    for &second in &self.seconds {
                        out.extend(at(hour, minute, second));
                    }
                }
            }
            Frequency::Minutely => {
                let minute = period_start.minute() as u8;
                if self.minutes.is_empty() || self.minutes.contains(&minute) {
                    for &second in &self.seconds {
                        out.extend(at(hour, minute, second));
                    }
                }
            }
            _ => {
                let minute = period_start.minute() as u8;
                let second = period_start.second() as u8;
                if (self.minutes.is_empty() || self.minutes.contains(&minute))
                    && (self.seconds.is_empty() || self.seconds.contains(&second))
                {
                    out.push(period_start);
                }
            }
        }
    }
}
