//! Writing Full Calendar notes. New notes get front matter in Full Calendar's layout.
//! A changed note gets only the keys whose value changes rewritten, each in place and
//! in the style it was written in (quotes, list layout, time format, an `rrule`'s
//! `DTSTART` line), so other keys, comments and the body stay exactly as they were.

use std::path::Path;

use chrono::{Duration, NaiveDate, NaiveDateTime, NaiveTime, Timelike};
use chrono_tz::Tz;
use hearth_ical::{Event, EventSpec, RecurrenceRule, RecurrenceSpec, SpecTime, Until};
use serde_yaml_ng::{Mapping, Value};

use crate::error::{CalendarError, Result};
use crate::notes::{
    OPEN_START, front_matter, note_weekday_letter, parse_note_date, parse_note_time, read_note,
};
use crate::yaml_edit::{YamlText, render_entry};

/// A front-matter key and its value (`None`: the key is absent).
type Field = (&'static str, Option<Value>);

/// The front-matter keys Hearth writes; any other key is left alone.
const EVENT_FIELDS: &[&str] = &[
    "title",
    "allDay",
    "type",
    "date",
    "endDate",
    "startDate",
    "daysOfWeek",
    "startRecur",
    "endRecur",
    "rrule",
    "skipDates",
    "startTime",
    "endTime",
    "timezone",
    "location",
];

fn text(value: impl Into<String>) -> Option<Value> {
    Some(Value::String(value.into()))
}

fn date_value(date: NaiveDate) -> Option<Value> {
    text(date.format("%Y-%m-%d").to_string())
}

fn time_value(time: NaiveTime) -> Option<Value> {
    text(time.format("%H:%M").to_string())
}

fn until_date(rule: &RecurrenceRule, zone: Tz) -> Option<NaiveDate> {
    rule.until().map(|until| match until {
        Until::Date(date) => date,
        Until::Floating(time) => time.date(),
        Until::Utc(time) => time.and_utc().with_timezone(&zone).date_naive(),
    })
}

/// The event keys a note for `spec` has (`None`: the key is absent). `rule` is the
/// recurrence to write; `skip` the skipped dates; `zone` the calendar's zone (times in
/// it are written without `timezone`).
fn fields(
    spec: &EventSpec,
    rule: Option<&RecurrenceRule>,
    force_rrule: bool,
    skip: &[NaiveDate],
    zone: Tz,
) -> Result<Vec<Field>> {
    let all_day = spec.is_all_day();
    let start = spec.start_time()?;
    let end = spec.end_time()?;
    let note_zone = match &spec.start {
        SpecTime::Zoned { time_zone, .. } if time_zone.as_str() != zone.name() => {
            text(time_zone.clone())
        }
        SpecTime::Utc { .. } if zone != chrono_tz::UTC => text("UTC"),
        _ => None,
    };
    let (first, last) = if all_day {
        (start.date(), end.date() - Duration::days(1))
    } else {
        (start.date(), end.date())
    };
    let mut out: Vec<Field> = vec![
        ("title", text(spec.title.clone())),
        ("allDay", Some(Value::Bool(all_day))),
    ];
    let plain_weekly = rule.filter(|r| r.is_plain_weekly() && !force_rrule && skip.is_empty());
    out.extend(match (rule, plain_weekly) {
        (None, _) => vec![
            ("type", text("single")),
            ("date", date_value(first)),
            (
                "endDate",
                (last > first).then(|| date_value(last)).flatten(),
            ),
        ],
        (Some(_), Some(weekly)) => weekly_fields(weekly, first, zone),
        (Some(rule), None) => rrule_fields(rule, (first, last), skip, zone),
    });
    if all_day {
        out.push(("startTime", None));
        out.push(("endTime", None));
    } else {
        out.push(("startTime", time_value(start.local().time())));
        out.push(("endTime", time_value(end.local().time())));
    }
    out.push(("timezone", note_zone));
    out.push(("location", spec.location.clone().and_then(text)));
    for key in EVENT_FIELDS {
        if !out.iter().any(|(name, _)| name == key) {
            out.push((key, None));
        }
    }
    Ok(out)
}

/// The keys of a `recurring` note: weekly on its days.
fn weekly_fields(weekly: &RecurrenceRule, first: NaiveDate, zone: Tz) -> Vec<Field> {
    let days: Vec<Value> = weekly
        .weekdays()
        .into_iter()
        .map(|d| Value::String(note_weekday_letter(d).to_owned()))
        .collect();
    vec![
        ("type", text("recurring")),
        ("daysOfWeek", Some(Value::Sequence(days))),
        // A note that had no `startRecur` keeps none (it reads as `OPEN_START`).
        (
            "startRecur",
            (first != OPEN_START).then(|| date_value(first)).flatten(),
        ),
        ("endRecur", until_date(weekly, zone).and_then(date_value)),
    ]
}

/// The keys of an `rrule` note: its rule, its first occurrence's days, and the
/// skipped dates.
fn rrule_fields(
    rule: &RecurrenceRule,
    (first, last): (NaiveDate, NaiveDate),
    skip: &[NaiveDate],
    zone: Tz,
) -> Vec<Field> {
    let mut rule = rule.clone();
    // Notes keep the end as a date; Full Calendar reads it as a date too.
    if let Some(date) = until_date(&rule, zone) {
        rule.set_until(Some(Until::Date(date)));
    }
    vec![
        ("type", text("rrule")),
        ("startDate", date_value(first)),
        // Each occurrence lasts as the first does (read from `endDate`, as for a
        // single event).
        (
            "endDate",
            (last > first).then(|| date_value(last)).flatten(),
        ),
        ("rrule", text(rule.to_string())),
        (
            "skipDates",
            Some(Value::Sequence(
                skip.iter().filter_map(|d| date_value(*d)).collect(),
            )),
        ),
    ]
}

fn rule_of(spec: &EventSpec, current: Option<&Event>) -> Result<Option<RecurrenceRule>> {
    Ok(match &spec.recurrence {
        RecurrenceSpec::None => None,
        RecurrenceSpec::Rule { rule } => Some(rule.parse()?),
        RecurrenceSpec::Unchanged => current
            .and_then(|e| e.recurrence.as_ref())
            .and_then(|r| r.rules.first().cloned()),
    })
}

/// A new note for `spec` in a calendar whose zone is `zone`.
pub(crate) fn new_note(spec: &EventSpec, zone: Tz) -> Result<String> {
    new_note_skipping(spec, zone, &[])
}

/// A new note for `spec` whose recurrence skips `skip`.
pub(crate) fn new_note_skipping(spec: &EventSpec, zone: Tz, skip: &[NaiveDate]) -> Result<String> {
    let rule = rule_of(spec, None)?;
    let skip = if rule.is_some() { skip } else { &[] };
    let mut out = String::from("---\n");
    for (key, value) in fields(spec, rule.as_ref(), !skip.is_empty(), skip, zone)? {
        if let Some(value) = value {
            out.push_str(&render_entry(key, &value, "\n"));
        }
    }
    out.push_str("---\n");
    if let Some(description) = &spec.description {
        out.push_str(description);
        out.push('\n');
    }
    Ok(out)
}

/// The file name for a new note: `2026-03-03 Title.md`, `(Every M,W) Title.md` or
/// `(Repeats) Title.md`, without characters file systems refuse.
pub(crate) fn note_file_name(spec: &EventSpec) -> Result<String> {
    let rule = rule_of(spec, None)?;
    let prefix = match &rule {
        None => spec.start_time()?.date().format("%Y-%m-%d").to_string(),
        Some(rule) if rule.is_plain_weekly() => {
            let days: Vec<&str> = rule
                .weekdays()
                .into_iter()
                .map(note_weekday_letter)
                .collect();
            format!("(Every {})", days.join(","))
        }
        Some(_) => "(Repeats)".to_owned(),
    };
    let raw = format!("{prefix} {}", spec.title);
    let mut name: String = raw
        .chars()
        .map(|c| {
            if c.is_control() || "/\\:*?\"<>|#^[]".contains(c) {
                ' '
            } else {
                c
            }
        })
        .collect();
    name = name.split_whitespace().collect::<Vec<_>>().join(" ");
    name = name.trim_matches('.').trim().to_owned();
    while name.len() > 120 {
        name.pop();
    }
    if name.is_empty() {
        name = "Event".to_owned();
    }
    Ok(format!("{name}.md"))
}

/// Whether an existing value says the same as a desired one.
fn same(key: &str, existing: Option<&Value>, desired: Option<&Value>) -> bool {
    let as_text = |v: Option<&Value>| match v {
        Some(Value::String(s)) => Some(s.trim().to_owned()),
        Some(Value::Bool(b)) => Some(b.to_string()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let existing = existing.filter(|v| !v.is_null());
    match key {
        "date" | "endDate" | "startDate" | "startRecur" | "endRecur" => {
            as_text(existing).and_then(|t| parse_note_date(&t))
                == as_text(desired).and_then(|t| parse_note_date(&t))
        }
        "startTime" | "endTime" => {
            as_text(existing).and_then(|t| parse_note_time(&t))
                == as_text(desired).and_then(|t| parse_note_time(&t))
        }
        "allDay" => as_text(existing).map(|t| t.to_ascii_lowercase()) == as_text(desired),
        "daysOfWeek" | "skipDates" => {
            let items = |v: Option<&Value>| match v {
                Some(Value::Sequence(items)) => items
                    .iter()
                    .map(|i| as_text(Some(i)).unwrap_or_default())
                    .collect::<Vec<_>>(),
                Some(Value::String(s)) => s
                    .split(',')
                    .map(|i| i.trim().trim_matches(['[', ']']).trim().to_owned())
                    .filter(|i| !i.is_empty())
                    .collect(),
                _ => Vec::new(),
            };
            items(existing) == items(desired)
        }
        _ => {
            existing == desired
                || as_text(existing) == as_text(desired) && as_text(existing).is_some()
        }
    }
}

/// The event keys whose value differs between what a note said (`before`) and what it
/// is to say (`after`), in `after`'s order.
fn changes(before: &[Field], after: &[Field]) -> Vec<Field> {
    after
        .iter()
        .filter(|(key, value)| {
            before
                .iter()
                .find(|(name, _)| name == key)
                .is_none_or(|(_, old)| old != value)
        })
        .cloned()
        .collect()
}

/// The key a note uses for `key`: Full Calendar's spelling, or the other spelling Hearth
/// reads when the note has only that one.
fn note_key(existing: &Mapping, key: &'static str, rrule_note: bool) -> &'static str {
    let alias = match key {
        "timezone" => "timeZone",
        "startDate" if rrule_note => "date",
        _ => return key,
    };
    if !existing.contains_key(key) && existing.contains_key(alias) {
        alias
    } else {
        key
    }
}

/// A time written the way `existing` is written: 24-hour or `am`/`pm` (with its case
/// and spacing), with or without a leading zero, with or without seconds.
fn time_like(existing: &str, time: NaiveTime) -> String {
    let existing = existing.trim();
    let lower = existing.to_ascii_lowercase();
    let meridiem = lower.ends_with("am") || lower.ends_with("pm");
    let clock = if meridiem {
        existing[..existing.len() - 2].trim_end()
    } else {
        existing
    };
    let zero_padded = clock.split(':').next().is_some_and(|h| h.len() == 2);
    let with_seconds = clock.matches(':').count() == 2;
    let (hour, suffix) = if meridiem {
        let hour = match time.hour() % 12 {
            0 => 12,
            hour => hour,
        };
        let text = match (time.hour() < 12, existing.ends_with('M')) {
            (true, false) => "am",
            (false, false) => "pm",
            (true, true) => "AM",
            (false, true) => "PM",
        };
        let space = if clock.len() < existing.len() - 2 {
            " "
        } else {
            ""
        };
        (hour, format!("{space}{text}"))
    } else {
        (time.hour(), String::new())
    };
    let hour = if zero_padded {
        format!("{hour:02}")
    } else {
        hour.to_string()
    };
    let seconds = if with_seconds {
        format!(":{:02}", time.second())
    } else {
        String::new()
    };
    format!("{hour}:{:02}{seconds}{suffix}", time.minute())
}

/// An `rrule` value that carries more than the rule (Full Calendar writes `DTSTART:…`
/// before `RRULE:…`), with the rule replaced when it changed (`rule`) and the `DTSTART`
/// moved by `shift`; every other line as it was.
fn rrule_with_start(existing: &str, rule: Option<&str>, shift: Duration) -> String {
    let mut rule_written = false;
    let lines: Vec<String> = existing
        .split('\n')
        .map(|line| {
            let upper = line.trim().to_ascii_uppercase();
            if upper.starts_with("DTSTART") {
                shift_start(line, shift)
            } else if upper.is_empty() || rule_written {
                line.to_owned()
            } else {
                rule_written = true;
                match rule {
                    Some(rule) if upper.starts_with("RRULE:") => {
                        let prefix = &line.trim_start()[..6];
                        format!("{prefix}{rule}")
                    }
                    Some(rule) => rule.to_owned(),
                    None => line.to_owned(),
                }
            }
        })
        .collect();
    lines.join("\n")
}

/// A `DTSTART` line moved by `shift`, in the same form (a date, or a floating or UTC
/// time); a line it cannot read is kept as it is.
fn shift_start(line: &str, shift: Duration) -> String {
    let Some(colon) = line.rfind(':') else {
        return line.to_owned();
    };
    let (head, rest) = line.split_at(colon + 1);
    let value = rest.trim_end();
    let trailing = &rest[value.len()..];
    let (stem, utc) = match value.strip_suffix('Z') {
        Some(stem) => (stem, "Z"),
        None => (value, ""),
    };
    let moved = if let Ok(time) = NaiveDateTime::parse_from_str(stem, "%Y%m%dT%H%M%S") {
        (time + shift).format("%Y%m%dT%H%M%S").to_string()
    } else if let Ok(date) = NaiveDate::parse_from_str(stem, "%Y%m%d") {
        (date + Duration::days(shift.num_days()))
            .format("%Y%m%d")
            .to_string()
    } else {
        return line.to_owned();
    };
    format!("{head}{moved}{utc}{trailing}")
}

/// The spec a note holding `current` says now.
fn spec_of(current: &Event) -> EventSpec {
    EventSpec {
        uid: current.uid.clone(),
        title: current.title.clone(),
        start: SpecTime::from_event_time(current.start),
        end: SpecTime::from_event_time(current.end),
        location: current.location.clone(),
        description: current.description.clone(),
        recurrence: RecurrenceSpec::Unchanged,
    }
}

/// An edit to one front-matter key: where the note keeps it, the event key it stands
/// for, and its new value (`None`: remove it).
struct KeyEdit {
    target: &'static str,
    key: &'static str,
    value: Option<Value>,
}

/// The key edits that make a note holding `current` say `spec` with `rule` and `skip`:
/// only keys whose value changes, each under the spelling the note uses.
fn key_edits(
    existing: &Mapping,
    current: &Event,
    spec: &EventSpec,
    rule: Option<&RecurrenceRule>,
    skip: &[NaiveDate],
    zone: Tz,
) -> Result<Vec<KeyEdit>> {
    let rrule_note = existing
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| t.trim() == "rrule");
    let current_rule = current
        .recurrence
        .as_ref()
        .and_then(|r| r.rules.first().cloned());
    let current_skip: Vec<NaiveDate> = current
        .recurrence
        .as_ref()
        .map(|r| r.exdates.iter().map(|d| d.date()).collect())
        .unwrap_or_default();
    let force_rrule = |rule: Option<&RecurrenceRule>, skip: &[NaiveDate]| {
        rrule_note && rule.is_some() || !skip.is_empty()
    };
    let before = fields(
        &spec_of(current),
        current_rule.as_ref(),
        force_rrule(current_rule.as_ref(), &current_skip),
        &current_skip,
        zone,
    )?;
    let after = fields(spec, rule, force_rrule(rule, skip), skip, zone)?;
    let mut edits = changes(&before, &after);
    // A rule value that carries its DTSTART keeps it, moved with the event.
    let old_rrule = existing.get("rrule").and_then(Value::as_str);
    let new_rrule = after
        .iter()
        .find(|(key, _)| *key == "rrule")
        .and_then(|(_, value)| value.as_ref())
        .and_then(Value::as_str);
    if let (Some(old), Some(new)) = (old_rrule, new_rrule)
        && old.to_ascii_uppercase().contains("DTSTART")
    {
        let rule_changed = edits.iter().any(|(key, _)| *key == "rrule");
        let shift = spec.start_time()?.local() - current.start.local();
        let value = rrule_with_start(old, rule_changed.then_some(new), shift);
        edits.retain(|(key, _)| *key != "rrule");
        if value != old {
            edits.push(("rrule", Some(Value::String(value))));
        }
    }
    let edits: Vec<KeyEdit> = edits
        .into_iter()
        .map(|(key, value)| KeyEdit {
            target: note_key(existing, key, rrule_note),
            key,
            value,
        })
        .collect();
    // An edit under another spelling gives way to one of that key itself.
    let direct: Vec<&'static str> = edits
        .iter()
        .filter(|e| e.target == e.key)
        .map(|e| e.key)
        .collect();
    Ok(edits
        .into_iter()
        .filter(|e| e.target == e.key || !direct.contains(&e.target))
        .collect())
}

/// Rewrites the note `text` (holding `current`) to say `spec` with `rule` and `skip`:
/// only the keys whose value changes are edited, each in place and in its own style;
/// the body is replaced only when the description changes.
fn edit_note(
    text: &str,
    current: &Event,
    spec: &EventSpec,
    rule: Option<&RecurrenceRule>,
    skip: &[NaiveDate],
    zone: Tz,
) -> Result<String> {
    let front = front_matter(text).ok_or_else(|| {
        CalendarError::InvalidInput("the note has no front matter any more".to_owned())
    })?;
    let existing: Mapping = serde_yaml_ng::from_str(front.yaml).map_err(|e| {
        CalendarError::InvalidInput(format!("the note's front matter is not valid YAML: {e}"))
    })?;
    let edits = key_edits(&existing, current, spec, rule, skip, zone)?;
    let ending = if front.yaml.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let mut yaml = YamlText::parse(front.yaml);
    for edit in &edits {
        match &edit.value {
            Some(Value::String(time)) if matches!(edit.key, "startTime" | "endTime") => {
                let written = match (existing.get(edit.target), parse_note_time(time)) {
                    (Some(Value::String(old)), Some(time)) if parse_note_time(old).is_some() => {
                        time_like(old, time)
                    }
                    _ => time.clone(),
                };
                yaml.set(edit.target, &Value::String(written));
            }
            Some(value) => yaml.set(edit.target, value),
            None => yaml.remove(edit.target),
        }
    }
    let body = (current.description != spec.description).then_some(spec.description.as_deref());
    let mut out = String::with_capacity(text.len() + 64);
    out.push_str(&text[..front.yaml_start]);
    out.push_str(&yaml.into_string());
    let closing_end = front.body_start;
    let closing_start = text[..closing_end]
        .trim_end_matches(['\n', '\r'])
        .rfind('\n')
        .map_or(front.yaml_start, |i| i + 1);
    out.push_str(&text[closing_start..closing_end]);
    match body {
        Some(Some(description)) => {
            if !out.ends_with('\n') {
                out.push_str(ending);
            }
            out.push_str(description);
            out.push_str(ending);
        }
        Some(None) => {}
        None => out.push_str(&text[closing_end..]),
    }
    // The result must still read as an event, with the intended values.
    let check = front_matter(&out).map(|f| serde_yaml_ng::from_str::<Mapping>(f.yaml));
    let readable = read_note("check", Path::new("check.md"), &out).is_ok_and(|e| e.is_some());
    match check {
        Some(Ok(mapping))
            if readable
                && edits.iter().all(|edit| match &edit.value {
                    Some(value) => same(edit.key, mapping.get(edit.target), Some(value)),
                    None => !mapping.contains_key(edit.target),
                }) =>
        {
            Ok(out)
        }
        _ => Err(CalendarError::InvalidInput(
            "Hearth could not rewrite this note's front matter safely; edit it by hand".to_owned(),
        )),
    }
}

/// The note `text` (holding `current`) changed to say what `spec` says.
pub(crate) fn update_note(
    text: &str,
    current: &Event,
    spec: &EventSpec,
    zone: Tz,
) -> Result<String> {
    let rule = rule_of(spec, Some(current))?;
    let skip: Vec<NaiveDate> = match (&spec.recurrence, &current.recurrence) {
        (RecurrenceSpec::Unchanged, Some(recurrence)) => {
            recurrence.exdates.iter().map(|d| d.date()).collect()
        }
        _ => Vec::new(),
    };
    edit_note(text, current, spec, rule.as_ref(), &skip, zone)
}

/// The note `text` of series `current` with the occurrence on `date` skipped (a
/// `recurring` note becomes an `rrule` note, which can skip dates).
pub(crate) fn skip_occurrence(
    text: &str,
    current: &Event,
    date: NaiveDate,
    zone: Tz,
) -> Result<String> {
    let recurrence = current.recurrence.as_ref().ok_or_else(|| {
        CalendarError::InvalidInput(
            "this event does not repeat; delete the whole event instead".to_owned(),
        )
    })?;
    let rule = recurrence.rules.first().cloned();
    let mut skip: Vec<NaiveDate> = recurrence.exdates.iter().map(|d| d.date()).collect();
    if !skip.contains(&date) {
        skip.push(date);
        skip.sort_unstable();
    }
    edit_note(text, current, &spec_of(current), rule.as_ref(), &skip, zone)
}

#[cfg(test)]
mod tests;
