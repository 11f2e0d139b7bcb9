//! Rewriting one VEVENT so it says what a spec says: unchanged properties, children
//! and stray lines are copied byte for byte; changed ones are replaced in place.

use std::ops::Range;

use chrono::{DateTime, Utc};

use super::{Document, line, same_time, stamp_value, text_line, time_line};
use crate::component::{Component, Property};
use crate::contentline::{ContentLine, escape_text};
use crate::error::Result;
use crate::event::Event;
use crate::rrule::RecurrenceRule;
use crate::spec::{EventSpec, RecurrenceSpec};
use crate::time::EventTime;

/// What to do with one existing property while rewriting an event.
enum Action {
    Keep,
    Drop,
    Replace(String),
}

/// Rewrites `component` (holding `current`) so it says what `spec` says.
pub(super) fn rewrite(
    document: &Document<'_>,
    component: &Component<'_>,
    current: &Event,
    spec: &EventSpec,
    stamp: DateTime<Utc>,
    extra: Vec<ContentLine<'static>>,
) -> Result<(String, Vec<EventTime>)> {
    let ending = document.ending();
    let text = document.text;
    let (start, end) = (spec.start_time()?, spec.end_time()?);
    let title_changed = current.title != spec.title;
    let start_changed = !same_time(&current.start, &start);
    let end_changed = !same_time(&current.end, &end)
        || (start_changed && current.start.is_date() != start.is_date());
    let rule_line = |rule: &str| line(&ContentLine::new("RRULE", rule.to_owned()), ending);
    let (drop_recurrence, new_rule) = match &spec.recurrence {
        RecurrenceSpec::Unchanged => (false, None),
        RecurrenceSpec::None => (true, None),
        RecurrenceSpec::Rule { rule } => {
            let parsed: RecurrenceRule = rule.parse()?;
            let same = current
                .recurrence
                .as_ref()
                .is_some_and(|r| r.rules == [parsed]);
            (false, (!same).then(|| rule.clone()))
        }
    };
    let mut rule_written = new_rule.is_none();
    let mut seen_end = false;
    let seen = |name: &str| component.property(name).is_some();
    let decide =
        |property: &Property<'_>, rule_written: &mut bool, seen_end: &mut bool| -> Result<Action> {
            let name = property.content.name.to_ascii_uppercase();
            Ok(match name.as_str() {
                "SUMMARY" if title_changed => {
                    Action::Replace(text_line(property, "SUMMARY", &spec.title, ending))
                }
                "DTSTART" if start_changed => {
                    Action::Replace(line(&time_line("DTSTART", &start), ending))
                }
                "DTEND" | "DURATION" => {
                    if *seen_end {
                        Action::Drop
                    } else {
                        *seen_end = true;
                        if end_changed {
                            Action::Replace(line(&time_line("DTEND", &end), ending))
                        } else {
                            Action::Keep
                        }
                    }
                }
                "LOCATION" if current.location != spec.location => match &spec.location {
                    Some(location) => {
                        Action::Replace(text_line(property, "LOCATION", location, ending))
                    }
                    None => Action::Drop,
                },
                "DESCRIPTION" if current.description != spec.description => match &spec.description
                {
                    Some(description) => {
                        Action::Replace(text_line(property, "DESCRIPTION", description, ending))
                    }
                    None => Action::Drop,
                },
                // Outlook's HTML copy of the description would contradict the new one.
                "X-ALT-DESC" if current.description != spec.description => Action::Drop,
                "RRULE" | "RDATE" | "EXDATE" if drop_recurrence => Action::Drop,
                "RRULE" => match &new_rule {
                    Some(rule) if !*rule_written => {
                        *rule_written = true;
                        Action::Replace(rule_line(rule))
                    }
                    Some(_) => Action::Drop,
                    None => Action::Keep,
                },
                "DTSTAMP" => Action::Replace(line(
                    &ContentLine::new("DTSTAMP", stamp_value(stamp)),
                    ending,
                )),
                "LAST-MODIFIED" => Action::Replace(line(
                    &ContentLine::new("LAST-MODIFIED", stamp_value(stamp)),
                    ending,
                )),
                "SEQUENCE" => {
                    let next = property
                        .content
                        .value
                        .trim()
                        .parse::<u64>()
                        .map_or(1, |n| n + 1);
                    Action::Replace(line(
                        &ContentLine::new("SEQUENCE", next.to_string()),
                        ending,
                    ))
                }
                _ => Action::Keep,
            })
        };
    // Properties to add when the event has none to replace.
    let mut additions: Vec<String> = Vec::new();
    if !seen("UID") {
        additions.push(line(
            &ContentLine::new("UID", escape_text(&spec.uid)),
            ending,
        ));
    }
    if title_changed && !seen("SUMMARY") {
        additions.push(line(
            &ContentLine::new("SUMMARY", escape_text(&spec.title)),
            ending,
        ));
    }
    if end_changed && !seen("DTEND") && !seen("DURATION") {
        additions.push(line(&time_line("DTEND", &end), ending));
    }
    if let (Some(location), false) = (&spec.location, seen("LOCATION")) {
        additions.push(line(
            &ContentLine::new("LOCATION", escape_text(location)),
            ending,
        ));
    }
    if let (Some(description), false) = (&spec.description, seen("DESCRIPTION")) {
        additions.push(line(
            &ContentLine::new("DESCRIPTION", escape_text(description)),
            ending,
        ));
    }
    for (name, value) in [
        ("DTSTAMP", stamp_value(stamp)),
        ("LAST-MODIFIED", stamp_value(stamp)),
        ("SEQUENCE", "1".to_owned()),
    ] {
        if !seen(name) {
            additions.push(line(&ContentLine::new(name, value), ending));
        }
    }
    additions.extend(extra.iter().map(|l| line(l, ending)));
    // Walk the component in source order: properties, children and the gaps between.
    let mut segments: Vec<(Range<usize>, Option<&Property<'_>>)> = component
        .properties
        .iter()
        .map(|p| (p.span.clone(), Some(p)))
        .collect();
    segments.extend(component.children.iter().map(|c| (c.span.clone(), None)));
    segments.sort_by_key(|(range, _)| range.start);
    let last_property = segments.iter().rposition(|(_, p)| p.is_some());
    let begin_end = text[component.span.start..]
        .find('\n')
        .map_or(component.span.end, |i| component.span.start + i + 1);
    let mut out = String::new();
    out.push_str(&text[component.span.start..begin_end]);
    let mut position = begin_end;
    if last_property.is_none() {
        out.extend(additions.drain(..));
        if let Some(rule) = new_rule.as_ref().filter(|_| !rule_written) {
            out.push_str(&rule_line(rule));
        }
    }
    for (index, (range, property)) in segments.iter().enumerate() {
        out.push_str(&text[position.min(range.start)..range.start]);
        match property {
            Some(property) => match decide(property, &mut rule_written, &mut seen_end)? {
                Action::Keep => out.push_str(&text[range.clone()]),
                Action::Drop => {}
                Action::Replace(replacement) => out.push_str(&replacement),
            },
            None => out.push_str(&text[range.clone()]),
        }
        position = range.end;
        if Some(index) == last_property {
            out.extend(additions.drain(..));
            if let Some(rule) = new_rule.as_ref().filter(|_| !rule_written) {
                out.push_str(&rule_line(rule));
                rule_written = true;
            }
        }
    }
    out.push_str(&text[position.min(component.end_line_start)..component.span.end]);
    let written = [(start_changed, start), (end_changed, end)]
        .into_iter()
        .filter_map(|(changed, time)| changed.then_some(time))
        .collect();
    Ok((out, written))
}
