//! Pending proposals compose: each one guards only the events it touches, so applying
//! one leaves the others on the same file or folder valid, and a conflict names the
//! event that changed.

use chrono_tz::Europe::Berlin;
use hearth_calendar::{ChangeRequest, EventId, EventInput, EventPatch, StagedChange};
use pretty_assertions::assert_eq;

use super::support::{copy_fixture, copy_notes, fixture, ics_calendar, notes_calendar};

const STANDUP: &str = "7kq3p0s1d2f3g4h5j6k7l8m9n0@google.com";
const EASTER: &str = "easter-break-2026@google.com";
const PARTNER: &str = "partner-sync-0310@google.com";

fn event(title: &str, start: &str) -> EventInput {
    EventInput {
        title: title.into(),
        start: start.into(),
        ..EventInput::default()
    }
}

fn retitle(calendar: &str, uid: &str, title: &str) -> ChangeRequest {
    ChangeRequest::Update {
        event: EventId::new(calendar, uid),
        occurrence: None,
        patch: EventPatch {
            title: Some(title.into()),
            ..EventPatch::default()
        },
    }
}

fn delete(calendar: &str, uid: &str, occurrence: Option<&str>) -> ChangeRequest {
    ChangeRequest::Delete {
        event: EventId::new(calendar, uid),
        occurrence: occurrence.map(str::to_owned),
    }
}

async fn stage_all(
    calendars: &hearth_calendar::Calendars,
    requests: Vec<ChangeRequest>,
) -> Vec<StagedChange> {
    let mut staged = Vec::new();
    for request in requests {
        staged.push(calendars.stage(request).await.unwrap());
    }
    staged
}

#[tokio::test]
async fn approving_one_proposal_leaves_the_other_pending_proposals_on_the_file_valid() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_fixture(dir.path(), "google.ics");
    let calendars = ics_calendar("work", &path, Berlin);
    // Five proposals staged against the same file before any is approved, as an agent
    // proposes a round of changes and the user approves them one by one.
    let staged = stage_all(
        &calendars,
        vec![
            ChangeRequest::Create {
                calendar: None,
                events: vec![event("Dentist", "2026-03-11T09:00")],
            },
            ChangeRequest::Create {
                calendar: None,
                events: vec![
                    event("Lecture 1", "2026-04-13T10:00"),
                    event("Lecture 2", "2026-04-20T10:00"),
                ],
            },
            retitle("work", EASTER, "Vacation - Easter trip"),
            ChangeRequest::Update {
                event: EventId::new("work", STANDUP),
                occurrence: Some("2026-03-09T09:30".into()),
                patch: EventPatch {
                    start: Some("2026-03-09T10:00".into()),
                    ..EventPatch::default()
                },
            },
            delete("work", PARTNER, None),
        ],
    )
    .await;
    for (position, change) in staged.iter().enumerate() {
        calendars
            .apply(&change.payload)
            .await
            .unwrap_or_else(|error| {
                panic!(
                    "proposal {position} ({}) failed after the earlier ones were applied: {error}",
                    change.summary
                )
            });
    }
    let text = std::fs::read_to_string(&path).unwrap();
    for line in [
        "SUMMARY:Dentist\r\n",
        "SUMMARY:Lecture 1\r\n",
        "SUMMARY:Lecture 2\r\n",
        "SUMMARY:Vacation - Easter trip\r\n",
        "RECURRENCE-ID;TZID=Europe/Berlin:20260309T093000\r\n",
    ] {
        assert!(text.contains(line), "{line:?} missing from:\n{text}");
    }
    assert!(!text.contains(PARTNER), "{text}");
}

#[tokio::test]
async fn proposals_that_each_add_the_same_time_zone_compose() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_fixture(dir.path(), "google.ics");
    let calendars = ics_calendar("work", &path, Berlin);
    let in_tokyo = |title: &str, start: &str| EventInput {
        time_zone: Some("Asia/Tokyo".into()),
        ..event(title, start)
    };
    let staged = stage_all(
        &calendars,
        vec![
            ChangeRequest::Create {
                calendar: None,
                events: vec![in_tokyo("Call Tokyo", "2026-03-11T09:00")],
            },
            ChangeRequest::Create {
                calendar: None,
                events: vec![in_tokyo("Call Tokyo again", "2026-03-12T09:00")],
            },
        ],
    )
    .await;
    assert!(
        staged[1].diff.contains("+TZID:Asia/Tokyo"),
        "{}",
        staged[1].diff
    );
    for change in &staged {
        calendars.apply(&change.payload).await.unwrap();
    }
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.matches("TZID:Asia/Tokyo\r\n").count(), 1, "{text}");
    assert_eq!(text.matches("SUMMARY:Call Tokyo").count(), 2, "{text}");
}

#[tokio::test]
async fn approving_one_note_proposal_leaves_the_others_in_the_folder_valid() {
    let dir = tempfile::tempdir().unwrap();
    let folder = copy_notes(dir.path());
    let calendars = notes_calendar("notes", &folder, Berlin);
    let staged = stage_all(
        &calendars,
        vec![
            ChangeRequest::Create {
                calendar: None,
                events: vec![event("Haircut", "2026-03-12T15:00")],
            },
            retitle("notes", "2026-03-03 Dentist.md", "Health - Orthodontist"),
            delete("notes", "(Every M,R) Gym.md", Some("2026-03-05")),
            delete("notes", "2026-03-20 Conference.md", None),
        ],
    )
    .await;
    for change in &staged {
        calendars.apply(&change.payload).await.unwrap();
    }
    assert!(folder.join("2026-03-12 Haircut.md").exists());
    assert!(!folder.join("2026-03-20 Conference.md").exists());
}

#[tokio::test]
async fn a_proposal_conflicts_when_its_own_event_changed_and_the_error_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_fixture(dir.path(), "google.ics");
    let calendars = ics_calendar("work", &path, Berlin);
    let staged = stage_all(
        &calendars,
        vec![
            retitle("work", EASTER, "Vacation - Easter trip"),
            delete("work", EASTER, None),
            retitle("work", STANDUP, "Work - Meetings - Daily"),
            retitle("work", PARTNER, "Work - Partner call"),
        ],
    )
    .await;
    calendars.apply(&staged[0].payload).await.unwrap();
    let applied = std::fs::read_to_string(&path).unwrap();

    // The delete was staged against the event as it was before the rename.
    let error = calendars.apply(&staged[1].payload).await.unwrap_err();
    let message = error.to_string();
    for needle in [
        "'Vacation - Easter break'",
        "work/easter-break-2026@google.com",
        &path.display().to_string(),
        "nothing was written",
    ] {
        assert!(
            message.contains(needle),
            "{needle:?} missing from: {message}"
        );
    }
    let tool_error: hearth_core::ToolError = error.into();
    assert!(matches!(tool_error, hearth_core::ToolError::Conflict(_)));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), applied);

    // A hand edit to the standup's changed occurrence (a component with its UID) is a
    // change to the standup; a hand edit to another event is not.
    let edited = applied
        .replace(
            "SUMMARY:Work - Meetings - Standup (late)",
            "SUMMARY:Work - Meetings - Standup (later)",
        )
        .replace(
            "SUMMARY:Vacation - Easter trip",
            "SUMMARY:Vacation - Lisbon",
        );
    std::fs::write(&path, &edited).unwrap();
    let error = calendars.apply(&staged[2].payload).await.unwrap_err();
    assert!(
        error.to_string().contains("'Work - Meetings - Standup'"),
        "{error}"
    );
    assert!(error.to_string().contains(STANDUP), "{error}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), edited);
    calendars.apply(&staged[3].payload).await.unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("SUMMARY:Work - Partner call\r\n"), "{text}");
    assert!(text.contains("SUMMARY:Vacation - Lisbon\r\n"), "{text}");

    // Two changes to one series touch the same event, even when they are about
    // different occurrences: the second was staged against the series as it was.
    let first = calendars
        .stage(delete("work", STANDUP, Some("2026-03-11")))
        .await
        .unwrap();
    let second = calendars
        .stage(delete("work", STANDUP, Some("2026-03-12")))
        .await
        .unwrap();
    calendars.apply(&first.payload).await.unwrap();
    let error = calendars.apply(&second.payload).await.unwrap_err();
    assert!(error.to_string().contains(STANDUP), "{error}");
}

#[tokio::test]
async fn creating_conflicts_only_when_an_event_with_its_uid_appeared() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_fixture(dir.path(), "google.ics");
    let calendars = ics_calendar("work", &path, Berlin);
    let staged = calendars
        .stage(ChangeRequest::Create {
            calendar: None,
            events: vec![event("Dentist", "2026-03-11T09:00")],
        })
        .await
        .unwrap();
    let uid = staged.payload["operation"]["events"][0]["uid"]
        .as_str()
        .unwrap()
        .to_owned();
    let copy = format!(
        "BEGIN:VEVENT\r\nUID:{uid}\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;VALUE=DATE:20260311\r\nSUMMARY:Synced copy\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    );
    let edited = fixture("google.ics").replace("END:VCALENDAR\r\n", &copy);
    std::fs::write(&path, &edited).unwrap();
    let error = calendars.apply(&staged.payload).await.unwrap_err();
    assert!(error.to_string().contains(&uid), "{error}");
    assert!(error.to_string().contains("'Dentist'"), "{error}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), edited);
}

/// A payload staged by an earlier Hearth (format 1, stored in a database), with the
/// calendar's path put in.
fn legacy_payload(name: &str, placeholder: &str, path: &std::path::Path) -> serde_json::Value {
    let text =
        fixture(&format!("payloads/{name}")).replace(placeholder, &path.display().to_string());
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn payloads_staged_before_per_event_fingerprints_keep_the_whole_file_check() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_fixture(dir.path(), "google.ics");
    let calendars = ics_calendar("work", &path, Berlin);
    calendars
        .apply(&legacy_payload("format1-ics-update.json", "{path}", &path))
        .await
        .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("SUMMARY:Vacation - Easter trip\r\n"),
        "{text}"
    );

    // The file changed since (by that very apply): the old payload's whole-file
    // fingerprint no longer matches, so it is refused as it always was.
    let error = calendars
        .apply(&legacy_payload("format1-ics-create.json", "{path}", &path))
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("changed on disk since this change was staged"),
        "{error}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);

    let folder = copy_notes(dir.path());
    let notes = notes_calendar("notes", &folder, Berlin);
    notes
        .apply(&legacy_payload(
            "format1-notes-update.json",
            "{folder}",
            &folder,
        ))
        .await
        .unwrap();
    let note = std::fs::read_to_string(folder.join("2026-03-03 Dentist.md")).unwrap();
    assert!(note.contains("title: Health - Orthodontist\n"), "{note}");
}
