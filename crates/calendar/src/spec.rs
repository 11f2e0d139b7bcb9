//! Events as agents and the CLI describe them ([`EventInput`], [`EventPatch`]), checked
//! and resolved into the exact event a staged change will write ([`EventSpec`]), with
//! errors that say which field is wrong and how to fix it.
//!
//! One zone rule for every time argument: a wall-clock time (`2026-03-03T16:30`) is read
//! in the user's zone — the zone of every listing and occurrence handle — unless it
//! carries an offset (`…+01:00`, `…Z`) or `time_zone` names the zone it is in. Where it
//! is stored is a separate choice ([`Zones`]): a changed event keeps its own zone (the
//! new time converted into it), a new one is stored in the zone it was read in.

use chrono::{DateTime, Duration, NaiveDate, NaiveDateTime, NaiveTime, TimeZone};
use chrono_tz::Tz;
use hearth_ical::{
    Event, EventSpec, EventTime, Frequency, IcalError, RecurrenceRule, RecurrenceSpec, SpecTime,
    Until, Zone, parse_time_zone, resolve_local,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{CalendarError, Result};
use crate::taxonomy::Taxonomy;

const MAX_TITLE: usize = 500;
const MAX_TEXT: usize = 20_000;

/// A new event.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EventInput {
    /// Title, e.g. `Dentist`. May already be `Category - SubCategory - Title`.
    pub title: String,
    /// Category (taxonomy `Category - SubCategory - Title`), e.g. `Health`.
    #[serde(default)]
    pub category: Option<String>,
    /// Sub-category, e.g. `Checkups`; needs `category`.
    #[serde(default)]
    pub sub_category: Option<String>,
    /// Start: `2026-03-03` for an all-day event, `2026-03-03T09:00` for a timed event (wall
    /// clock in the user's time zone, or in `time_zone` when given), or an RFC 3339 time
    /// with offset.
    pub start: String,
    /// End. Timed events: a date-time after `start` (default: one hour after `start`).
    /// All-day events: the last day, inclusive (default: the start day).
    #[serde(default)]
    pub end: Option<String>,
    /// Whether the event lasts whole days; inferred from `start` when absent.
    #[serde(default)]
    pub all_day: Option<bool>,
    /// IANA time zone `start`/`end` are given in and the event is stored in, e.g.
    /// `America/New_York`; the user's zone when absent.
    #[serde(default)]
    pub time_zone: Option<String>,
    /// Location.
    #[serde(default)]
    pub location: Option<String>,
    /// Description.
    #[serde(default)]
    pub description: Option<String>,
    /// Recurrence as an RFC 5545 RRULE, e.g. `FREQ=WEEKLY;BYDAY=MO,WE` or
    /// `FREQ=MONTHLY;BYDAY=-1FR;COUNT=6`.
    #[serde(default)]
    pub recurrence: Option<String>,
}

/// Changes to an event; absent fields stay as they are, an empty string removes an
/// optional field.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EventPatch {
    /// New title (without category, unless it carries a new `Category - ...`).
    #[serde(default)]
    pub title: Option<String>,
    /// New category (empty: remove the category).
    #[serde(default)]
    pub category: Option<String>,
    /// New sub-category (empty: remove it).
    #[serde(default)]
    pub sub_category: Option<String>,
    /// New start (same forms as when creating: a wall clock is in the user's zone unless
    /// `time_zone` or an offset says otherwise). The length is kept unless `end` is given.
    #[serde(default)]
    pub start: Option<String>,
    /// New end (same forms and zone as `start`).
    #[serde(default)]
    pub end: Option<String>,
    /// Make the event all-day (true) or timed (false).
    #[serde(default)]
    pub all_day: Option<bool>,
    /// IANA time zone the new `start`/`end` are given in, which the event moves to;
    /// absent: they are in the user's zone and the event keeps its own zone.
    #[serde(default)]
    pub time_zone: Option<String>,
    /// New location (empty: remove).
    #[serde(default)]
    pub location: Option<String>,
    /// New description (empty: remove).
    #[serde(default)]
    pub description: Option<String>,
    /// New RRULE (empty: stop repeating).
    #[serde(default)]
    pub recurrence: Option<String>,
}

/// The zones a change's times are read and stored in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Zones {
    /// The user's zone: wall-clock arguments without an offset or `time_zone` are read
    /// in it.
    pub user: Tz,
    /// The calendar's zone: where its floating times are placed, so where a changed
    /// event without a zone of its own is stored.
    pub calendar: Tz,
}

fn invalid(message: impl Into<String>) -> CalendarError {
    CalendarError::InvalidInput(message.into())
}

/// A time as given in an argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum InputTime {
    Date(NaiveDate),
    Local(NaiveDateTime),
    Instant(DateTime<chrono::FixedOffset>),
}

/// Parses `2026-03-03`, `2026-03-03T09:00[:00]` (or with a space) and RFC 3339 times.
pub(crate) fn parse_input_time(field: &str, text: &str) -> Result<InputTime> {
    let text = text.trim();
    if let Ok(date) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(InputTime::Date(date));
    }
    for format in [
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(local) = NaiveDateTime::parse_from_str(text, format) {
            return Ok(InputTime::Local(local));
        }
    }
    if let Ok(instant) = DateTime::parse_from_rfc3339(text) {
        return Ok(InputTime::Instant(instant));
    }
    for format in ["%Y-%m-%dT%H:%M%#z", "%Y-%m-%d %H:%M%#z"] {
        if let Ok(instant) = DateTime::parse_from_str(&text.replace('Z', "+00:00"), format) {
            return Ok(InputTime::Instant(instant));
        }
    }
    Err(invalid(format!(
        "`{field}` value `{text}` is not a date (2026-03-03) or date-time (2026-03-03T09:00, or with an offset like 2026-03-03T09:00:00+01:00)"
    )))
}

fn check_year(field: &str, date: NaiveDate) -> Result<()> {
    if (1..=9999).contains(&chrono::Datelike::year(&date)) {
        Ok(())
    } else {
        Err(invalid(format!("`{field}` must be in the years 1 to 9999")))
    }
}

fn clean_text(field: &str, text: &str, max: usize, single_line: bool) -> Result<String> {
    let mut cleaned: String = text
        .chars()
        .filter(|c| !c.is_control() || (*c == '\n' && !single_line) || *c == '\t')
        .map(|c| if c == '\t' { ' ' } else { c })
        .collect();
    cleaned = cleaned.trim().to_owned();
    if cleaned.chars().count() > max {
        return Err(invalid(format!(
            "`{field}` is longer than {max} characters; shorten it"
        )));
    }
    Ok(cleaned)
}

fn optional_text(field: &str, text: Option<&str>, single_line: bool) -> Result<Option<String>> {
    match text {
        None => Ok(None),
        Some(text) => {
            let cleaned = clean_text(field, text, MAX_TEXT, single_line)?;
            Ok((!cleaned.is_empty()).then_some(cleaned))
        }
    }
}

/// The zone to write timed events in: `tz`, as UTC when it is UTC.
fn spec_local(local: NaiveDateTime, tz: Tz) -> SpecTime {
    if tz == chrono_tz::UTC || tz == chrono_tz::Etc::UTC {
        SpecTime::Utc { utc: local }
    } else {
        SpecTime::Zoned {
            local,
            time_zone: tz.name().to_owned(),
        }
    }
}

fn local_in(time: InputTime, tz: Tz) -> Option<NaiveDateTime> {
    match time {
        InputTime::Date(_) => None,
        InputTime::Local(local) => Some(local),
        InputTime::Instant(instant) => Some(instant.with_timezone(&tz).naive_local()),
    }
}

/// `time` as read in `zone`: a wall clock becomes the instant `zone`'s clock shows it
/// at, so it lands there whatever zone it is stored in; dates and instants stay.
fn read_in(time: InputTime, zone: Tz) -> InputTime {
    match time {
        InputTime::Local(local) => InputTime::Instant(
            resolve_local(&zone, local)
                .with_timezone(&zone)
                .fixed_offset(),
        ),
        other => other,
    }
}

fn date_of(time: InputTime) -> NaiveDate {
    match time {
        InputTime::Date(date) => date,
        InputTime::Local(local) => local.date(),
        InputTime::Instant(instant) => instant.date_naive(),
    }
}

/// Start and end from inputs: `start`, optional `end`, whether all-day, zone.
fn resolve_times(
    start: InputTime,
    end: Option<InputTime>,
    all_day: bool,
    tz: Tz,
    default_length: Duration,
) -> Result<(SpecTime, SpecTime)> {
    if all_day {
        let first = date_of(start);
        check_year("start", first)?;
        let last = end.map_or(first, date_of);
        if last < first {
            return Err(invalid(format!(
                "`end` ({last}) is before `start` ({first}); for all-day events `end` is the last day"
            )));
        }
        let after = last
            .succ_opt()
            .ok_or_else(|| invalid("`end` is too far in the future"))?;
        return Ok((
            SpecTime::Date { date: first },
            SpecTime::Date { date: after },
        ));
    }
    let start_local = local_in(start, tz).ok_or_else(|| {
        invalid(format!(
            "`start` ({}) has no time of day; give one like {}T09:00, or set `all_day` to true",
            date_of(start),
            date_of(start)
        ))
    })?;
    check_year("start", start_local.date())?;
    let end_local = match end {
        None => start_local + default_length,
        Some(end) => local_in(end, tz).ok_or_else(|| {
            invalid(format!(
                "`end` ({}) has no time of day; give one like {}T10:00",
                date_of(end),
                date_of(end)
            ))
        })?,
    };
    let (start_instant, end_instant) = (
        resolve_local(&tz, start_local),
        resolve_local(&tz, end_local),
    );
    if end_instant <= start_instant {
        return Err(invalid(format!(
            "`end` ({}) must be after `start` ({})",
            end_local.format("%Y-%m-%dT%H:%M"),
            start_local.format("%Y-%m-%dT%H:%M")
        )));
    }
    Ok((spec_local(start_local, tz), spec_local(end_local, tz)))
}

/// Checks an RRULE for an event starting at `start`, and writes UNTIL in the form RFC
/// 5545 requires for it (a date for all-day events, UTC for zoned ones).
pub(crate) fn validate_rule(text: &str, start: &SpecTime, tz: Tz) -> Result<String> {
    let mut rule: RecurrenceRule = text.trim().parse()?;
    let all_day = matches!(start, SpecTime::Date { .. });
    if all_day && rule.frequency() < Frequency::Daily {
        return Err(CalendarError::Ical(IcalError::InvalidRule {
            rule: text.to_owned(),
            reason:
                "an all-day event repeats at most daily; use FREQ=DAILY, WEEKLY, MONTHLY or YEARLY"
                    .to_owned(),
        }));
    }
    let start_event = start.to_event_time()?;
    let until = rule.until().map(|until| match (until, start) {
        (Until::Date(date), SpecTime::Date { .. }) => Until::Date(date),
        (Until::Utc(time) | Until::Floating(time), SpecTime::Date { .. }) => {
            Until::Date(time.date())
        }
        (Until::Date(date), SpecTime::Floating { .. }) => Until::Floating(
            date.and_hms_opt(23, 59, 59)
                .unwrap_or(date.and_time(NaiveTime::MIN)),
        ),
        (Until::Floating(time), SpecTime::Floating { .. }) => Until::Floating(time),
        (Until::Utc(time), SpecTime::Floating { .. }) => {
            Until::Floating(tz.from_utc_datetime(&time).naive_local())
        }
        (Until::Utc(time), _) => Until::Utc(time),
        (Until::Date(date), _) => {
            let local = date
                .and_hms_opt(23, 59, 59)
                .unwrap_or(date.and_time(NaiveTime::MIN));
            Until::Utc(start_event.zone().to_utc(local, tz).naive_utc())
        }
        (Until::Floating(local), _) => Until::Utc(start_event.zone().to_utc(local, tz).naive_utc()),
    });
    rule.set_until(until);
    let ends_before_start = match (until, start_event) {
        (Some(Until::Date(date)), start) => date < start.date(),
        (Some(Until::Floating(time)), start) => time < start.local(),
        (Some(Until::Utc(time)), start) => time.and_utc() < start.to_utc(tz),
        (None, _) => false,
    };
    if ends_before_start {
        return Err(CalendarError::Ical(IcalError::InvalidRule {
            rule: text.to_owned(),
            reason: "UNTIL is before the start; give a later UNTIL or drop it".to_owned(),
        }));
    }
    Ok(rule.to_string())
}

/// Resolves a new event. `tz` is the user's zone: wall-clock times without an offset
/// are read in it unless `time_zone` is given, and the event is stored in the zone its
/// times were read in.
pub(crate) fn resolve_input(input: &EventInput, tz: Tz, uid: String) -> Result<EventSpec> {
    let title = clean_text("title", &input.title, MAX_TITLE, true)?;
    if title.is_empty() {
        return Err(invalid("`title` is empty; give the event a title"));
    }
    if input
        .sub_category
        .as_deref()
        .is_some_and(|s| !s.trim().is_empty())
        && input
            .category
            .as_deref()
            .is_none_or(|c| c.trim().is_empty())
    {
        return Err(invalid("`sub_category` needs a `category`"));
    }
    let title = Taxonomy::new(
        input.category.as_deref(),
        input.sub_category.as_deref(),
        &title,
    )
    .format();
    let tz = match &input.time_zone {
        Some(name) => parse_time_zone(name)?,
        None => tz,
    };
    let start = parse_input_time("start", &input.start)?;
    let end = input
        .end
        .as_deref()
        .map(|e| parse_input_time("end", e))
        .transpose()?;
    let all_day = input.all_day.unwrap_or(matches!(start, InputTime::Date(_)));
    let (start, end) = resolve_times(start, end, all_day, tz, Duration::hours(1))?;
    let recurrence = match input.recurrence.as_deref().map(str::trim) {
        None | Some("") => RecurrenceSpec::None,
        Some(rule) => RecurrenceSpec::Rule {
            rule: validate_rule(rule, &start, tz)?,
        },
    };
    Ok(EventSpec {
        uid,
        title,
        start,
        end,
        location: optional_text("location", input.location.as_deref(), true)?,
        description: optional_text("description", input.description.as_deref(), false)?,
        recurrence,
    })
}

fn replace_or_remove(value: Option<&str>, current: Option<String>) -> Option<String> {
    match value.map(str::trim) {
        None => current,
        Some("") => None,
        Some(value) => Some(value.to_owned()),
    }
}

/// The event `event` becomes with `patch` applied. Wall-clock times in `patch` are read
/// in the user's zone (or its `time_zone`); the event keeps its own zone (the calendar's
/// when it has none), unless `time_zone` moves it.
pub(crate) fn resolve_patch(event: &Event, patch: &EventPatch, zones: Zones) -> Result<EventSpec> {
    let taxonomy = patched_taxonomy(event, patch)?;
    let event_tz = match event.start.zone() {
        Zone::Named(tz) => tz,
        _ => zones.calendar,
    };
    let given = patch
        .time_zone
        .as_deref()
        .map(parse_time_zone)
        .transpose()?;
    let tz = given.unwrap_or(event_tz);
    let read = given.unwrap_or(zones.user);
    let times_touched = patch.start.is_some()
        || patch.end.is_some()
        || patch.all_day.is_some()
        || patch.time_zone.is_some();
    let (start, end) = if times_touched {
        patched_times(event, patch, event_tz, (read, tz))?
    } else {
        (
            SpecTime::from_event_time(event.start),
            SpecTime::from_event_time(event.end),
        )
    };
    let recurrence = match patch.recurrence.as_deref().map(str::trim) {
        None if times_touched
            && event.is_all_day() != matches!(start, SpecTime::Date { .. })
            && event.is_recurring() =>
        {
            return Err(invalid(
                "switching a repeating event between all-day and timed needs its `recurrence` given again",
            ));
        }
        None => RecurrenceSpec::Unchanged,
        Some("") | Some("none") => RecurrenceSpec::None,
        Some(rule) => RecurrenceSpec::Rule {
            rule: validate_rule(rule, &start, tz)?,
        },
    };
    Ok(EventSpec {
        uid: event.uid.clone(),
        title: taxonomy.format(),
        start,
        end,
        location: match patch.location.as_deref() {
            Some(text) => optional_text("location", Some(text), true)?,
            None => event.location.clone(),
        },
        description: match patch.description.as_deref() {
            Some(text) => optional_text("description", Some(text), false)?,
            None => event.description.clone(),
        },
        recurrence,
    })
}

/// The title, category and sub-category `patch` gives `event`: a new title keeps the
/// current category unless it carries its own; an empty category removes both.
fn patched_taxonomy(event: &Event, patch: &EventPatch) -> Result<Taxonomy> {
    let current = Taxonomy::of(event);
    let mut taxonomy = match patch.title.as_deref() {
        Some(title) => {
            let title = clean_text("title", title, MAX_TITLE, true)?;
            if title.is_empty() {
                return Err(invalid(
                    "`title` is empty; give the event a title or leave `title` out",
                ));
            }
            let parsed = Taxonomy::parse(&title);
            if parsed.category.is_some() {
                parsed
            } else {
                Taxonomy {
                    title: parsed.title,
                    ..current
                }
            }
        }
        None => current,
    };
    if let Some(category) = patch.category.as_deref() {
        taxonomy.category = replace_or_remove(Some(category), None);
        if taxonomy.category.is_none() {
            taxonomy.sub_category = None;
        }
    }
    if let Some(sub) = patch.sub_category.as_deref() {
        taxonomy.sub_category = replace_or_remove(Some(sub), None);
        if taxonomy.sub_category.is_some() && taxonomy.category.is_none() {
            return Err(invalid("`sub_category` needs a `category`"));
        }
    }
    Ok(taxonomy)
}

/// The start and end after `patch` touched the times: a start not given is the
/// event's (in `event_tz`), the length is kept unless an end is given, and the kind
/// (all-day or timed) follows the new start unless `all_day` says. Wall clocks given
/// are read in `read` and stored in `tz`.
fn patched_times(
    event: &Event,
    patch: &EventPatch,
    event_tz: Tz,
    (read, tz): (Tz, Tz),
) -> Result<(SpecTime, SpecTime)> {
    let given = |field: &str, text: &str| -> Result<InputTime> {
        let time = parse_input_time(field, text)?;
        Ok(if read == tz {
            time
        } else {
            read_in(time, read)
        })
    };
    let start_input = match &patch.start {
        Some(text) => given("start", text)?,
        None => match event.start {
            EventTime::Date(date) => InputTime::Date(date),
            time if patch.time_zone.is_some() && time.zone() == Zone::Named(event_tz) => {
                InputTime::Local(time.local())
            }
            time => InputTime::Instant(time.to_utc(event_tz).fixed_offset()),
        },
    };
    let all_day = patch.all_day.unwrap_or(match &patch.start {
        Some(_) => matches!(start_input, InputTime::Date(_)),
        None => event.is_all_day(),
    });
    let length = event.duration(event_tz);
    let end_input = match &patch.end {
        Some(text) => Some(given("end", text)?),
        None if all_day && event.is_all_day() => {
            let last = date_of(start_input) + Duration::days((length.num_days() - 1).max(0));
            Some(InputTime::Date(last))
        }
        None => None,
    };
    let default_length = if event.is_all_day() || length <= Duration::zero() {
        Duration::hours(1)
    } else {
        length
    };
    resolve_times(start_input, end_input, all_day, tz, default_length)
}

#[cfg(test)]
mod tests;
