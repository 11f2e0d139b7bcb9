//! Calendars whose file or folder is missing: reported by reads, refused for writes, and
//! never created — Hearth makes no folder outside its data directory; only an iCalendar
//! file may be created, inside its existing folder.

use chrono_tz::Europe::Berlin;
use hearth_calendar::{ChangeRequest, EventInput, tool_names};
use hearth_core::ToolOutput;
use serde_json::json;

use super::support::{calendars, context, copy_notes, fixture, tool};

fn dentist() -> EventInput {
    EventInput {
        title: "Dentist".into(),
        start: "2026-03-11T09:00".into(),
        ..EventInput::default()
    }
}

/// `work`: an iCalendar file in `folder`; `notes`: the note folder `notes_folder`.
fn two_calendars(
    data: &std::path::Path,
    folder: &std::path::Path,
    notes_folder: &std::path::Path,
) -> hearth_calendar::Calendars {
    let toml = format!(
        "[calendars.work]\nkind = \"ics\"\npath = \"{}\"\n[calendars.notes]\nkind = \"notes\"\npath = \"{}\"\n",
        folder.join("work.ics").display(),
        notes_folder.display()
    );
    calendars(&toml, data, Berlin)
}

fn create_in(calendar: &str) -> ChangeRequest {
    ChangeRequest::Create {
        calendar: Some(calendar.into()),
        events: vec![dentist()],
    }
}

#[tokio::test]
async fn a_calendar_whose_folder_is_missing_is_refused_and_no_folder_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("gone/deeper");
    let notes = dir.path().join("gone-notes");
    let calendars = two_calendars(dir.path(), &folder, &notes);
    for (calendar, path) in [("work", &folder), ("notes", &notes)] {
        let error = calendars.stage(create_in(calendar)).await.unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains(&path.display().to_string()) && message.contains("does not exist"),
            "{calendar}: {message}"
        );
        let tool_error: hearth_core::ToolError = error.into();
        assert!(
            matches!(tool_error, hearth_core::ToolError::Refused(_)),
            "{calendar}: {tool_error:?}"
        );
    }
    // Importing is refused the same way.
    for calendar in ["work", "notes"] {
        let error = calendars
            .import_ics(Some(calendar), &fixture("apple.ics"), "apple.ics")
            .await
            .unwrap_err();
        assert!(error.to_string().contains("does not exist"), "{error}");
    }
    assert!(!dir.path().join("gone").exists());
    assert!(!notes.exists());
}

#[tokio::test]
async fn a_proposal_staged_before_its_folder_went_missing_is_refused_when_applied() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("synced");
    std::fs::create_dir(&folder).unwrap();
    let notes = copy_notes(dir.path());
    let calendars = two_calendars(dir.path(), &folder, &notes);
    let to_file = calendars.stage(create_in("work")).await.unwrap();
    let to_notes = calendars.stage(create_in("notes")).await.unwrap();
    // The synced folder is unmounted (or renamed) before the user approves.
    std::fs::remove_dir(&folder).unwrap();
    std::fs::remove_dir_all(&notes).unwrap();
    for (staged, path) in [(&to_file, &folder), (&to_notes, &notes)] {
        let error = calendars.apply(&staged.payload).await.unwrap_err();
        assert!(
            error.to_string().contains("does not exist"),
            "{}: {error}",
            staged.summary
        );
        assert!(!path.exists(), "{} was created", path.display());
    }
}

#[tokio::test]
async fn an_ics_file_is_created_in_its_existing_folder() {
    let dir = tempfile::tempdir().unwrap();
    let notes = copy_notes(dir.path());
    let calendars = two_calendars(dir.path(), dir.path(), &notes);
    let staged = calendars.stage(create_in("work")).await.unwrap();
    calendars.apply(&staged.payload).await.unwrap();
    let text = std::fs::read_to_string(dir.path().join("work.ics")).unwrap();
    assert!(text.contains("SUMMARY:Dentist\r\n"), "{text}");
}

async fn tool_text(
    calendars: &hearth_calendar::Calendars,
    name: &str,
    args: serde_json::Value,
) -> String {
    match tool(calendars, name).execute(&context(), args).await {
        Ok(ToolOutput::Content { text, .. }) => text,
        Ok(other) => panic!("{other:?}"),
        Err(error) => error.to_string(),
    }
}

#[tokio::test]
async fn reads_say_a_calendar_is_missing_instead_of_showing_no_events() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("unmounted");
    let notes = dir.path().join("vault/Calendar");
    let calendars = two_calendars(dir.path(), &folder, &notes);

    let summaries = calendars.summaries().await;
    for summary in summaries.iter().filter(|s| s.info.id != "default") {
        let value = serde_json::to_value(summary).unwrap();
        assert_eq!(value["storage"], "missing", "{value}");
        assert_eq!(value["events"], serde_json::Value::Null, "{value}");
    }

    let listed = tool_text(&calendars, tool_names::CALENDAR_LIST, json!({})).await;
    for id in ["work", "notes"] {
        let line = listed
            .lines()
            .find(|l| l.starts_with(&format!("- `{id}`")))
            .unwrap();
        assert!(!line.contains("0 events"), "{line}");
    }
    for path in [&folder, &notes] {
        assert!(
            listed.contains(&format!("missing: {} does not exist", path.display())),
            "{listed}"
        );
    }

    let range = json!({"from": "2026-03-01", "to": "2026-03-31"});
    let events = tool_text(&calendars, tool_names::EVENTS_LIST, range).await;
    assert!(events.contains("Calendar `work` is missing"), "{events}");
    assert!(events.contains("Calendar `notes` is missing"), "{events}");
    let one = tool_text(
        &calendars,
        tool_names::EVENTS_LIST,
        json!({"from": "2026-03-01", "to": "2026-03-31", "calendar": "notes"}),
    )
    .await;
    assert!(
        one.contains(&format!("{} does not exist", notes.display())),
        "{one}"
    );
}
