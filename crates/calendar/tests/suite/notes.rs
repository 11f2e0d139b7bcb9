//! Full Calendar note folders: reading, and Hearth's writes.

use hearth_calendar::{
    CalendarError, ChangeRequest, ConflictKind, EventId, EventInput, EventPatch,
};
use pretty_assertions::assert_eq;

use super::support::{calendars, copy_notes, ics_calendar, occurrences};

fn notes_calendars(dir: &std::path::Path) -> hearth_calendar::Calendars {
    let folder = copy_notes(dir);
    let toml = format!(
        "[calendars.notes]\nkind = \"notes\"\npath = \"{}\"\ntime_zone = \"Europe/Berlin\"\n",
        folder.display()
    );
    calendars(&toml, dir, chrono_tz::Europe::Berlin)
}

#[tokio::test]
async fn reads_every_kind_of_note_and_reports_the_broken_one() {
    let dir = tempfile::tempdir().unwrap();
    let calendars = notes_calendars(dir.path());
    let loaded = calendars.load("notes").await.unwrap();
    let mut uids: Vec<&str> = loaded
        .index
        .events()
        .iter()
        .map(|e| e.uid.as_str())
        .collect();
    uids.sort_unstable();
    assert_eq!(
        uids,
        vec![
            "(Every M,R) Gym.md",
            "(Repeats) Rent.md",
            "2026-03-03 Dentist.md",
            "2026-03-20 Conference.md",
            "archive/2026-03-05 Old meeting.md"
        ]
    );
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    assert!(loaded.warnings[0].location.ends_with("Broken.md"));
    assert!(loaded.warnings[0].message.contains("not valid YAML"));

    let march = occurrences(&calendars, "2026-03-01T00:00:00Z", "2026-04-03T00:00:00Z").await;
    let count = |prefix: &str| march.iter().filter(|(t, _)| t.starts_with(prefix)).count();
    // Mondays and Thursdays from 03-02 to 04-02.
    assert_eq!(count("Health - Gym"), 10);
    // 03-01 only: 04-01 is skipped.
    assert_eq!(count("Home - Rent"), 1);
    assert_eq!(count("Work - Travel - Conference"), 1);
    let dentist = march.iter().find(|(t, _)| t == "Health - Dentist").unwrap();
    assert_eq!(dentist.1.to_rfc3339(), "2026-03-03T08:00:00+00:00");
    let old = march
        .iter()
        .find(|(t, _)| t == "Work - Old meeting")
        .unwrap();
    assert_eq!(old.1.to_rfc3339(), "2026-03-05T07:00:00+00:00");
}

#[tokio::test]
async fn creates_updates_and_deletes_notes() {
    let dir = tempfile::tempdir().unwrap();
    let calendars = notes_calendars(dir.path());
    let folder = dir.path().join("notes");
    let input = EventInput {
        title: "Haircut".into(),
        category: Some("Personal".into()),
        start: "2026-03-12T15:00".into(),
        end: Some("2026-03-12T15:45".into()),
        ..EventInput::default()
    };
    let staged = calendars
        .stage(ChangeRequest::Create {
            calendar: None,
            events: vec![input],
        })
        .await
        .unwrap();
    assert!(
        !folder.join("2026-03-12 Personal - Haircut.md").exists(),
        "staging wrote"
    );
    let applied = calendars.apply(&staged.payload).await.unwrap();
    assert_eq!(
        applied.events,
        vec!["notes/2026-03-12 Personal - Haircut.md"]
    );
    assert_eq!(
        std::fs::read_to_string(folder.join("2026-03-12 Personal - Haircut.md")).unwrap(),
        "---\ntitle: Personal - Haircut\nallDay: false\ntype: single\ndate: 2026-03-12\nstartTime: 15:00\nendTime: 15:45\n---\n"
    );

    let dentist = EventId::new("notes", "2026-03-03 Dentist.md");
    let patch = EventPatch {
        start: Some("2026-03-04T09:00".into()),
        ..EventPatch::default()
    };
    let staged = calendars
        .stage(ChangeRequest::Update {
            event: dentist.clone(),
            occurrence: None,
            patch,
        })
        .await
        .unwrap();
    calendars.apply(&staged.payload).await.unwrap();
    assert_eq!(
        std::fs::read_to_string(folder.join("2026-03-03 Dentist.md")).unwrap(),
        "---\ntitle: Health - Dentist\nallDay: false\ndate: 2026-03-04\nstartTime: 09:00\nendTime: 10:30\ntags: [health]\n---\n\nBring the insurance card.\n"
    );

    let gym = EventId::new("notes", "(Every M,R) Gym.md");
    let staged = calendars
        .stage(ChangeRequest::Delete {
            event: gym,
            occurrence: Some("2026-03-05".into()),
        })
        .await
        .unwrap();
    assert!(staged.summary.contains("2026-03-05"), "{}", staged.summary);
    calendars.apply(&staged.payload).await.unwrap();
    let gym_text = std::fs::read_to_string(folder.join("(Every M,R) Gym.md")).unwrap();
    assert!(
        gym_text.contains("type: rrule\n") && gym_text.contains("skipDates: [2026-03-05]\n"),
        "{gym_text}"
    );
    assert!(gym_text.ends_with("---\nLeg day on Thursdays.\n"));
    let march = occurrences(&calendars, "2026-03-05T00:00:00Z", "2026-03-06T00:00:00Z").await;
    assert!(march.iter().all(|(t, _)| t != "Health - Gym"), "{march:?}");

    let staged = calendars
        .stage(ChangeRequest::Delete {
            event: dentist,
            occurrence: None,
        })
        .await
        .unwrap();
    calendars.apply(&staged.payload).await.unwrap();
    assert!(!folder.join("2026-03-03 Dentist.md").exists());
    // Other notes, including ones that are not events, are untouched.
    assert_eq!(
        std::fs::read_to_string(folder.join("Shopping list.md")).unwrap(),
        "# Shopping\n- milk\n"
    );
    assert_eq!(
        std::fs::read_to_string(folder.join("Broken.md")).unwrap(),
        "---\ntitle: [broken\ndate: 2026-03-04\n---\n"
    );
}

#[tokio::test]
async fn one_occurrence_of_a_note_series_cannot_change_alone() {
    let dir = tempfile::tempdir().unwrap();
    let calendars = notes_calendars(dir.path());
    let patch = EventPatch {
        title: Some("Swim".into()),
        ..EventPatch::default()
    };
    let error = calendars
        .stage(ChangeRequest::Update {
            event: EventId::new("notes", "(Every M,R) Gym.md"),
            occurrence: Some("2026-03-05".into()),
            patch,
        })
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("cannot change one occurrence"),
        "{error}"
    );
}

fn note_names(folder: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn haircut(day: u32) -> EventInput {
    EventInput {
        title: format!("Haircut {day}"),
        start: format!("2026-03-{day:02}T15:00"),
        ..EventInput::default()
    }
}

#[tokio::test]
async fn a_batch_that_fails_part_way_writes_no_note() {
    let dir = tempfile::tempdir().unwrap();
    let calendars = notes_calendars(dir.path());
    let folder = dir.path().join("notes");
    let before = note_names(&folder);
    let mut staged = calendars
        .stage(ChangeRequest::Create {
            calendar: None,
            events: vec![haircut(12), haircut(13), haircut(14)],
        })
        .await
        .unwrap();
    // The third note's name is the first's: its write fails after the first two
    // succeeded, as when another program takes the name at the last moment. An altered
    // payload is refused before anything is written; one in the format of earlier
    // versions (no digest of its writes) reaches the writes and fails part-way.
    let payload = &mut staged.payload;
    payload["operation"]["events"][2]["uid"] = payload["operation"]["events"][0]["uid"].clone();
    payload["target"]["notes"][2] = payload["target"]["notes"][0].clone();
    let error = calendars.apply(&staged.payload).await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("differently from the approved diff"),
        "{error}"
    );
    assert_eq!(note_names(&folder), before, "the folder is as it was");
    let payload = staged.payload.as_object_mut().unwrap();
    payload.remove("writes");
    payload.insert("format".into(), 1.into());
    let error = calendars.apply(&staged.payload).await.unwrap_err();
    assert!(matches!(error, CalendarError::Conflict { .. }), "{error}");
    assert_eq!(note_names(&folder), before, "the folder is as it was");
}

#[tokio::test]
async fn a_note_edited_after_staging_is_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let calendars = notes_calendars(dir.path());
    let note = dir.path().join("notes/2026-03-03 Dentist.md");
    let staged = calendars
        .stage(ChangeRequest::Update {
            event: EventId::new("notes", "2026-03-03 Dentist.md"),
            occurrence: None,
            patch: EventPatch {
                title: Some("Orthodontist".into()),
                ..EventPatch::default()
            },
        })
        .await
        .unwrap();
    let edited = std::fs::read_to_string(&note).unwrap().replace(
        "Bring the insurance card.",
        "Bring the insurance card and the form.",
    );
    std::fs::write(&note, &edited).unwrap();
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
    for needle in ["'Health - Dentist'", "notes/2026-03-03 Dentist.md"] {
        assert!(error.to_string().contains(needle), "{needle}: {error}");
    }
    assert_eq!(std::fs::read_to_string(&note).unwrap(), edited);
}

#[tokio::test]
async fn a_new_note_whose_name_was_taken_after_staging_is_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let calendars = notes_calendars(dir.path());
    let staged = calendars
        .stage(ChangeRequest::Create {
            calendar: None,
            events: vec![haircut(12)],
        })
        .await
        .unwrap();
    let name = staged.payload["target"]["notes"][0]["name"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(name, "2026-03-12 Haircut 12.md");
    let note = dir.path().join("notes").join(&name);
    std::fs::write(&note, "My own note.\n").unwrap();
    let error = calendars.apply(&staged.payload).await.unwrap_err();
    assert!(
        matches!(
            error,
            CalendarError::EventConflict {
                kind: ConflictKind::Appeared,
                ..
            }
        ),
        "{error}"
    );
    assert_eq!(std::fs::read_to_string(&note).unwrap(), "My own note.\n");
}

/// `(title, start)` of every occurrence in 2026 (and early 1970) of a calendar, sorted.
async fn occurrences_of(calendars: &hearth_calendar::Calendars) -> Vec<(String, String)> {
    let mut all = Vec::new();
    for (from, to) in [
        ("1969-12-01T00:00:00Z", "1970-03-01T00:00:00Z"),
        ("2025-12-01T00:00:00Z", "2027-01-01T00:00:00Z"),
    ] {
        all.extend(
            occurrences(calendars, from, to)
                .await
                .into_iter()
                .map(|(title, start)| (title, start.to_rfc3339())),
        );
    }
    all.sort();
    all
}

fn write_note(folder: &std::path::Path, name: &str, text: &str) {
    std::fs::write(folder.join(name), text).unwrap();
}

/// Series whose start is not one of their days, or that have no start at all.
fn add_off_day_notes(folder: &std::path::Path) {
    // 2026-01-01 is a Thursday.
    write_note(
        folder,
        "(Every M) Swim.md",
        "---\ntitle: Health - Swim\ntype: recurring\ndaysOfWeek: [M]\nstartRecur: 2026-01-01\nendRecur: 2026-02-28\nstartTime: '07:00'\nendTime: '08:00'\nallDay: false\n---\n",
    );
    write_note(
        folder,
        "(Every W) Yoga.md",
        "---\ntitle: Health - Yoga\ntype: recurring\ndaysOfWeek: [W]\nstartTime: '18:00'\nendTime: '19:00'\n---\n",
    );
    // Ends before its first Monday: no occurrence at all.
    write_note(
        folder,
        "(Every M) Never.md",
        "---\ntitle: Never\ntype: recurring\ndaysOfWeek: [M]\nstartRecur: 2026-01-01\nendRecur: 2026-01-03\nstartTime: '07:00'\n---\n",
    );
    write_note(
        folder,
        "(Repeats) Review.md",
        "---\ntitle: Work - Review\ntype: rrule\nallDay: true\nstartDate: 2026-01-01\nrrule: FREQ=MONTHLY;BYDAY=1MO;COUNT=4\nskipDates: [2026-02-02]\n---\n",
    );
}

#[tokio::test]
async fn exported_note_series_start_on_their_first_occurrence() {
    let dir = tempfile::tempdir().unwrap();
    let calendars = notes_calendars(dir.path());
    add_off_day_notes(&dir.path().join("notes"));
    let exported = calendars.export_ics("notes").await.unwrap();
    for line in [
        // The first Monday from 2026-01-01, not the Thursday itself.
        "DTSTART:20260105T070000\r\nDTEND:20260105T080000\r\nRRULE:FREQ=WEEKLY;UNTIL=20260228T235959;BYDAY=MO\r\n",
        // No `startRecur`: the first Wednesday from 1970-01-01.
        "DTSTART:19700107T180000\r\nDTEND:19700107T190000\r\nRRULE:FREQ=WEEKLY;BYDAY=WE\r\n",
        // The first first-Monday-of-the-month; COUNT still counts the same starts.
        "DTSTART;VALUE=DATE:20260105\r\nDTEND;VALUE=DATE:20260106\r\nRRULE:FREQ=MONTHLY;COUNT=4;BYDAY=1MO\r\n",
        "EXDATE;VALUE=DATE:20260202\r\n",
        // Nothing occurs: its start stays, excluded.
        "DTSTART:20260101T070000\r\nDTEND:20260101T080000\r\nRRULE:FREQ=WEEKLY;UNTIL=20260103T235959;BYDAY=MO\r\nSEQUENCE:1\r\nEXDATE:20260101T070000\r\n",
    ] {
        assert!(
            exported.contains(line),
            "{line:?} missing from:\n{exported}"
        );
    }
    assert!(!exported.contains(":1900"), "{exported}");
    assert_eq!(
        exported.matches("DTSTART:20260101T070000").count(),
        1,
        "{exported}"
    );
}

#[tokio::test]
async fn a_note_folder_exported_to_icalendar_reimports_with_the_same_occurrences() {
    let dir = tempfile::tempdir().unwrap();
    let calendars = notes_calendars(dir.path());
    add_off_day_notes(&dir.path().join("notes"));
    let exported = calendars.export_ics("notes").await.unwrap();
    let path = dir.path().join("exported.ics");
    std::fs::write(&path, &exported).unwrap();
    let reimported = ics_calendar("copy", &path, chrono_tz::Europe::Berlin);
    let loaded = reimported.load("copy").await.unwrap();
    assert_eq!(loaded.warnings, Vec::new());
    let original = occurrences_of(&calendars).await;
    assert!(original.len() > 60, "{original:?}");
    assert_eq!(occurrences_of(&reimported).await, original);
}

#[tokio::test]
async fn importing_a_series_whose_start_is_off_its_rule_keeps_every_occurrence() {
    let dir = tempfile::tempdir().unwrap();
    let calendars = notes_calendars(dir.path());
    let folder = dir.path().join("notes");
    let before = occurrences_of(&calendars).await;
    // 2026-03-03 is a Tuesday: an occurrence of its own, then the rule's three Mondays.
    let text = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Example//EN\r\n\
BEGIN:VEVENT\r\nUID:class@example.com\r\nDTSTAMP:20260101T000000Z\r\n\
DTSTART;TZID=Europe/Berlin:20260303T090000\r\nDTEND;TZID=Europe/Berlin:20260303T100000\r\n\
RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=3\r\nSUMMARY:Class\r\nEND:VEVENT\r\n\
BEGIN:VEVENT\r\nUID:plants@example.com\r\nDTSTAMP:20260101T000000Z\r\n\
DTSTART;VALUE=DATE:20260310\r\nRRULE:FREQ=WEEKLY;BYDAY=MO;UNTIL=20260331\r\n\
RDATE;VALUE=DATE:20260401\r\nEXDATE;VALUE=DATE:20260316\r\nSUMMARY:Water plants\r\nEND:VEVENT\r\n\
END:VCALENDAR\r\n";
    let source = dir.path().join("source.ics");
    std::fs::write(&source, text).unwrap();
    let expected =
        occurrences_of(&ics_calendar("source", &source, chrono_tz::Europe::Berlin)).await;
    let report = calendars
        .import_ics(None, text, "source.ics")
        .await
        .unwrap();
    assert_eq!(
        (report.imported, report.skipped.clone()),
        (2, Vec::<String>::new())
    );
    assert_eq!(
        report.adapted,
        vec![
            "'Class': the occurrence (2026-03-03 09:00 (Europe/Berlin)) is not produced by its rule, which is all a note can repeat; kept as separate single-event notes".to_owned(),
            "'Water plants': the occurrences (2026-03-10, 2026-04-01) are not produced by its rule, which is all a note can repeat; kept as separate single-event notes".to_owned(),
        ]
    );
    assert_eq!(
        std::fs::read_to_string(folder.join("(Repeats) Class.md")).unwrap(),
        "---\ntitle: Class\nallDay: false\ntype: rrule\nstartDate: 2026-03-03\nrrule: FREQ=WEEKLY;COUNT=3;BYDAY=MO\nskipDates: []\nstartTime: 09:00\nendTime: 10:00\n---\n"
    );
    assert!(folder.join("2026-03-03 Class.md").exists());
    let mut after = occurrences_of(&calendars).await;
    after.retain(|o| !before.contains(o));
    let mut expected = expected;
    expected.sort();
    assert_eq!(after, expected);
    assert_eq!(
        expected
            .iter()
            .map(|(title, start)| format!("{title} {start}"))
            .collect::<Vec<_>>(),
        [
            "Class 2026-03-03T08:00:00+00:00",
            "Class 2026-03-09T08:00:00+00:00",
            "Class 2026-03-16T08:00:00+00:00",
            "Class 2026-03-23T08:00:00+00:00",
            "Water plants 2026-03-09T23:00:00+00:00",
            "Water plants 2026-03-22T23:00:00+00:00",
            "Water plants 2026-03-29T22:00:00+00:00",
            "Water plants 2026-03-31T22:00:00+00:00",
        ]
    );
}
