//! Recurrence as real calendars write it: DST changes, EXDATE with TZID, overridden
//! occurrences, Windows and custom zones, RDATE, far past and future.

use pretty_assertions::assert_eq;

use super::support::{copy_fixture, ics_calendar, occurrences, utc};

fn titled(list: &[(String, chrono::DateTime<chrono::Utc>)], prefix: &str) -> Vec<String> {
    list.iter()
        .filter(|(t, _)| t.starts_with(prefix))
        .map(|(t, s)| format!("{} {t}", s.to_rfc3339()))
        .collect()
}

#[tokio::test]
async fn exdate_with_tzid_and_an_overridden_occurrence() {
    let dir = tempfile::tempdir().unwrap();
    let calendars = ics_calendar(
        "work",
        &copy_fixture(dir.path(), "google.ics"),
        chrono_tz::Europe::Berlin,
    );
    let week = occurrences(&calendars, "2026-03-01T23:00:00Z", "2026-03-08T23:00:00Z").await;
    assert_eq!(
        titled(&week, "Work - Meetings"),
        vec![
            "2026-03-02T08:30:00+00:00 Work - Meetings - Standup",
            "2026-03-03T08:30:00+00:00 Work - Meetings - Standup",
            // 03-04 is excluded (EXDATE;TZID=Europe/Berlin); 03-05 moved to 11:00.
            "2026-03-05T10:00:00+00:00 Work - Meetings - Standup (late)",
            "2026-03-06T08:30:00+00:00 Work - Meetings - Standup",
        ]
    );
    // After the switch to summer time, 09:30 Berlin is 07:30 UTC.
    let after_dst = occurrences(&calendars, "2026-03-30T00:00:00Z", "2026-03-31T00:00:00Z").await;
    assert_eq!(
        titled(&after_dst, "Work - Meetings"),
        vec!["2026-03-30T07:30:00+00:00 Work - Meetings - Standup"]
    );
}

#[tokio::test]
async fn daily_series_across_the_us_dst_change() {
    let dir = tempfile::tempdir().unwrap();
    let calendars = ics_calendar(
        "home",
        &copy_fixture(dir.path(), "apple.ics"),
        chrono_tz::America::New_York,
    );
    let list = occurrences(&calendars, "2026-03-01T00:00:00Z", "2026-03-20T00:00:00Z").await;
    assert_eq!(
        titled(&list, "Health"),
        vec![
            "2026-03-06T12:00:00+00:00 Health - Morning run",
            "2026-03-07T12:00:00+00:00 Health - Morning run",
            // 2026-03-08: clocks spring forward; 07:00 EDT is 11:00 UTC. COUNT=5 ends it.
            "2026-03-08T11:00:00+00:00 Health - Morning run",
            "2026-03-09T11:00:00+00:00 Health - Morning run",
            "2026-03-10T11:00:00+00:00 Health - Morning run",
        ]
    );
    assert_eq!(
        titled(&list, "Family - Piano"),
        vec![
            "2026-03-03T22:00:00+00:00 Family - Piano lesson",
            "2026-03-05T22:00:00+00:00 Family - Piano lesson",
            "2026-03-12T21:00:00+00:00 Family - Piano lesson",
        ]
    );
}

#[tokio::test]
async fn windows_and_custom_outlook_zones() {
    let dir = tempfile::tempdir().unwrap();
    let calendars = ics_calendar(
        "outlook",
        &copy_fixture(dir.path(), "outlook.ics"),
        chrono_tz::Europe::Berlin,
    );
    let list = occurrences(&calendars, "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z").await;
    assert_eq!(
        titled(&list, "Work - Reviews"),
        vec![
            "2026-03-12T13:00:00+00:00 Work - Reviews - Roadmap review",
            "2026-04-09T12:00:00+00:00 Work - Reviews - Roadmap review",
            "2026-05-14T12:00:00+00:00 Work - Reviews - Roadmap review",
            "2026-06-11T12:00:00+00:00 Work - Reviews - Roadmap review",
            "2026-07-09T12:00:00+00:00 Work - Reviews - Roadmap review",
            "2026-08-13T12:00:00+00:00 Work - Reviews - Roadmap review",
        ]
    );
    // "Customized Time Zone" carries US Eastern rules: 09:00 on 03-10 is EDT.
    assert_eq!(
        titled(&list, "Work - Call"),
        vec!["2026-03-10T13:00:00+00:00 Work - Call with New York office"]
    );
    // The all-day event is on its date.
    assert_eq!(list.iter().filter(|(t, _)| t.contains("Moving")).count(), 1);
}

#[tokio::test]
async fn yearly_all_day_series_from_1990_reaches_2300() {
    let dir = tempfile::tempdir().unwrap();
    let calendars = ics_calendar(
        "home",
        &copy_fixture(dir.path(), "apple.ics"),
        chrono_tz::America::New_York,
    );
    for year in [1990, 2026, 2300] {
        let from = format!("{year}-03-01T00:00:00Z");
        let to = format!("{year}-04-01T00:00:00Z");
        let list = occurrences(&calendars, &from, &to).await;
        assert_eq!(titled(&list, "Family - Birthdays").len(), 1, "{year}");
    }
    let before = occurrences(&calendars, "1989-01-01T00:00:00Z", "1990-01-01T00:00:00Z").await;
    assert_eq!(titled(&before, "Family - Birthdays").len(), 0);
    assert!(utc("2300-03-15T05:00:00Z") > utc("2026-01-01T00:00:00Z"));
}

/// A daily standup of 2–6 March 2026 (Berlin) whose series is at `SEQUENCE:2`, with
/// `series` extra lines, and its 4 March occurrence moved to 11:00 by an override at
/// `override_sequence`.
fn standup_with_override(series: &str, override_sequence: u32) -> String {
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Test//EN\r\n\
BEGIN:VEVENT\r\nUID:standup@team\r\nDTSTAMP:20260301T000000Z\r\nSEQUENCE:2\r\n\
DTSTART;TZID=Europe/Berlin:20260302T093000\r\nDTEND;TZID=Europe/Berlin:20260302T094500\r\n\
{series}SUMMARY:Standup\r\nEND:VEVENT\r\n\
BEGIN:VEVENT\r\nUID:standup@team\r\nDTSTAMP:20260201T000000Z\r\nSEQUENCE:{override_sequence}\r\n\
RECURRENCE-ID;TZID=Europe/Berlin:20260304T093000\r\n\
DTSTART;TZID=Europe/Berlin:20260304T110000\r\nDTEND;TZID=Europe/Berlin:20260304T111500\r\n\
SUMMARY:Standup (late)\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
}

/// The standups listed in the first week of March, by their Berlin start.
async fn standups(text: &str) -> (Vec<String>, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("team.ics");
    std::fs::write(&path, text).unwrap();
    let calendars = ics_calendar("team", &path, chrono_tz::Europe::Berlin);
    let week = occurrences(&calendars, "2026-03-01T23:00:00Z", "2026-03-08T23:00:00Z").await;
    let listed = week
        .iter()
        .map(|(title, start)| {
            let start = start.with_timezone(&chrono_tz::Europe::Berlin);
            format!("{} {title}", start.format("%m-%d %H:%M"))
        })
        .collect();
    let summaries = calendars.summaries().await;
    let warnings = summaries[0]
        .warnings
        .iter()
        .map(|w| w.to_string())
        .collect();
    (listed, warnings)
}

/// The occurrence the series deleted (EXDATE, a newer SEQUENCE) stays deleted: its
/// older override is dropped. An override as new as the series stays.
#[tokio::test]
async fn an_override_older_than_the_exdate_that_deleted_its_occurrence_is_dropped() {
    let exdate = "RRULE:FREQ=DAILY;COUNT=5\r\nEXDATE;TZID=Europe/Berlin:20260304T093000\r\n";
    let (listed, warnings) = standups(&standup_with_override(exdate, 1)).await;
    assert_eq!(
        listed,
        [
            "03-02 09:30 Standup",
            "03-03 09:30 Standup",
            "03-05 09:30 Standup",
            "03-06 09:30 Standup",
        ]
    );
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("20260304T093000")
            && warnings[0].contains("SEQUENCE 2 is higher than its 1"),
        "{warnings:?}"
    );
    let (listed, warnings) = standups(&standup_with_override(exdate, 2)).await;
    assert_eq!(
        listed,
        [
            "03-02 09:30 Standup",
            "03-03 09:30 Standup",
            "03-04 11:00 Standup (late)",
            "03-05 09:30 Standup",
            "03-06 09:30 Standup",
        ]
    );
    assert_eq!(warnings, Vec::<String>::new());
}

/// Likewise when the newer series ends before the occurrence (a shorter UNTIL).
#[tokio::test]
async fn an_override_older_than_the_until_that_ended_its_series_is_dropped() {
    let until = "RRULE:FREQ=DAILY;UNTIL=20260303T235959Z\r\n";
    let (listed, _) = standups(&standup_with_override(until, 0)).await;
    assert_eq!(listed, ["03-02 09:30 Standup", "03-03 09:30 Standup"]);
    for newer in [2, 3] {
        let (listed, _) = standups(&standup_with_override(until, newer)).await;
        assert_eq!(
            listed,
            [
                "03-02 09:30 Standup",
                "03-03 09:30 Standup",
                "03-04 11:00 Standup (late)",
            ]
        );
    }
    // An override the newer series still has stays, whatever its SEQUENCE.
    let (listed, _) = standups(&standup_with_override("RRULE:FREQ=DAILY;COUNT=5\r\n", 0)).await;
    assert!(
        listed.contains(&"03-04 11:00 Standup (late)".to_owned()),
        "{listed:?}"
    );
}
