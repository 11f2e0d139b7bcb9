//! Full Calendar note folders: one Markdown file per event, its fields in YAML front
//! matter (`title, allDay, date, startTime, endTime, endDate, type: single|recurring|
//! rrule, daysOfWeek, startRecur, endRecur, rrule, skipDates`). The `rrule` type's start
//! date is read from `startDate` (Full Calendar's key) or `date`.
//!
//! A note without front matter, or whose front matter has none of the event keys, is not
//! an event and is passed over silently; a note that tries to be one and fails becomes
//! a warning.

use std::path::Path;

use chrono::{Duration, NaiveDate, NaiveDateTime, NaiveTime, Weekday};
use hearth_ical::{
    Event, EventSource, EventTime, Recurrence, RecurrenceRule, Until, Zone, parse_time_zone,
};
use serde_yaml_ng::{Mapping, Value};

/// Keys whose presence makes a note an event note.
const EVENT_KEYS: &[&str] = &[
    "date",
    "startDate",
    "type",
    "daysOfWeek",
    "startRecur",
    "rrule",
];

/// Where a `recurring` note without `startRecur` starts. Full Calendar repeats such a
/// note with no start at all; Hearth needs one, and uses the Unix epoch rather than an
/// earlier date because exports carry it (as the first occurrence on or after it) to
/// other calendar programs, which all handle it. What Hearth shows and what it exports
/// therefore agree.
pub(crate) const OPEN_START: NaiveDate = match NaiveDate::from_ymd_opt(1970, 1, 1) {
    Some(date) => date,
    None => NaiveDate::MIN,
};

/// The front matter of a note: its YAML text, and where the body starts.
pub(crate) struct FrontMatter<'a> {
    pub yaml: &'a str,
    /// Byte offset of the YAML's first line.
    pub yaml_start: usize,
    /// Byte offset just past the closing `---` line.
    pub body_start: usize,
}

/// Finds the front matter: a first line `---`, then YAML, then a line `---` or `...`.
pub(crate) fn front_matter(text: &str) -> Option<FrontMatter<'_>> {
    let offset = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let rest = &text[offset..];
    let first_end = rest.find('\n')?;
    if rest[..first_end].trim_end() != "---" {
        return None;
    }
    let yaml_start = offset + first_end + 1;
    let mut position = yaml_start;
    while position <= text.len() {
        let line_end = text[position..]
            .find('\n')
            .map_or(text.len(), |i| position + i);
        let line = text[position..line_end].trim_end();
        if line == "---" || line == "..." {
            return Some(FrontMatter {
                yaml: &text[yaml_start..position],
                yaml_start,
                body_start: (line_end + 1).min(text.len()),
            });
        }
        if line_end >= text.len() {
            break;
        }
        position = line_end + 1;
    }
    None
}

/// Reads a note's front matter as a YAML mapping. `Ok(None)`: not an event note.
pub(crate) fn parse_front_matter(text: &str) -> Result<Option<Mapping>, String> {
    let Some(front) = front_matter(text) else {
        return Ok(None);
    };
    if front.yaml.trim().is_empty() {
        return Ok(None);
    }
    let value: Value = serde_yaml_ng::from_str(front.yaml).map_err(|error| {
        // The parser counts lines from the YAML's start; the file has the `---` first.
        let location = error
            .location()
            .map(|l| format!(" at line {}", l.line() + 1))
            .unwrap_or_default();
        format!("front matter is not valid YAML{location}: {error}; the note is skipped")
    })?;
    match value {
        Value::Mapping(mapping) => {
            if EVENT_KEYS.iter().any(|k| mapping.contains_key(*k)) {
                Ok(Some(mapping))
            } else {
                Ok(None)
            }
        }
        _ => Ok(None),
    }
}

fn get<'m>(mapping: &'m Mapping, key: &str) -> Option<&'m Value> {
    mapping.get(key).filter(|v| !v.is_null())
}

fn string(mapping: &Mapping, key: &str) -> Option<String> {
    match get(mapping, key)? {
        Value::String(text) => Some(text.trim().to_owned()).filter(|t| !t.is_empty()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        _ => None,
    }
}

fn date(mapping: &Mapping, key: &str) -> Result<Option<NaiveDate>, String> {
    match string(mapping, key) {
        None => Ok(None),
        Some(text) => parse_note_date(&text)
            .map(Some)
            .ok_or_else(|| format!("`{key}: {text}` is not a date like 2026-03-03")),
    }
}

pub(crate) fn parse_note_date(text: &str) -> Option<NaiveDate> {
    let text = text.trim();
    let head = text.get(..10).unwrap_or(text);
    NaiveDate::parse_from_str(head, "%Y-%m-%d").ok()
}

/// Parses a Full Calendar time: `09:00`, `9:00`, `09:00:00`, `9:00 am`, `9:30PM`.
pub(crate) fn parse_note_time(text: &str) -> Option<NaiveTime> {
    let lowered = text.trim().to_ascii_lowercase();
    let (clock, meridiem) = if let Some(clock) = lowered.strip_suffix("am") {
        (clock.trim(), Some(false))
    } else if let Some(clock) = lowered.strip_suffix("pm") {
        (clock.trim(), Some(true))
    } else {
        (lowered.as_str(), None)
    };
    let mut parts = clock.split(':');
    let hour: u32 = parts.next()?.trim().parse().ok()?;
    let minute: u32 = parts.next().map_or(Some(0), |m| m.trim().parse().ok())?;
    let second: u32 = parts.next().map_or(Some(0), |s| s.trim().parse().ok())?;
    if parts.next().is_some() {
        return None;
    }
    let hour = match meridiem {
        Some(_) if hour == 0 || hour > 12 => return None,
        Some(false) => hour % 12,
        Some(true) => hour % 12 + 12,
        None => hour,
    };
    NaiveTime::from_hms_opt(hour, minute, second)
}

fn time(mapping: &Mapping, key: &str) -> Result<Option<NaiveTime>, String> {
    match string(mapping, key) {
        None => Ok(None),
        Some(text) => parse_note_time(&text)
            .map(Some)
            .ok_or_else(|| format!("`{key}: {text}` is not a time like 09:30")),
    }
}

fn flag(mapping: &Mapping, key: &str) -> Option<bool> {
    match get(mapping, key)? {
        Value::Bool(flag) => Some(*flag),
        Value::String(text) => match text.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" => Some(true),
            "false" | "no" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// Full Calendar's weekday letters (`U M T W R F S`); names are accepted too.
pub(crate) fn parse_note_weekday(text: &str) -> Option<Weekday> {
    Some(match text.trim() {
        "U" => Weekday::Sun,
        "M" => Weekday::Mon,
        "T" => Weekday::Tue,
        "W" => Weekday::Wed,
        "R" => Weekday::Thu,
        "F" => Weekday::Fri,
        "S" => Weekday::Sat,
        other => other.parse().ok()?,
    })
}

/// The letter Full Calendar writes for a weekday.
pub(crate) fn note_weekday_letter(weekday: Weekday) -> &'static str {
    match weekday {
        Weekday::Sun => "U",
        Weekday::Mon => "M",
        Weekday::Tue => "T",
        Weekday::Wed => "W",
        Weekday::Thu => "R",
        Weekday::Fri => "F",
        Weekday::Sat => "S",
    }
}

fn list(mapping: &Mapping, key: &str) -> Vec<String> {
    match get(mapping, key) {
        Some(Value::Sequence(items)) => items
            .iter()
            .filter_map(|item| match item {
                Value::String(text) => Some(text.trim().to_owned()),
                Value::Number(number) => Some(number.to_string()),
                _ => None,
            })
            .collect(),
        Some(Value::String(text)) => text
            .split(',')
            .map(|s| s.trim().trim_matches(['[', ']']).trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect(),
        _ => Vec::new(),
    }
}

/// The `RRULE` part of a Full Calendar `rrule` value (which may carry a `DTSTART` line).
fn rule_text(value: &str) -> &str {
    value
        .lines()
        .map(str::trim)
        .find(|line| !line.to_ascii_uppercase().starts_with("DTSTART"))
        .unwrap_or(value)
}

/// Reads one note. `Ok(None)`: the note is not an event.
pub(crate) fn read_note(
    calendar: &str,
    relative: &Path,
    text: &str,
) -> Result<Option<Event>, String> {
    let Some(mapping) = parse_front_matter(text)? else {
        return Ok(None);
    };
    let stem = relative
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let title = string(&mapping, "title").unwrap_or(stem);
    let times = NoteTimes::of(&mapping)?;
    let kind = string(&mapping, "type").unwrap_or_else(|| "single".to_owned());
    let (start, end, recurrence) = match kind.as_str() {
        "single" => {
            let start_date = date(&mapping, "date")?.ok_or("a single event note needs `date`")?;
            let (start, end) = times.span(start_date, date(&mapping, "endDate")?);
            (start, end, None)
        }
        "recurring" => recurring(&mapping, &times)?,
        "rrule" => rrule(&mapping, &times)?,
        other => {
            return Err(format!("`type: {other}` is not single, recurring or rrule"));
        }
    };
    let body = front_matter(text)
        .map(|f| text[f.body_start..].trim())
        .filter(|b| !b.is_empty())
        .map(str::to_owned);
    Ok(Some(Event {
        calendar: calendar.to_owned(),
        uid: relative.to_string_lossy().replace('\\', "/"),
        recurrence_id: None,
        range: hearth_ical::OverrideRange::ThisOccurrence,
        title,
        description: body,
        location: string(&mapping, "location"),
        categories: Vec::new(),
        status: None,
        start,
        end,
        recurrence,
        source: EventSource::Note {
            path: relative.to_path_buf(),
        },
    }))
}

/// A note event's start, end and recurrence.
type NoteEvent = (EventTime, EventTime, Option<Recurrence>);

/// How a note's times read: all-day or at `startTime`–`endTime`, in its `timezone`
/// (floating when it has none).
struct NoteTimes {
    all_day: bool,
    start_time: Option<NaiveTime>,
    end_time: Option<NaiveTime>,
    zone: Zone,
}

impl NoteTimes {
    fn of(mapping: &Mapping) -> Result<Self, String> {
        let zone = match string(mapping, "timezone").or_else(|| string(mapping, "timeZone")) {
            Some(name) => Zone::Named(parse_time_zone(&name).map_err(|e| e.to_string())?),
            None => Zone::Floating,
        };
        let start_time = time(mapping, "startTime")?;
        let end_time = time(mapping, "endTime")?;
        let all_day = flag(mapping, "allDay").unwrap_or(start_time.is_none());
        if !all_day && start_time.is_none() {
            return Err("the note is not all-day but has no `startTime`".to_owned());
        }
        Ok(Self {
            all_day,
            start_time,
            end_time,
            zone,
        })
    }

    /// Start and end of the first occurrence (or of the event): an end time before
    /// the start time is the next day; no end time is an hour.
    fn span(&self, start_date: NaiveDate, end_date: Option<NaiveDate>) -> (EventTime, EventTime) {
        if self.all_day {
            let last = end_date.unwrap_or(start_date).max(start_date);
            return (
                EventTime::Date(start_date),
                EventTime::Date(last.succ_opt().unwrap_or(last)),
            );
        }
        let start = start_date.and_time(self.start_time.unwrap_or(NaiveTime::MIN));
        let end = match self.end_time {
            Some(end_time) => {
                let mut end = end_date.unwrap_or(start_date).and_time(end_time);
                if end < start {
                    end += Duration::days(1);
                }
                end
            }
            None => start + Duration::hours(1),
        };
        let zone = self.zone;
        (
            EventTime::DateTime { local: start, zone },
            EventTime::DateTime { local: end, zone },
        )
    }

    /// A rule's end on `date`, inclusive.
    fn until(&self, date: NaiveDate) -> Until {
        if self.all_day {
            Until::Date(date)
        } else {
            Until::Floating(date.and_hms_opt(23, 59, 59).unwrap_or(NaiveDateTime::MIN))
        }
    }
}

/// A `recurring` note: weekly on `daysOfWeek` from `startRecur` to `endRecur`.
fn recurring(mapping: &Mapping, times: &NoteTimes) -> Result<NoteEvent, String> {
    let weekdays: Vec<Weekday> = list(mapping, "daysOfWeek")
        .iter()
        .map(|d| {
            parse_note_weekday(d).ok_or_else(|| {
                format!("`daysOfWeek` value `{d}` is not a weekday letter (U M T W R F S)")
            })
        })
        .collect::<Result<_, _>>()?;
    if weekdays.is_empty() {
        return Err("a recurring note needs `daysOfWeek`".to_owned());
    }
    let first = date(mapping, "startRecur")?.unwrap_or(OPEN_START);
    let (start, end) = times.span(first, None);
    let mut rule = RecurrenceRule::new(hearth_ical::Frequency::Weekly).with_weekdays(&weekdays);
    rule.set_until(date(mapping, "endRecur")?.map(|date| times.until(date)));
    let recurrence = Recurrence {
        rules: vec![rule],
        rdates: Vec::new(),
        periods: Vec::new(),
        exdates: skip_dates(mapping)?,
        start_is_occurrence: false,
    };
    Ok((start, end, Some(recurrence)))
}

/// An `rrule` note: its `rrule` from `startDate` (or `date`).
fn rrule(mapping: &Mapping, times: &NoteTimes) -> Result<NoteEvent, String> {
    let first = match date(mapping, "startDate")? {
        Some(first) => first,
        None => date(mapping, "date")?.ok_or("an rrule note needs `startDate`")?,
    };
    let text = string(mapping, "rrule").ok_or("an rrule note needs `rrule`")?;
    let rule: RecurrenceRule = rule_text(&text)
        .parse()
        .map_err(|e: hearth_ical::IcalError| e.to_string())?;
    let (start, end) = times.span(first, date(mapping, "endDate")?);
    let recurrence = Recurrence {
        rules: vec![rule],
        rdates: Vec::new(),
        periods: Vec::new(),
        exdates: skip_dates(mapping)?,
        start_is_occurrence: false,
    };
    Ok((start, end, Some(recurrence)))
}

fn skip_dates(mapping: &Mapping) -> Result<Vec<EventTime>, String> {
    list(mapping, "skipDates")
        .iter()
        .map(|d| {
            parse_note_date(d)
                .map(EventTime::Date)
                .ok_or_else(|| format!("`skipDates` value `{d}` is not a date like 2026-03-03"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn read(text: &str) -> Result<Option<Event>, String> {
        read_note("notes", Path::new("2026-03-03 Dentist.md"), text)
    }

    #[test]
    fn finds_front_matter_and_body() {
        let text = "---\ntitle: A\n---\nBody\n";
        let front = front_matter(text).unwrap();
        assert_eq!(front.yaml, "title: A\n");
        assert_eq!(&text[front.body_start..], "Body\n");
        assert!(front_matter("no front matter").is_none());
        assert!(front_matter("---\ntitle: never closed\n").is_none());
        let crlf = "---\r\ntitle: A\r\n---\r\n";
        assert_eq!(front_matter(crlf).unwrap().yaml, "title: A\r\n");
    }

    #[test]
    fn reads_a_timed_single_event() {
        let event = read("---\ntitle: Health - Dentist\nallDay: false\ndate: 2026-03-03\nstartTime: 09:00\nendTime: 10:30\n---\nBring the form.\n")
            .unwrap()
            .unwrap();
        let at = |h, m| {
            NaiveDate::from_ymd_opt(2026, 3, 3)
                .unwrap()
                .and_hms_opt(h, m, 0)
                .unwrap()
        };
        assert_eq!(event.title, "Health - Dentist");
        assert_eq!(
            event.start,
            EventTime::DateTime {
                local: at(9, 0),
                zone: Zone::Floating
            }
        );
        assert_eq!(
            event.end,
            EventTime::DateTime {
                local: at(10, 30),
                zone: Zone::Floating
            }
        );
        assert_eq!(event.description.as_deref(), Some("Bring the form."));
        assert_eq!(event.uid, "2026-03-03 Dentist.md");
    }

    #[test]
    fn reads_all_day_multi_day_and_recurring_notes() {
        let trip =
            read("---\ntitle: Trip\nallDay: true\ndate: 2026-03-03\nendDate: 2026-03-05\n---\n")
                .unwrap()
                .unwrap();
        assert_eq!(
            trip.start,
            EventTime::Date(NaiveDate::from_ymd_opt(2026, 3, 3).unwrap())
        );
        assert_eq!(
            trip.end,
            EventTime::Date(NaiveDate::from_ymd_opt(2026, 3, 6).unwrap())
        );

        let gym = read("---\ntitle: Gym\ntype: recurring\ndaysOfWeek: [M, R]\nstartRecur: 2026-01-01\nendRecur: 2026-06-30\nstartTime: '18:00'\nendTime: 7:00 pm\n---\n").unwrap().unwrap();
        let recurrence = gym.recurrence.unwrap();
        assert_eq!(
            recurrence.rules[0].to_string(),
            "FREQ=WEEKLY;UNTIL=20260630T235959;BYDAY=MO,TH"
        );
        assert!(!recurrence.start_is_occurrence);

        let rule = read("---\ntitle: Rent\ntype: rrule\nstartDate: 2026-01-01\nallDay: true\nrrule: \"DTSTART:20260101T000000Z\\nRRULE:FREQ=MONTHLY;BYMONTHDAY=1\"\nskipDates: [2026-02-01]\n---\n").unwrap().unwrap();
        let recurrence = rule.recurrence.unwrap();
        assert_eq!(recurrence.rules[0].to_string(), "FREQ=MONTHLY;BYMONTHDAY=1");
        assert_eq!(
            recurrence.exdates,
            vec![EventTime::Date(
                NaiveDate::from_ymd_opt(2026, 2, 1).unwrap()
            )]
        );
    }

    #[test]
    fn skips_non_event_notes_and_reports_broken_ones() {
        assert_eq!(read("Just a note.\n"), Ok(None));
        assert_eq!(read("---\ntags: [x]\n---\n"), Ok(None));
        let error = read("---\ntitle: [unclosed\ndate: 2026-03-03\n---\n").unwrap_err();
        assert!(error.contains("not valid YAML"), "{error}");
        let error = read("---\ndate: 2026-13-40\n---\n").unwrap_err();
        assert!(error.contains("not a date"), "{error}");
        let error = read(
            "---\ntype: rrule\nstartDate: 2026-01-01\nrrule: FREQ=SOMETIMES\nallDay: true\n---\n",
        )
        .unwrap_err();
        assert!(error.contains("FREQ"), "{error}");
        let error =
            read("---\ndate: 2026-01-01\nstartTime: 9:00\ntimezone: Mars/Base\n---\n").unwrap_err();
        assert!(error.contains("unknown time zone"), "{error}");
    }

    #[test]
    fn parses_times_and_weekdays() {
        assert_eq!(
            parse_note_time("9:30 pm"),
            NaiveTime::from_hms_opt(21, 30, 0)
        );
        assert_eq!(parse_note_time("12:00am"), NaiveTime::from_hms_opt(0, 0, 0));
        assert_eq!(
            parse_note_time("07:05:09"),
            NaiveTime::from_hms_opt(7, 5, 9)
        );
        assert_eq!(parse_note_time("25:00"), None);
        assert_eq!(parse_note_weekday("R"), Some(Weekday::Thu));
        assert_eq!(parse_note_weekday("sunday"), Some(Weekday::Sun));
    }
}
