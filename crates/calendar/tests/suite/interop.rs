//! Calendars as other producers write them, through the calendars that hold them: an
//! import copies the current revision of an event, and a runaway rule is cut off when
//! its calendar loads and still lists its next occurrences at once. (How such text is
//! read is hearth-ical's, tested there.)

use pretty_assertions::assert_eq;

use super::support::ics_calendar;

const HEAD: &str = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Test//EN\r\n";
const TAIL: &str = "END:VCALENDAR\r\n";

fn calendar(events: &[&str]) -> String {
    let mut text = HEAD.to_owned();
    for event in events {
        text.push_str("BEGIN:VEVENT\r\n");
        for line in event.lines().map(str::trim).filter(|l| !l.is_empty()) {
            text.push_str(line);
            text.push_str("\r\n");
        }
        text.push_str("END:VEVENT\r\n");
    }
    text.push_str(TAIL);
    text
}

const WEEKLY_V1: &str = "UID:w
    SEQUENCE:0
    DTSTAMP:20260101T000000Z
    DTSTART:20260302T090000Z
    DTEND:20260302T100000Z
    RRULE:FREQ=WEEKLY;COUNT=4
    SUMMARY:Old time";

const WEEKLY_V2: &str = "UID:w
    SEQUENCE:1
    DTSTAMP:20260201T000000Z
    DTSTART:20260302T140000Z
    DTEND:20260302T150000Z
    RRULE:FREQ=WEEKLY;COUNT=2
    SUMMARY:New time";

#[tokio::test]
async fn import_copies_the_current_revision_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("home.ics");
    let calendars = ics_calendar("home", &path, chrono_tz::UTC);
    let report = calendars
        .import_ics(None, &calendar(&[WEEKLY_V1, WEEKLY_V2]), "export.ics")
        .await
        .unwrap();
    assert_eq!(report.imported, 1);
    let messages: Vec<String> = report.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        messages,
        [
            "export.ics:4: event `w` is also at line 13 as a newer revision (SEQUENCE 1 is higher than 0); Hearth uses that copy and ignores this older one"
        ]
    );
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(written.contains("SUMMARY:New time"), "{written}");
    assert!(!written.contains("SUMMARY:Old time"), "{written}");
}

#[tokio::test]
async fn a_count_rule_too_costly_to_end_is_cut_off_and_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runaway.ics");
    std::fs::write(
        &path,
        calendar(&["UID:r
            DTSTART:20260302T090000Z
            RRULE:FREQ=MINUTELY;BYSECOND=0,30;COUNT=2000000000
            SUMMARY:Tick"]),
    )
    .unwrap();
    let calendars = ics_calendar("runaway", &path, chrono_tz::UTC);
    let loaded = calendars.load("runaway").await.unwrap();
    let limited = loaded.index.limited();
    assert_eq!(limited.len(), 1);
    let messages: Vec<String> = loaded.warnings.iter().map(|w| w.message.clone()).collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].starts_with(
            "`RRULE:FREQ=MINUTELY;COUNT=2000000000;BYSECOND=0,30` of event `r` has more occurrences than Hearth works out when it reads a calendar; it is shown up to 2026-"
        ),
        "{messages:?}"
    );
    // Shown up to where the work stopped, and not after.
    let until = limited[0].shown_until.and_utc();
    let day = chrono::Duration::days(1);
    assert!(
        !loaded.index.between(until - day, until + day).is_empty()
            && loaded
                .index
                .between(until + chrono::Duration::seconds(1), until + day)
                .is_empty()
    );
}

#[tokio::test]
async fn the_details_of_a_runaway_series_list_its_next_occurrences_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runaway.ics");
    std::fs::write(
        &path,
        calendar(&["UID:r
            DTSTART:20200101T000000Z
            RRULE:FREQ=SECONDLY
            SUMMARY:Tick"]),
    )
    .unwrap();
    let calendars = ics_calendar("runaway", &path, chrono_tz::UTC);
    let details = calendars
        .event(&"runaway/r".parse().unwrap())
        .await
        .unwrap();
    assert_eq!(details.upcoming.len(), 5);
    let gaps: Vec<i64> = details
        .upcoming
        .windows(2)
        .map(|pair| (pair[1].start_utc - pair[0].start_utc).num_seconds())
        .collect();
    assert_eq!(gaps, [1, 1, 1, 1]);
}
