//! Full Calendar note folders: reading, and Hearth's writes.

use hearth_calendar::{ChangeRequest, EventId, EventInput, EventPatch};
use pretty_assertions::assert_eq;

use super::support::{calendars, copy_notes, occurrences};

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
        "---\ntitle: Health - Dentist\nallDay: false\ndate: 2026-03-04\nstartTime: 09:00\nendTime: 10:30\ntags: [health]\ntype: single\n---\n\nBring the insurance card.\n"
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
