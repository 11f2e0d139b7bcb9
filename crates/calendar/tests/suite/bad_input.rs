//! Bad input: a clear error or a per-item warning, the rest still loads, and nothing on
//! disk is lost or rewritten unasked.

use hearth_calendar::{CalendarError, ChangeRequest, EventInput, EventQuery, read_ics};
use pretty_assertions::assert_eq;

use super::support::{calendars, ics_calendar, occurrences, utc};

const HEAD: &str = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Test//EN\r\n";
const TAIL: &str = "END:VCALENDAR\r\n";

fn event(uid: &str, extra: &str) -> String {
    format!(
        "BEGIN:VEVENT\r\nUID:{uid}\r\nDTSTART:20260303T090000Z\r\nDTEND:20260303T100000Z\r\nSUMMARY:{uid}\r\n{extra}END:VEVENT\r\n"
    )
}

fn warnings_of(text: &str) -> Vec<String> {
    read_ics("c", "c.ics", text)
        .unwrap()
        .warnings
        .iter()
        .map(|w| w.to_string())
        .collect()
}

#[test]
fn a_malformed_line_is_reported_with_its_line_and_the_rest_loads() {
    let text = format!(
        "{HEAD}{}this is not a content line\r\n{}{TAIL}",
        event("a", ""),
        event("b", "")
    );
    let parsed = read_ics("c", "c.ics", &text).unwrap();
    assert_eq!(parsed.events.len(), 2);
    assert_eq!(
        warnings_of(&text),
        vec![
            "c.ics:10: malformed line `this is not a content line`: no `:` between the property name and its value; the line is kept as it is and ignored"
        ]
    );
}

#[test]
fn an_invalid_rule_leaves_a_single_event() {
    let text = format!(
        "{HEAD}{}{TAIL}",
        event("a", "RRULE:FREQ=SOMETIMES;BYDAY=MO\r\n")
    );
    let parsed = read_ics("c", "c.ics", &text).unwrap();
    assert_eq!(parsed.events.len(), 1);
    assert!(parsed.events[0].recurrence.is_none());
    assert_eq!(parsed.warnings.len(), 1);
    assert!(
        parsed.warnings[0]
            .to_string()
            .starts_with("c.ics:9: invalid recurrence rule `FREQ=SOMETIMES;BYDAY=MO`"),
        "{}",
        parsed.warnings[0]
    );
}

#[test]
fn an_unknown_tzid_reads_as_floating_with_one_warning() {
    let extra = "";
    let body = format!(
        "BEGIN:VEVENT\r\nUID:z\r\nDTSTART;TZID=Mars/Olympus_Mons:20260303T090000\r\nDTEND;TZID=Mars/Olympus_Mons:20260303T100000\r\n{extra}END:VEVENT\r\n"
    );
    let parsed = read_ics("c", "c.ics", &format!("{HEAD}{body}{TAIL}")).unwrap();
    assert_eq!(parsed.events.len(), 1);
    assert_eq!(
        parsed.events[0].start.zone(),
        hearth_calendar::Zone::Floating
    );
    assert_eq!(parsed.warnings.len(), 1, "{:?}", parsed.warnings);
    assert!(
        parsed.warnings[0]
            .message
            .contains("unknown time zone `Mars/Olympus_Mons`")
    );
}

#[test]
fn events_without_start_and_broken_dates_are_skipped_with_a_reason() {
    let text = format!(
        "{HEAD}BEGIN:VEVENT\r\nUID:nostart\r\nSUMMARY:x\r\nEND:VEVENT\r\n{}{}{TAIL}",
        event("bad-end", "").replace("DTEND:20260303T100000Z", "DTEND:20260303T080000Z"),
        event("bad-date", "").replace("DTSTART:20260303T090000Z", "DTSTART:2026-03-03")
    );
    let parsed = read_ics("c", "c.ics", &text).unwrap();
    let uids: Vec<&str> = parsed.events.iter().map(|e| e.uid.as_str()).collect();
    assert_eq!(uids, vec!["bad-end"]);
    let messages: Vec<String> = parsed.warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        messages[0].contains("c.ics:4: event skipped: it has no DTSTART"),
        "{messages:?}"
    );
    assert!(
        messages[1].contains(
            "c.ics:11: `DTEND:20260303T080000Z` is before `DTSTART:20260303T090000Z`; the default length is used"
        ),
        "{messages:?}"
    );
    assert!(
        messages[2].contains("DTSTART value `2026-03-03` is not a date"),
        "{messages:?}"
    );
}

#[tokio::test]
async fn duplicate_uids_of_the_same_revision_show_the_first_and_keep_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dup.ics");
    let text = format!(
        "{HEAD}{}{}{TAIL}",
        event("same", ""),
        event("same", "").replace("SUMMARY:same", "SUMMARY:second")
    );
    std::fs::write(&path, &text).unwrap();
    let calendars = ics_calendar("dup", &path, chrono_tz::UTC);
    let loaded = calendars.load("dup").await.unwrap();
    assert_eq!(loaded.index.events().len(), 1);
    assert_eq!(loaded.index.events()[0].title, "same");
    assert_eq!(loaded.warnings.len(), 1);
    assert!(loaded.warnings[0].message.contains(
        "event `same` appears twice (the copy at line 4 is the same revision and comes first)"
    ));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

#[tokio::test]
async fn events_in_1900_and_2300_load_and_answer_queries() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("far.ics");
    let text = format!(
        "{HEAD}{}{}{TAIL}",
        event("old", "").replace("20260303", "19000101"),
        event("future", "RRULE:FREQ=YEARLY\r\n").replace("20260303", "23001231")
    );
    std::fs::write(&path, &text).unwrap();
    let calendars = ics_calendar("far", &path, chrono_tz::Europe::Berlin);
    assert_eq!(
        occurrences(&calendars, "1900-01-01T00:00:00Z", "1900-01-02T00:00:00Z")
            .await
            .len(),
        1
    );
    assert_eq!(
        occurrences(&calendars, "2300-12-31T00:00:00Z", "2301-01-01T00:00:00Z")
            .await
            .len(),
        1
    );
    assert_eq!(
        occurrences(&calendars, "2310-12-31T00:00:00Z", "2311-01-01T00:00:00Z")
            .await
            .len(),
        1
    );
    assert!(calendars.load("far").await.unwrap().warnings.is_empty());
}

#[tokio::test]
async fn a_file_that_is_not_a_calendar_fails_alone() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.ics");
    std::fs::write(&junk, "Hello, this is a letter.\n").unwrap();
    let good = dir.path().join("good.ics");
    std::fs::write(&good, format!("{HEAD}{}{TAIL}", event("a", ""))).unwrap();
    let toml = format!(
        "[calendars.junk]\nkind = \"ics\"\npath = \"{}\"\n[calendars.good]\nkind = \"ics\"\npath = \"{}\"\ndefault = true\n",
        junk.display(),
        good.display()
    );
    let calendars = calendars(&toml, dir.path(), chrono_tz::UTC);
    let error = calendars.load("junk").await.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{} is not a calendar: no BEGIN:VCALENDAR found (line 1 reads `Hello, this is a letter.`)",
            junk.display()
        )
    );
    let listing = calendars
        .events(&EventQuery {
            from: utc("2026-03-01T00:00:00Z"),
            to: utc("2026-04-01T00:00:00Z"),
            text: None,
            category: None,
            calendar: None,
            limit: 10,
        })
        .await
        .unwrap();
    assert_eq!(listing.occurrences.len(), 1);
    assert_eq!(listing.unavailable.len(), 1);
    let error = calendars
        .stage(ChangeRequest::Create {
            calendar: Some("junk".into()),
            events: vec![EventInput {
                title: "x".into(),
                start: "2026-03-03".into(),
                ..EventInput::default()
            }],
        })
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            CalendarError::Ical(hearth_ical::IcalError::NotACalendar { .. })
        ),
        "{error}"
    );
    assert_eq!(
        std::fs::read_to_string(&junk).unwrap(),
        "Hello, this is a letter.\n"
    );
}

#[tokio::test]
async fn damaged_and_non_utf8_files_load_but_are_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.ics");
    let cut_text = format!("{HEAD}{}BEGIN:VEVENT\r\nUID:half", event("a", ""));
    std::fs::write(&cut, &cut_text).unwrap();
    let latin = dir.path().join("latin.ics");
    let mut latin_bytes = format!("{HEAD}{}{TAIL}", event("b", "")).into_bytes();
    let position = latin_bytes
        .windows(9)
        .position(|w| w == b"SUMMARY:b")
        .unwrap()
        + 9;
    latin_bytes.insert(position, 0xE9);
    std::fs::write(&latin, &latin_bytes).unwrap();
    let toml = format!(
        "[calendars.cut]\nkind = \"ics\"\npath = \"{}\"\n[calendars.latin]\nkind = \"ics\"\npath = \"{}\"\n",
        cut.display(),
        latin.display()
    );
    let calendars = calendars(&toml, dir.path(), chrono_tz::UTC);
    for (id, path) in [("cut", &cut), ("latin", &latin)] {
        let loaded = calendars.load(id).await.unwrap();
        assert!(!loaded.index.events().is_empty(), "{id}");
        assert!(!loaded.warnings.is_empty(), "{id}");
        let input = EventInput {
            title: "x".into(),
            start: "2026-03-03".into(),
            ..EventInput::default()
        };
        let error = calendars
            .stage(ChangeRequest::Create {
                calendar: Some(id.into()),
                events: vec![input],
            })
            .await
            .unwrap_err();
        assert!(
            matches!(error, CalendarError::ReadOnly { .. }),
            "{id}: {error}"
        );
        assert!(path.exists());
    }
    assert_eq!(std::fs::read_to_string(&cut).unwrap(), cut_text);
    assert_eq!(std::fs::read(&latin).unwrap(), latin_bytes);
}

#[tokio::test]
async fn a_fifty_megabyte_calendar_loads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.ics");
    let mut text = String::with_capacity(52 * 1024 * 1024);
    text.push_str(HEAD);
    let padding = "x".repeat(300);
    let mut count = 0;
    while text.len() < 50 * 1024 * 1024 {
        let day = count % 28 + 1;
        text.push_str(&format!(
            "BEGIN:VEVENT\r\nUID:big-{count}\r\nDTSTART:202603{day:02}T090000Z\r\nDTEND:202603{day:02}T100000Z\r\nSUMMARY:Event {count}\r\nDESCRIPTION:{padding}\r\nEND:VEVENT\r\n"
        ));
        count += 1;
    }
    text.push_str(TAIL);
    std::fs::write(&path, &text).unwrap();
    let calendars = ics_calendar("big", &path, chrono_tz::UTC);
    let loaded = calendars.load("big").await.unwrap();
    assert_eq!(loaded.index.events().len(), count);
    assert!(loaded.warnings.is_empty());
    let query = EventQuery {
        from: utc("2026-03-03T00:00:00Z"),
        to: utc("2026-03-04T00:00:00Z"),
        text: None,
        category: None,
        calendar: None,
        limit: 10,
    };
    let day = calendars.events(&query).await.unwrap();
    assert_eq!(day.total, count / 28 + usize::from(count % 28 > 2));
    assert_eq!(day.occurrences.len(), 10);
}

#[tokio::test]
async fn calendars_over_the_size_limit_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.ics");
    std::fs::write(&path, format!("{HEAD}{}{TAIL}", event("a", ""))).unwrap();
    let config = hearth_config::Config::parse(
        &format!(
            "[calendars.big]\nkind = \"ics\"\npath = \"{}\"\n",
            path.display()
        ),
        std::path::Path::new("c.toml"),
    )
    .unwrap();
    let mut options = hearth_calendar::CalendarOptions::new(dir.path(), chrono_tz::UTC);
    options.max_calendar_bytes = 100;
    let calendars = hearth_calendar::Calendars::from_config(&config.calendars, options);
    let error = calendars.load("big").await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("over the limit of 100 bytes; split it"),
        "{error}"
    );
}

#[test]
fn configuration_problems_are_reported_per_calendar() {
    let dir = tempfile::tempdir().unwrap();
    let toml = "[calendars.nopath]\nkind = \"ics\"\n[calendars.zone]\nkind = \"ics\"\npath = \"/tmp/z.ics\"\ntime_zone = \"Europe/Berln\"\n";
    let calendars = calendars(toml, dir.path(), chrono_tz::UTC);
    let problems: Vec<String> = calendars
        .problems()
        .iter()
        .map(|p| format!("{}: {}", p.calendar, p.message))
        .collect();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].starts_with("nopath: set `path`"));
    assert!(
        problems[1].contains("did you mean `Europe/Berlin`"),
        "{problems:?}"
    );
    assert_eq!(
        calendars
            .calendars()
            .iter()
            .map(|c| c.id.as_str())
            .collect::<Vec<_>>(),
        vec!["zone"]
    );
}
