//! Calendars as other producers write them, read as other calendar apps read them:
//! revisions, periods, THISANDFUTURE ranges, runaway rules, a broken END line, and the
//! quirks of major producers. Each test is one small calendar that shows one behaviour.

use chrono::{DateTime, Utc};
use hearth_ical::{EventIndex, read_ics};
use pretty_assertions::assert_eq;

use super::support::utc;

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

/// `start – end title` of every occurrence in `[from, to)` (UTC, RFC 3339).
fn listed(text: &str, from: &str, to: &str) -> Vec<String> {
    let parsed = read_ics("c", "c.ics", text).unwrap();
    let index = EventIndex::new(parsed.events, chrono_tz::UTC);
    let show = |t: DateTime<Utc>| t.format("%Y-%m-%d %H:%M").to_string();
    index
        .between(utc(from), utc(to))
        .iter()
        .map(|o| format!("{} – {} {}", show(o.start), show(o.end), o.event.title))
        .collect()
}

fn warnings(text: &str) -> Vec<String> {
    read_ics("c", "c.ics", text)
        .unwrap()
        .warnings
        .iter()
        .map(ToString::to_string)
        .collect()
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

#[test]
fn the_copy_with_the_higher_sequence_is_the_event_wherever_it_is_in_the_file() {
    let expected = [
        "2026-03-02 14:00 – 2026-03-02 15:00 New time",
        "2026-03-09 14:00 – 2026-03-09 15:00 New time",
    ];
    for text in [
        calendar(&[WEEKLY_V1, WEEKLY_V2]),
        calendar(&[WEEKLY_V2, WEEKLY_V1]),
    ] {
        assert_eq!(
            listed(&text, "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z"),
            expected
        );
    }
    assert_eq!(
        warnings(&calendar(&[WEEKLY_V1, WEEKLY_V2])),
        [
            "c.ics:4: event `w` is also at line 13 as a newer revision (SEQUENCE 1 is higher than 0); Hearth uses that copy and ignores this older one"
        ]
    );
    assert_eq!(
        warnings(&calendar(&[WEEKLY_V2, WEEKLY_V1])),
        [
            "c.ics:13: event `w` appears twice (the copy at line 4 is newer: SEQUENCE 1 is higher than 0); Hearth uses that copy and ignores this one"
        ]
    );
}

#[test]
fn a_newer_override_replaces_an_older_one_of_the_same_occurrence() {
    let series = "UID:s
        DTSTART:20260302T090000Z
        DTEND:20260302T100000Z
        RRULE:FREQ=DAILY;COUNT=3
        SUMMARY:Series";
    let moved = |sequence: u32, hour: u32, title: &str| {
        format!(
            "UID:s\nSEQUENCE:{sequence}\nRECURRENCE-ID:20260303T090000Z\nDTSTART:20260303T{hour}0000Z\nDTEND:20260303T{}0000Z\nSUMMARY:{title}",
            hour + 1
        )
    };
    let text = calendar(&[series, &moved(2, 12, "Moved later"), &moved(1, 11, "Moved")]);
    assert_eq!(
        listed(&text, "2026-03-03T00:00:00Z", "2026-03-04T00:00:00Z"),
        ["2026-03-03 12:00 – 2026-03-03 13:00 Moved later"]
    );
}

#[test]
fn an_rdate_period_ends_where_the_period_ends() {
    let text = calendar(&["UID:p
        DTSTART:20260302T090000Z
        DTEND:20260302T100000Z
        RDATE;VALUE=PERIOD:20260305T130000Z/20260305T170000Z,20260306T080000Z/PT30M
        RDATE:20260307T090000Z
        SUMMARY:Workshop"]);
    assert_eq!(
        listed(&text, "2026-03-01T00:00:00Z", "2026-03-08T00:00:00Z"),
        [
            "2026-03-02 09:00 – 2026-03-02 10:00 Workshop",
            "2026-03-05 13:00 – 2026-03-05 17:00 Workshop",
            "2026-03-06 08:00 – 2026-03-06 08:30 Workshop",
            "2026-03-07 09:00 – 2026-03-07 10:00 Workshop",
        ]
    );
    // A long period reaches into a window that starts after it began.
    assert_eq!(
        listed(&text, "2026-03-05T16:00:00Z", "2026-03-05T18:00:00Z"),
        ["2026-03-05 13:00 – 2026-03-05 17:00 Workshop"]
    );
}

#[test]
fn thisandfuture_moves_and_resizes_every_later_occurrence() {
    let text = calendar(&[
        "UID:t
        DTSTART:20260302T090000Z
        DTEND:20260302T100000Z
        RRULE:FREQ=DAILY;COUNT=5
        EXDATE:20260305T090000Z
        SUMMARY:Standup",
        "UID:t
        RECURRENCE-ID;RANGE=THISANDFUTURE:20260304T090000Z
        DTSTART:20260304T113000Z
        DTEND:20260304T114500Z
        SUMMARY:Standup (new time)",
    ]);
    assert_eq!(
        listed(&text, "2026-03-01T00:00:00Z", "2026-03-10T00:00:00Z"),
        [
            "2026-03-02 09:00 – 2026-03-02 10:00 Standup",
            "2026-03-03 09:00 – 2026-03-03 10:00 Standup",
            "2026-03-04 11:30 – 2026-03-04 11:45 Standup (new time)",
            // 03-05 is excluded by its original time; 03-06 moves by 2 h 30 min.
            "2026-03-06 11:30 – 2026-03-06 11:45 Standup",
        ]
    );
    // A window holding only the moved time still finds it.
    assert_eq!(
        listed(&text, "2026-03-06T11:00:00Z", "2026-03-06T12:00:00Z"),
        ["2026-03-06 11:30 – 2026-03-06 11:45 Standup"]
    );
    assert_eq!(warnings(&text), Vec::<String>::new());
}

#[test]
fn a_misspelled_end_keeps_the_events_after_it_and_says_what_happened() {
    let text = format!(
        "{HEAD}BEGIN:VTODO\r\nUID:todo\r\nSUMMARY:Buy milk\r\nEND:VTOOD\r\n\
         BEGIN:VEVENT\r\nUID:a\r\nDTSTART:20260302T090000Z\r\nSUMMARY:First\r\nEND:VEVENT\r\n\
         BEGIN:VEVENT\r\nUID:b\r\nDTSTART:20260303T090000Z\r\nSUMMARY:Second\r\nEND:VEVENT\r\n{TAIL}"
    );
    assert_eq!(
        listed(&text, "2026-03-01T00:00:00Z", "2026-03-08T00:00:00Z"),
        [
            "2026-03-02 09:00 – 2026-03-02 09:00 First",
            "2026-03-03 09:00 – 2026-03-03 09:00 Second",
        ]
    );
    assert_eq!(
        warnings(&text),
        [
            "c.ics:7: END:VTOOD has no matching BEGIN; ignored (BEGIN:VTODO at line 4 stays open until its END or the next item)",
            "c.ics:4: BEGIN:VTODO has no END:VTODO before BEGIN:VEVENT at line 8; it is read as ending there, and the VEVENT at line 8 and everything after it are read as usual",
        ]
    );
}

#[test]
fn a_runaway_count_rule_is_indexed_at_once_and_answers_by_its_window() {
    let text = calendar(&["UID:r
        DTSTART:20260302T090000Z
        RRULE:FREQ=SECONDLY;COUNT=2000000000
        SUMMARY:Tick"]);
    let parsed = read_ics("c", "c.ics", &text).unwrap();
    let index = EventIndex::new(parsed.events, chrono_tz::UTC);
    // Simple enough to end by arithmetic: nothing cut off.
    assert_eq!(index.limited(), []);
    let minute = index.between(utc("2026-03-02T09:00:00Z"), utc("2026-03-02T09:01:00Z"));
    assert_eq!(minute.len(), 60);
    // The last of 2,000,000,000 ticks, 1,999,999,999 seconds after the first.
    let last = index.between(utc("2089-07-17T12:33:00Z"), utc("2089-07-17T12:34:00Z"));
    assert_eq!(
        last.last().map(|o| o.start),
        Some(utc("2089-07-17T12:33:19Z"))
    );
    assert_eq!(last.len(), 20);
}

#[test]
fn x_wr_timezone_places_floating_times_and_says_so_once() {
    let text = format!(
        "{HEAD}X-WR-TIMEZONE:Europe/Berlin\r\n{}",
        &calendar(&[
            "UID:a\nDTSTART:20260302T090000\nDTEND:20260302T100000\nSUMMARY:Floating",
            "UID:b\nDTSTART:20260303T090000Z\nSUMMARY:Utc",
            "UID:c\nDTSTART:20260304T090000\nSUMMARY:Floating too",
        ])[HEAD.len()..]
    );
    assert_eq!(
        listed(&text, "2026-03-01T00:00:00Z", "2026-03-08T00:00:00Z"),
        [
            "2026-03-02 08:00 – 2026-03-02 09:00 Floating",
            "2026-03-03 09:00 – 2026-03-03 09:00 Utc",
            "2026-03-04 08:00 – 2026-03-04 08:00 Floating too",
        ]
    );
    assert_eq!(
        warnings(&text),
        [
            "c.ics:4: `X-WR-TIMEZONE:Europe/Berlin`: times without a zone in this calendar are read in Europe/Berlin, as Google Calendar and Apple Calendar mean them"
        ]
    );
}

#[test]
fn until_with_count_minus_one_repeats_until_until() {
    let text = calendar(&["UID:u
        DTSTART:20260302T090000Z
        RRULE:FREQ=DAILY;UNTIL=20260304T090000Z;COUNT=-1
        SUMMARY:Until"]);
    assert_eq!(
        listed(&text, "2026-03-01T00:00:00Z", "2026-03-10T00:00:00Z").len(),
        3
    );
    assert_eq!(
        warnings(&text),
        [
            "c.ics:7: `RRULE:FREQ=DAILY;UNTIL=20260304T090000Z;COUNT=-1`: COUNT=-1 is not a number of occurrences; it is ignored and UNTIL ends the rule"
        ]
    );
    let both = calendar(&["UID:u
        DTSTART:20260302T090000Z
        RRULE:FREQ=DAILY;UNTIL=20260310T090000Z;COUNT=2
        SUMMARY:Both"]);
    assert_eq!(
        listed(&both, "2026-03-01T00:00:00Z", "2026-03-20T00:00:00Z").len(),
        2
    );
}

#[test]
fn a_date_start_with_a_time_end_or_an_hour_duration_is_not_rounded() {
    let text = calendar(&[
        "UID:a\nDTSTART;VALUE=DATE:20260302\nDTEND:20260302T113000Z\nSUMMARY:Morning",
        "UID:b\nDTSTART;VALUE=DATE:20260303\nDURATION:PT2H\nSUMMARY:Two hours",
        "UID:c\nDTSTART;VALUE=DATE:20260304\nDURATION:P2D\nSUMMARY:Two days",
    ]);
    assert_eq!(
        listed(&text, "2026-03-01T00:00:00Z", "2026-03-08T00:00:00Z"),
        [
            "2026-03-02 00:00 – 2026-03-02 11:30 Morning",
            "2026-03-03 00:00 – 2026-03-03 02:00 Two hours",
            "2026-03-04 00:00 – 2026-03-06 00:00 Two days",
        ]
    );
    assert_eq!(
        warnings(&text),
        [
            "c.ics:7: `DTEND:20260302T113000Z` is a date-time but DTSTART `DTSTART;VALUE=DATE:20260302` is a date; read as starting at midnight",
            "c.ics:13: `DURATION:PT2H` is not whole days but DTSTART `DTSTART;VALUE=DATE:20260303` is a date; read as starting at midnight and lasting 2 h",
        ]
    );
}

#[test]
fn an_all_day_end_on_its_start_day_is_one_day_and_the_warning_says_so() {
    let text =
        calendar(&["UID:d\nDTSTART;VALUE=DATE:20260302\nDTEND;VALUE=DATE:20260302\nSUMMARY:Day"]);
    assert_eq!(
        listed(&text, "2026-03-01T00:00:00Z", "2026-03-08T00:00:00Z"),
        ["2026-03-02 00:00 – 2026-03-03 00:00 Day"]
    );
    assert_eq!(
        warnings(&text),
        [
            "c.ics:7: `DTEND;VALUE=DATE:20260302` is the same day as `DTSTART;VALUE=DATE:20260302`; read as one day (an all-day event's DTEND is the day after its last day)"
        ]
    );
}

#[test]
fn moving_a_series_first_event_off_its_pattern_keeps_its_last_one() {
    // Three Mondays; the first event was moved to Wednesday 2026-03-04 by editing
    // DTSTART. The moved event shows, and so do all three Mondays.
    let text = calendar(&["UID:m
        DTSTART:20260304T090000Z
        RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=3
        SUMMARY:Review"]);
    let starts: Vec<String> = listed(&text, "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z")
        .into_iter()
        .map(|l| l[..10].to_owned())
        .collect();
    assert_eq!(
        starts,
        ["2026-03-04", "2026-03-09", "2026-03-16", "2026-03-23"]
    );
}

/// A series whose newer revision (a higher SEQUENCE) ends sooner (COUNT 4 to 2) or no
/// longer repeats leaves its older overrides of the lost occurrences out, with a
/// warning; an override as new as the series stays.
#[test]
fn overrides_of_occurrences_a_newer_series_lost_are_left_out() {
    let series = |rule: &str| {
        format!(
            "UID:w
            SEQUENCE:3
            DTSTART:20260302T090000Z
            DTEND:20260302T100000Z
            {rule}
            SUMMARY:Weekly"
        )
    };
    let moved = |sequence: u32| {
        format!(
            "UID:w
            SEQUENCE:{sequence}
            RECURRENCE-ID:20260316T090000Z
            DTSTART:20260316T120000Z
            DTEND:20260316T130000Z
            SUMMARY:Moved"
        )
    };
    let march = |events: &[&str]| {
        listed(
            &calendar(events),
            "2026-03-01T00:00:00Z",
            "2026-04-01T00:00:00Z",
        )
    };
    let shorter = series("RRULE:FREQ=WEEKLY;COUNT=2");
    assert_eq!(
        march(&[&shorter, &moved(2)]),
        [
            "2026-03-02 09:00 – 2026-03-02 10:00 Weekly",
            "2026-03-09 09:00 – 2026-03-09 10:00 Weekly",
        ]
    );
    assert_eq!(
        warnings(&calendar(&[&shorter, &moved(2)])),
        [
            "c.ics:12: the changed occurrence 20260316T090000Z of `w` is left out: the series was changed after it (SEQUENCE 3 is higher than its 2) and no longer has that occurrence"
        ]
    );
    assert_eq!(
        march(&[&shorter, &moved(3)]),
        [
            "2026-03-02 09:00 – 2026-03-02 10:00 Weekly",
            "2026-03-09 09:00 – 2026-03-09 10:00 Weekly",
            "2026-03-16 12:00 – 2026-03-16 13:00 Moved",
        ]
    );
    let single = series("");
    assert_eq!(
        march(&[&single, &moved(0)]),
        ["2026-03-02 09:00 – 2026-03-02 10:00 Weekly"]
    );
    let still = series("RRULE:FREQ=WEEKLY;COUNT=4");
    assert!(
        march(&[&still, &moved(0)])
            .contains(&"2026-03-16 12:00 – 2026-03-16 13:00 Moved".to_owned())
    );
}
