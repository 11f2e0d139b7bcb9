//! Reading events from an iCalendar text. Every problem with one event becomes a
//! [`LoadWarning`] naming its line; the other events still load. Only a text that holds
//! no `VCALENDAR` at all is an error.

use std::collections::HashMap;

use chrono::{Duration, NaiveTime};

use crate::component::{Component, Property, Tree, parse_tree};
use crate::contentline::{excerpt, split_list, split_text_list, unescape_text};
use crate::error::{IcalError, LoadWarning, Result};
use crate::event::{Event, EventSource, OverrideRange, Period, Recurrence};
use crate::fingerprint::sha256_hex;
use crate::revision::Revision;
use crate::rrule::RecurrenceRule;
use crate::time::{EventTime, Zone, parse_date, parse_date_time, parse_duration};
use zones::ZoneResolver;

/// Events read from one calendar, and what was wrong with the rest.
#[derive(Clone, Debug, Default)]
pub struct ParsedCalendar {
    /// Events (series, single events and overrides).
    pub events: Vec<Event>,
    /// Per-item problems; the items were skipped or read in part.
    pub warnings: Vec<LoadWarning>,
}

/// Reads the events of an iCalendar text. `calendar` becomes the events' calendar id;
/// `origin` (a path or URL) names the text in warnings.
pub fn read_ics(calendar: &str, origin: &str, text: &str) -> Result<ParsedCalendar> {
    let tree = parse_tree(text);
    read_tree(calendar, origin, text, &tree)
}

/// Reads the events of a parsed iCalendar text (see [`read_ics`]).
pub fn read_tree(
    calendar: &str,
    origin: &str,
    text: &str,
    tree: &Tree<'_>,
) -> Result<ParsedCalendar> {
    let at = |line: usize| format!("{origin}:{line}");
    let mut parsed = ParsedCalendar {
        events: Vec::new(),
        warnings: structure_warnings(tree, &at),
    };
    let calendars: Vec<&Component<'_>> = tree
        .components
        .iter()
        .filter(|c| c.name == "VCALENDAR")
        .collect();
    if calendars.is_empty() {
        if text.trim_start_matches('\u{feff}').trim().is_empty() {
            return Ok(parsed);
        }
        return Err(not_a_calendar(origin, text));
    }
    let mut zones = ZoneResolver::new(origin, &calendars);
    let mut copies = Copies::default();
    for component in calendars
        .iter()
        .flat_map(|c| c.children.iter())
        .filter(|c| c.name == "VEVENT")
    {
        let mut warnings = Vec::new();
        match read_event(calendar, origin, text, component, &mut zones, &mut warnings) {
            Ok(event) => copies.add(&mut parsed.events, event, component, &at, &mut warnings),
            Err(message) => warnings.push(LoadWarning::new(
                at(component.line),
                format!("event skipped: {message}"),
            )),
        }
        parsed.warnings.append(&mut warnings);
    }
    superseded::drop_superseded(&copies, &mut parsed.events, &at, &mut parsed.warnings);
    parsed.warnings.append(&mut zones.warnings);
    Ok(parsed)
}

/// What is wrong with the text's structure: the parser's issues, and components
/// outside any VCALENDAR.
fn structure_warnings(tree: &Tree<'_>, at: &dyn Fn(usize) -> String) -> Vec<LoadWarning> {
    let mut warnings: Vec<LoadWarning> = tree
        .issues
        .iter()
        .map(|issue| LoadWarning::new(at(issue.line), issue.message.clone()))
        .collect();
    for other in tree.components.iter().filter(|c| c.name != "VCALENDAR") {
        warnings.push(LoadWarning::new(
            at(other.line),
            format!("BEGIN:{} is outside any VCALENDAR; ignored", other.name),
        ));
    }
    warnings
}

/// A text with no VCALENDAR, quoting its first line.
fn not_a_calendar(origin: &str, text: &str) -> IcalError {
    let first = text
        .lines()
        .enumerate()
        .find(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| format!(" (line {} reads `{}`)", i + 1, excerpt(l.trim())))
        .unwrap_or_default();
    IcalError::NotACalendar {
        what: origin.to_owned(),
        message: format!("no BEGIN:VCALENDAR found{first}"),
    }
}

/// The copies of each event read so far: `(UID, RECURRENCE-ID)` → the copy kept (its
/// place among the events, its revision and its line). Of several copies the current
/// revision is the event (see the `revision` module); each other copy is named in a
/// warning.
#[derive(Default)]
struct Copies(HashMap<(String, Option<String>), (usize, Revision, usize)>);

impl Copies {
    /// Adds `event`, read from `component`, to `events`, or puts it in place of an
    /// older copy, or leaves it out for a newer one — warning about the copy not used.
    fn add(
        &mut self,
        events: &mut Vec<Event>,
        event: Event,
        component: &Component<'_>,
        at: &dyn Fn(usize) -> String,
        warnings: &mut Vec<LoadWarning>,
    ) {
        let key = (
            event.uid.clone(),
            event.recurrence_id.map(|r| r.ical_value()),
        );
        let revision = Revision::of(component);
        let what = match &event.recurrence_id {
            Some(rid) => format!(
                "the changed occurrence {} of `{}`",
                rid.ical_value(),
                event.uid
            ),
            None => format!("event `{}`", event.uid),
        };
        match self.0.get_mut(&key) {
            Some((position, current, line)) if revision > *current => {
                warnings.push(LoadWarning::new(
                    at(*line),
                    format!(
                        "{what} is also at line {} as a newer revision ({}); Hearth uses that copy and ignores this older one",
                        component.line,
                        revision.why_newer(current)
                    ),
                ));
                events[*position] = event;
                *current = revision;
                *line = component.line;
            }
            Some((_, current, line)) => {
                let why = if *current > revision {
                    format!(
                        "the copy at line {line} is newer: {}",
                        current.why_newer(&revision)
                    )
                } else {
                    format!("the copy at line {line} is the same revision and comes first")
                };
                warnings.push(LoadWarning::new(
                    at(component.line),
                    format!(
                        "{what} appears twice ({why}); Hearth uses that copy and ignores this one"
                    ),
                ));
            }
            None => {
                self.0.insert(key, (events.len(), revision, component.line));
                events.push(event);
            }
        }
    }
}

/// Reads one VEVENT of a parsed text (its zones resolved against the whole text).
pub fn read_component(text: &str, tree: &Tree<'_>, component: &Component<'_>) -> Option<Event> {
    let calendars: Vec<&Component<'_>> = tree
        .components
        .iter()
        .filter(|c| c.name == "VCALENDAR")
        .collect();
    let mut zones = ZoneResolver::new("", &calendars);
    read_event("", "", text, component, &mut zones, &mut Vec::new()).ok()
}

/// The UID of a VEVENT, or a stable stand-in derived from its text when it has none.
pub fn component_uid(component: &Component<'_>, text: &str) -> String {
    match component.value("UID").map(|v| unescape_text(v.trim())) {
        Some(uid) if !uid.is_empty() => uid.into_owned(),
        _ => {
            let bytes = text.get(component.span.clone()).unwrap_or("").as_bytes();
            format!("no-uid-{}", &sha256_hex(bytes)[..16])
        }
    }
}

fn read_event(
    calendar: &str,
    origin: &str,
    text: &str,
    component: &Component<'_>,
    zones: &mut ZoneResolver<'_, '_>,
    warnings: &mut Vec<LoadWarning>,
) -> std::result::Result<Event, String> {
    let mut reading = Reading {
        origin,
        text,
        zones,
        warnings,
    };
    let uid = component_uid(component, text);
    if component.value("UID").is_none_or(|v| v.trim().is_empty()) {
        reading.warn(
            component.line,
            format!("event has no UID; Hearth calls it `{uid}` until it is edited"),
        );
    }
    let (start, end) = reading.times(component)?;
    let (recurrence_id, range) = reading.recurrence_id(component)?;
    let recurrence = reading.recurrence(component, recurrence_id.is_some());
    let text_of = |name: &str| {
        component
            .value(name)
            .map(|v| unescape_text(v).trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    Ok(Event {
        calendar: calendar.to_owned(),
        uid,
        recurrence_id,
        range,
        title: text_of("SUMMARY").unwrap_or_default(),
        description: text_of("DESCRIPTION"),
        location: text_of("LOCATION"),
        categories: component
            .properties_named("CATEGORIES")
            .flat_map(|p| split_text_list(&p.content.value))
            .collect(),
        status: component
            .value("STATUS")
            .map(|s| s.trim().to_ascii_uppercase()),
        start,
        end,
        recurrence,
        source: EventSource::Ics {
            line: component.line,
        },
    })
}

/// One VEVENT being read: the text it is in, the text's zones, and the warnings about
/// the event (each naming its line).
struct Reading<'r, 't, 'a> {
    origin: &'r str,
    text: &'r str,
    zones: &'r mut ZoneResolver<'t, 'a>,
    warnings: &'r mut Vec<LoadWarning>,
}

impl Reading<'_, '_, '_> {
    fn warn(&mut self, line: usize, message: String) {
        self.warnings
            .push(LoadWarning::new(format!("{}:{line}", self.origin), message));
    }

    /// The event's start and end as other calendar apps read them: Outlook's midnight
    /// all-day events as dates, a date start with a timed end or an hour `DURATION` as
    /// starting at midnight, and an end that is not after the start replaced by the
    /// default — each liberty in a warning.
    fn times(
        &mut self,
        component: &Component<'_>,
    ) -> std::result::Result<(EventTime, EventTime), String> {
        let start_property = component
            .property("DTSTART")
            .ok_or_else(|| "it has no DTSTART".to_owned())?;
        let mut start = read_time(start_property, self.zones)?;
        let mut end = self.end(component, &mut start, start_property);
        if is_outlook_all_day(component, start, end.map(|(end, _)| end)) {
            start = EventTime::Date(start.date());
            end = end.map(|(e, property)| (EventTime::Date(e.date()), property));
        }
        if let (EventTime::Date(date), Some((EventTime::DateTime { zone, .. }, property))) =
            (start, end)
        {
            // A date start with a date-time end: the event runs from midnight to that
            // time, as other readers take it, instead of being rounded to whole days.
            let message = format!(
                "`{}` is a date-time but DTSTART `{}` is a date; read as starting at midnight",
                quote(self.text, property),
                quote(self.text, start_property)
            );
            self.warn(property.line, message);
            start = EventTime::DateTime {
                local: date.and_time(NaiveTime::MIN),
                zone,
            };
        }
        let end = self.checked_end(start, end, start_property);
        Ok((start, end))
    }

    /// The end DTEND or DURATION gives, and the property that gave it; `None` (the
    /// default length) when neither is there or readable. An hour `DURATION` on a date
    /// makes `start` a floating midnight.
    fn end<'c, 'p>(
        &mut self,
        component: &'c Component<'p>,
        start: &mut EventTime,
        start_property: &Property<'_>,
    ) -> Option<(EventTime, &'c Property<'p>)> {
        match (component.property("DTEND"), component.property("DURATION")) {
            (Some(property), _) => match read_time(property, self.zones) {
                Ok(end) => Some((end, property)),
                Err(message) => {
                    self.warn(
                        property.line,
                        format!("{message}; the default length is used"),
                    );
                    None
                }
            },
            (None, Some(property)) => match parse_duration(&property.content.value) {
                Some(duration) if start.is_date() && !whole_days(duration) => {
                    // An hour DURATION on a date: the event starts at midnight
                    // (floating), as other readers take it, instead of being rounded to
                    // whole days.
                    let message = format!(
                        "`{}` is not whole days but DTSTART `{}` is a date; read as starting at midnight and lasting {}",
                        quote(self.text, property),
                        quote(self.text, start_property),
                        describe_length(duration)
                    );
                    self.warn(property.line, message);
                    *start = EventTime::DateTime {
                        local: start.local(),
                        zone: self.zones.floating_zone(),
                    };
                    Some((add_duration(*start, duration), property))
                }
                Some(duration) => Some((add_duration(*start, duration), property)),
                None => {
                    self.warn(
                        property.line,
                        format!(
                            "DURATION `{}` is not an iCalendar duration (like PT1H30M); the default length is used",
                            excerpt(&property.content.value)
                        ),
                    );
                    None
                }
            },
            (None, None) => None,
        }
    }

    /// `end` made the kind of `start`, if it is after it; else the default end, with a
    /// warning saying why.
    fn checked_end(
        &mut self,
        start: EventTime,
        end: Option<(EventTime, &Property<'_>)>,
        start_property: &Property<'_>,
    ) -> EventTime {
        match end.map(|(end, property)| (conform_end(start, end), property)) {
            Some((end, _)) if end_after_start(start, end, chrono_tz::UTC) => end,
            Some((end, property)) => {
                let (problem, fix) = if end == start {
                    (
                        "is the same day as",
                        "read as one day (an all-day event's DTEND is the day after its last day)",
                    )
                } else {
                    ("is before", "the default length is used")
                };
                let message = format!(
                    "`{}` {problem} `{}`; {fix}",
                    quote(self.text, property),
                    quote(self.text, start_property)
                );
                self.warn(property.line, message);
                default_end(start)
            }
            None => default_end(start),
        }
    }

    /// For an override: the original start of the occurrence it replaces, and whether it
    /// changes later ones too (`RANGE=THISANDFUTURE`).
    fn recurrence_id(
        &mut self,
        component: &Component<'_>,
    ) -> std::result::Result<(Option<EventTime>, OverrideRange), String> {
        let Some(property) = component.property("RECURRENCE-ID") else {
            return Ok((None, OverrideRange::ThisOccurrence));
        };
        let range = if property
            .content
            .param("RANGE")
            .is_some_and(|r| r.trim().eq_ignore_ascii_case("THISANDFUTURE"))
        {
            OverrideRange::ThisAndFuture
        } else {
            OverrideRange::ThisOccurrence
        };
        Ok((Some(read_time(property, self.zones)?), range))
    }

    /// How a series repeats (its readable RRULEs, RDATEs and EXDATEs); `None` for a
    /// single event or an override.
    fn recurrence(&mut self, component: &Component<'_>, is_override: bool) -> Option<Recurrence> {
        let mut rules = Vec::new();
        for property in component.properties_named("RRULE") {
            match RecurrenceRule::parse_lenient(&property.content.value) {
                Ok((rule, notes)) => {
                    for note in notes {
                        let message = format!("`{}`: {note}", quote(self.text, property));
                        self.warn(property.line, message);
                    }
                    rules.push(rule);
                }
                Err(error) => self.warn(property.line, format!("{error}; the rule is ignored")),
            }
        }
        let mut periods = Vec::new();
        let rdates = read_time_list(
            component,
            "RDATE",
            self.zones,
            self.warnings,
            self.origin,
            &mut periods,
        );
        let exdates = read_time_list(
            component,
            "EXDATE",
            self.zones,
            self.warnings,
            self.origin,
            &mut Vec::new(),
        );
        if (rules.is_empty() && rdates.is_empty()) || is_override {
            return None;
        }
        Some(Recurrence {
            rules,
            rdates,
            periods,
            exdates,
            start_is_occurrence: true,
        })
    }
}

/// Whether Outlook marks the event all-day: its flag, with midnight times.
fn is_outlook_all_day(component: &Component<'_>, start: EventTime, end: Option<EventTime>) -> bool {
    component
        .value("X-MICROSOFT-CDO-ALLDAYEVENT")
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("TRUE"))
        && start.local().time() == NaiveTime::MIN
        && end.is_none_or(|e| e.local().time() == NaiveTime::MIN)
}

/// An end of the same kind as the start (a date for a date, a date-time otherwise).
fn conform_end(start: EventTime, end: EventTime) -> EventTime {
    match (start, end) {
        (EventTime::Date(_), EventTime::DateTime { local, .. }) => {
            let date = local.date();
            if local.time() > NaiveTime::MIN {
                date.succ_opt()
                    .map_or(EventTime::Date(date), EventTime::Date)
            } else {
                EventTime::Date(date)
            }
        }
        (EventTime::DateTime { zone, .. }, EventTime::Date(date)) => EventTime::DateTime {
            local: date.and_time(NaiveTime::MIN),
            zone,
        },
        (_, end) => end,
    }
}

fn end_after_start(start: EventTime, end: EventTime, floating: chrono_tz::Tz) -> bool {
    match (start, end) {
        (EventTime::Date(start), EventTime::Date(end)) => end > start,
        (start, end) => end.to_utc(floating) >= start.to_utc(floating),
    }
}

/// RFC 5545's default: one day for a date, no length for a date-time.
pub fn default_end(start: EventTime) -> EventTime {
    match start {
        EventTime::Date(date) => date.succ_opt().map_or(start, EventTime::Date),
        other => other,
    }
}

fn add_duration(start: EventTime, duration: Duration) -> EventTime {
    match start {
        EventTime::Date(date) => {
            let days = duration.num_days().max(1);
            date.checked_add_signed(Duration::days(days))
                .map_or(start, EventTime::Date)
        }
        EventTime::DateTime { local, zone } => EventTime::DateTime {
            local: local.checked_add_signed(duration).unwrap_or(local),
            zone,
        },
    }
}

fn read_time(
    property: &Property<'_>,
    zones: &mut ZoneResolver<'_, '_>,
) -> std::result::Result<EventTime, String> {
    let value = property.content.value.trim();
    read_time_value(
        &property.content.name,
        value,
        property.content.param("VALUE"),
        property.content.param("TZID"),
        property.line,
        zones,
    )
}

fn read_time_value(
    name: &str,
    value: &str,
    value_type: Option<&str>,
    tzid: Option<&str>,
    line: usize,
    zones: &mut ZoneResolver<'_, '_>,
) -> std::result::Result<EventTime, String> {
    let is_date = value_type.is_some_and(|v| v.eq_ignore_ascii_case("DATE"))
        || (value.len() == 8 && !value.contains(['T', 't']));
    if is_date {
        return parse_date(value)
            .map(EventTime::Date)
            .ok_or_else(|| format!("{name} value `{}` is not a date (YYYYMMDD)", excerpt(value)));
    }
    let (local, utc) = parse_date_time(value).ok_or_else(|| {
        format!(
            "{name} value `{}` is not a date (YYYYMMDD) or date-time (YYYYMMDDTHHMMSS)",
            excerpt(value)
        )
    })?;
    let zone = match (utc, tzid) {
        (true, _) => Zone::Utc,
        (false, Some(tzid)) => zones.resolve(tzid, line),
        (false, None) => zones.floating_zone(),
    };
    Ok(EventTime::DateTime { local, zone })
}

fn read_time_list(
    component: &Component<'_>,
    name: &str,
    zones: &mut ZoneResolver<'_, '_>,
    warnings: &mut Vec<LoadWarning>,
    origin: &str,
    periods: &mut Vec<Period>,
) -> Vec<EventTime> {
    let mut times = Vec::new();
    for property in component.properties_named(name) {
        let value_type = property.content.param("VALUE");
        let tzid = property.content.param("TZID");
        let ignored = |message: String| {
            LoadWarning::new(
                format!("{origin}:{}", property.line),
                format!("{message}; the value is ignored"),
            )
        };
        for item in split_list(&property.content.value) {
            // A PERIOD is `start/end` or `start/duration`.
            let (item, period_end) = match item.split_once('/') {
                Some((start, end)) => (start, Some(end.trim())),
                None => (item, None),
            };
            let time = match read_time_value(
                name,
                item,
                value_type.filter(|v| !v.eq_ignore_ascii_case("PERIOD")),
                tzid,
                property.line,
                zones,
            ) {
                Ok(time) => time,
                Err(message) => {
                    warnings.push(ignored(message));
                    continue;
                }
            };
            times.push(time);
            let Some(period_end) = period_end else {
                continue;
            };
            let end = match parse_duration(period_end) {
                Some(duration) => Ok(add_duration(time, duration)),
                None => read_time_value(name, period_end, None, tzid, property.line, zones),
            };
            match end {
                Ok(end) if end.to_utc(chrono_tz::UTC) > time.to_utc(chrono_tz::UTC) => {
                    periods.push(Period { start: time, end })
                }
                Ok(_) => warnings.push(LoadWarning::new(
                    format!("{origin}:{}", property.line),
                    format!(
                        "the period `{}` ends before it starts; the occurrence gets the event's usual length",
                        excerpt(&format!("{item}/{period_end}"))
                    ),
                )),
                Err(message) => warnings.push(LoadWarning::new(
                    format!("{origin}:{}", property.line),
                    format!(
                        "{message} (the end of a period); the occurrence gets the event's usual length"
                    ),
                )),
            }
        }
    }
    times
}

/// A property's line as written (unfolded), shortened for a warning.
fn quote(text: &str, property: &Property<'_>) -> String {
    let raw = text.get(property.span.clone()).unwrap_or("");
    excerpt(
        raw.replace("\r\n ", "")
            .replace("\r\n\t", "")
            .replace("\n ", "")
            .replace("\n\t", "")
            .trim_end(),
    )
}

fn whole_days(duration: Duration) -> bool {
    duration.num_seconds() % 86_400 == 0
}

fn describe_length(duration: Duration) -> String {
    let minutes = duration.num_minutes();
    match (minutes / 60, minutes % 60) {
        (hours, 0) => format!("{hours} h"),
        (0, minutes) => format!("{minutes} min"),
        (hours, minutes) => format!("{hours} h {minutes} min"),
    }
}

mod superseded;
mod zones;
