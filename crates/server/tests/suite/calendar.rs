//! `calendar/list` and `calendar/events` through the real router, over real calendar
//! files: repeating events expanded with their overrides, times written in the configured
//! zone, all-day events, pending proposals staged through the calendar tools drawn as
//! the events they would make, and bad windows, unknown calendars and missing files
//! answered without failing the rest.

use std::path::Path;

use hearth_calendar::{CalendarOptions, Calendars};
use hearth_core::{ChatUri, Scope, SessionUri, ToolCallContext, Toolbox, TurnId};
use hearth_protocol::{
    self as wire, CalendarEntry, CalendarEvent, CalendarEvents, CalendarEventsParams, CalendarKind,
    CalendarList, CalendarListParams, ErrorKind, ProposalApprove, ProposalApproveParams,
    ProposedAction, ProposedEvent,
};
use hearth_server::{Client, ServerError};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tempfile::TempDir;

use super::support::{Setup, TestServer};

fn rpc_error(error: ServerError) -> wire::RpcError {
    match error {
        ServerError::Rpc(error) => error,
        other => panic!("expected an error response, got {other}"),
    }
}

/// A daily stand-up at 09:00 Berlin time from Monday 30 November 2026, five times, whose
/// Wednesday occurrence moved to 11:00; a lunch written in UTC; a two-day all-day event.
const HOME: &str = "BEGIN:VCALENDAR\r
VERSION:2.0\r
PRODID:-//test//EN\r
BEGIN:VEVENT\r
UID:standup@test\r
DTSTAMP:20260101T000000Z\r
DTSTART;TZID=Europe/Berlin:20261130T090000\r
DTEND;TZID=Europe/Berlin:20261130T093000\r
SUMMARY:Standup\r
LOCATION:Room 1\r
RRULE:FREQ=DAILY;COUNT=5\r
END:VEVENT\r
BEGIN:VEVENT\r
UID:standup@test\r
DTSTAMP:20260101T000000Z\r
RECURRENCE-ID;TZID=Europe/Berlin:20261202T090000\r
DTSTART;TZID=Europe/Berlin:20261202T110000\r
DTEND;TZID=Europe/Berlin:20261202T113000\r
SUMMARY:Standup (moved)\r
END:VEVENT\r
BEGIN:VEVENT\r
UID:lunch@test\r
DTSTAMP:20260101T000000Z\r
DTSTART:20261201T120000Z\r
DTEND:20261201T130000Z\r
SUMMARY:Lunch\r
END:VEVENT\r
BEGIN:VEVENT\r
UID:offsite@test\r
DTSTAMP:20260101T000000Z\r
DTSTART;VALUE=DATE:20261203\r
DTEND;VALUE=DATE:20261205\r
SUMMARY:Offsite\r
END:VEVENT\r
END:VCALENDAR\r
";

const WORK: &str = "BEGIN:VCALENDAR\r
VERSION:2.0\r
PRODID:-//test//EN\r
BEGIN:VEVENT\r
UID:review@test\r
DTSTAMP:20260101T000000Z\r
DTSTART:20261201T150000Z\r
DTEND:20261201T160000Z\r
SUMMARY:Review\r
END:VEVENT\r
END:VCALENDAR\r
";

struct Fixture {
    _dir: TempDir,
    server: TestServer,
    client: Client,
}

/// A server over the calendars of `config` (TOML), in `dir`, whose files are written
/// first.
async fn serve(dir: TempDir, config: &str, approvals: bool) -> Fixture {
    let config = hearth_config::Config::parse(config, &dir.path().join("config.toml")).unwrap();
    let zone =
        hearth_calendar::parse_time_zone(config.defaults.time_zone.as_deref().unwrap()).unwrap();
    let calendars = Calendars::from_config(
        &config.calendars,
        CalendarOptions::new(dir.path().join("data"), zone),
    );
    let server = TestServer::start_with(Setup {
        approvals,
        calendars: Some(calendars),
        config,
        ..Setup::default()
    })
    .await;
    let (client, _notifications) = server.client().await;
    Fixture {
        _dir: dir,
        server,
        client,
    }
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

/// Home and work calendars in Berlin time with a 12-hour clock.
async fn berlin() -> Fixture {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "home.ics", HOME);
    write(dir.path(), "work.ics", WORK);
    let config = format!(
        "[defaults]\ntime_zone = \"Europe/Berlin\"\nclock = \"12h\"\n\n\
         [calendars.home]\nkind = \"ics\"\npath = {:?}\ndefault = true\n\n\
         [calendars.work]\nkind = \"ics\"\nname = \"Work\"\npath = {:?}\nwritable = false\n",
        dir.path().join("home.ics").display().to_string(),
        dir.path().join("work.ics").display().to_string(),
    );
    serve(dir, &config, true).await
}

fn window(from: &str, to: &str) -> CalendarEventsParams {
    CalendarEventsParams {
        from: from.into(),
        to: to.into(),
        calendars: None,
    }
}

fn timed(
    calendar: &str,
    uid: &str,
    occurrence: Option<&str>,
    title: &str,
    (start, end): (&str, &str),
) -> CalendarEvent {
    CalendarEvent {
        calendar: calendar.into(),
        uid: uid.into(),
        recurrence_id: occurrence.map(Into::into),
        title: title.into(),
        start: start.into(),
        end: end.into(),
        all_day: false,
        location: None,
    }
}

#[tokio::test]
async fn calendars_are_listed_with_the_zone_and_clock() {
    let fixture = berlin().await;
    let listing = fixture
        .client
        .call::<CalendarList>(&CalendarListParams {})
        .await
        .unwrap();
    assert_eq!(
        listing,
        wire::CalendarListResponse {
            calendars: vec![
                CalendarEntry {
                    id: "home".into(),
                    name: "home".into(),
                    kind: CalendarKind::Ics,
                    read_only: false,
                    default: true,
                    color: None,
                    warnings: Vec::new(),
                    error: None,
                    synced_at: None,
                },
                CalendarEntry {
                    id: "work".into(),
                    name: "Work".into(),
                    kind: CalendarKind::Ics,
                    read_only: true,
                    default: false,
                    color: None,
                    warnings: Vec::new(),
                    error: None,
                    synced_at: None,
                },
            ],
            timezone: "Europe/Berlin".into(),
            hour12: true,
        }
    );
}

#[tokio::test]
async fn repeating_events_are_expanded_with_their_overrides_in_the_configured_zone() {
    let fixture = berlin().await;
    let answer = fixture
        .client
        .call::<CalendarEvents>(&window("2026-12-01", "2026-12-04"))
        .await
        .unwrap();
    let mut standup = timed(
        "home",
        "standup@test",
        Some("2026-12-01T09:00"),
        "Standup",
        ("2026-12-01T09:00:00+01:00", "2026-12-01T09:30:00+01:00"),
    );
    standup.location = Some("Room 1".into());
    let mut last = standup.clone();
    last.recurrence_id = Some("2026-12-03T09:00".into());
    last.start = "2026-12-03T09:00:00+01:00".into();
    last.end = "2026-12-03T09:30:00+01:00".into();
    let offsite = CalendarEvent {
        calendar: "home".into(),
        uid: "offsite@test".into(),
        recurrence_id: None,
        title: "Offsite".into(),
        start: "2026-12-03".into(),
        end: "2026-12-05".into(),
        all_day: true,
        location: None,
    };
    assert_eq!(
        answer.events,
        vec![
            standup,
            timed(
                "home",
                "lunch@test",
                None,
                "Lunch",
                ("2026-12-01T13:00:00+01:00", "2026-12-01T14:00:00+01:00"),
            ),
            timed(
                "work",
                "review@test",
                None,
                "Review",
                ("2026-12-01T16:00:00+01:00", "2026-12-01T17:00:00+01:00"),
            ),
            timed(
                "home",
                "standup@test",
                Some("2026-12-02T09:00"),
                "Standup (moved)",
                ("2026-12-02T11:00:00+01:00", "2026-12-02T11:30:00+01:00"),
            ),
            // All-day events start at midnight in the calendar zone.
            offsite,
            last,
        ]
    );
    assert_eq!(answer.proposed, Vec::new());
    assert_eq!(answer.warnings, Vec::<String>::new());

    // RFC 3339 bounds, and one calendar only.
    let work = fixture
        .client
        .call::<CalendarEvents>(&CalendarEventsParams {
            from: "2026-12-01T15:30:00Z".into(),
            to: "2026-12-01T16:30:00Z".into(),
            calendars: Some(vec!["work".into()]),
        })
        .await
        .unwrap();
    let titles: Vec<&str> = work.events.iter().map(|e| e.title.as_str()).collect();
    assert_eq!(titles, ["Review"]);
}

fn call_context() -> ToolCallContext {
    let session: SessionUri = "hearth-session:fake/calendar-test".parse().unwrap();
    ToolCallContext {
        chat: ChatUri::default_for(&session),
        session,
        turn_id: TurnId::generate(),
        call_id: "call-1".into(),
        scope: Scope::Global,
        working_directories: Vec::new(),
    }
}

/// Stages a change through the calendar tools, as an agent would; the proposal's id.
async fn stage(server: &TestServer, tool: &str, arguments: Value) -> String {
    let outcome = server
        .tools
        .as_ref()
        .unwrap()
        .call(&call_context(), tool, arguments)
        .await;
    assert!(!outcome.is_error, "{}", outcome.content);
    outcome.proposal.expect("a staged proposal").id.to_string()
}

fn ghost(
    proposal: &str,
    action: ProposedAction,
    uid: Option<&str>,
    title: &str,
    (start, end): (&str, &str),
) -> (
    String,
    ProposedAction,
    Option<String>,
    String,
    String,
    String,
) {
    (
        proposal.into(),
        action,
        uid.map(Into::into),
        title.into(),
        start.into(),
        end.into(),
    )
}

fn ghosts(
    proposed: &[ProposedEvent],
) -> Vec<(
    String,
    ProposedAction,
    Option<String>,
    String,
    String,
    String,
)> {
    proposed
        .iter()
        .map(|event| {
            (
                event.proposal_id.clone(),
                event.action,
                // A created event's uid is made when it is staged.
                (event.action != ProposedAction::Create)
                    .then(|| event.uid.clone())
                    .flatten(),
                event.title.clone(),
                event.start.clone(),
                event.end.clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn pending_proposals_are_drawn_where_their_events_would_be() {
    let fixture = berlin().await;
    let server = &fixture.server;
    let create = stage(
        server,
        "event_create",
        json!({"title": "Dentist", "start": "2026-12-02T14:00"}),
    )
    .await;
    let weekly = stage(
        server,
        "event_create",
        json!({"title": "Yoga", "start": "2026-11-25T18:00", "end": "2026-11-25T19:00", "recurrence": "FREQ=WEEKLY"}),
    )
    .await;
    let all_day = stage(
        server,
        "event_create",
        json!({"title": "Holiday", "start": "2026-12-01", "end": "2026-12-02"}),
    )
    .await;
    let moved = stage(
        server,
        "event_update",
        json!({"id": "home/standup@test", "occurrence": "2026-12-03T09:00", "start": "2026-12-03T15:00"}),
    )
    .await;
    let deleted = stage(server, "event_delete", json!({"id": "home/lunch@test"})).await;
    // Outside the window: not drawn.
    stage(
        server,
        "event_create",
        json!({"title": "Later", "start": "2027-01-10T10:00"}),
    )
    .await;

    let answer = fixture
        .client
        .call::<CalendarEvents>(&window("2026-12-01", "2026-12-04"))
        .await
        .unwrap();
    let mut expected = vec![
        ghost(
            &all_day,
            ProposedAction::Create,
            None,
            "Holiday",
            ("2026-12-01", "2026-12-03"),
        ),
        ghost(
            &deleted,
            ProposedAction::Delete,
            Some("lunch@test"),
            "Lunch",
            ("2026-12-01T13:00:00+01:00", "2026-12-01T14:00:00+01:00"),
        ),
        ghost(
            &create,
            ProposedAction::Create,
            None,
            "Dentist",
            ("2026-12-02T14:00:00+01:00", "2026-12-02T15:00:00+01:00"),
        ),
        ghost(
            &weekly,
            ProposedAction::Create,
            None,
            "Yoga",
            ("2026-12-02T18:00:00+01:00", "2026-12-02T19:00:00+01:00"),
        ),
        ghost(
            &moved,
            ProposedAction::Update,
            Some("standup@test"),
            "Standup",
            ("2026-12-03T15:00:00+01:00", "2026-12-03T15:30:00+01:00"),
        ),
    ];
    expected.sort_by(|a, b| (&a.4, &a.0).cmp(&(&b.4, &b.0)));
    assert_eq!(ghosts(&answer.proposed), expected);
    assert_eq!(answer.warnings, Vec::<String>::new());
    let dentist = answer
        .proposed
        .iter()
        .find(|event| event.proposal_id == create)
        .unwrap();
    assert_eq!(dentist.calendar, "home");
    assert!(!dentist.all_day);
    assert!(dentist.summary.contains("Dentist"), "{}", dentist.summary);

    // Approved with the hash the picture carries, it is an event and no longer a ghost.
    fixture
        .client
        .call::<ProposalApprove>(&ProposalApproveParams {
            proposal_id: create.clone(),
            payload_hash: dentist.payload_hash.clone(),
        })
        .await
        .unwrap();
    let after = fixture
        .client
        .call::<CalendarEvents>(&window("2026-12-02", "2026-12-03"))
        .await
        .unwrap();
    assert!(
        after
            .proposed
            .iter()
            .all(|event| event.proposal_id != create),
        "{after:?}"
    );
    let dentist = after
        .events
        .iter()
        .find(|event| event.title == "Dentist")
        .expect("the approved event is in the calendar");
    assert_eq!(dentist.start, "2026-12-02T14:00:00+01:00");

    // A proposal for a calendar not asked for is not drawn.
    let work_only = fixture
        .client
        .call::<CalendarEvents>(&CalendarEventsParams {
            calendars: Some(vec!["work".into()]),
            ..window("2026-12-01", "2026-12-04")
        })
        .await
        .unwrap();
    assert_eq!(work_only.proposed, Vec::new());
}

#[tokio::test]
async fn a_proposal_whose_change_cannot_be_read_is_a_warning() {
    use hearth_store::{ProposalRecord, ProposalStatus, ProposalStore};
    let fixture = berlin().await;
    let good = stage(
        &fixture.server,
        "event_create",
        json!({"title": "Dentist", "start": "2026-12-02T14:00"}),
    )
    .await;
    let session: SessionUri = "hearth-session:fake/calendar-test".parse().unwrap();
    let now = chrono::Utc::now();
    let strange = hearth_core::ProposalId::generate();
    let payload = r#"{"calendar":"home","operation":{"type":"teleport"}}"#;
    fixture
        .server
        .host
        .sqlite()
        .insert_proposal(&ProposalRecord {
            id: strange.clone(),
            tool: "event_create".into(),
            session: session.clone(),
            chat: ChatUri::default_for(&session),
            turn_id: TurnId::generate(),
            call_id: "call-2".into(),
            summary: "Teleport".into(),
            diff: String::new(),
            payload: payload.into(),
            payload_hash: "00".repeat(32),
            status: ProposalStatus::Pending,
            approved_hash: None,
            decided_by: None,
            decided_at: None,
            reason: None,
            outcome: None,
            error: None,
            created_at: now,
            expires_at: now + chrono::Duration::days(1),
            updated_at: now,
            applied_at: None,
        })
        .await
        .unwrap();
    let answer = fixture
        .client
        .call::<CalendarEvents>(&window("2026-12-01", "2026-12-04"))
        .await
        .unwrap();
    let drawn: Vec<&str> = answer
        .proposed
        .iter()
        .map(|event| event.proposal_id.as_str())
        .collect();
    assert_eq!(drawn, [good.as_str()]);
    assert_eq!(answer.warnings.len(), 1, "{:?}", answer.warnings);
    assert!(
        answer.warnings[0].contains(&strange.to_string())
            && answer.warnings[0].contains("Teleport")
            && answer.warnings[0].contains("teleport"),
        "{}",
        answer.warnings[0]
    );
    assert_eq!(answer.events.len(), 6);
}

#[tokio::test]
async fn bad_windows_are_invalid_params_and_unknown_calendars_not_found() {
    let fixture = berlin().await;
    let refused = async |params: CalendarEventsParams| {
        rpc_error(
            fixture
                .client
                .call::<CalendarEvents>(&params)
                .await
                .unwrap_err(),
        )
    };
    for (from, to, says) in [
        ("2026-12-04", "2026-12-01", "must be after `from`"),
        ("2026-12-01", "2026-12-01", "must be after `from`"),
        ("2026-01-01", "2027-02-06", "longer than 400 days"),
        ("next tuesday", "2026-12-01", "`from` (\"next tuesday\")"),
        ("2026-12-01", "2026-13-01", "`to` (\"2026-13-01\")"),
    ] {
        let error = refused(window(from, to)).await;
        assert_eq!(error.kind(), ErrorKind::InvalidParams, "{from}..{to}");
        assert!(
            error.message.contains(says),
            "{from}..{to}: {}",
            error.message
        );
    }
    // 400 days is allowed.
    fixture
        .client
        .call::<CalendarEvents>(&window("2026-01-01", "2027-02-05"))
        .await
        .unwrap();

    let unknown = refused(CalendarEventsParams {
        calendars: Some(vec!["home".into(), "holidays".into()]),
        ..window("2026-12-01", "2026-12-04")
    })
    .await;
    assert_eq!(unknown.kind(), ErrorKind::NotFound);
    assert!(
        unknown.message.contains("`holidays`") && unknown.message.contains("home, work"),
        "{}",
        unknown.message
    );
}

#[tokio::test]
async fn a_missing_calendar_is_reported_and_the_others_still_answer() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "home.ics", HOME);
    let gone = dir.path().join("unplugged-drive").join("cal.ics");
    let not_yet = dir.path().join("new.ics");
    let config = format!(
        "[defaults]\ntime_zone = \"UTC\"\n\n\
         [calendars.home]\nkind = \"ics\"\npath = {:?}\ndefault = true\n\n\
         [calendars.gone]\nkind = \"ics\"\npath = {:?}\n\n\
         [calendars.fresh]\nkind = \"ics\"\npath = {:?}\n\n\
         [calendars.broken]\nkind = \"notes\"\n",
        dir.path().join("home.ics").display().to_string(),
        gone.display().to_string(),
        not_yet.display().to_string(),
    );
    let fixture = serve(dir, &config, false).await;
    let listing = fixture
        .client
        .call::<CalendarList>(&CalendarListParams {})
        .await
        .unwrap();
    assert_eq!(listing.timezone, "UTC");
    assert!(!listing.hour12);
    let by_id = |id: &str| {
        listing
            .calendars
            .iter()
            .find(|calendar| calendar.id == id)
            .unwrap_or_else(|| panic!("{id} is not listed: {listing:?}"))
    };
    assert_eq!(by_id("home").error, None);
    let missing = by_id("gone");
    let error = missing
        .error
        .as_deref()
        .expect("a missing calendar has an error");
    assert!(
        error.contains("unplugged-drive") && error.contains("[calendars.gone]"),
        "{error}"
    );
    assert!(missing.read_only);
    let fresh = by_id("fresh");
    assert_eq!(fresh.error, None);
    assert!(
        fresh.warnings.len() == 1 && fresh.warnings[0].contains("does not exist yet"),
        "{:?}",
        fresh.warnings
    );
    let broken = by_id("broken");
    assert_eq!(broken.kind, CalendarKind::Notes);
    assert!(
        broken
            .error
            .as_deref()
            .is_some_and(|error| error.contains("path")),
        "{broken:?}"
    );

    let answer = fixture
        .client
        .call::<CalendarEvents>(&window("2026-12-01", "2026-12-02"))
        .await
        .unwrap();
    let titles: Vec<&str> = answer.events.iter().map(|e| e.title.as_str()).collect();
    assert_eq!(titles, ["Standup", "Lunch"]);
    assert_eq!(answer.events[0].start, "2026-12-01T08:00:00+00:00");
    assert_eq!(answer.warnings.len(), 1, "{:?}", answer.warnings);
    assert!(
        answer.warnings[0].contains("`gone`") && answer.warnings[0].contains("unplugged-drive"),
        "{}",
        answer.warnings[0]
    );
    // Without approvals there is nothing to draw, and no error.
    assert_eq!(answer.proposed, Vec::new());
}

#[tokio::test]
async fn a_server_without_calendars_says_they_are_unavailable() {
    let server = TestServer::start().await;
    let (client, _notifications) = server.client().await;
    let list = rpc_error(
        client
            .call::<CalendarList>(&CalendarListParams {})
            .await
            .unwrap_err(),
    );
    assert_eq!(list.kind(), ErrorKind::Unavailable);
    let events = rpc_error(
        client
            .call::<CalendarEvents>(&window("2026-12-01", "2026-12-02"))
            .await
            .unwrap_err(),
    );
    assert_eq!(events.kind(), ErrorKind::Unavailable);
}
