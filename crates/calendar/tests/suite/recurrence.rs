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
