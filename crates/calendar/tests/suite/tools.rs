//! The agent's calendar tools on Hearth's tool seam.

use std::sync::Arc;

use hearth_calendar::{Calendars, calendar_tools, tool_names};
use hearth_core::{ToolError, ToolHandler, ToolOutput};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{context, copy_fixture, ics_calendar, tool};

fn setup() -> (tempfile::TempDir, Calendars, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_fixture(dir.path(), "google.ics");
    let calendars = ics_calendar("work", &path, chrono_tz::Europe::Berlin);
    (dir, calendars, path)
}

async fn text(tool: &Arc<dyn ToolHandler>, args: Value) -> String {
    match tool.execute(&context(), args).await.unwrap() {
        ToolOutput::Content { text, .. } => text,
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_tools_and_their_schemas() {
    let (_dir, calendars, _) = setup();
    let tools = calendar_tools(calendars);
    let described: Vec<(&str, bool)> = tools.iter().map(|t| (t.name(), t.mutates())).collect();
    assert_eq!(
        described,
        vec![
            ("calendar_list", false),
            ("events_list", false),
            ("event_get", false),
            ("event_create", true),
            ("event_update", true),
            ("event_delete", true),
            ("events_create_batch", true),
        ]
    );
    for tool in &tools {
        let schema = tool.parameters();
        assert_eq!(schema["type"], "object", "{}", tool.name());
        assert!(
            !schema.to_string().contains("$ref"),
            "{}: {schema}",
            tool.name()
        );
        assert!(!tool.description().is_empty());
        // No calendar tool approves or applies anything by name.
        assert!(!tool.name().contains("approve") && !tool.name().contains("apply"));
    }
    let batch = tools
        .iter()
        .find(|t| t.name() == tool_names::EVENTS_CREATE_BATCH)
        .unwrap()
        .parameters();
    assert_eq!(
        batch["properties"]["events"]["items"]["required"],
        json!(["title", "start"])
    );
}

/// What models see of each tool's arguments is pinned: a change to an argument type
/// shows here as a change of the committed schemas (`tests/fixtures/tool-schemas.json`,
/// rewritten by `HEARTH_UPDATE_SCHEMA=1 cargo test -p hearth-calendar --test all
/// tool_schemas`), so it is made on purpose.
#[test]
fn the_tool_schemas_models_see_are_the_committed_ones() {
    let (_dir, calendars, _) = setup();
    let generated: serde_json::Map<String, Value> = calendar_tools(calendars)
        .iter()
        .map(|tool| (tool.name().to_owned(), tool.parameters()))
        .collect();
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tool-schemas.json");
    let text = format!("{:#}\n", Value::Object(generated.clone()));
    if std::env::var_os("HEARTH_UPDATE_SCHEMA").is_some_and(|value| !value.is_empty()) {
        std::fs::write(&path, text).unwrap();
        return;
    }
    let committed: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        committed,
        Value::Object(generated),
        "{} differs from the tools' argument types; if the change is meant, regenerate it with HEARTH_UPDATE_SCHEMA=1 cargo test -p hearth-calendar --test all tool_schemas",
        path.display()
    );
}

#[tokio::test]
async fn events_list_truncates_with_a_notice() {
    let (_dir, calendars, _) = setup();
    let list = tool(&calendars, tool_names::EVENTS_LIST);
    let output = text(
        &list,
        json!({"from": "2026-03-02", "to": "2026-03-09", "limit": 2}),
    )
    .await;
    assert_eq!(
        output,
        "4 occurrences from Mon 2026-03-02 00:00 to Mon 2026-03-09 00:00 (times in Europe/Berlin):\n\
         - 2026-03-02 09:30–09:45 · Work - Meetings - Standup · id `work/7kq3p0s1d2f3g4h5j6k7l8m9n0@google.com` · occurrence `2026-03-02T09:30`\n\
         - 2026-03-03 09:30–09:45 · Work - Meetings - Standup · id `work/7kq3p0s1d2f3g4h5j6k7l8m9n0@google.com` · occurrence `2026-03-03T09:30`\n\
         Showing the first 2 of 4; narrow the range, add `query` or `category`, or raise `limit` (at most 500)."
    );
    let found = text(
        &list,
        json!({"from": "2026-03-01", "to": "2026-04-30", "query": "numbers"}),
    )
    .await;
    assert!(
        found.starts_with("1 occurrences") && found.contains("Work - Partner sync"),
        "{found}"
    );
    let vacation = text(
        &list,
        json!({"from": "2026-03-01", "to": "2026-04-30", "category": "vacation"}),
    )
    .await;
    assert!(
        vacation.contains("2026-04-06 – 2026-04-10 (all day) · Vacation - Easter break"),
        "{vacation}"
    );
}

#[tokio::test]
async fn calendar_list_and_event_get() {
    let (_dir, calendars, _) = setup();
    let listed = text(&tool(&calendars, tool_names::CALENDAR_LIST), json!({})).await;
    assert!(
        listed.contains(
            "- `work` — ics, writable, default, zone Europe/Berlin, 3 events (1 repeating)"
        ),
        "{listed}"
    );
    assert!(
        listed.contains("categories: Vacation 1; Work 2 (Meetings 1)"),
        "{listed}"
    );
    let details = text(
        &tool(&calendars, tool_names::EVENT_GET),
        json!({"id": "work/7kq3p0s1d2f3g4h5j6k7l8m9n0@google.com"}),
    )
    .await;
    assert!(
        details.contains(
            "repeats: every week on Mon, Tue, Wed, Thu, Fri (FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR)"
        ),
        "{details}"
    );
    assert!(
        details.contains("skipped occurrences: 2026-03-04 09:30 (Europe/Berlin)"),
        "{details}"
    );
    assert!(
        details.contains("occurrences changed on their own: 1"),
        "{details}"
    );
    let missing = tool(&calendars, tool_names::EVENT_GET)
        .execute(&context(), json!({"id": "work/nope"}))
        .await
        .unwrap_err();
    assert!(
        matches!(missing, ToolError::InvalidArguments(ref m) if m.contains("no event `work/nope`")),
        "{missing:?}"
    );
}

#[tokio::test]
async fn staging_tools_stage_and_apply_through_the_seam() {
    let (_dir, calendars, path) = setup();
    let before = std::fs::read_to_string(&path).unwrap();
    let create = tool(&calendars, tool_names::EVENT_CREATE);
    let output = create
        .execute(&context(), json!({"title": "Dentist", "category": "Health", "start": "2026-03-11T09:00", "end": "2026-03-11T09:45"}))
        .await
        .unwrap();
    let ToolOutput::Staged(draft) = output else {
        panic!("{output:?}")
    };
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        before,
        "staging wrote"
    );
    assert!(draft.summary.starts_with("Create event 'Health - Dentist'"));
    let applied = create.apply(&draft.payload).await.unwrap();
    assert!(applied.summary.starts_with("Create event"));
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .contains("SUMMARY:Health - Dentist\r\n")
    );
    // Applying the same payload again is refused: the file changed.
    assert!(matches!(
        create.apply(&draft.payload).await.unwrap_err(),
        ToolError::Conflict(_)
    ));

    let batch = tool(&calendars, tool_names::EVENTS_CREATE_BATCH);
    let output = batch
        .execute(&context(), json!({"events": [
            {"title": "Lecture 1", "start": "2026-04-13T10:00", "end": "2026-04-13T11:30"},
            {"title": "Lecture 2", "start": "2026-04-20T10:00", "end": "2026-04-20T11:30", "location": "Hall B"}
        ]}))
        .await
        .unwrap();
    let ToolOutput::Staged(draft) = output else {
        panic!("{output:?}")
    };
    assert_eq!(draft.summary, "Create 2 events in calendar `work`");
    batch.apply(&draft.payload).await.unwrap();
    assert_eq!(
        std::fs::read_to_string(&path)
            .unwrap()
            .matches("SUMMARY:Lecture")
            .count(),
        2
    );
}

#[tokio::test]
async fn errors_the_model_can_act_on() {
    let (_dir, calendars, _) = setup();
    let create = tool(&calendars, tool_names::EVENT_CREATE);
    for (args, needle) in [
        (
            json!({"title": "x", "start": "2026-03-11T09:00", "end": "2026-03-11T08:00"}),
            "`end` (2026-03-11T08:00) must be after `start` (2026-03-11T09:00)",
        ),
        (
            json!({"title": "x", "start": "2026-03-11T09:00", "time_zone": "Europe/Berln"}),
            "did you mean `Europe/Berlin`",
        ),
        (
            json!({"title": "x", "start": "2026-03-11", "recurrence": "FREQ=WEEKLY;BYDAY=XY"}),
            "BYDAY value `XY` is not a weekday",
        ),
        (
            json!({"title": "x", "start": "tomorrow"}),
            "`start` value `tomorrow` is not a date",
        ),
        (
            json!({"title": "x", "start": "2026-03-11", "startTime": "09:00"}),
            "unknown field `startTime`",
        ),
        (
            json!({"title": "x", "start": "2026-03-11", "calendar": "nope"}),
            "no calendar `nope`; the calendars are: work",
        ),
        (json!({"start": "2026-03-11"}), "missing field `title`"),
    ] {
        let error = create.execute(&context(), args.clone()).await.unwrap_err();
        match &error {
            ToolError::InvalidArguments(message) => {
                assert!(message.contains(needle), "{args}: {message}")
            }
            other => panic!("{args}: {other:?}"),
        }
    }
    let batch = tool(&calendars, tool_names::EVENTS_CREATE_BATCH);
    let error = batch
        .execute(&context(), json!({"events": [{"title": "ok", "start": "2026-03-11"}, {"title": "bad", "start": "2026-03-11T10:00", "end": "2026-03-10T10:00"}]}))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("events[1]: `end`"), "{error}");
}

/// A team's standup kept in New York time, in a calendar of a user in Berlin.
const NEW_YORK_STANDUP: &str = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Team//EN\r\nBEGIN:VEVENT\r\nUID:standup@team\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;TZID=America/New_York:20260302T090000\r\nDTEND;TZID=America/New_York:20260302T091500\r\nRRULE:FREQ=DAILY;COUNT=5\r\nSUMMARY:Standup\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";

/// `(start, occurrence handle)` of the standups `events_list` shows in the first week
/// of March 2026.
async fn standups(calendars: &Calendars) -> Vec<(String, String)> {
    let list = tool(calendars, tool_names::EVENTS_LIST);
    let output = list
        .execute(
            &context(),
            json!({"from": "2026-03-02", "to": "2026-03-07"}),
        )
        .await
        .unwrap();
    let ToolOutput::Content {
        data: Some(data), ..
    } = output
    else {
        panic!("{output:?}")
    };
    data["occurrences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["start"].as_str().unwrap().to_owned(),
                o["occurrence"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

async fn update(calendars: &Calendars, args: Value) {
    let tool = tool(calendars, tool_names::EVENT_UPDATE);
    let output = tool.execute(&context(), args).await.unwrap();
    let ToolOutput::Staged(draft) = output else {
        panic!("{output:?}")
    };
    tool.apply(&draft.payload).await.unwrap();
}

/// Times given to `event_update` are read in the user's zone, the zone of the listing
/// and the occurrence handles; the event stays in New York time.
#[tokio::test]
async fn a_new_york_standup_moved_to_16_30_lands_at_16_30_berlin() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("team.ics");
    std::fs::write(&path, NEW_YORK_STANDUP).unwrap();
    let calendars = ics_calendar("team", &path, chrono_tz::Europe::Berlin);
    // 09:00 in New York is 15:00 in Berlin in early March (both on standard time).
    assert_eq!(
        standups(&calendars).await[0],
        ("2026-03-02T15:00".to_owned(), "2026-03-02T15:00".to_owned())
    );
    update(
        &calendars,
        json!({"id": "team/standup@team", "start": "2026-03-02T16:30"}),
    )
    .await;
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("DTSTART;TZID=America/New_York:20260302T103000\r\n")
            && text.contains("DTEND;TZID=America/New_York:20260302T104500\r\n"),
        "{text}"
    );
    // One occurrence moved by its handle, to a time in the same zone.
    update(
        &calendars,
        json!({"id": "team/standup@team", "occurrence": "2026-03-04T16:30", "start": "2026-03-04T17:00"}),
    )
    .await;
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("RECURRENCE-ID;TZID=America/New_York:20260304T103000\r\n")
            && text.contains("DTSTART;TZID=America/New_York:20260304T110000\r\n"),
        "{text}"
    );
    // Read back from the file by calendars that never saw the change.
    let reread = ics_calendar("team", &path, chrono_tz::Europe::Berlin);
    let starts: Vec<String> = standups(&reread)
        .await
        .into_iter()
        .map(|(start, _)| start)
        .collect();
    assert_eq!(
        starts,
        [
            "2026-03-02T16:30",
            "2026-03-03T16:30",
            "2026-03-04T17:00",
            "2026-03-05T16:30",
            "2026-03-06T16:30",
        ]
    );
}

/// A new event's wall clock is the user's too, in a calendar kept in another zone.
#[tokio::test]
async fn a_new_event_in_a_new_york_calendar_is_at_the_users_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("team.ics");
    std::fs::write(&path, NEW_YORK_STANDUP).unwrap();
    let toml = format!(
        "[calendars.team]\nkind = \"ics\"\npath = \"{}\"\ntime_zone = \"America/New_York\"\n",
        path.display()
    );
    let calendars = super::support::calendars(&toml, dir.path(), chrono_tz::Europe::Berlin);
    let create = tool(&calendars, tool_names::EVENT_CREATE);
    let output = create
        .execute(
            &context(),
            json!({"title": "Retro", "start": "2026-03-05T16:30", "end": "2026-03-05T17:00"}),
        )
        .await
        .unwrap();
    let ToolOutput::Staged(draft) = output else {
        panic!("{output:?}")
    };
    create.apply(&draft.payload).await.unwrap();
    let list = tool(&calendars, tool_names::EVENTS_LIST);
    let listed = text(
        &list,
        json!({"from": "2026-03-05", "to": "2026-03-06", "query": "retro"}),
    )
    .await;
    assert!(
        listed.contains("2026-03-05 16:30–17:00 · Retro"),
        "{listed}"
    );
}
