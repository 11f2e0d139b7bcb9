//! Checking and resolving event inputs and patches.

use super::*;
use hearth_ical::{EventSource, Recurrence};
use pretty_assertions::assert_eq;

const BERLIN: Tz = chrono_tz::Europe::Berlin;
/// The user in Berlin, a calendar placing floating times in UTC.
const ZONES: Zones = Zones {
    user: BERLIN,
    calendar: chrono_tz::UTC,
};

fn input(start: &str, end: Option<&str>) -> EventInput {
    EventInput {
        title: "Dentist".into(),
        start: start.into(),
        end: end.map(str::to_owned),
        ..EventInput::default()
    }
}

fn local(text: &str) -> NaiveDateTime {
    NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M").unwrap()
}

fn zoned(text: &str) -> SpecTime {
    SpecTime::Zoned {
        local: local(text),
        time_zone: "Europe/Berlin".into(),
    }
}

fn error(input: &EventInput) -> String {
    resolve_input(input, BERLIN, "u".into())
        .unwrap_err()
        .to_string()
}

#[test]
fn resolves_timed_all_day_and_offset_inputs() {
    let spec = resolve_input(&input("2026-03-03T09:00", None), BERLIN, "u".into()).unwrap();
    assert_eq!(
        spec,
        EventSpec {
            uid: "u".into(),
            title: "Dentist".into(),
            start: zoned("2026-03-03T09:00"),
            end: zoned("2026-03-03T10:00"),
            location: None,
            description: None,
            recurrence: RecurrenceSpec::None,
        }
    );
    let spec = resolve_input(&input("2026-03-03", Some("2026-03-05")), BERLIN, "u".into()).unwrap();
    assert_eq!(
        spec.start,
        SpecTime::Date {
            date: NaiveDate::from_ymd_opt(2026, 3, 3).unwrap()
        }
    );
    assert_eq!(
        spec.end,
        SpecTime::Date {
            date: NaiveDate::from_ymd_opt(2026, 3, 6).unwrap()
        }
    );
    let spec = resolve_input(&input("2026-03-03T08:00:00Z", None), BERLIN, "u".into()).unwrap();
    assert_eq!(spec.start, zoned("2026-03-03T09:00"));
    let mut utc = input("2026-03-03T08:00", None);
    utc.time_zone = Some("UTC".into());
    let spec = resolve_input(&utc, BERLIN, "u".into()).unwrap();
    assert_eq!(
        spec.start,
        SpecTime::Utc {
            utc: local("2026-03-03T08:00")
        }
    );
}

#[test]
fn applies_the_taxonomy() {
    let mut with_category = input("2026-03-03", None);
    with_category.category = Some("Health".into());
    with_category.sub_category = Some("Checkups".into());
    let spec = resolve_input(&with_category, BERLIN, "u".into()).unwrap();
    assert_eq!(spec.title, "Health - Checkups - Dentist");
    with_category.category = None;
    assert!(error(&with_category).contains("needs a `category`"));
}

#[test]
fn errors_name_the_field_and_the_fix() {
    assert!(error(&input("next tuesday", None)).contains("`start` value `next tuesday`"));
    assert!(
        error(&input("2026-03-03T09:00", Some("2026-03-03T08:00")))
            .contains("must be after `start`")
    );
    assert!(error(&input("2026-03-03T09:00", Some("2026-03-03T09:00"))).contains("must be after"));
    assert!(error(&input("2026-03-05", Some("2026-03-03"))).contains("before `start`"));
    let mut timed = input("2026-03-03", None);
    timed.all_day = Some(false);
    assert!(error(&timed).contains("no time of day"));
    let mut zone = input("2026-03-03T09:00", None);
    zone.time_zone = Some("Europe/Berln".into());
    assert!(error(&zone).contains("unknown time zone"));
    let mut rule = input("2026-03-03T09:00", None);
    rule.recurrence = Some("FREQ=FORTNIGHTLY".into());
    assert!(error(&rule).contains("invalid recurrence rule"));
    rule.recurrence = Some("FREQ=DAILY;UNTIL=20260101".into());
    assert!(error(&rule).contains("UNTIL is before the start"));
    let mut empty = input("2026-03-03", None);
    empty.title = "  ".into();
    assert!(error(&empty).contains("`title` is empty"));
}

#[test]
fn normalises_until_for_the_start() {
    let zoned_start = zoned("2026-03-03T09:00");
    assert_eq!(
        validate_rule("FREQ=WEEKLY;UNTIL=20260331", &zoned_start, BERLIN).unwrap(),
        "FREQ=WEEKLY;UNTIL=20260331T215959Z"
    );
    let date_start = SpecTime::Date {
        date: NaiveDate::from_ymd_opt(2026, 3, 3).unwrap(),
    };
    assert_eq!(
        validate_rule("FREQ=WEEKLY;UNTIL=20260331T120000Z", &date_start, BERLIN).unwrap(),
        "FREQ=WEEKLY;UNTIL=20260331"
    );
    assert!(validate_rule("FREQ=HOURLY", &date_start, BERLIN).is_err());
}

fn event() -> Event {
    Event {
        calendar: "home".into(),
        uid: "u".into(),
        recurrence_id: None,
        range: hearth_ical::OverrideRange::ThisOccurrence,
        title: "Work - Meetings - Sync".into(),
        description: Some("Agenda".into()),
        location: Some("Room 1".into()),
        categories: vec![],
        status: None,
        start: EventTime::DateTime {
            local: local("2026-03-03T09:00"),
            zone: Zone::Named(BERLIN),
        },
        end: EventTime::DateTime {
            local: local("2026-03-03T09:30"),
            zone: Zone::Named(BERLIN),
        },
        recurrence: Some(Recurrence {
            rules: vec!["FREQ=WEEKLY".parse().unwrap()],
            rdates: vec![],
            periods: Vec::new(),
            exdates: vec![],
            start_is_occurrence: true,
        }),
        source: EventSource::Ics { line: 1 },
    }
}

#[test]
fn patches_keep_what_they_do_not_name() {
    let patch = EventPatch {
        start: Some("2026-03-04T10:00".into()),
        location: Some(String::new()),
        ..EventPatch::default()
    };
    let spec = resolve_patch(&event(), &patch, ZONES).unwrap();
    assert_eq!(
        spec,
        EventSpec {
            uid: "u".into(),
            title: "Work - Meetings - Sync".into(),
            start: zoned("2026-03-04T10:00"),
            end: zoned("2026-03-04T10:30"),
            location: None,
            description: Some("Agenda".into()),
            recurrence: RecurrenceSpec::Unchanged,
        }
    );
    let retitle = EventPatch {
        title: Some("Retro".into()),
        category: None,
        ..EventPatch::default()
    };
    assert_eq!(
        resolve_patch(&event(), &retitle, ZONES).unwrap().title,
        "Work - Meetings - Retro"
    );
    let uncategorise = EventPatch {
        category: Some(String::new()),
        ..EventPatch::default()
    };
    assert_eq!(
        resolve_patch(&event(), &uncategorise, ZONES).unwrap().title,
        "Sync"
    );
    let stop = EventPatch {
        recurrence: Some(String::new()),
        ..EventPatch::default()
    };
    assert_eq!(
        resolve_patch(&event(), &stop, ZONES).unwrap().recurrence,
        RecurrenceSpec::None
    );
    let zone = EventPatch {
        time_zone: Some("America/New_York".into()),
        ..EventPatch::default()
    };
    let spec = resolve_patch(&event(), &zone, ZONES).unwrap();
    assert_eq!(
        spec.start,
        SpecTime::Zoned {
            local: local("2026-03-03T09:00"),
            time_zone: "America/New_York".into()
        }
    );
}

/// A New York standup, as the user in Berlin sees it.
fn new_york_standup() -> Event {
    let mut standup = event();
    let new_york = Zone::Named(chrono_tz::America::New_York);
    standup.start = EventTime::DateTime {
        local: local("2026-03-03T09:00"),
        zone: new_york,
    };
    standup.end = EventTime::DateTime {
        local: local("2026-03-03T09:15"),
        zone: new_york,
    };
    standup
}

fn new_york(text: &str) -> SpecTime {
    SpecTime::Zoned {
        local: local(text),
        time_zone: "America/New_York".into(),
    }
}

#[test]
fn a_wall_clock_is_the_users_and_the_event_keeps_its_zone() {
    let moved = |start: &str, time_zone: Option<&str>| {
        let patch = EventPatch {
            start: Some(start.into()),
            time_zone: time_zone.map(str::to_owned),
            ..EventPatch::default()
        };
        let spec = resolve_patch(&new_york_standup(), &patch, ZONES).unwrap();
        (spec.start, spec.end)
    };
    // 16:30 in Berlin is 10:30 in New York (both on standard time on 4 March).
    assert_eq!(
        moved("2026-03-04T16:30", None),
        (new_york("2026-03-04T10:30"), new_york("2026-03-04T10:45"))
    );
    // An offset says which clock it is.
    assert_eq!(
        moved("2026-03-04T16:30:00-05:00", None),
        (new_york("2026-03-04T16:30"), new_york("2026-03-04T16:45"))
    );
    // So does `time_zone`, which the event then moves to.
    assert_eq!(
        moved("2026-03-04T16:30", Some("America/New_York")),
        (new_york("2026-03-04T16:30"), new_york("2026-03-04T16:45"))
    );
    assert_eq!(
        moved("2026-03-04T16:30", Some("Asia/Tokyo")).0,
        SpecTime::Zoned {
            local: local("2026-03-04T16:30"),
            time_zone: "Asia/Tokyo".into(),
        }
    );
    // An end alone is read the same way.
    let patch = EventPatch {
        end: Some("2026-03-03T15:30".into()),
        ..EventPatch::default()
    };
    let spec = resolve_patch(&new_york_standup(), &patch, ZONES).unwrap();
    assert_eq!(
        (spec.start, spec.end),
        (new_york("2026-03-03T09:00"), new_york("2026-03-03T09:30"))
    );
}

#[test]
fn a_new_event_is_read_and_stored_in_the_users_zone_unless_told() {
    let spec = resolve_input(&input("2026-03-04T16:30", None), BERLIN, "u".into()).unwrap();
    assert_eq!(spec.start, zoned("2026-03-04T16:30"));
    let mut in_new_york = input("2026-03-04T10:30", None);
    in_new_york.time_zone = Some("America/New_York".into());
    let spec = resolve_input(&in_new_york, BERLIN, "u".into()).unwrap();
    assert_eq!(spec.start, new_york("2026-03-04T10:30"));
}
