//! Writing changes into an iCalendar text by splicing: only the lines of the event that
//! changes are rewritten (and only those of its properties that change); every other
//! byte — unknown properties and components, folding, line endings, even malformed
//! lines — stays as it was.

use std::ops::Range;

use chrono::{DateTime, Datelike, Utc};
use chrono_tz::Tz;

use crate::component::{Component, Property, Tree, parse_tree};
use crate::contentline::{ContentLine, escape_text, fold};
use crate::error::{IcalError, Result};
use crate::event::Event;
use crate::fingerprint::{ABSENT, parts_fingerprint};
use crate::ics_read::{component_uid, read_component};
use crate::revision::current_first;
use crate::spec::{EventSpec, RecurrenceSpec};
use crate::time::{EventTime, Zone, format_date_time};
use crate::timezone::vtimezone_block;
use rewrite::rewrite;

const PRODID: &str = "-//Hearth//Hearth Calendar//EN";

/// The text of an empty calendar.
pub fn empty_calendar() -> String {
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:{PRODID}\r\nCALSCALE:GREGORIAN\r\nEND:VCALENDAR\r\n"
    )
}

/// Why Hearth will not write into this text, if it will not.
pub fn write_blocker(tree: &Tree<'_>) -> Option<String> {
    let calendar = tree.components.iter().find(|c| c.name == "VCALENDAR")?;
    if calendar.closed {
        None
    } else {
        Some(format!(
            "BEGIN:VCALENDAR at line {} is never closed; repair the file before Hearth writes to it",
            calendar.line
        ))
    }
}

/// A parsed text and its (first, closed) calendar.
struct Document<'a> {
    text: &'a str,
    tree: Tree<'a>,
}

impl<'a> Document<'a> {
    fn parse(text: &'a str) -> Result<Self> {
        let tree = parse_tree(text);
        if let Some(reason) = write_blocker(&tree) {
            return Err(IcalError::Refused(reason));
        }
        if !tree.components.iter().any(|c| c.name == "VCALENDAR") {
            return Err(IcalError::Refused(
                "the file holds no VCALENDAR; Hearth does not write into it".to_owned(),
            ));
        }
        Ok(Self { text, tree })
    }

    fn calendar(&self) -> &Component<'a> {
        // `parse` made sure there is one.
        let position = self
            .tree
            .components
            .iter()
            .position(|c| c.name == "VCALENDAR")
            .unwrap_or(0);
        &self.tree.components[position]
    }

    fn ending(&self) -> &'static str {
        self.tree.line_ending
    }

    /// The events (master first) of a UID.
    fn components_of(&self, uid: &str) -> Vec<&Component<'a>> {
        self.calendar()
            .children
            .iter()
            .filter(|c| c.name == "VEVENT" && component_uid(c, self.text) == uid)
            .collect()
    }

    /// The events of a UID in every VCALENDAR of the text, in file order: what loading
    /// reads (it shows the current revision of the readable copies of each
    /// `(UID, RECURRENCE-ID)` and hides the rest).
    fn all_components_of(&self, uid: &str) -> Vec<&Component<'a>> {
        self.tree
            .components
            .iter()
            .filter(|c| c.name == "VCALENDAR")
            .flat_map(|c| c.children.iter())
            .filter(|c| c.name == "VEVENT" && component_uid(c, self.text) == uid)
            .collect()
    }

    /// The series or single event `uid` as loading shows it: its current revision
    /// among the readable copies (see the `revision` module).
    fn master(&self, uid: &str) -> Result<&Component<'a>> {
        let masters: Vec<&Component<'a>> = self
            .components_of(uid)
            .into_iter()
            .filter(|c| c.property("RECURRENCE-ID").is_none())
            .collect();
        let readable: Vec<&Component<'a>> = masters
            .iter()
            .copied()
            .filter(|c| read_component(self.text, &self.tree, c).is_some())
            .collect();
        current_first(&readable)
            .first()
            .or(masters.first())
            .copied()
            .ok_or_else(|| IcalError::UnknownEvent {
                uid: uid.to_owned(),
            })
    }

    fn event_of(&self, component: &Component<'a>) -> Result<Event> {
        read_component(self.text, &self.tree, component).ok_or_else(|| {
            IcalError::Refused(format!(
                "the event at line {} cannot be read; repair it before changing it",
                component.line
            ))
        })
    }

    /// Where VTIMEZONE blocks go: after the last one, else before the first component.
    fn timezone_position(&self) -> usize {
        let calendar = self.calendar();
        calendar
            .children
            .iter()
            .rev()
            .find(|c| c.name == "VTIMEZONE")
            .map(|c| c.span.end)
            .or_else(|| calendar.children.first().map(|c| c.span.start))
            .unwrap_or(calendar.end_line_start)
    }

    /// VTIMEZONE blocks for the named zones of `times` the calendar lacks.
    fn missing_timezones(&self, times: &[EventTime], year: i32) -> Zones {
        let mut out = String::new();
        let mut added: Vec<Tz> = Vec::new();
        for time in times {
            if let EventTime::DateTime {
                zone: Zone::Named(tz),
                ..
            } = time
            {
                let present = self.calendar().children.iter().any(|c| {
                    c.name == "VTIMEZONE"
                        && c.value("TZID").is_some_and(|id| id.trim() == tz.name())
                });
                if !present && !added.contains(tz) {
                    added.push(*tz);
                    out.push_str(&vtimezone_block(*tz, year, self.ending()));
                }
            }
        }
        Zones {
            at: self.timezone_position(),
            text: out,
            names: added.iter().map(|tz| tz.name().to_owned()).collect(),
        }
    }
}

/// VTIMEZONE blocks a change adds, and where.
struct Zones {
    at: usize,
    text: String,
    names: Vec<String>,
}

impl Zones {
    fn none() -> Self {
        Self {
            at: 0,
            text: String::new(),
            names: Vec::new(),
        }
    }
}

/// A calendar text with events changed: the new text, and the change itself apart from
/// where in the file it lands — what staging shows and applying must write again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rewrite {
    pub text: String,
    /// Each edit to the events, in file order: the text it replaces (empty for an
    /// insertion) and the text it writes (empty for a removal).
    pub edits: Vec<(String, String)>,
    /// The zones whose VTIMEZONE the change adds.
    pub time_zones: Vec<String>,
}

impl Rewrite {
    /// Splices `edits` (to events) and `zones` into `text`.
    fn of(text: &str, zones: Zones, mut edits: Vec<(Range<usize>, String)>) -> Self {
        edits.sort_by_key(|(range, _)| (range.start, range.end));
        let recorded = edits
            .iter()
            .filter(|(range, replacement)| !range.is_empty() || !replacement.is_empty())
            .map(|(range, replacement)| (text[range.clone()].to_owned(), replacement.clone()))
            .collect();
        let time_zones = zones.names;
        if !zones.text.is_empty() {
            // First among edits at the same place: zones go before events.
            edits.insert(0, (zones.at..zones.at, zones.text));
        }
        Self {
            text: splice(text, edits),
            edits: recorded,
            time_zones,
        }
    }
}

/// The fingerprint of each of `uids`' events in `text`: every VEVENT with that UID in
/// every VCALENDAR (the series or single event, and its changed occurrences), or
/// [`ABSENT`] when there is none. Changes elsewhere in the text leave it as it is.
pub fn event_fingerprints(text: &str, uids: &[&str]) -> Vec<String> {
    let tree = parse_tree(text);
    let mut found: Vec<Vec<&[u8]>> = vec![Vec::new(); uids.len()];
    for component in tree
        .components
        .iter()
        .filter(|c| c.name == "VCALENDAR")
        .flat_map(|c| c.children.iter())
        .filter(|c| c.name == "VEVENT")
    {
        let uid = component_uid(component, text);
        for (position, wanted) in uids.iter().enumerate() {
            if *wanted == uid {
                found[position].push(text[component.span.clone()].as_bytes());
            }
        }
    }
    found
        .into_iter()
        .map(|parts| {
            if parts.is_empty() {
                ABSENT.to_owned()
            } else {
                parts_fingerprint(parts)
            }
        })
        .collect()
}

fn splice(text: &str, mut edits: Vec<(Range<usize>, String)>) -> String {
    edits.sort_by_key(|(range, _)| (range.start, range.end));
    let mut out =
        String::with_capacity(text.len() + edits.iter().map(|e| e.1.len()).sum::<usize>());
    let mut position = 0;
    for (range, replacement) in edits {
        let start = range.start.max(position);
        out.push_str(&text[position..start]);
        out.push_str(&replacement);
        position = range.end.max(start);
    }
    out.push_str(&text[position..]);
    out
}

fn line(content: &ContentLine<'_>, ending: &str) -> String {
    fold(&content.to_unfolded(), ending)
}

fn time_line(name: &'static str, time: &EventTime) -> ContentLine<'static> {
    let value = time.ical_value();
    match time {
        EventTime::Date(_) => ContentLine::new(name, value).with_param("VALUE", "DATE"),
        EventTime::DateTime {
            zone: Zone::Named(tz),
            ..
        } => ContentLine::new(name, value).with_param("TZID", tz.name()),
        EventTime::DateTime { .. } => ContentLine::new(name, value),
    }
}

/// A TEXT property with a new value, keeping the old line's parameters (such as
/// `LANGUAGE`) except `ALTREP`, which pointed at the old text.
fn text_line(old: &Property<'_>, name: &'static str, value: &str, ending: &str) -> String {
    let mut content = ContentLine::new(name, escape_text(value));
    content.params = old
        .content
        .params
        .iter()
        .filter(|p| !p.name.eq_ignore_ascii_case("ALTREP"))
        .map(|p| p.clone().into_owned())
        .collect();
    line(&content, ending)
}

fn stamp_value(stamp: DateTime<Utc>) -> String {
    format!("{}Z", format_date_time(stamp.naive_utc()))
}

/// Whether two times denote the same thing (same kind, same instant or date).
fn same_time(a: &EventTime, b: &EventTime) -> bool {
    match (a, b) {
        (EventTime::Date(a), EventTime::Date(b)) => a == b,
        (
            EventTime::DateTime {
                zone: Zone::Floating,
                local: a,
            },
            EventTime::DateTime {
                zone: Zone::Floating,
                local: b,
            },
        ) => a == b,
        (
            EventTime::DateTime {
                zone: Zone::Floating,
                ..
            },
            _,
        )
        | (
            _,
            EventTime::DateTime {
                zone: Zone::Floating,
                ..
            },
        ) => false,
        (EventTime::DateTime { .. }, EventTime::DateTime { .. }) => {
            a.to_utc(chrono_tz::UTC) == b.to_utc(chrono_tz::UTC)
                && (a.zone() == b.zone() || matches!(a.zone(), Zone::Fixed(_)))
        }
        _ => false,
    }
}

/// The lines of a new VEVENT.
fn new_event_lines(
    spec: &EventSpec,
    recurrence_id: Option<ContentLine<'static>>,
    stamp: DateTime<Utc>,
    ending: &str,
) -> Result<String> {
    let mut lines = vec![
        ContentLine::new("BEGIN", "VEVENT"),
        ContentLine::new("UID", escape_text(&spec.uid)),
        ContentLine::new("DTSTAMP", stamp_value(stamp)),
        ContentLine::new("CREATED", stamp_value(stamp)),
        ContentLine::new("LAST-MODIFIED", stamp_value(stamp)),
    ];
    lines.extend(recurrence_id);
    lines.push(ContentLine::new("SUMMARY", escape_text(&spec.title)));
    lines.push(time_line("DTSTART", &spec.start_time()?));
    lines.push(time_line("DTEND", &spec.end_time()?));
    if let RecurrenceSpec::Rule { rule } = &spec.recurrence {
        lines.push(ContentLine::new("RRULE", rule.clone()));
    }
    if let Some(location) = &spec.location {
        lines.push(ContentLine::new("LOCATION", escape_text(location)));
    }
    if let Some(description) = &spec.description {
        lines.push(ContentLine::new("DESCRIPTION", escape_text(description)));
    }
    lines.push(ContentLine::new("SEQUENCE", "0"));
    lines.push(ContentLine::new("END", "VEVENT"));
    Ok(lines.iter().map(|l| line(l, ending)).collect())
}

/// Adds events (creating the calendar text when `text` is empty).
pub fn create_events(text: &str, specs: &[EventSpec], stamp: DateTime<Utc>) -> Result<Rewrite> {
    let owned;
    let text = if text.trim().is_empty() {
        owned = empty_calendar();
        owned.as_str()
    } else {
        text
    };
    let document = Document::parse(text)?;
    for spec in specs {
        if !document.components_of(&spec.uid).is_empty() {
            return Err(IcalError::Refused(format!(
                "an event with UID `{}` already exists",
                spec.uid
            )));
        }
    }
    let mut times = Vec::new();
    let mut events = String::new();
    for spec in specs {
        times.push(spec.start_time()?);
        times.push(spec.end_time()?);
        events.push_str(&new_event_lines(spec, None, stamp, document.ending())?);
    }
    let zones = document.missing_timezones(&times, stamp.year());
    let end = document.calendar().end_line_start;
    Ok(Rewrite::of(text, zones, vec![(end..end, events)]))
}

/// Makes the series or single event `spec.uid` say what `spec` says.
pub fn update_event(text: &str, spec: &EventSpec, stamp: DateTime<Utc>) -> Result<Rewrite> {
    let document = Document::parse(text)?;
    let master = document.master(&spec.uid)?;
    let current = document.event_of(master)?;
    let (replacement, times) = rewrite(&document, master, &current, spec, stamp, Vec::new())?;
    let zones = document.missing_timezones(&times, stamp.year());
    Ok(Rewrite::of(
        text,
        zones,
        vec![(master.span.clone(), replacement)],
    ))
}

/// The `EXDATE`/`RECURRENCE-ID` line naming `occurrence` in the form of the master's
/// `DTSTART` (same `TZID` spelling, same value type).
fn occurrence_line(
    name: &'static str,
    master: &Component<'_>,
    occurrence: &EventTime,
) -> ContentLine<'static> {
    let start = master.property("DTSTART");
    let tzid = start
        .and_then(|p| p.content.param("TZID"))
        .map(str::to_owned);
    match (occurrence, tzid) {
        (EventTime::Date(_), _) => time_line(name, occurrence),
        (
            EventTime::DateTime {
                local,
                zone: Zone::Named(_) | Zone::Fixed(_),
            },
            Some(tzid),
        ) => ContentLine::new(name, format_date_time(*local)).with_param("TZID", tzid),
        (time, _) => time_line(name, time),
    }
}

fn override_of<'d, 'a>(
    document: &'d Document<'a>,
    uid: &str,
    occurrence: &EventTime,
) -> Result<Option<&'d Component<'a>>> {
    let mut matching = Vec::new();
    for component in document.components_of(uid) {
        if component.property("RECURRENCE-ID").is_some() {
            let event = document.event_of(component)?;
            if event.recurrence_id.is_some_and(|r| {
                same_time(&r, occurrence) || r.date() == occurrence.date() && r.is_date()
            }) {
                matching.push(component);
            }
        }
    }
    Ok(current_first(&matching).first().copied())
}

/// Changes one occurrence of a series: rewrites its override, or adds one (copying the
/// series' other properties and alarms).
pub fn update_occurrence(
    text: &str,
    occurrence: &EventTime,
    spec: &EventSpec,
    stamp: DateTime<Utc>,
) -> Result<Rewrite> {
    let document = Document::parse(text)?;
    let master = document.master(&spec.uid)?;
    if let Some(existing) = override_of(&document, &spec.uid, occurrence)? {
        let current = document.event_of(existing)?;
        let (replacement, times) = rewrite(&document, existing, &current, spec, stamp, Vec::new())?;
        let zones = document.missing_timezones(&times, stamp.year());
        return Ok(Rewrite::of(
            text,
            zones,
            vec![(existing.span.clone(), replacement)],
        ));
    }
    let ending = document.ending();
    let regenerated = [
        "UID",
        "DTSTART",
        "DTEND",
        "DURATION",
        "RRULE",
        "RDATE",
        "EXDATE",
        "RECURRENCE-ID",
        "DTSTAMP",
        "SEQUENCE",
        "SUMMARY",
        "LOCATION",
        "DESCRIPTION",
        "CREATED",
        "LAST-MODIFIED",
    ];
    let mut body = new_event_lines(
        spec,
        Some(occurrence_line("RECURRENCE-ID", master, occurrence)),
        stamp,
        ending,
    )?;
    let copied: String = master
        .properties
        .iter()
        .filter(|p| !regenerated.iter().any(|name| p.content.is(name)))
        .map(|p| &text[p.span.clone()])
        .chain(master.children.iter().map(|c| &text[c.span.clone()]))
        .collect();
    let end_marker = line(&ContentLine::new("END", "VEVENT"), ending);
    if let Some(position) = body.rfind(&end_marker) {
        body.insert_str(position, &copied);
    }
    let times = [spec.start_time()?, spec.end_time()?];
    let zones = document.missing_timezones(&times, stamp.year());
    Ok(Rewrite::of(
        text,
        zones,
        vec![(master.span.end..master.span.end, body)],
    ))
}

/// Refuses to remove the copy of an event loading shows when the text holds another
/// readable copy of it (same UID, same RECURRENCE-ID or none): loading would show that
/// one in its place, so the user would see a different event instead of none.
fn refuse_hidden_copies(uid: &str, copies: &[&Component<'_>], what: &str) -> Result<()> {
    let ordered = current_first(copies);
    match ordered.as_slice() {
        [] | [_] => Ok(()),
        [shown, ..] => {
            let mut lines: Vec<usize> = copies.iter().map(|c| c.line).collect();
            lines.sort_unstable();
            let others: Vec<String> = lines[1..].iter().map(ToString::to_string).collect();
            Err(IcalError::Refused(format!(
                "{what} `{uid}` is in the file {} times (BEGIN:VEVENT at line {} and at line {}); Hearth shows only the current revision (line {}), and deleting it would show the other copy in its place, so nothing was deleted. Remove the copy you do not want by hand (or give it its own UID), then delete again",
                copies.len(),
                lines[0],
                others.join(", "),
                shown.line
            )))
        }
    }
}

/// Removes an event: the series (or single event) loading shows, and its overrides.
/// Refuses when the text holds another copy of it that would then show instead.
pub fn delete_event(text: &str, uid: &str) -> Result<Rewrite> {
    let document = Document::parse(text)?;
    let components = document.all_components_of(uid);
    if !components
        .iter()
        .any(|c| c.property("RECURRENCE-ID").is_none())
    {
        return Err(IcalError::UnknownEvent {
            uid: uid.to_owned(),
        });
    }
    // Loading skips copies it cannot read, so the event shown is the first readable one.
    let masters: Vec<&Component<'_>> = components
        .iter()
        .copied()
        .filter(|c| {
            c.property("RECURRENCE-ID").is_none()
                && read_component(text, &document.tree, c).is_some()
        })
        .collect();
    refuse_hidden_copies(uid, &masters, "event")?;
    let masters = current_first(&masters);
    let Some(shown) = masters.first() else {
        return Err(IcalError::Refused(format!(
            "event `{uid}` cannot be read; repair it before deleting it"
        )));
    };
    let mut edits = vec![(shown.span.clone(), String::new())];
    for component in &components {
        if component.property("RECURRENCE-ID").is_some() {
            edits.push((component.span.clone(), String::new()));
        }
    }
    Ok(Rewrite::of(text, Zones::none(), edits))
}

/// Removes one occurrence of a series: an `EXDATE` on the series, and its override if
/// it has one.
pub fn delete_occurrence(
    text: &str,
    uid: &str,
    occurrence: &EventTime,
    stamp: DateTime<Utc>,
) -> Result<Rewrite> {
    let document = Document::parse(text)?;
    let master = document.master(uid)?;
    let current = document.event_of(master)?;
    let spec = EventSpec {
        uid: uid.to_owned(),
        title: current.title.clone(),
        start: crate::spec::SpecTime::from_event_time(current.start),
        end: crate::spec::SpecTime::from_event_time(current.end),
        location: current.location.clone(),
        description: current.description.clone(),
        recurrence: RecurrenceSpec::Unchanged,
    };
    let copies: Vec<&Component<'_>> = document
        .all_components_of(uid)
        .into_iter()
        .filter(|c| c.property("RECURRENCE-ID").is_some())
        .filter(|c| {
            read_component(text, &document.tree, c)
                .and_then(|e| e.recurrence_id)
                .is_some_and(|r| {
                    same_time(&r, occurrence) || r.date() == occurrence.date() && r.is_date()
                })
        })
        .collect();
    refuse_hidden_copies(uid, &copies, "the changed occurrence of event")?;
    let exdate = occurrence_line("EXDATE", master, occurrence);
    let (replacement, _) = rewrite(&document, master, &current, &spec, stamp, vec![exdate])?;
    let mut edits = vec![(master.span.clone(), replacement)];
    if let Some(existing) = override_of(&document, uid, occurrence)? {
        edits.push((existing.span.clone(), String::new()));
    }
    Ok(Rewrite::of(text, Zones::none(), edits))
}

/// Appends VEVENTs (with the VTIMEZONEs they need) copied verbatim from another text.
pub fn append_components(text: &str, components: &str, timezones: &str) -> Result<String> {
    let owned;
    let text = if text.trim().is_empty() {
        owned = empty_calendar();
        owned.as_str()
    } else {
        text
    };
    let document = Document::parse(text)?;
    let position = document.timezone_position();
    let end = document.calendar().end_line_start;
    Ok(splice(
        text,
        vec![
            (position..position, timezones.to_owned()),
            (end..end, components.to_owned()),
        ],
    ))
}

mod rewrite;

#[cfg(test)]
mod tests;
