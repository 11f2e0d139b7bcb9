//! Writing Full Calendar notes. New notes get front matter in Full Calendar's layout;
//! changed notes get only their changed keys rewritten, line by line, so other keys,
//! comments and the body stay exactly as they were.

use chrono::{Duration, NaiveDate, NaiveTime};
use chrono_tz::Tz;
use serde_yaml_ng::{Mapping, Value};

use crate::error::{CalendarError, Result};
use crate::event::Event;
use crate::notes::{
    OPEN_START, front_matter, note_weekday_letter, parse_note_date, parse_note_time,
};
use crate::rrule::{RecurrenceRule, Until};
use crate::spec::{EventSpec, RecurrenceSpec, SpecTime};

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
) -> Result<Vec<(&'static str, Option<Value>)>> {
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
    let mut out: Vec<(&'static str, Option<Value>)> = vec![
        ("title", text(spec.title.clone())),
        ("allDay", Some(Value::Bool(all_day))),
    ];
    let plain_weekly = rule.filter(|r| r.is_plain_weekly() && !force_rrule && skip.is_empty());
    match (rule, plain_weekly) {
        (None, _) => {
            out.push(("type", text("single")));
            out.push(("date", date_value(first)));
            out.push((
                "endDate",
                (last > first).then(|| date_value(last)).flatten(),
            ));
        }
        (Some(_), Some(weekly)) => {
            let days: Vec<Value> = weekly
                .weekdays()
                .into_iter()
                .map(|d| Value::String(note_weekday_letter(d).to_owned()))
                .collect();
            out.push(("type", text("recurring")));
            out.push(("daysOfWeek", Some(Value::Sequence(days))));
            // A note that had no `startRecur` keeps none (it reads as `OPEN_START`).
            out.push((
                "startRecur",
                (first != OPEN_START).then(|| date_value(first)).flatten(),
            ));
            out.push(("endRecur", until_date(weekly, zone).and_then(date_value)));
        }
        (Some(rule), None) => {
            let mut rule = rule.clone();
            // Notes keep the end as a date; Full Calendar reads it as a date too.
            if let Some(date) = until_date(&rule, zone) {
                rule.set_until(Some(Until::Date(date)));
            }
            out.push(("type", text("rrule")));
            out.push(("startDate", date_value(first)));
            out.push(("rrule", text(rule.to_string())));
            out.push((
                "skipDates",
                Some(Value::Sequence(
                    skip.iter().filter_map(|d| date_value(*d)).collect(),
                )),
            ));
        }
    }
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

fn rule_of(spec: &EventSpec, current: Option<&Event>) -> Result<Option<RecurrenceRule>> {
    Ok(match &spec.recurrence {
        RecurrenceSpec::None => None,
        RecurrenceSpec::Rule { rule } => Some(rule.parse()?),
        RecurrenceSpec::Unchanged => current
            .and_then(|e| e.recurrence.as_ref())
            .and_then(|r| r.rules.first().cloned()),
    })
}

/// Renders `key: value` as one YAML line (or block).
fn render(key: &str, value: &Value, ending: &str) -> String {
    let rendered = match value {
        Value::Sequence(items) => {
            let items: Vec<String> = items.iter().map(render_scalar).collect();
            format!("[{}]", items.join(", "))
        }
        other => render_scalar(other),
    };
    format!("{key}: {rendered}{ending}")
}

fn render_scalar(value: &Value) -> String {
    serde_yaml_ng::to_string(value)
        .map(|s| s.trim_end().to_owned())
        .unwrap_or_default()
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
            out.push_str(&render(key, &value, "\n"));
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

/// Rewrites the event keys of a note's front matter (and its body when the description
/// changes), keeping every other line.
fn rewrite(
    text: &str,
    desired: &[(&'static str, Option<Value>)],
    body: Option<Option<&str>>,
) -> Result<String> {
    let front = front_matter(text).ok_or_else(|| {
        CalendarError::InvalidInput("the note has no front matter any more".to_owned())
    })?;
    let existing: Mapping = serde_yaml_ng::from_str(front.yaml).map_err(|e| {
        CalendarError::InvalidInput(format!("the note's front matter is not valid YAML: {e}"))
    })?;
    let ending = if front.yaml.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    // Split the YAML into top-level entries: a key line and its continuation lines.
    let mut entries: Vec<(Option<String>, String)> = Vec::new();
    for line in front.yaml.split_inclusive('\n') {
        let starts_entry = !line.starts_with([' ', '\t', '-', '#']) && !line.trim().is_empty();
        let key = starts_entry.then(|| {
            line.split(':')
                .next()
                .unwrap_or("")
                .trim()
                .trim_matches(['"', '\''])
                .to_owned()
        });
        match (key, entries.last_mut()) {
            (None, Some(last)) if !line.starts_with('#') => last.1.push_str(line),
            (key, _) => entries.push((key, line.to_owned())),
        }
    }
    let mut yaml = String::new();
    let mut written: Vec<&str> = Vec::new();
    for (key, lines) in &entries {
        match key
            .as_deref()
            .and_then(|k| desired.iter().find(|(name, _)| *name == k))
        {
            Some((name, value)) => {
                written.push(name);
                if same(name, existing.get(*name), value.as_ref()) {
                    yaml.push_str(lines);
                } else if let Some(value) = value {
                    yaml.push_str(&render(name, value, ending));
                }
            }
            None => yaml.push_str(lines),
        }
    }
    if !yaml.is_empty() && !yaml.ends_with('\n') {
        yaml.push_str(ending);
    }
    for (name, value) in desired {
        if let (false, Some(value)) = (written.contains(name), value) {
            yaml.push_str(&render(name, value, ending));
        }
    }
    let mut out = String::with_capacity(text.len() + 64);
    out.push_str(&text[..front.yaml_start]);
    out.push_str(&yaml);
    let closing_end = front.body_start;
    let closing_start = text[..closing_end]
        .trim_end_matches(['\n', '\r'])
        .rfind('\n')
        .map_or(front.yaml_start, |i| i + 1);
    out.push_str(&text[closing_start..closing_end]);
    if closing_end == text.len() && !out.ends_with('\n') {
        out.push_str(ending);
    }
    match body {
        Some(Some(description)) => {
            out.push_str(description);
            out.push_str(ending);
        }
        Some(None) => {}
        None => out.push_str(&text[closing_end..]),
    }
    // The result must still read as the intended mapping.
    let check = front_matter(&out).map(|f| serde_yaml_ng::from_str::<Mapping>(f.yaml));
    match check {
        Some(Ok(mapping))
            if desired
                .iter()
                .all(|(k, v)| same(k, mapping.get(*k), v.as_ref())) =>
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
    let keep_rrule = text.lines().any(|l| l.trim() == "type: rrule");
    let desired = fields(
        spec,
        rule.as_ref(),
        keep_rrule && rule.is_some(),
        &skip,
        zone,
    )?;
    let body = (current.description != spec.description).then_some(spec.description.as_deref());
    rewrite(text, &desired, body)
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
    let spec = EventSpec {
        uid: current.uid.clone(),
        title: current.title.clone(),
        start: SpecTime::from_event_time(current.start),
        end: SpecTime::from_event_time(current.end),
        location: current.location.clone(),
        description: current.description.clone(),
        recurrence: RecurrenceSpec::Unchanged,
    };
    let desired = fields(&spec, rule.as_ref(), true, &skip, zone)?;
    rewrite(text, &desired, None)
}

#[cfg(test)]
mod tests;
