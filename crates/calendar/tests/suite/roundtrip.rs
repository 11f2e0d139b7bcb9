//! Real-world-shaped exports survive reading, exporting and Hearth's writes byte for byte.

use hearth_calendar::{ChangeRequest, EventId, EventInput, EventPatch, read_ics};
use pretty_assertions::assert_eq;

use super::support::{copy_fixture, fixture, ics_calendar};

/// The unfolded lines of the first VEVENT holding `uid`.
fn block(text: &str, uid: &str) -> Vec<String> {
    let unfolded = text.replace("\r\n ", "");
    let at = unfolded.find(&format!("UID:{uid}\r\n")).unwrap();
    let start = unfolded[..at].rfind("BEGIN:VEVENT").unwrap();
    let end = at + unfolded[at..].find("END:VEVENT").unwrap();
    unfolded[start..end]
        .split("\r\n")
        .map(str::to_owned)
        .collect()
}

#[test]
fn fixtures_read_without_warnings() {
    for (name, events) in [("google.ics", 4), ("outlook.ics", 3), ("apple.ics", 3)] {
        let parsed = read_ics("c", name, &fixture(name)).unwrap();
        assert_eq!(parsed.warnings, vec![], "{name}");
        assert_eq!(parsed.events.len(), events, "{name}");
    }
}

#[tokio::test]
async fn export_is_the_file_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["google.ics", "outlook.ics", "apple.ics"] {
        let path = copy_fixture(dir.path(), name);
        let calendars = ics_calendar("home", &path, chrono_tz::Europe::Berlin);
        assert_eq!(
            calendars.export_ics("home").await.unwrap(),
            fixture(name),
            "{name}"
        );
    }
}

async fn create_then_delete(name: &str, zone: chrono_tz::Tz) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_fixture(dir.path(), name);
    let calendars = ics_calendar("home", &path, zone);
    let input = EventInput {
        title: "Dentist".into(),
        start: "2026-03-11T09:00".into(),
        ..EventInput::default()
    };
    let staged = calendars
        .stage(ChangeRequest::Create {
            calendar: None,
            events: vec![input],
        })
        .await
        .unwrap();
    let applied = calendars.apply(&staged.payload).await.unwrap();
    let with_event = std::fs::read_to_string(&path).unwrap();
    let id: EventId = applied.events[0].parse().unwrap();
    let staged = calendars
        .stage(ChangeRequest::Delete {
            event: id,
            occurrence: None,
        })
        .await
        .unwrap();
    calendars.apply(&staged.payload).await.unwrap();
    (with_event, std::fs::read_to_string(&path).unwrap())
}

#[tokio::test]
async fn creating_and_deleting_an_event_restores_the_file_exactly() {
    for (name, zone) in [
        ("google.ics", chrono_tz::Europe::Berlin),
        ("apple.ics", chrono_tz::America::New_York),
    ] {
        let (with_event, after) = create_then_delete(name, zone).await;
        assert!(with_event.contains("SUMMARY:Dentist\r\n"), "{name}");
        assert_eq!(after, fixture(name), "{name}");
    }
    // Outlook's file has no Europe/Berlin zone: Hearth adds one, and nothing else stays.
    let (_, after) = create_then_delete("outlook.ics", chrono_tz::Europe::Berlin).await;
    let start = after
        .find("BEGIN:VTIMEZONE\r\nTZID:Europe/Berlin\r\n")
        .unwrap();
    let end = start + after[start..].find("END:VTIMEZONE\r\n").unwrap() + "END:VTIMEZONE\r\n".len();
    assert_eq!(
        format!("{}{}", &after[..start], &after[end..]),
        fixture("outlook.ics")
    );
}

#[tokio::test]
async fn updating_rewrites_only_the_changed_properties() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_fixture(dir.path(), "outlook.ics");
    let calendars = ics_calendar("home", &path, chrono_tz::Europe::Berlin);
    let uid = "040000008200E00074C5B7101A82E00800000000D0F5A1B2C3D4D901000000000000000010000000A1B2C3D4E5F6A7B8C9D0E1F2A3B4C5D6";
    let patch = EventPatch {
        title: Some("Roadmap and budget review".into()),
        ..EventPatch::default()
    };
    let staged = calendars
        .stage(ChangeRequest::Update {
            event: EventId::new("home", uid),
            occurrence: None,
            patch,
        })
        .await
        .unwrap();
    assert!(staged.diff.contains("- title: Work - Reviews - Roadmap review\n+ title: Work - Reviews - Roadmap and budget review"), "{}", staged.diff);
    calendars.apply(&staged.payload).await.unwrap();
    let written = std::fs::read_to_string(&path).unwrap();
    let mask = |line: &String| match line.split_once(':') {
        Some((name @ ("DTSTAMP" | "LAST-MODIFIED"), _)) => format!("{name}:*"),
        _ => line.clone(),
    };
    let expected: Vec<String> = block(&fixture("outlook.ics"), uid)
        .iter()
        .map(|line| match line.as_str() {
            "SUMMARY;LANGUAGE=en-us:Work - Reviews - Roadmap review" => {
                "SUMMARY;LANGUAGE=en-us:Work - Reviews - Roadmap and budget review".to_owned()
            }
            "SEQUENCE:0" => "SEQUENCE:1".to_owned(),
            other => mask(&other.to_owned()),
        })
        .collect();
    assert_eq!(
        block(&written, uid).iter().map(mask).collect::<Vec<_>>(),
        expected
    );
    // Everything outside the event is as it was.
    let outside = |text: &str| {
        let start = text.find("BEGIN:VEVENT").unwrap();
        let end = text.find("END:VEVENT\r\n").unwrap() + "END:VEVENT\r\n".len();
        format!("{}{}", &text[..start], &text[end..])
    };
    assert_eq!(outside(&written), outside(&fixture("outlook.ics")));
    // The long, folded UID and the HTML description are still there as written.
    assert!(written.replace("\r\n ", "").contains(
        "X-ALT-DESC;FMTTYPE=text/html:<html><body><p>Quarterly review of the roadmap.</p>"
    ));
    assert_eq!(read_ics("home", "x", &written).unwrap().warnings, vec![]);
}
