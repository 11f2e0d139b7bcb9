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

/// Rewrites `component` (holding `current`) so it says what `spec` says; `extra` lines
/// (an `EXDATE`) are added. Returns the new text of the component and the times the
/// rewrite wrote (whose zones the calendar must define).
pub(super) fn rewrite(
    document: &Document<'_>,
    component: &Component<'_>,
    current: &Event,
    spec: &EventSpec,
    stamp: DateTime<Utc>,
    extra: Vec<ContentLine<'static>>,
) -> Result<(String, Vec<EventTime>)> {
    let text = document.text;
    let mut rewriter = Rewriter::new(current, spec, stamp, document.ending())?;
    let mut additions = rewriter.additions(component, &extra);
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
        out.push_str(&rewriter.unwritten_rule());
    }
    for (index, (range, property)) in segments.iter().enumerate() {
        out.push_str(&text[position.min(range.start)..range.start]);
        match property.map(|property| rewriter.decide(property)) {
            Some(Action::Keep) | None => out.push_str(&text[range.clone()]),
            Some(Action::Drop) => {}
            Some(Action::Replace(replacement)) => out.push_str(&replacement),
        }
        position = range.end;
        if Some(index) == last_property {
            out.extend(additions.drain(..));
            out.push_str(&rewriter.unwritten_rule());
        }
    }
    out.push_str(&text[position.min(component.end_line_start)..component.span.end]);
    let written = [
        (rewriter.start_changed, rewriter.start),
        (rewriter.end_changed, rewriter.end),
    ]
    .into_iter()
    .filter_map(|(changed, time)| changed.then_some(time))
    .collect();
    Ok((out, written))
}

/// What a rewrite changes, and what it has written so far.
struct Rewriter<'s> {
    current: &'s Event,
    spec: &'s EventSpec,
    stamp: DateTime<Utc>,
    ending: &'static str,
    start: EventTime,
    end: EventTime,
    title_changed: bool,
    start_changed: bool,
    end_changed: bool,
    drop_recurrence: bool,
    /// The RRULE to write, when it changes.
    new_rule: Option<String>,
    rule_written: bool,
    /// Whether a DTEND or DURATION was met (a second one is dropped).
    seen_end: bool,
}

impl<'s> Rewriter<'s> {
    fn new(
        current: &'s Event,
        spec: &'s EventSpec,
        stamp: DateTime<Utc>,
        ending: &'static str,
    ) -> Result<Self> {
        let (start, end) = (spec.start_time()?, spec.end_time()?);
        let start_changed = !same_time(&current.start, &start);
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
        Ok(Self {
            current,
            spec,
            stamp,
            ending,
            title_changed: current.title != spec.title,
            start_changed,
            end_changed: !same_time(&current.end, &end)
                || (start_changed && current.start.is_date() != start.is_date()),
            start,
            end,
            drop_recurrence,
            rule_written: new_rule.is_none(),
            new_rule,
            seen_end: false,
        })
    }

    fn line(&self, name: &'static str, value: String) -> String {
        line(&ContentLine::new(name, value), self.ending)
    }

    /// The new RRULE, if it is not written yet (then it is).
    fn unwritten_rule(&mut self) -> String {
        match self.new_rule.clone().filter(|_| !self.rule_written) {
            Some(rule) => {
                self.rule_written = true;
                self.line("RRULE", rule)
            }
            None => String::new(),
        }
    }

    /// What becomes of one of the event's properties.
    fn decide(&mut self, property: &Property<'_>) -> Action {
        let (spec, current, ending) = (self.spec, self.current, self.ending);
        let name = property.content.name.to_ascii_uppercase();
        match name.as_str() {
            "SUMMARY" if self.title_changed => {
                Action::Replace(text_line(property, "SUMMARY", &spec.title, ending))
            }
            "DTSTART" if self.start_changed => {
                Action::Replace(line(&time_line("DTSTART", &self.start), ending))
            }
            "DTEND" | "DURATION" if self.seen_end => Action::Drop,
            "DTEND" | "DURATION" => {
                self.seen_end = true;
                if self.end_changed {
                    Action::Replace(line(&time_line("DTEND", &self.end), ending))
                } else {
                    Action::Keep
                }
            }
            "LOCATION" if current.location != spec.location => match &spec.location {
                Some(location) => {
                    Action::Replace(text_line(property, "LOCATION", location, ending))
                }
                None => Action::Drop,
            },
            "DESCRIPTION" if current.description != spec.description => match &spec.description {
                Some(description) => {
                    Action::Replace(text_line(property, "DESCRIPTION", description, ending))
                }
                None => Action::Drop,
            },
            // Outlook's HTML copy of the description would contradict the new one.
            "X-ALT-DESC" if current.description != spec.description => Action::Drop,
            "RRULE" | "RDATE" | "EXDATE" if self.drop_recurrence => Action::Drop,
            "RRULE" if self.new_rule.is_none() => Action::Keep,
            "RRULE" if self.rule_written => Action::Drop,
            "RRULE" => Action::Replace(self.unwritten_rule()),
            "DTSTAMP" => Action::Replace(self.line("DTSTAMP", stamp_value(self.stamp))),
            "LAST-MODIFIED" => Action::Replace(self.line("LAST-MODIFIED", stamp_value(self.stamp))),
            "SEQUENCE" => {
                let next = property
                    .content
                    .value
                    .trim()
                    .parse::<u64>()
                    .map_or(1, |n| n + 1);
                Action::Replace(self.line("SEQUENCE", next.to_string()))
            }
            _ => Action::Keep,
        }
    }

    /// Properties to add where the event has none to replace, then `extra`.
    fn additions(&self, component: &Component<'_>, extra: &[ContentLine<'static>]) -> Vec<String> {
        let (spec, ending) = (self.spec, self.ending);
        let seen = |name: &str| component.property(name).is_some();
        let mut additions: Vec<String> = Vec::new();
        if !seen("UID") {
            additions.push(self.line("UID", escape_text(&spec.uid)));
        }
        if self.title_changed && !seen("SUMMARY") {
            additions.push(self.line("SUMMARY", escape_text(&spec.title)));
        }
        if self.end_changed && !seen("DTEND") && !seen("DURATION") {
            additions.push(line(&time_line("DTEND", &self.end), ending));
        }
        if let (Some(location), false) = (&spec.location, seen("LOCATION")) {
            additions.push(self.line("LOCATION", escape_text(location)));
        }
        if let (Some(description), false) = (&spec.description, seen("DESCRIPTION")) {
            additions.push(self.line("DESCRIPTION", escape_text(description)));
        }
        for (name, value) in [
            ("DTSTAMP", stamp_value(self.stamp)),
            ("LAST-MODIFIED", stamp_value(self.stamp)),
            ("SEQUENCE", "1".to_owned()),
        ] {
            if !seen(name) {
                additions.push(self.line(name, value));
            }
        }
        additions.extend(extra.iter().map(|l| line(l, ending)));
        additions
    }
}
