//! RFC 5545 recurrence rules (`FREQ=WEEKLY;BYDAY=MO,WE;UNTIL=…`): parsing with errors a
//! model can act on, canonical writing, and a short English description.

use std::fmt;
use std::str::FromStr;

use chrono::{NaiveDate, NaiveDateTime, Weekday};

use crate::error::IcalError;
use crate::time::{format_date, format_date_time, parse_date, parse_date_time};

/// How often a rule repeats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Frequency {
    /// Every second.
    Secondly,
    /// Every minute.
    Minutely,
    /// Every hour.
    Hourly,
    /// Every day.
    Daily,
    /// Every week.
    Weekly,
    /// Every month.
    Monthly,
    /// Every year.
    Yearly,
}

impl Frequency {
    fn keyword(self) -> &'static str {
        match self {
            Self::Secondly => "SECONDLY",
            Self::Minutely => "MINUTELY",
            Self::Hourly => "HOURLY",
            Self::Daily => "DAILY",
            Self::Weekly => "WEEKLY",
            Self::Monthly => "MONTHLY",
            Self::Yearly => "YEARLY",
        }
    }

    fn unit(self) -> &'static str {
        match self {
            Self::Secondly => "second",
            Self::Minutely => "minute",
            Self::Hourly => "hour",
            Self::Daily => "day",
            Self::Weekly => "week",
            Self::Monthly => "month",
            Self::Yearly => "year",
        }
    }
}

/// The last possible occurrence of a rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Until {
    /// A date (for all-day events).
    Date(NaiveDate),
    /// A wall-clock time (for floating events).
    Floating(NaiveDateTime),
    /// A UTC time (for zoned and UTC events).
    Utc(NaiveDateTime),
}

/// A weekday in `BYDAY`, with an optional ordinal (`-1SU` = the last Sunday).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WeekdayNum {
    /// `1` = first, `-1` = last; `None` = every such weekday.
    pub ordinal: Option<i16>,
    /// The weekday.
    pub weekday: Weekday,
}

/// A parsed recurrence rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecurrenceRule {
    pub(crate) freq: Frequency,
    pub(crate) interval: u32,
    pub(crate) count: Option<u32>,
    pub(crate) until: Option<Until>,
    pub(crate) by_second: Vec<u8>,
    pub(crate) by_minute: Vec<u8>,
    pub(crate) by_hour: Vec<u8>,
    pub(crate) by_day: Vec<WeekdayNum>,
    pub(crate) by_month_day: Vec<i8>,
    pub(crate) by_year_day: Vec<i16>,
    pub(crate) by_week_no: Vec<i8>,
    pub(crate) by_month: Vec<u8>,
    pub(crate) by_set_pos: Vec<i16>,
    pub(crate) wkst: Weekday,
}

impl RecurrenceRule {
    /// A rule repeating at `freq` with no other parts.
    pub fn new(freq: Frequency) -> Self {
        Self {
            freq,
            interval: 1,
            count: None,
            until: None,
            by_second: Vec::new(),
            by_minute: Vec::new(),
            by_hour: Vec::new(),
            by_day: Vec::new(),
            by_month_day: Vec::new(),
            by_year_day: Vec::new(),
            by_week_no: Vec::new(),
            by_month: Vec::new(),
            by_set_pos: Vec::new(),
            wkst: Weekday::Mon,
        }
    }

    /// The frequency.
    pub fn frequency(&self) -> Frequency {
        self.freq
    }

    /// `COUNT`, if any.
    pub fn count(&self) -> Option<u32> {
        self.count
    }

    /// `UNTIL`, if any.
    pub fn until(&self) -> Option<Until> {
        self.until
    }

    /// Sets `UNTIL` (and clears `COUNT`).
    pub fn set_until(&mut self, until: Option<Until>) {
        self.until = until;
        if until.is_some() {
            self.count = None;
        }
    }

    /// Repeats on these weekdays (`BYDAY` without ordinals).
    pub fn with_weekdays(mut self, weekdays: &[Weekday]) -> Self {
        self.by_day = weekdays
            .iter()
            .map(|&weekday| WeekdayNum {
                ordinal: None,
                weekday,
            })
            .collect();
        self
    }

    /// The weekdays of `BYDAY` (ordinals dropped).
    pub fn weekdays(&self) -> Vec<Weekday> {
        self.by_day.iter().map(|d| d.weekday).collect()
    }

    /// Whether the rule only uses parts a Full Calendar `recurring` note can express:
    /// weekly, every week, on given weekdays, no count.
    pub fn is_plain_weekly(&self) -> bool {
        self.freq == Frequency::Weekly
            && self.interval == 1
            && self.count.is_none()
            && self.by_day.iter().all(|d| d.ordinal.is_none())
            && self.by_second.is_empty()
            && self.by_minute.is_empty()
            && self.by_hour.is_empty()
            && self.by_month_day.is_empty()
            && self.by_year_day.is_empty()
            && self.by_week_no.is_empty()
            && self.by_month.is_empty()
            && self.by_set_pos.is_empty()
    }

    /// A short English description ("every 2 weeks on Mon, Wed, until 2026-06-30").
    pub fn describe(&self) -> String {
        let mut out = if self.interval == 1 {
            format!("every {}", self.freq.unit())
        } else {
            format!("every {} {}s", self.interval, self.freq.unit())
        };
        if !self.by_day.is_empty() {
            let days: Vec<String> = self
                .by_day
                .iter()
                .map(|d| match d.ordinal {
                    Some(n) => format!("{} {}", ordinal_word(n), d.weekday),
                    None => d.weekday.to_string(),
                })
                .collect();
            out.push_str(&format!(" on {}", days.join(", ")));
        }
        if !self.by_month_day.is_empty() {
            let days: Vec<String> = self.by_month_day.iter().map(|d| d.to_string()).collect();
            out.push_str(&format!(" on day {} of the month", days.join(", ")));
        }
        if !self.by_month.is_empty() {
            let months: Vec<String> = self.by_month.iter().map(|m| month_name(*m)).collect();
            out.push_str(&format!(" in {}", months.join(", ")));
        }
        if !self.by_set_pos.is_empty() {
            let positions: Vec<String> = self.by_set_pos.iter().map(|p| ordinal_word(*p)).collect();
            out.push_str(&format!(" (the {} of each set)", positions.join(", ")));
        }
        if let Some(count) = self.count {
            out.push_str(&format!(", {count} times"));
        }
        match self.until {
            Some(Until::Date(date)) => out.push_str(&format!(", until {date}")),
            Some(Until::Floating(time)) => {
                out.push_str(&format!(", until {}", time.format("%Y-%m-%d %H:%M")))
            }
            Some(Until::Utc(time)) => {
                out.push_str(&format!(", until {} UTC", time.format("%Y-%m-%d %H:%M")))
            }
            None => {}
        }
        out
    }
}

fn ordinal_word(n: i16) -> String {
    match n {
        1 => "first".to_owned(),
        2 => "second".to_owned(),
        3 => "third".to_owned(),
        4 => "fourth".to_owned(),
        5 => "fifth".to_owned(),
        -1 => "last".to_owned(),
        -2 => "second-to-last".to_owned(),
        n if n > 0 => format!("{n}th"),
        n => format!("{}th-from-last", -n),
    }
}

fn month_name(month: u8) -> String {
    chrono::Month::try_from(month)
        .map(|m| m.name()[..3].to_owned())
        .unwrap_or_else(|_| month.to_string())
}

fn weekday_code(weekday: Weekday) -> &'static str {
    match weekday {
        Weekday::Mon => "MO",
        Weekday::Tue => "TU",
        Weekday::Wed => "WE",
        Weekday::Thu => "TH",
        Weekday::Fri => "FR",
        Weekday::Sat => "SA",
        Weekday::Sun => "SU",
    }
}

pub fn parse_weekday_code(code: &str) -> Option<Weekday> {
    Some(match code.to_ascii_uppercase().as_str() {
        "MO" => Weekday::Mon,
        "TU" => Weekday::Tue,
        "WE" => Weekday::Wed,
        "TH" => Weekday::Thu,
        "FR" => Weekday::Fri,
        "SA" => Weekday::Sat,
        "SU" => Weekday::Sun,
        _ => return None,
    })
}

fn invalid(rule: &str, reason: impl Into<String>) -> IcalError {
    IcalError::InvalidRule {
        rule: rule.to_owned(),
        reason: reason.into(),
    }
}

fn parse_numbers<T>(
    rule: &str,
    key: &str,
    value: &str,
    range: std::ops::RangeInclusive<i32>,
    allow_negative: bool,
) -> Result<Vec<T>, IcalError>
where
    T: TryFrom<i32>,
{
    value
        .split(',')
        .map(|item| {
            let item = item.trim();
            let number: i32 = item
                .parse()
                .map_err(|_| invalid(rule, format!("{key} value `{item}` is not a number")))?;
            let magnitude = number.abs();
            let fits = if allow_negative {
                number != 0 && range.contains(&magnitude)
            } else {
                range.contains(&number)
            };
            if !fits {
                let bounds = if allow_negative {
                    format!(
                        "{} to {} or -{} to -{}",
                        range.start(),
                        range.end(),
                        range.start(),
                        range.end()
                    )
                } else {
                    format!("{} to {}", range.start(), range.end())
                };
                return Err(invalid(
                    rule,
                    format!("{key} value {number} is out of range ({bounds})"),
                ));
            }
            T::try_from(number)
                .map_err(|_| invalid(rule, format!("{key} value {number} is out of range")))
        })
        .collect()
}

impl FromStr for RecurrenceRule {
    type Err = IcalError;

    fn from_str(text: &str) -> Result<Self, IcalError> {
        let original = text.trim();
        let body = match original.get(..6) {
            Some(prefix) if prefix.eq_ignore_ascii_case("RRULE:") => &original[6..],
            _ => original,
        };
        if body.is_empty() {
            return Err(invalid(
                original,
                "the rule is empty; write e.g. FREQ=WEEKLY;BYDAY=MO",
            ));
        }
        let mut freq = None;
        let mut rule = Self::new(Frequency::Daily);
        let mut seen: Vec<String> = Vec::new();
        for part in body.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| invalid(original, format!("`{part}` is not KEY=VALUE")))?;
            let key = key.trim().to_ascii_uppercase();
            let value = value.trim();
            if seen.contains(&key) {
                return Err(invalid(original, format!("{key} appears twice")));
            }
            seen.push(key.clone());
            if value.is_empty() && !key.starts_with("X-") {
                return Err(invalid(original, format!("{key} has no value")));
            }
            if key == "FREQ" {
                freq = Some(parse_frequency(original, value)?);
            } else {
                rule.set_part(original, &key, value)?;
            }
        }
        rule.freq = freq.ok_or_else(|| {
            invalid(
                original,
                "FREQ is missing; start with FREQ=DAILY, WEEKLY, MONTHLY or YEARLY",
            )
        })?;
        if rule.count.is_some() && rule.until.is_some() {
            return Err(invalid(
                original,
                "COUNT and UNTIL cannot both be given; keep one",
            ));
        }
        Ok(rule)
    }
}

impl RecurrenceRule {
    /// Sets the part `key` (upper-case, not `FREQ`) of the rule `original` from `value`.
    fn set_part(&mut self, original: &str, key: &str, value: &str) -> Result<(), IcalError> {
        match key {
            "INTERVAL" => self.interval = at_least_one(original, key, value)?,
            "COUNT" => self.count = Some(at_least_one(original, key, value)?),
            "UNTIL" => self.until = Some(parse_until(original, value)?),
            "BYSECOND" => self.by_second = parse_numbers(original, key, value, 0..=60, false)?,
            "BYMINUTE" => self.by_minute = parse_numbers(original, key, value, 0..=59, false)?,
            "BYHOUR" => self.by_hour = parse_numbers(original, key, value, 0..=23, false)?,
            "BYMONTHDAY" => self.by_month_day = parse_numbers(original, key, value, 1..=31, true)?,
            "BYYEARDAY" => self.by_year_day = parse_numbers(original, key, value, 1..=366, true)?,
            "BYWEEKNO" => self.by_week_no = parse_numbers(original, key, value, 1..=53, true)?,
            "BYMONTH" => self.by_month = parse_numbers(original, key, value, 1..=12, false)?,
            "BYSETPOS" => self.by_set_pos = parse_numbers(original, key, value, 1..=366, true)?,
            "BYDAY" => {
                self.by_day = value
                    .split(',')
                    .map(|item| parse_weekday_num(original, item.trim()))
                    .collect::<Result<_, _>>()?;
            }
            "WKST" => {
                self.wkst = parse_weekday_code(value).ok_or_else(|| {
                    invalid(
                        original,
                        format!("WKST `{value}` is not a weekday (MO, TU, WE, TH, FR, SA, SU)"),
                    )
                })?;
            }
            key if key.starts_with("X-") => {}
            other => return Err(invalid(original, format!("unknown part `{other}`"))),
        }
        Ok(())
    }
}

fn parse_frequency(rule: &str, value: &str) -> Result<Frequency, IcalError> {
    Ok(match value.to_ascii_uppercase().as_str() {
        "SECONDLY" => Frequency::Secondly,
        "MINUTELY" => Frequency::Minutely,
        "HOURLY" => Frequency::Hourly,
        "DAILY" => Frequency::Daily,
        "WEEKLY" => Frequency::Weekly,
        "MONTHLY" => Frequency::Monthly,
        "YEARLY" => Frequency::Yearly,
        other => {
            return Err(invalid(
                rule,
                format!(
                    "FREQ `{other}` is not one of DAILY, WEEKLY, MONTHLY, YEARLY, HOURLY, MINUTELY, SECONDLY"
                ),
            ));
        }
    })
}

/// `INTERVAL` or `COUNT`: a whole number of at least 1.
fn at_least_one(rule: &str, key: &str, value: &str) -> Result<u32, IcalError> {
    value.parse().ok().filter(|n| *n >= 1).ok_or_else(|| {
        invalid(
            rule,
            format!("{key} `{value}` is not a whole number of at least 1"),
        )
    })
}

fn parse_until(rule: &str, value: &str) -> Result<Until, IcalError> {
    if let Some(date) = parse_date(value) {
        return Ok(Until::Date(date));
    }
    match parse_date_time(value) {
        Some((time, true)) => Ok(Until::Utc(time)),
        Some((time, false)) => Ok(Until::Floating(time)),
        None => Err(invalid(
            rule,
            format!("UNTIL `{value}` is not a date (20261231) or UTC date-time (20261231T235959Z)"),
        )),
    }
}

impl RecurrenceRule {
    /// Reads a rule as calendar files write it, accepting what major producers write
    /// beyond RFC 5545: `COUNT` of zero or less (`COUNT=-1`, meaning none) is ignored, and
    /// `COUNT` beside `UNTIL` ends the rule at whichever comes first (as dateutil does).
    /// Returns the rule and a note for each liberty taken.
    pub fn parse_lenient(text: &str) -> Result<(Self, Vec<String>), IcalError> {
        let original = text.trim();
        let body = match original.get(..6) {
            Some(prefix) if prefix.eq_ignore_ascii_case("RRULE:") => &original[6..],
            _ => original,
        };
        let has_until = body.split(';').any(|part| {
            part.split_once('=')
                .is_some_and(|(key, _)| key.trim().eq_ignore_ascii_case("UNTIL"))
        });
        let mut notes = Vec::new();
        let mut count = None;
        let mut kept: Vec<&str> = Vec::new();
        for part in body.split(';') {
            if let Some((key, value)) = part.split_once('=')
                && key.trim().eq_ignore_ascii_case("COUNT")
                && let Ok(number) = value.trim().parse::<i64>()
            {
                if number < 1 {
                    notes.push(format!(
                        "COUNT={number} is not a number of occurrences; it is ignored{}",
                        if has_until {
                            " and UNTIL ends the rule"
                        } else {
                            " and the rule does not end"
                        }
                    ));
                    continue;
                }
                if has_until {
                    count = Some(u32::try_from(number).unwrap_or(u32::MAX));
                    notes.push(
                        "COUNT and UNTIL are both given (RFC 5545 allows one); the rule ends at whichever comes first"
                            .to_owned(),
                    );
                    continue;
                }
            }
            kept.push(part);
        }
        let mut rule: Self = kept.join(";").parse().map_err(|error| match error {
            // Name the rule as written.
            IcalError::InvalidRule { reason, .. } => invalid(original, reason),
            other => other,
        })?;
        if count.is_some() {
            rule.count = count;
        }
        Ok((rule, notes))
    }
}

fn parse_weekday_num(rule: &str, item: &str) -> Result<WeekdayNum, IcalError> {
    let split = item.len().saturating_sub(2);
    let (number, code) = (
        item.get(..split).unwrap_or(""),
        item.get(split..).unwrap_or(""),
    );
    let weekday = parse_weekday_code(code).ok_or_else(|| {
        invalid(
            rule,
            format!("BYDAY value `{item}` is not a weekday such as MO, -1FR or 2TU"),
        )
    })?;
    let ordinal = if number.is_empty() {
        None
    } else {
        let n: i16 = number
            .parse()
            .map_err(|_| invalid(rule, format!("BYDAY value `{item}` has a bad ordinal")))?;
        if n == 0 || n.abs() > 53 {
            return Err(invalid(
                rule,
                format!("BYDAY ordinal in `{item}` must be 1 to 53 or -1 to -53"),
            ));
        }
        Some(n)
    };
    Ok(WeekdayNum { ordinal, weekday })
}

fn join<T: fmt::Display>(values: &[T]) -> String {
    values
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

impl fmt::Display for RecurrenceRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FREQ={}", self.freq.keyword())?;
        match self.until {
            Some(Until::Date(date)) => write!(f, ";UNTIL={}", format_date(date))?,
            Some(Until::Floating(time)) => write!(f, ";UNTIL={}", format_date_time(time))?,
            Some(Until::Utc(time)) => write!(f, ";UNTIL={}Z", format_date_time(time))?,
            None => {}
        }
        if let Some(count) = self.count {
            write!(f, ";COUNT={count}")?;
        }
        if self.interval != 1 {
            write!(f, ";INTERVAL={}", self.interval)?;
        }
        for (key, values) in [
            ("BYSECOND", join(&self.by_second)),
            ("BYMINUTE", join(&self.by_minute)),
            ("BYHOUR", join(&self.by_hour)),
        ] {
            if !values.is_empty() {
                write!(f, ";{key}={values}")?;
            }
        }
        if !self.by_day.is_empty() {
            let days: Vec<String> = self
                .by_day
                .iter()
                .map(|d| match d.ordinal {
                    Some(n) => format!("{n}{}", weekday_code(d.weekday)),
                    None => weekday_code(d.weekday).to_owned(),
                })
                .collect();
            write!(f, ";BYDAY={}", days.join(","))?;
        }
        for (key, values) in [
            ("BYMONTHDAY", join(&self.by_month_day)),
            ("BYYEARDAY", join(&self.by_year_day)),
            ("BYWEEKNO", join(&self.by_week_no)),
            ("BYMONTH", join(&self.by_month)),
            ("BYSETPOS", join(&self.by_set_pos)),
        ] {
            if !values.is_empty() {
                write!(f, ";{key}={values}")?;
            }
        }
        if self.wkst != Weekday::Mon {
            write!(f, ";WKST={}", weekday_code(self.wkst))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
