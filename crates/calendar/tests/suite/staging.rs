//! Stage → apply: staging writes nothing; applying writes atomically and refuses when
//! the event it changes changed since staging.

use hearth_calendar::{
    CalendarError, ChangeRequest, ConflictKind, EventId, EventInput, EventPatch,
};
use pretty_assertions::assert_eq;

use super::support::{calendars, copy_fixture, fixture, ics_calendar, occurrences};

fn dentist() -> EventInput {
    EventInput {
        title: "Dentist".into(),
        category: Some("Health".into()),
        start: "2026-03-11T09:00".into(),
        location: Some("Main St. 1".into()),
        ..EventInput::default()
    }
}

fn listing(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn staging_writes_nothing_and_applying_writes_the_event() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_fixture(dir.path(), "google.ics");
    let calendars = ics_calendar("work", &path, chrono_tz::Europe::Berlin);
    let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
    let staged = calendars
        .stage(ChangeRequest::Create {
            calendar: Some("work".into()),
            events: vec![dentist()],
        })
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        fixture("google.ics")
    );
    assert_eq!(
        std::fs::metadata(&path).unwrap().modified().unwrap(),
        modified
    );
    assert_eq!(listing(dir.path()), vec!["google.ics"]);

    assert!(
        staged.summary.starts_with(
            "Create event 'Health - Dentist' (2026-03-11 09:00–10:00 (Europe/Berlin))"
        ),
        "{}",
        staged.summary
    );
    let (fields, file) = staged.diff.split_once("\n\n--- ").unwrap();
    assert_eq!(
        fields,
        format!(
            "Create in calendar `work` ({})\n\n+ title: Health - Dentist\n+ when: 2026-03-11 09:00–10:00 (Europe/Berlin)\n+ location: Main St. 1",
            path.display()
        )
    );
    let header = format!("{0}\n+++ {0}\n@@ -87,4 +87,15 @@\n", path.display());
    assert!(file.starts_with(&header), "{file}");
    assert!(
        file.contains(
            "\n+SUMMARY:Health - Dentist\r\n+DTSTART;TZID=Europe/Berlin:20260311T090000\r\n"
        ),
        "{file}"
    );
    let guard = &staged.payload["target"]["events"][0];
    assert_eq!(guard["fingerprint"], "absent", "{guard}");

    calendars.apply(&staged.payload).await.unwrap();
    let day = occurrences(&calendars, "2026-03-11T00:00:00Z", "2026-03-12T00:00:00Z").await;
    assert!(
        day.iter()
            .any(|(t, s)| t == "Health - Dentist" && s.to_rfc3339() == "2026-03-11T08:00:00+00:00"),
        "{day:?}"
    );
    assert_eq!(
        listing(dir.path()),
        vec!["google.ics"],
        "no temporary files left behind"
    );
}

#[tokio::test]
async fn apply_refuses_when_the_event_changed_since_staging() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_fixture(dir.path(), "google.ics");
    let calendars = ics_calendar("work", &path, chrono_tz::Europe::Berlin);
    let staged = calendars
        .stage(ChangeRequest::Update {
            event: EventId::new("work", "easter-break-2026@google.com"),
            occurrence: None,
            patch: EventPatch {
                location: Some("Lisbon".into()),
                ..EventPatch::default()
            },
        })
        .await
        .unwrap();
    let edited = fixture("google.ics").replace(
        "SUMMARY:Vacation - Easter break",
        "SUMMARY:Vacation - Easter trip",
    );
    std::fs::write(&path, &edited).unwrap();
    let error = calendars.apply(&staged.payload).await.unwrap_err();
    assert!(
        matches!(
            error,
            CalendarError::EventConflict {
                kind: ConflictKind::Changed,
                ..
            }
        ),
        "{error}"
    );
    assert!(
        error.to_string().contains(&format!(
            "event 'Vacation - Easter break' (work/easter-break-2026@google.com) was changed in {} since this change was staged; nothing was written",
            path.display()
        )),
        "{error}"
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        edited,
        "the user's edit is kept"
    );
    let tool_error: hearth_core::ToolError = error.into();
    assert!(matches!(tool_error, hearth_core::ToolError::Conflict(_)));
}

#[tokio::test]
async fn applying_twice_is_refused_the_second_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_fixture(dir.path(), "apple.ics");
    let calendars = ics_calendar("home", &path, chrono_tz::America::New_York);
    let staged = calendars
        .stage(ChangeRequest::Create {
            calendar: None,
            events: vec![dentist()],
        })
        .await
        .unwrap();
    calendars.apply(&staged.payload).await.unwrap();
    let once = std::fs::read_to_string(&path).unwrap();
    assert!(matches!(
        calendars.apply(&staged.payload).await.unwrap_err(),
        CalendarError::EventConflict {
            kind: ConflictKind::Appeared,
            ..
        }
    ));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), once);
    assert_eq!(once.matches("SUMMARY:Health - Dentist").count(), 1);
}

#[tokio::test]
async fn a_payload_pointing_elsewhere_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_fixture(dir.path(), "apple.ics");
    let calendars = ics_calendar("home", &path, chrono_tz::America::New_York);
    let mut staged = calendars
        .stage(ChangeRequest::Create {
            calendar: None,
            events: vec![dentist()],
        })
        .await
        .unwrap();
    staged.payload["target"]["path"] = serde_json::json!("/etc/passwd");
    let error = calendars.apply(&staged.payload).await.unwrap_err();
    assert!(matches!(error, CalendarError::InvalidPayload(_)), "{error}");
    assert!(
        calendars
            .apply(&serde_json::json!({"format": 1}))
            .await
            .is_err()
    );
}

#[tokio::test]
async fn the_default_calendar_is_created_on_first_write() {
    let dir = tempfile::tempdir().unwrap();
    let calendars = calendars("", dir.path(), chrono_tz::Europe::Berlin);
    let default = calendars.default_calendar().unwrap().clone();
    assert_eq!((default.id.as_str(), default.writable), ("default", true));
    let file = dir.path().join("calendars/default.ics");
    assert!(
        calendars
            .events(&hearth_calendar::EventQuery {
                from: super::support::utc("2026-01-01T00:00:00Z"),
                to: super::support::utc("2027-01-01T00:00:00Z"),
                text: None,
                category: None,
                calendar: None,
                limit: 10
            })
            .await
            .unwrap()
            .occurrences
            .is_empty()
    );
    assert!(!file.exists(), "reading does not create it");
    let applied = calendars.add_event(None, dentist()).await.unwrap();
    assert!(file.exists());
    assert!(applied.events[0].starts_with("default/"));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Hearth//Hearth Calendar//EN\r\n"
    ));
}

#[tokio::test]
async fn updates_and_deletes_of_one_occurrence() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_fixture(dir.path(), "google.ics");
    let calendars = ics_calendar("work", &path, chrono_tz::Europe::Berlin);
    let standup = EventId::new("work", "7kq3p0s1d2f3g4h5j6k7l8m9n0@google.com");
    let patch = EventPatch {
        start: Some("2026-03-09T10:00".into()),
        ..EventPatch::default()
    };
    let staged = calendars
        .stage(ChangeRequest::Update {
            event: standup.clone(),
            occurrence: Some("2026-03-09T09:30".into()),
            patch,
        })
        .await
        .unwrap();
    assert!(staged.diff.contains("- when: 2026-03-09 09:30–09:45 (Europe/Berlin)\n+ when: 2026-03-09 10:00–10:15 (Europe/Berlin)"), "{}", staged.diff);
    calendars.apply(&staged.payload).await.unwrap();
    let staged = calendars
        .stage(ChangeRequest::Delete {
            event: standup.clone(),
            occurrence: Some("2026-03-10".into()),
        })
        .await
        .unwrap();
    calendars.apply(&staged.payload).await.unwrap();
    let week = occurrences(&calendars, "2026-03-08T23:00:00Z", "2026-03-13T23:00:00Z").await;
    let standups: Vec<String> = week
        .iter()
        .filter(|(t, _)| t.contains("Standup"))
        .map(|(_, s)| s.to_rfc3339())
        .collect();
    assert_eq!(
        standups,
        vec![
            "2026-03-09T09:00:00+00:00",
            "2026-03-11T08:30:00+00:00",
            "2026-03-12T08:30:00+00:00",
            "2026-03-13T08:30:00+00:00"
        ]
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("EXDATE;TZID=Europe/Berlin:20260310T093000\r\n"));
    assert!(text.contains("RECURRENCE-ID;TZID=Europe/Berlin:20260309T093000\r\n"));

    let error = calendars
        .stage(ChangeRequest::Delete {
            event: standup,
            occurrence: Some("2026-03-14".into()),
        })
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("has no occurrence at `2026-03-14`"),
        "{error}"
    );
}

#[tokio::test]
async fn subscriptions_are_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_fixture(dir.path(), "apple.ics");
    let toml = format!(
        "[calendars.feed]\nkind = \"subscription\"\nurl = \"file://{}\"\n[calendars.home]\nkind = \"ics\"\npath = \"{}\"\n",
        path.display(),
        dir.path().join("home.ics").display()
    );
    let calendars = calendars(&toml, dir.path(), chrono_tz::America::New_York);
    assert_eq!(calendars.default_calendar().unwrap().id, "home");
    let list = occurrences(&calendars, "2026-03-06T00:00:00Z", "2026-03-07T00:00:00Z").await;
    assert_eq!(list.len(), 1, "{list:?}");
    let error = calendars
        .stage(ChangeRequest::Create {
            calendar: Some("feed".into()),
            events: vec![dentist()],
        })
        .await
        .unwrap_err();
    assert!(matches!(error, CalendarError::ReadOnly { .. }), "{error}");
    let error = calendars
        .stage(ChangeRequest::Delete {
            event: EventId::new("feed", "birthday-alex@apple"),
            occurrence: None,
        })
        .await
        .unwrap_err();
    assert!(matches!(error, CalendarError::ReadOnly { .. }), "{error}");
    assert_eq!(
        calendars.export_ics("feed").await.unwrap(),
        fixture("apple.ics")
    );
}

#[tokio::test]
async fn import_copies_events_verbatim_and_skips_known_uids() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_fixture(dir.path(), "google.ics");
    let calendars = ics_calendar("work", &path, chrono_tz::Europe::Berlin);
    let report = calendars
        .import_ics(None, &fixture("outlook.ics"), "outlook.ics")
        .await
        .unwrap();
    assert_eq!(
        (report.imported, report.skipped.len()),
        (3, 0),
        "{report:?}"
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with(
        &fixture("google.ics")[..fixture("google.ics").find("BEGIN:VEVENT").unwrap()]
    ));
    assert!(text.contains("TZID:W. Europe Standard Time\r\n"));
    assert!(text.contains("TZID:Customized Time Zone\r\n"));
    assert!(text.contains("X-MS-OLK-CONFTYPE:0\r\n"));
    let again = calendars
        .import_ics(None, &fixture("outlook.ics"), "outlook.ics")
        .await
        .unwrap();
    assert_eq!((again.imported, again.skipped.len()), (0, 3));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

#[tokio::test]
async fn deleting_an_event_whose_uid_is_in_the_file_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("home.ics");
    let event = |summary: &str, day: &str| {
        format!(
            "BEGIN:VEVENT\r\nUID:dup@example.com\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;VALUE=DATE:{day}\r\nSUMMARY:{summary}\r\nEND:VEVENT\r\n"
        )
    };
    let text = format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Example//EN\r\n{}{}END:VCALENDAR\r\n",
        event("Dentist", "20260303"),
        event("Copy from an old sync", "20260305")
    );
    std::fs::write(&path, &text).unwrap();
    let calendars = ics_calendar("home", &path, chrono_tz::Europe::Berlin);
    let shown = occurrences(&calendars, "2026-03-01T00:00:00Z", "2026-03-10T00:00:00Z").await;
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert_eq!(shown[0].0, "Dentist");
    let error = calendars
        .stage(ChangeRequest::Delete {
            event: EventId::new("home", "dup@example.com"),
            occurrence: None,
        })
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("is in the file 2 times (BEGIN:VEVENT at line 4 and at line 10)"),
        "{error}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}
