//! A short summary of an iCalendar (`text/calendar`) body: one line per event.
//!
//! Deliberately small: lines are unfolded, each `VEVENT`'s `SUMMARY`, `DTSTART`,
//! `DTEND`, `LOCATION` and `RRULE` are read (nested components such as `VALARM` are
//! skipped), text escapes are decoded and dates shown as `YYYY-MM-DD HH:MM`. No
//! recurrence is expanded.

/// One event as read from the calendar.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Event {
    summary: Option<String>,
    start: Option<String>,
    end: Option<String>,
    location: Option<String>,
    rule: Option<String>,
}

/// Summarizes an iCalendar body as a list of its events.
pub fn summarize_calendar(text: &str) -> String {
    let unfolded = unfold(text);
    let mut calendar_name = None;
    let mut events = Vec::new();
    let mut stack: Vec<String> = Vec::new();
    let mut current = Event::default();
    for line in unfolded.lines() {
        let Some((name, parameters, value)) = split_property(line) else {
            continue;
        };
        match name.as_str() {
            "BEGIN" => {
                let component = value.trim().to_ascii_uppercase();
                if component == "VEVENT" {
                    current = Event::default();
                }
                stack.push(component);
                continue;
            }
            "END" => {
                if stack.pop().as_deref() == Some("VEVENT") {
                    events.push(std::mem::take(&mut current));
                }
                continue;
            }
            _ => {}
        }
        match stack.last().map(String::as_str) {
            Some("VCALENDAR") if name == "X-WR-CALNAME" => calendar_name = Some(unescape(value)),
            Some("VEVENT") => match name.as_str() {
                "SUMMARY" => current.summary = Some(unescape(value)),
                "LOCATION" => current.location = Some(unescape(value)),
                "DTSTART" => current.start = Some(format_time(value, parameters)),
                "DTEND" => current.end = Some(format_time(value, parameters)),
                "RRULE" => current.rule = Some(value.trim().to_owned()),
                _ => {}
            },
            _ => {}
        }
    }
    render(calendar_name.as_deref(), &events)
}

fn render(calendar_name: Option<&str>, events: &[Event]) -> String {
    let mut out = String::new();
    let count = match events.len() {
        1 => "1 event".to_owned(),
        n => format!("{n} events"),
    };
    match calendar_name.filter(|name| !name.is_empty()) {
        Some(name) => out.push_str(&format!("Calendar \"{name}\": {count}.\n")),
        None => out.push_str(&format!("Calendar: {count}.\n")),
    }
    for event in events {
        out.push_str("\n- ");
        match (&event.start, &event.end) {
            (Some(start), Some(end)) => out.push_str(&format!("{start} → {end}: ")),
            (Some(start), None) => out.push_str(&format!("{start}: ")),
            (None, _) => out.push_str("(no start): "),
        }
        out.push_str(event.summary.as_deref().unwrap_or("(untitled)"));
        if let Some(location) = event.location.as_deref().filter(|text| !text.is_empty()) {
            out.push_str(&format!(" @ {location}"));
        }
        if let Some(rule) = &event.rule {
            out.push_str(&format!(" (repeats: {rule})"));
        }
    }
    out
}

/// Joins folded lines (a line break followed by a space or a tab continues the line).
fn unfold(text: &str) -> String {
    let normalized = text.replace("\r\n", "\n").replace('\r', "\n");
    normalized.replace("\n ", "").replace("\n\t", "")
}

/// Splits `NAME;PARAM=VALUE:value` (colons inside quoted parameters ignored).
fn split_property(line: &str) -> Option<(String, &str, &str)> {
    let mut quoted = false;
    let colon = line.char_indices().find_map(|(index, character)| {
        match character {
            '"' => quoted = !quoted,
            ':' if !quoted => return Some(index),
            _ => {}
        }
        None
    })?;
    let (head, value) = (&line[..colon], &line[colon + 1..]);
    let (name, parameters) = head.split_once(';').unwrap_or((head, ""));
    Some((name.trim().to_ascii_uppercase(), parameters, value))
}

/// Decodes iCalendar text escapes; line breaks become spaces.
fn unescape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut characters = value.trim().chars();
    while let Some(character) = characters.next() {
        if character != '\\' {
            out.push(character);
            continue;
        }
        match characters.next() {
            Some('n' | 'N') => out.push(' '),
            Some(other) => out.push(other),
            None => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `20260315T090000Z` → `2026-03-15 09:00 UTC`; `20260315` → `2026-03-15`; a `TZID`
/// parameter is named after the time. Anything else is shown as given.
fn format_time(value: &str, parameters: &str) -> String {
    let value = value.trim();
    let zone = parameters.split(';').find_map(|parameter| {
        let (name, zone) = parameter.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("TZID")
            .then(|| zone.trim().trim_matches('"').to_owned())
    });
    let digits = |text: &str| !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit());
    let (date, time) = value.split_once('T').unwrap_or((value, ""));
    if date.len() != 8 || !digits(date) {
        return value.to_owned();
    }
    let mut out = format!("{}-{}-{}", &date[..4], &date[4..6], &date[6..8]);
    if time.is_empty() {
        return out;
    }
    let (clock, utc) = match time.strip_suffix('Z') {
        Some(clock) => (clock, true),
        None => (time, false),
    };
    if clock.len() != 6 || !digits(clock) {
        return value.to_owned();
    }
    out.push_str(&format!(" {}:{}", &clock[..2], &clock[2..4]));
    if &clock[4..] != "00" {
        out.push_str(&format!(":{}", &clock[4..]));
    }
    if utc {
        out.push_str(" UTC");
    } else if let Some(zone) = zone {
        out.push_str(&format!(" ({zone})"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const CALENDAR: &str = "BEGIN:VCALENDAR\r\n\
VERSION:2.0\r\n\
X-WR-CALNAME:Conference\r\n\
BEGIN:VTIMEZONE\r\n\
TZID:Europe/Paris\r\n\
BEGIN:STANDARD\r\n\
DTSTART:19701025T030000\r\n\
END:STANDARD\r\n\
END:VTIMEZONE\r\n\
BEGIN:VEVENT\r\n\
UID:1\r\n\
SUMMARY:Keynote: the future of\r\n\x20 local-first software\r\n\
DTSTART;TZID=\"Europe/Paris\":20260315T090000\r\n\
DTEND;TZID=Europe/Paris:20260315T101500\r\n\
LOCATION:Hall A\\, level 2\r\n\
BEGIN:VALARM\r\n\
SUMMARY:not the event\r\n\
TRIGGER:-PT15M\r\n\
END:VALARM\r\n\
END:VEVENT\r\n\
BEGIN:VEVENT\r\n\
SUMMARY:Workshop\\nday two\r\n\
DTSTART;VALUE=DATE:20260316\r\n\
RRULE:FREQ=WEEKLY;COUNT=3\r\n\
END:VEVENT\r\n\
BEGIN:VEVENT\r\n\
DTSTART:20260317T140030Z\r\n\
DTEND:20260317T150000Z\r\n\
END:VEVENT\r\n\
END:VCALENDAR\r\n";

    #[test]
    fn events_are_listed_one_per_line() {
        assert_eq!(
            summarize_calendar(CALENDAR),
            "Calendar \"Conference\": 3 events.\n\
             \n- 2026-03-15 09:00 (Europe/Paris) → 2026-03-15 10:15 (Europe/Paris): \
             Keynote: the future of local-first software @ Hall A, level 2\
             \n- 2026-03-16: Workshop day two (repeats: FREQ=WEEKLY;COUNT=3)\
             \n- 2026-03-17 14:00:30 UTC → 2026-03-17 15:00 UTC: (untitled)"
        );
    }

    #[test]
    fn garbage_yields_an_empty_summary_not_a_panic() {
        assert_eq!(
            summarize_calendar("not a calendar"),
            "Calendar: 0 events.\n"
        );
        assert_eq!(
            summarize_calendar("BEGIN:VEVENT\nDTSTART:2026\nEND:VEVENT"),
            "Calendar: 1 event.\n\n- 2026: (untitled)"
        );
    }

    proptest::proptest! {
        #[test]
        fn never_panics(text in ".{0,400}") {
            summarize_calendar(&text);
        }
    }
}
