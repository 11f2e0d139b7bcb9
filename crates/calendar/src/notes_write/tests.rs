//! Writing Full Calendar notes.

use super::*;
use crate::notes::read_note;
use chrono::NaiveDateTime;
use pretty_assertions::assert_eq;
use std::path::Path;

const ZONE: Tz = chrono_tz::Europe::Berlin;

fn local(text: &str) -> NaiveDateTime {
    NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M").unwrap()
}

fn zoned(text: &str) -> SpecTime {
    SpecTime::Zoned {
        local: local(text),
        time_zone: "Europe/Berlin".into(),
    }
}

fn spec() -> EventSpec {
    EventSpec {
        uid: "ignored".into(),
        title: "Health - Dentist".into(),
        start: zoned("2026-03-03T09:00"),
        end: zoned("2026-03-03T10:30"),
        location: None,
        description: Some("Bring the form.".into()),
        recurrence: RecurrenceSpec::None,
    }
}

fn read(text: &str) -> Event {
    read_note("notes", Path::new("n.md"), text)
        .unwrap()
        .unwrap()
}

#[test]
fn writes_new_notes_in_full_calendar_layout() {
    let text = new_note(&spec(), ZONE).unwrap();
    assert_eq!(
        text,
        "---\ntitle: Health - Dentist\nallDay: false\ntype: single\ndate: 2026-03-03\nstartTime: 09:00\nendTime: 10:30\n---\nBring the form.\n"
    );
    assert_eq!(
        note_file_name(&spec()).unwrap(),
        "2026-03-03 Health - Dentist.md"
    );
    let event = read(&text);
    assert_eq!(event.title, "Health - Dentist");
    assert_eq!(event.start.local(), local("2026-03-03T09:00"));

    let weekly = EventSpec {
        recurrence: RecurrenceSpec::Rule {
            rule: "FREQ=WEEKLY;BYDAY=MO,TH;UNTIL=20260630T215959Z".into(),
        },
        title: "Gym: legs".into(),
        ..spec()
    };
    let text = new_note(&weekly, ZONE).unwrap();
    assert!(
        text.contains(
            "type: recurring\ndaysOfWeek: [M, R]\nstartRecur: 2026-03-03\nendRecur: 2026-06-30\n"
        ),
        "{text}"
    );
    assert!(text.contains("title: 'Gym: legs'\n"), "{text}");
    assert_eq!(note_file_name(&weekly).unwrap(), "(Every M,R) Gym legs.md");
    let monthly = EventSpec {
        recurrence: RecurrenceSpec::Rule {
            rule: "FREQ=MONTHLY;BYDAY=-1FR".into(),
        },
        ..spec()
    };
    let text = new_note(&monthly, ZONE).unwrap();
    assert!(
        text.contains(
            "type: rrule\nstartDate: 2026-03-03\nrrule: FREQ=MONTHLY;BYDAY=-1FR\nskipDates: []\n"
        ),
        "{text}"
    );
    let event = read(&text);
    assert_eq!(
        event.recurrence.unwrap().rules[0].to_string(),
        "FREQ=MONTHLY;BYDAY=-1FR"
    );
    let elsewhere = EventSpec {
        start: SpecTime::Zoned {
            local: local("2026-03-03T09:00"),
            time_zone: "Asia/Tokyo".into(),
        },
        end: SpecTime::Zoned {
            local: local("2026-03-03T10:00"),
            time_zone: "Asia/Tokyo".into(),
        },
        ..spec()
    };
    assert!(
        new_note(&elsewhere, ZONE)
            .unwrap()
            .contains("timezone: Asia/Tokyo\n")
    );
}

#[test]
fn updates_only_changed_keys_and_keeps_comments_and_body() {
    let original = "---\n# my comment\ntitle: Health - Dentist\nallDay: false\ndate: 2026-03-03\nstartTime: '9:00'\nendTime: 10:30\ncustom:\n  - nested\ntags: [a, b]\n---\n\nBring the form.\n\n## Notes\n- keep\n";
    let current = read(original);
    let changed = EventSpec {
        start: zoned("2026-03-04T09:00"),
        end: zoned("2026-03-04T10:30"),
        description: current.description.clone(),
        ..spec()
    };
    let written = update_note(original, &current, &changed, ZONE).unwrap();
    assert_eq!(
        written,
        "---\n# my comment\ntitle: Health - Dentist\nallDay: false\ndate: 2026-03-04\nstartTime: '9:00'\nendTime: 10:30\ncustom:\n  - nested\ntags: [a, b]\n---\n\nBring the form.\n\n## Notes\n- keep\n"
    );
    let moved = EventSpec {
        location: Some("Clinic".into()),
        description: Some("New text".into()),
        ..changed
    };
    let written = update_note(original, &current, &moved, ZONE).unwrap();
    assert!(
        written.ends_with("location: Clinic\n---\nNew text\n"),
        "{written}"
    );
    assert!(written.contains("# my comment\n"));
}

#[test]
fn skipping_an_occurrence_turns_a_recurring_note_into_an_rrule_note() {
    let original = "---\ntitle: Gym\nallDay: false\ntype: recurring\ndaysOfWeek: [M, R]\nstartRecur: 2026-01-01\nstartTime: 18:00\nendTime: 19:00\n---\n";
    let current = read(original);
    let date = NaiveDate::from_ymd_opt(2026, 3, 5).unwrap();
    let written = skip_occurrence(original, &current, date, ZONE).unwrap();
    assert_eq!(
        written,
        "---\ntitle: Gym\nallDay: false\ntype: rrule\nstartTime: 18:00\nendTime: 19:00\nstartDate: 2026-01-01\nrrule: FREQ=WEEKLY;BYDAY=MO,TH\nskipDates: [2026-03-05]\n---\n"
    );
    let event = read(&written);
    assert_eq!(event.recurrence.unwrap().exdates.len(), 1);
}

#[test]
fn a_recurring_note_without_a_start_keeps_none_when_changed() {
    let text = "---\ntitle: Yoga\ntype: recurring\ndaysOfWeek: [W]\nstartTime: '18:00'\nendTime: '19:00'\n---\n";
    let current = read(text);
    let spec = EventSpec {
        title: "Evening yoga".into(),
        ..spec_of_event(&current)
    };
    let updated = update_note(text, &current, &spec, ZONE).unwrap();
    assert_eq!(
        updated,
        "---\ntitle: Evening yoga\ntype: recurring\ndaysOfWeek: [W]\nstartTime: '18:00'\nendTime: '19:00'\n---\n"
    );
}

fn spec_of_event(event: &Event) -> EventSpec {
    EventSpec {
        uid: event.uid.clone(),
        title: event.title.clone(),
        start: SpecTime::from_event_time(event.start),
        end: SpecTime::from_event_time(event.end),
        location: None,
        description: None,
        recurrence: RecurrenceSpec::Unchanged,
    }
}
