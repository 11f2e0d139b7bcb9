//! Splicing changes into iCalendar texts.

use super::*;
use crate::ics_read::read_ics;
use crate::spec::SpecTime;
use chrono::{NaiveDate, NaiveDateTime, TimeZone};
use pretty_assertions::assert_eq;

const SOURCE: &str = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Example//EN\r\nX-WR-CALNAME:Home\r\nBEGIN:VEVENT\r\nUID:standup@example.com\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;TZID=Europe/Berlin:20260302T090000\r\nDTEND;TZID=Europe/Berlin:20260302T091500\r\nRRULE:FREQ=WEEKLY;BYDAY=MO\r\nSUMMARY:Work - Standup\r\nX-CUSTOM;X-PARAM=\"a,b\":keep me exactly\r\nDESCRIPTION:A long description that is folded across two physical lines be\r\n cause it is long\r\nSEQUENCE:3\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT10M\r\nEND:VALARM\r\nEND:VEVENT\r\nthis line is malformed and must survive\r\nBEGIN:VTODO\r\nUID:todo-1\r\nSUMMARY:Unknown component\r\nEND:VTODO\r\nEND:VCALENDAR\r\n";

fn stamp() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap()
}

fn local(text: &str) -> NaiveDateTime {
    NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M").unwrap()
}

fn berlin(text: &str) -> SpecTime {
    SpecTime::Zoned {
        local: local(text),
        time_zone: "Europe/Berlin".into(),
    }
}

fn spec(uid: &str) -> EventSpec {
    EventSpec {
        uid: uid.into(),
        title: "Health - Dentist".into(),
        start: berlin("2026-03-03T09:00"),
        end: berlin("2026-03-03T10:00"),
        location: Some("Main St. 1, Berlin".into()),
        description: None,
        recurrence: RecurrenceSpec::None,
    }
}

fn standup_spec() -> EventSpec {
    EventSpec {
        uid: "standup@example.com".into(),
        title: "Work - Standup".into(),
        start: berlin("2026-03-02T09:00"),
        end: berlin("2026-03-02T09:15"),
        location: None,
        description: Some(
            "A long description that is folded across two physical lines because it is long".into(),
        ),
        recurrence: RecurrenceSpec::Unchanged,
    }
}

#[test]
fn creating_keeps_every_existing_byte() {
    let written = create_events(SOURCE, &[spec("new-1")], stamp())
        .unwrap()
        .text;
    let inserted_at = SOURCE.find("END:VCALENDAR").unwrap();
    let timezone_at = SOURCE.find("BEGIN:VEVENT").unwrap();
    assert!(written.starts_with(&SOURCE[..timezone_at]));
    assert!(written.ends_with(&SOURCE[inserted_at..]));
    assert!(written.contains(&SOURCE[timezone_at..inserted_at]));
    assert!(written.contains("BEGIN:VTIMEZONE\r\nTZID:Europe/Berlin\r\n"));
    assert!(written.contains("UID:new-1\r\nDTSTAMP:20260301T120000Z\r\n"));
    assert!(written.contains("LOCATION:Main St. 1\\, Berlin\r\n"));
    assert!(written.contains("DTSTART;TZID=Europe/Berlin:20260303T090000\r\n"));
    let events = read_ics("home", "home.ics", &written).unwrap();
    assert_eq!(events.events.len(), 2);
    // A second create needs no second VTIMEZONE.
    let again = create_events(&written, &[spec("new-2")], stamp())
        .unwrap()
        .text;
    assert_eq!(again.matches("BEGIN:VTIMEZONE").count(), 1);
    assert!(
        create_events(&again, &[spec("new-2")], stamp())
            .unwrap_err()
            .to_string()
            .contains("already exists")
    );
}

#[test]
fn creates_a_calendar_in_an_empty_file() {
    let written = create_events("", &[spec("new-1")], stamp()).unwrap().text;
    assert!(written.starts_with(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Hearth//Hearth Calendar//EN\r\n"
    ));
    let parsed = read_ics("home", "home.ics", &written).unwrap();
    assert_eq!(parsed.warnings, vec![]);
    assert_eq!(parsed.events[0].title, "Health - Dentist");
}

#[test]
fn updating_rewrites_only_the_changed_lines() {
    let mut changed = standup_spec();
    changed.title = "Work - Daily standup".into();
    let written = update_event(SOURCE, &changed, stamp()).unwrap().text;
    let expected = SOURCE
        .replace("SUMMARY:Work - Standup", "SUMMARY:Work - Daily standup")
        .replace("DTSTAMP:20260101T000000Z", "DTSTAMP:20260301T120000Z")
        .replace(
            "SEQUENCE:3\r\n",
            "SEQUENCE:4\r\nLAST-MODIFIED:20260301T120000Z\r\n",
        );
    assert_eq!(written, expected);
}

#[test]
fn updating_times_and_rules() {
    let mut changed = standup_spec();
    changed.start = berlin("2026-03-02T10:00");
    changed.end = berlin("2026-03-02T10:30");
    changed.recurrence = RecurrenceSpec::Rule {
        rule: "FREQ=WEEKLY;BYDAY=MO,WE".into(),
    };
    changed.description = None;
    let written = update_event(SOURCE, &changed, stamp()).unwrap().text;
    assert!(written.contains("DTSTART;TZID=Europe/Berlin:20260302T100000\r\nDTEND;TZID=Europe/Berlin:20260302T103000\r\nRRULE:FREQ=WEEKLY;BYDAY=MO,WE\r\n"));
    assert!(!written.contains("DESCRIPTION"));
    assert!(written.contains("X-CUSTOM;X-PARAM=\"a,b\":keep me exactly\r\n"));
    assert!(written.contains("BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT10M\r\nEND:VALARM\r\n"));
    changed.recurrence = RecurrenceSpec::None;
    let single = update_event(SOURCE, &changed, stamp()).unwrap().text;
    assert!(!single.contains("RRULE:FREQ=WEEKLY"));
}

#[test]
fn deleting_removes_the_series_and_its_overrides() {
    let with_override = update_occurrence(
        SOURCE,
        &EventTime::DateTime {
            local: local("2026-03-09T09:00"),
            zone: Zone::Named(chrono_tz::Europe::Berlin),
        },
        &EventSpec {
            start: berlin("2026-03-09T11:00"),
            end: berlin("2026-03-09T11:15"),
            ..standup_spec()
        },
        stamp(),
    )
    .unwrap()
    .text;
    assert!(with_override.contains("RECURRENCE-ID;TZID=Europe/Berlin:20260309T090000\r\n"));
    // The override copies the series' unknown properties and alarms.
    assert_eq!(with_override.matches("X-CUSTOM").count(), 2);
    assert_eq!(with_override.matches("BEGIN:VALARM").count(), 2);
    let parsed = read_ics("home", "home.ics", &with_override).unwrap();
    assert_eq!(parsed.events.len(), 2);
    assert_eq!(parsed.warnings.len(), 1, "{:?}", parsed.warnings);

    let deleted = delete_event(&with_override, "standup@example.com")
        .unwrap()
        .text;
    assert!(!deleted.contains("standup"));
    assert!(deleted.contains("BEGIN:VTODO"));
    assert!(deleted.contains("this line is malformed and must survive"));
}

fn event_block(uid: &str, summary: &str, start: &str) -> String {
    format!(
        "BEGIN:VEVENT\r\nUID:{uid}\r\nDTSTAMP:20260101T000000Z\r\n{start}SUMMARY:{summary}\r\nEND:VEVENT\r\n"
    )
}

fn calendar_of(events: &[String]) -> String {
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Example//EN\r\n{}END:VCALENDAR\r\n",
        events.concat()
    )
}

#[test]
fn deleting_an_event_whose_uid_is_duplicated_is_refused() {
    let start = "DTSTART;VALUE=DATE:20260303\r\n";
    let text = calendar_of(&[
        event_block("dup@example.com", "Dentist", start),
        event_block("other@example.com", "Other", start),
        event_block("dup@example.com", "Hidden copy", start),
    ]);
    let shown = read_ics("home", "home.ics", &text).unwrap();
    assert_eq!(
        shown
            .events
            .iter()
            .map(|e| e.title.as_str())
            .collect::<Vec<_>>(),
        ["Dentist", "Other"]
    );
    let error = delete_event(&text, "dup@example.com").unwrap_err();
    assert!(matches!(error, IcalError::Refused(_)), "{error}");
    assert_eq!(
        error.to_string(),
        "event `dup@example.com` is in the file 2 times (BEGIN:VEVENT at line 4 and at line 16); Hearth shows only the current revision (line 4), and deleting it would show the other copy in its place, so nothing was deleted. Remove the copy you do not want by hand (or give it its own UID), then delete again"
    );
    // A copy in a second VCALENDAR counts too: loading reads every VCALENDAR.
    let two_calendars = format!(
        "{}{}",
        calendar_of(&[event_block("dup@example.com", "Dentist", start)]),
        calendar_of(&[event_block("dup@example.com", "Hidden copy", start)])
    );
    assert!(delete_event(&two_calendars, "dup@example.com").is_err());
}

#[test]
fn deleting_removes_the_copy_loading_shows_when_an_earlier_one_is_unreadable() {
    let text = calendar_of(&[
        event_block("dup@example.com", "No start, skipped when loading", ""),
        event_block(
            "dup@example.com",
            "Dentist",
            "DTSTART;VALUE=DATE:20260303\r\n",
        ),
    ]);
    let deleted = delete_event(&text, "dup@example.com").unwrap().text;
    assert!(!deleted.contains("Dentist"), "{deleted}");
    assert!(deleted.contains("No start"), "{deleted}");
    assert!(
        read_ics("home", "home.ics", &deleted)
            .unwrap()
            .events
            .is_empty()
    );
}

#[test]
fn deleting_an_occurrence_whose_override_is_duplicated_is_refused() {
    let occurrence = EventTime::DateTime {
        local: local("2026-03-09T09:00"),
        zone: Zone::Named(chrono_tz::Europe::Berlin),
    };
    let changed = EventSpec {
        start: berlin("2026-03-09T11:00"),
        end: berlin("2026-03-09T11:15"),
        ..standup_spec()
    };
    let once = update_occurrence(SOURCE, &occurrence, &changed, stamp())
        .unwrap()
        .text;
    let start = once
        .find("BEGIN:VEVENT\r\nUID:standup@example.com\r\nDTSTAMP:20260301")
        .unwrap();
    let end = once[start..].find("END:VEVENT\r\n").unwrap() + start + "END:VEVENT\r\n".len();
    let twice = format!("{}{}", &once[..end], &once[start..]);
    assert!(delete_occurrence(&once, "standup@example.com", &occurrence, stamp()).is_ok());
    let error = delete_occurrence(&twice, "standup@example.com", &occurrence, stamp()).unwrap_err();
    assert!(
        error.to_string().starts_with(
            "the changed occurrence of event `standup@example.com` is in the file 2 times"
        ),
        "{error}"
    );
}

#[test]
fn deleting_an_occurrence_adds_an_exdate_in_the_series_form() {
    let occurrence = EventTime::DateTime {
        local: local("2026-03-09T09:00"),
        zone: Zone::Named(chrono_tz::Europe::Berlin),
    };
    let written = delete_occurrence(SOURCE, "standup@example.com", &occurrence, stamp())
        .unwrap()
        .text;
    assert!(
        written.contains("EXDATE;TZID=Europe/Berlin:20260309T090000\r\nBEGIN:VALARM"),
        "{written}"
    );
    let parsed = read_ics("home", "home.ics", &written).unwrap();
    let recurrence = parsed.events[0].recurrence.clone().unwrap();
    assert_eq!(recurrence.exdates, vec![occurrence]);
}

#[test]
fn refuses_damaged_files_and_unknown_events() {
    let damaged = "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:1\r\n";
    assert!(
        create_events(damaged, &[spec("x")], stamp())
            .unwrap_err()
            .to_string()
            .contains("never closed")
    );
    assert!(matches!(
        delete_event(SOURCE, "missing").unwrap_err(),
        IcalError::UnknownEvent { .. }
    ));
    let date = NaiveDate::from_ymd_opt(2026, 3, 3).unwrap();
    let all_day = EventSpec {
        start: SpecTime::Date { date },
        end: SpecTime::Date {
            date: date.succ_opt().unwrap(),
        },
        ..spec("d")
    };
    let written = create_events(SOURCE, &[all_day], stamp()).unwrap().text;
    assert!(written.contains("DTSTART;VALUE=DATE:20260303\r\nDTEND;VALUE=DATE:20260304\r\n"));
}

#[test]
fn a_change_records_the_same_edits_wherever_its_event_sits() {
    let changed = EventSpec {
        title: "Work - Daily".into(),
        ..standup_spec()
    };
    let here = update_event(SOURCE, &changed, stamp()).unwrap();
    // Another event added before it, and the zone it needs added by someone else.
    let created = create_events(SOURCE, &[spec("new-1")], stamp())
        .unwrap()
        .text;
    let moved = created.replacen(
        "BEGIN:VEVENT\r\nUID:standup",
        "BEGIN:VEVENT\r\nUID:other\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260101T090000Z\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:standup",
        1,
    );
    let there = update_event(&moved, &changed, stamp()).unwrap();
    assert_ne!(here.text, there.text);
    assert_eq!(here.edits, there.edits);
    assert_eq!(here.edits.len(), 1);
    assert!(
        here.edits[0]
            .0
            .starts_with("BEGIN:VEVENT\r\nUID:standup@example.com\r\n")
    );
    assert!(here.edits[0].1.contains("SUMMARY:Work - Daily\r\n"));

    let zoned = create_events(SOURCE, &[spec("new-2")], stamp()).unwrap();
    assert_eq!(zoned.time_zones, ["Europe/Berlin"]);
    let again = create_events(&zoned.text, &[spec("new-3")], stamp()).unwrap();
    assert!(again.time_zones.is_empty());
}

#[test]
fn an_event_fingerprint_covers_its_components_and_nothing_else() {
    let with_override = update_occurrence(
        SOURCE,
        &EventTime::DateTime {
            local: local("2026-03-09T09:00"),
            zone: Zone::Named(chrono_tz::Europe::Berlin),
        },
        &EventSpec {
            start: berlin("2026-03-09T11:00"),
            end: berlin("2026-03-09T11:15"),
            ..standup_spec()
        },
        stamp(),
    )
    .unwrap()
    .text;
    let uids = ["standup@example.com", "todo-1", "nowhere"];
    let [series, todo, nowhere] = event_fingerprints(&with_override, &uids)
        .try_into()
        .unwrap();
    assert!(series.starts_with("sha256:"), "{series}");
    assert_eq!(todo, ABSENT, "a VTODO is not an event");
    assert_eq!(nowhere, ABSENT);
    // The series alone hashes differently: the override is part of the event.
    assert_ne!(event_fingerprints(SOURCE, &uids[..1])[0], series);
    // Other parts of the file do not count.
    let elsewhere = with_override.replace("X-WR-CALNAME:Home", "X-WR-CALNAME:House");
    assert_eq!(event_fingerprints(&elsewhere, &uids[..1])[0], series);
    let inside = with_override.replace("TRIGGER:-PT10M", "TRIGGER:-PT15M");
    assert_ne!(event_fingerprints(&inside, &uids[..1])[0], series);
}
