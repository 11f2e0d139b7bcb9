//! Event times: all-day dates, floating, UTC and zoned date-times; reading and writing
//! their iCalendar forms; and turning wall-clock times into instants across DST changes.

use std::fmt;

use chrono::{
    DateTime, Datelike, Duration, FixedOffset, LocalResult, NaiveDate, NaiveDateTime, NaiveTime,
    Offset, TimeZone, Timelike, Utc,
};
use chrono_tz::Tz;

/// The time zone a date-time's wall-clock value is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Zone {
    /// UTC (`…Z`).
    Utc,
    /// No zone: the same wall-clock time wherever the user is (RFC 5545 floating time);
    /// placed on the timeline in the calendar's zone.
    Floating,
    /// An IANA zone.
    Named(Tz),
    /// A fixed offset (a calendar-defined zone Hearth could not match to an IANA zone).
    Fixed(FixedOffset),
}

impl Zone {
    /// The IANA name, `UTC`, `floating`, or the offset.
    pub fn name(&self) -> String {
        match self {
            Self::Utc => "UTC".to_owned(),
            Self::Floating => "floating".to_owned(),
            Self::Named(tz) => tz.name().to_owned(),
            Self::Fixed(offset) => offset.to_string(),
        }
    }

    /// The instant of a wall-clock time in this zone; floating times use `floating`.
    pub fn to_utc(&self, local: NaiveDateTime, floating: Tz) -> DateTime<Utc> {
        match self {
            Self::Utc => local.and_utc(),
            Self::Floating => resolve_local(&floating, local),
            Self::Named(tz) => resolve_local(tz, local),
            Self::Fixed(offset) => resolve_local(offset, local),
        }
    }

    /// The wall-clock time of an instant in this zone; floating times use `floating`.
    pub fn to_local(&self, instant: DateTime<Utc>, floating: Tz) -> NaiveDateTime {
        match self {
            Self::Utc => instant.naive_utc(),
            Self::Floating => instant.with_timezone(&floating).naive_local(),
            Self::Named(tz) => instant.with_timezone(tz).naive_local(),
            Self::Fixed(offset) => instant.with_timezone(offset).naive_local(),
        }
    }
}

/// The instant of a wall-clock time in `zone`, as RFC 5545 §3.3.5 prescribes: a time
/// that occurs twice (DST ends) is the first of the two; a time skipped by a DST gap is
/// moved forward by the gap's length (it keeps the offset in force before the gap).
pub fn resolve_local<Z: TimeZone>(zone: &Z, local: NaiveDateTime) -> DateTime<Utc> {
    match zone.from_local_datetime(&local) {
        LocalResult::Single(instant) => instant.with_timezone(&Utc),
        LocalResult::Ambiguous(first, second) => {
            first.with_timezone(&Utc).min(second.with_timezone(&Utc))
        }
        LocalResult::None => {
            // The offset before the gap: look a few hours back, where the time exists.
            let before = local - Duration::hours(6);
            let offset_seconds = match zone.from_local_datetime(&before) {
                LocalResult::Single(instant) | LocalResult::Ambiguous(instant, _) => {
                    instant.offset().fix().local_minus_utc()
                }
                LocalResult::None => 0,
            };
            (local - Duration::seconds(i64::from(offset_seconds))).and_utc()
        }
    }
}

/// When an event starts or ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventTime {
    /// An all-day date.
    Date(NaiveDate),
    /// A date and wall-clock time in a zone.
    DateTime {
        /// The wall-clock time.
        local: NaiveDateTime,
        /// Its zone.
        zone: Zone,
    },
}

impl EventTime {
    /// Whether this is an all-day date.
    pub fn is_date(&self) -> bool {
        matches!(self, Self::Date(_))
    }

    /// The wall-clock value (midnight for a date).
    pub fn local(&self) -> NaiveDateTime {
        match self {
            Self::Date(date) => date.and_time(NaiveTime::MIN),
            Self::DateTime { local, .. } => *local,
        }
    }

    /// The date part.
    pub fn date(&self) -> NaiveDate {
        self.local().date()
    }

    /// The zone (`Floating` for dates).
    pub fn zone(&self) -> Zone {
        match self {
            Self::Date(_) => Zone::Floating,
            Self::DateTime { zone, .. } => *zone,
        }
    }

    /// The instant it denotes; dates and floating times are placed in `floating`.
    pub fn to_utc(&self, floating: Tz) -> DateTime<Utc> {
        self.zone().to_utc(self.local(), floating)
    }

    /// The iCalendar value (`20260303`, `20260303T090000`, `20260303T080000Z`).
    pub fn ical_value(&self) -> String {
        match self {
            Self::Date(date) => format_date(*date),
            Self::DateTime {
                local,
                zone: Zone::Utc,
            } => format!("{}Z", format_date_time(*local)),
            Self::DateTime {
                local,
                zone: Zone::Fixed(offset),
            } => format!(
                "{}Z",
                format_date_time(resolve_local(offset, *local).naive_utc())
            ),
            Self::DateTime { local, .. } => format_date_time(*local),
        }
    }

    /// The `TZID` parameter to write with [`Self::ical_value`], if any.
    pub fn tzid(&self) -> Option<&'static str> {
        match self {
            Self::DateTime {
                zone: Zone::Named(tz),
                ..
            } => Some(tz.name()),
            _ => None,
        }
    }
}

impl fmt::Display for EventTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Date(date) => write!(f, "{date}"),
            Self::DateTime { local, zone } => {
                write!(f, "{}", local.format("%Y-%m-%d %H:%M"))?;
                if local.second() != 0 {
                    write!(f, ":{:02}", local.second())?;
                }
                match zone {
                    Zone::Floating => Ok(()),
                    zone => write!(f, " ({})", zone.name()),
                }
            }
        }
    }
}

/// `YYYYMMDD`.
pub fn format_date(date: NaiveDate) -> String {
    format!("{:04}{:02}{:02}", date.year(), date.month(), date.day())
}

/// `YYYYMMDDTHHMMSS`.
pub fn format_date_time(local: NaiveDateTime) -> String {
    format!(
        "{}T{:02}{:02}{:02}",
        format_date(local.date()),
        local.hour(),
        local.minute(),
        local.second()
    )
}

fn digits(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// Parses an iCalendar DATE (`YYYYMMDD`).
pub fn parse_date(text: &str) -> Option<NaiveDate> {
    let text = text.trim();
    if text.len() != 8 || !text.is_ascii() {
        return None;
    }
    let year = digits(&text[..4])?;
    let month = digits(&text[4..6])?;
    let day = digits(&text[6..8])?;
    NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, month, day)
}

/// A parsed iCalendar DATE-TIME: the wall-clock value and whether it ends in `Z`.
pub fn parse_date_time(text: &str) -> Option<(NaiveDateTime, bool)> {
    let text = text.trim();
    let (body, utc) = match text.strip_suffix(['Z', 'z']) {
        Some(body) => (body, true),
        None => (text, false),
    };
    let (date, time) = body.split_once(['T', 't'])?;
    let date = parse_date(date)?;
    if !time.is_ascii() {
        return None;
    }
    // Seconds are required by RFC 5545; some producers omit them.
    let (hour, minute, second) = match time.len() {
        6 => (
            digits(&time[..2])?,
            digits(&time[2..4])?,
            digits(&time[4..6])?,
        ),
        4 => (digits(&time[..2])?, digits(&time[2..4])?, 0),
        _ => return None,
    };
    // A leap second (60) is read as the last second of its minute.
    let time = NaiveTime::from_hms_opt(hour, minute, second.min(59))?;
    Some((date.and_time(time), utc))
}

/// Parses an RFC 5545 DURATION (`P1D`, `PT1H30M`, `-PT15M`, `P2W`).
pub fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    let (negative, rest) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let rest = rest.strip_prefix(['P', 'p'])?;
    let mut total = Duration::zero();
    let mut in_time = false;
    let mut number = String::new();
    let mut seen = false;
    for c in rest.chars() {
        match c.to_ascii_uppercase() {
            'T' => in_time = true,
            d if d.is_ascii_digit() => number.push(d),
            unit => {
                let value: i64 = number.parse().ok()?;
                number.clear();
                seen = true;
                total += match (unit, in_time) {
                    ('W', false) => Duration::try_weeks(value)?,
                    ('D', false) => Duration::try_days(value)?,
                    ('H', true) => Duration::try_hours(value)?,
                    ('M', true) => Duration::try_minutes(value)?,
                    ('S', true) => Duration::try_seconds(value)?,
                    _ => return None,
                };
            }
        }
    }
    if !number.is_empty() || !seen {
        return None;
    }
    Some(if negative { -total } else { total })
}

/// Formats a duration as an RFC 5545 DURATION.
#[cfg(test)]
fn format_duration(duration: Duration) -> String {
    let negative = duration < Duration::zero();
    let mut seconds = duration.num_seconds().abs();
    let mut out = String::from(if negative { "-P" } else { "P" });
    let days = seconds / 86_400;
    seconds %= 86_400;
    if days > 0 {
        out.push_str(&format!("{days}D"));
    }
    if seconds > 0 || days == 0 {
        out.push('T');
        let (hours, minutes, secs) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
        if hours > 0 {
            out.push_str(&format!("{hours}H"));
        }
        if minutes > 0 {
            out.push_str(&format!("{minutes}M"));
        }
        if secs > 0 || (hours == 0 && minutes == 0) {
            out.push_str(&format!("{secs}S"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn at(text: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M").unwrap()
    }

    #[test]
    fn parses_ical_dates_and_times() {
        assert_eq!(parse_date("20260303"), NaiveDate::from_ymd_opt(2026, 3, 3));
        assert_eq!(parse_date("2026033"), None);
        assert_eq!(parse_date("20260230"), None);
        assert_eq!(
            parse_date_time("20260303T090000Z"),
            Some((at("2026-03-03 09:00"), true))
        );
        assert_eq!(
            parse_date_time("20260303T0930"),
            Some((at("2026-03-03 09:30"), false))
        );
        assert_eq!(parse_date_time("20260303T250000"), None);
        assert_eq!(
            parse_date_time("19000101T000000").map(|t| t.0.year()),
            Some(1900)
        );
        assert_eq!(
            parse_date_time("23001231T235960").map(|t| t.0.second()),
            Some(59)
        );
    }

    #[test]
    fn durations_round_trip() {
        for (text, minutes) in [
            ("PT1H30M", 90),
            ("P1D", 1440),
            ("P1W", 10080),
            ("-PT15M", -15),
            ("P1DT2H", 1560),
        ] {
            let duration = parse_duration(text).unwrap();
            assert_eq!(duration.num_minutes(), minutes, "{text}");
            assert_eq!(parse_duration(&format_duration(duration)), Some(duration));
        }
        assert_eq!(parse_duration("PT"), None);
        assert_eq!(parse_duration("P1H"), None);
        assert_eq!(parse_duration("1H"), None);
        assert_eq!(format_duration(Duration::zero()), "PT0S");
    }

    #[test]
    fn dst_gaps_move_forward_and_overlaps_take_the_first() {
        let berlin = chrono_tz::Europe::Berlin;
        // 2026-03-29 02:30 does not exist in Berlin: it becomes 03:30 CEST = 01:30 UTC.
        assert_eq!(
            resolve_local(&berlin, at("2026-03-29 02:30")),
            at("2026-03-29 01:30").and_utc()
        );
        // 2026-10-25 02:30 occurs twice: the first is CEST = 00:30 UTC.
        assert_eq!(
            resolve_local(&berlin, at("2026-10-25 02:30")),
            at("2026-10-25 00:30").and_utc()
        );
    }

    #[test]
    fn ical_values_and_display() {
        let zoned = EventTime::DateTime {
            local: at("2026-03-03 09:00"),
            zone: Zone::Named(chrono_tz::Europe::Berlin),
        };
        assert_eq!(zoned.ical_value(), "20260303T090000");
        assert_eq!(zoned.tzid(), Some("Europe/Berlin"));
        assert_eq!(zoned.to_string(), "2026-03-03 09:00 (Europe/Berlin)");
        let fixed = EventTime::DateTime {
            local: at("2026-03-03 09:00"),
            zone: Zone::Fixed(FixedOffset::east_opt(3600).unwrap()),
        };
        assert_eq!(fixed.ical_value(), "20260303T080000Z");
        assert_eq!(
            EventTime::Date(NaiveDate::from_ymd_opt(2026, 3, 3).unwrap()).ical_value(),
            "20260303"
        );
    }
}
