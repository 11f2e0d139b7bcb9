//! Hearth's recurrence compared, occurrence by occurrence, with two independent
//! implementations on calendars generated at random (property-based: rules, zones,
//! all-day series, exceptions, overrides, THISANDFUTURE ranges, periods, revisions):
//! - the `rrule` crate, on each series' rule, DTSTART and EXDATEs;
//! - the Python `recurring-ical-events` library (what many calendar tools are built
//!   on), on the whole calendar. It is installed by `.ci/install-python-packages` into
//!   `target/python-venv`; without it this part is skipped with the reason, unless
//!   `HEARTH_REQUIRE_PYTHON=1`.
//!
//! Where Hearth deliberately differs, the generator does not produce the case; each
//! such case is listed in [`KNOWN_DIFFERENCES`] with the reason.

// What was compared, and a skip's reason, are printed for whoever runs the test.
#![allow(clippy::print_stdout)]

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use chrono::{DateTime, Duration, NaiveDate, NaiveDateTime, Utc};
use hearth_ical::{EventIndex, read_ics};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

/// Cases Hearth reads differently from recurring-ical-events on purpose, and why. The
/// generator avoids them, so every difference the test finds is a new one.
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[
    (
        "copies of one event with the same SEQUENCE",
        "Hearth takes the later DTSTAMP, then LAST-MODIFIED (RFC 5545 §3.8.7.4); recurring-ical-events keeps the first copy",
    ),
    (
        "a copy without SEQUENCE beside one with SEQUENCE:0",
        "Hearth reads a missing SEQUENCE as 0 (RFC 5545's default) and the two as the same revision; recurring-ical-events reads it as -1, older",
    ),
    (
        "an override of an occurrence an EXDATE removes",
        "Hearth shows the override (it is an event of its own); recurring-ical-events drops it with the occurrence",
    ),
    (
        "an override older than a revision of its series that no longer makes its occurrence (another rule, a shorter UNTIL or COUNT)",
        "Hearth leaves the override out (the newer series removed that meeting; an override as new as the series stays); recurring-ical-events keeps it unless an EXDATE removed the occurrence",
    ),
    (
        "a THISANDFUTURE override's title, location and other text",
        "Hearth moves and resizes later occurrences (RFC 5545 §3.8.4.4's time and length) and keeps the series' text on them; recurring-ical-events gives them the override's text. Times agree",
    ),
    (
        "an all-day DTEND on its DTSTART day",
        "Hearth reads a one-day event, with a warning; recurring-ical-events an event without length",
    ),
    (
        "a rule whose COUNT is too costly to end when indexing",
        "Hearth shows it up to where its work budget stopped and flags the calendar; recurring-ical-events computes every occurrence",
    ),
];

const CASES: u32 = 300;
const FROM: &str = "2026-01-01";
const TO: &str = "2028-01-01";

#[derive(Clone, Copy, Debug)]
enum TestZone {
    Utc,
    Named(&'static str),
}

#[derive(Clone, Debug)]
struct Override {
    day: i64,
    shift_minutes: i64,
    length_minutes: i64,
    this_and_future: bool,
}

#[derive(Clone, Debug)]
struct SeriesCase {
    uid: String,
    zone: TestZone,
    all_day: bool,
    start: NaiveDateTime,
    length_minutes: i64,
    rule: String,
    exdates: Vec<i64>,
    overrides: Vec<Override>,
    rdates: Vec<(i64, Option<i64>)>,
    /// A newer copy: its place (before the older one or after), its shift and rule.
    revision: Option<(bool, i64, String)>,
}

fn zone() -> impl Strategy<Value = TestZone> {
    prop_oneof![
        Just(TestZone::Utc),
        Just(TestZone::Named("Europe/Berlin")),
        Just(TestZone::Named("America/New_York")),
        Just(TestZone::Named("Australia/Sydney")),
    ]
}

fn rule() -> impl Strategy<Value = String> {
    let days = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"];
    let part = prop_oneof![
        Just(("DAILY", String::new())),
        Just(("DAILY", ";BYDAY=MO,TU,WE,TH,FR".to_owned())),
        Just(("WEEKLY", String::new())),
        proptest::sample::subsequence(days.to_vec(), 1..4)
            .prop_map(|d| ("WEEKLY", format!(";BYDAY={}", d.join(",")))),
        Just(("MONTHLY", String::new())),
        prop_oneof![1i32..=31, Just(-1)].prop_map(|d| ("MONTHLY", format!(";BYMONTHDAY={d}"))),
        (
            prop_oneof![1i32..=4, Just(-1)],
            proptest::sample::select(days.to_vec())
        )
            .prop_map(|(n, d)| ("MONTHLY", format!(";BYDAY={n}{d}"))),
        Just(("MONTHLY", ";BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1".to_owned())),
        Just(("YEARLY", String::new())),
        (1u32..=12).prop_map(|m| ("YEARLY", format!(";BYMONTH={m}"))),
        (1u32..=12, 1i32..=4, proptest::sample::select(days.to_vec()))
            .prop_map(|(m, n, d)| ("YEARLY", format!(";BYMONTH={m};BYDAY={n}{d}"))),
    ];
    let end = prop_oneof![
        Just(String::new()),
        (1u32..40).prop_map(|c| format!(";COUNT={c}")),
        (10i64..500).prop_map(|d| format!(";UNTIL=+{d}")),
    ];
    (part, prop_oneof![3 => Just(1u32), 1 => 2u32..4], end).prop_map(
        |((freq, by), interval, end)| {
            let interval = if interval > 1 {
                format!(";INTERVAL={interval}")
            } else {
                String::new()
            };
            format!("FREQ={freq}{interval}{by}{end}")
        },
    )
}

fn series(uid: &'static str) -> impl Strategy<Value = SeriesCase> {
    let overrides = proptest::collection::vec(
        (
            0i64..30,
            -180i64..180,
            15i64..120,
            proptest::bool::weighted(0.2),
        )
            .prop_map(|(day, shift, length, future)| Override {
                // Odd days: never an EXDATE's (those are even).
                day: day * 2 + 1,
                shift_minutes: shift / 15 * 15,
                length_minutes: length,
                this_and_future: future,
            }),
        0..3,
    );
    let overrides = overrides.prop_map(|mut overrides: Vec<Override>| {
        // One override per occurrence (two copies of one are a revision question).
        overrides.sort_by_key(|o| o.day);
        overrides.dedup_by_key(|o| o.day);
        overrides
    });
    (
        zone(),
        proptest::bool::weighted(0.15),
        (0u32..365, 6u32..21, proptest::bool::ANY),
        15i64..180,
        rule(),
        proptest::collection::vec((0i64..40).prop_map(|d| d * 2), 0..3),
        overrides,
        proptest::collection::vec(
            (1i64..90, proptest::option::weighted(0.4, 30i64..300)),
            0..3,
        ),
        proptest::option::weighted(0.2, (proptest::bool::ANY, -120i64..120, rule())),
    )
        .prop_map(
            move |(
                zone,
                all_day,
                (day, hour, half),
                length,
                rule,
                exdates,
                overrides,
                rdates,
                revision,
            )| {
                let start = NaiveDate::from_yo_opt(2026, day + 1)
                    .unwrap_or(NaiveDate::MIN)
                    .and_hms_opt(hour, if half { 30 } else { 0 }, 0)
                    .unwrap_or_default();
                SeriesCase {
                    uid: uid.to_owned(),
                    zone,
                    all_day,
                    start,
                    length_minutes: length,
                    rule,
                    exdates,
                    overrides,
                    rdates,
                    revision: revision.map(|(before, shift, rule)| (before, shift / 15 * 15, rule)),
                }
            },
        )
}

fn calendar() -> impl Strategy<Value = Vec<SeriesCase>> {
    prop_oneof![
        series("a").prop_map(|a| vec![a]),
        (series("a"), series("b")).prop_map(|(a, b)| vec![a, b]),
    ]
}

fn stamp(time: NaiveDateTime) -> String {
    time.format("%Y%m%dT%H%M%S").to_string()
}

/// A time property of `case` at `local` (its zone, or a date for all-day series).
fn time_line(name: &str, case: &SeriesCase, local: NaiveDateTime) -> String {
    match (case.all_day, case.zone) {
        (true, _) => format!("{name};VALUE=DATE:{}", local.format("%Y%m%d")),
        (false, TestZone::Utc) => format!("{name}:{}Z", stamp(local)),
        (false, TestZone::Named(tz)) => format!("{name};TZID={tz}:{}", stamp(local)),
    }
}

/// The rule as written: `UNTIL=+n` becomes a date n days after the start (UTC for
/// timed series, as RFC 5545 wants with zoned starts).
fn rule_text(case: &SeriesCase, rule: &str, start: NaiveDateTime) -> String {
    match rule.split_once(";UNTIL=+") {
        Some((head, days)) => {
            let days: i64 = days.parse().unwrap_or(30);
            let until = start + Duration::days(days);
            if case.all_day {
                format!("{head};UNTIL={}", until.format("%Y%m%d"))
            } else {
                format!("{head};UNTIL={}Z", stamp(until))
            }
        }
        None => rule.to_owned(),
    }
}

fn length(case: &SeriesCase) -> Duration {
    if case.all_day {
        Duration::days(1 + case.length_minutes % 3)
    } else {
        Duration::minutes(case.length_minutes)
    }
}

fn master_text(case: &SeriesCase, sequence: u32, shift: i64, rule: &str) -> String {
    let start = if case.all_day {
        case.start.date().and_hms_opt(0, 0, 0).unwrap_or_default() + Duration::days(shift / 60)
    } else {
        case.start + Duration::minutes(shift)
    };
    let mut lines = vec![
        format!("UID:{}", case.uid),
        format!("SEQUENCE:{sequence}"),
        format!("DTSTAMP:2026010{}T000000Z", 1 + sequence),
        time_line("DTSTART", case, start),
        time_line("DTEND", case, start + length(case)),
        format!("RRULE:{}", rule_text(case, rule, start)),
        format!("SUMMARY:{} v{sequence}", case.uid),
    ];
    for day in &case.exdates {
        lines.push(time_line("EXDATE", case, start + Duration::days(*day)));
    }
    for (day, period) in &case.rdates {
        let at = start + Duration::days(*day);
        match (period, case.all_day, case.zone) {
            (Some(minutes), false, TestZone::Utc) => {
                lines.push(format!("RDATE;VALUE=PERIOD:{}Z/PT{minutes}M", stamp(at)))
            }
            (Some(minutes), false, TestZone::Named(tz)) => lines.push(format!(
                "RDATE;VALUE=PERIOD;TZID={tz}:{}/{}",
                stamp(at),
                stamp(at + Duration::minutes(*minutes))
            )),
            _ => lines.push(time_line("RDATE", case, at)),
        }
    }
    lines.join("\r\n")
}

fn override_text(case: &SeriesCase, changed: &Override) -> String {
    let original = if case.all_day {
        case.start.date().and_hms_opt(0, 0, 0).unwrap_or_default()
    } else {
        case.start
    } + Duration::days(changed.day);
    let (start, end) = if case.all_day {
        let start = original + Duration::days(changed.shift_minutes / 60);
        (
            start,
            start + Duration::days(1 + changed.length_minutes % 2),
        )
    } else {
        let start = original + Duration::minutes(changed.shift_minutes);
        (start, start + Duration::minutes(changed.length_minutes))
    };
    let range = if changed.this_and_future {
        ";RANGE=THISANDFUTURE"
    } else {
        ""
    };
    let rid = time_line("RECURRENCE-ID", case, original).replacen(
        "RECURRENCE-ID",
        &format!("RECURRENCE-ID{range}"),
        1,
    );
    // As new as the newest revision of its series: an older override of an occurrence a
    // newer revision no longer makes is a known difference.
    let sequence = u32::from(case.revision.is_some());
    [
        format!("UID:{}", case.uid),
        format!("SEQUENCE:{sequence}"),
        format!("DTSTAMP:2026010{}T000000Z", 1 + sequence),
        rid,
        time_line("DTSTART", case, start),
        time_line("DTEND", case, end),
        format!("SUMMARY:{} changed", case.uid),
    ]
    .join("\r\n")
}

fn calendar_text(cases: &[SeriesCase]) -> String {
    let mut components = Vec::new();
    for case in cases {
        let older = master_text(case, 0, 0, &case.rule);
        match &case.revision {
            Some((before, shift, rule)) => {
                let newer = master_text(case, 1, *shift, rule);
                if *before {
                    components.extend([newer, older]);
                } else {
                    components.extend([older, newer]);
                }
            }
            None => components.push(older),
        }
        components.extend(case.overrides.iter().map(|o| override_text(case, o)));
    }
    let mut text =
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Hearth differential//EN\r\n".to_owned();
    for component in components {
        text.push_str("BEGIN:VEVENT\r\n");
        text.push_str(&component);
        text.push_str("\r\nEND:VEVENT\r\n");
    }
    text.push_str("END:VCALENDAR\r\n");
    text
}

type Found = BTreeSet<(String, DateTime<Utc>, DateTime<Utc>)>;

fn utc_day(text: &str) -> DateTime<Utc> {
    NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .unwrap()
        .and_hms_opt(0, 0, 0)
        .unwrap()
        .and_utc()
}

fn hearth_occurrences(text: &str) -> Found {
    let parsed = read_ics("diff", "diff.ics", text).unwrap();
    let index = EventIndex::new(parsed.events, chrono_tz::UTC);
    index
        .between(utc_day(FROM), utc_day(TO))
        .iter()
        .map(|o| (o.event.uid.clone(), o.start, o.end))
        .collect()
}

fn generated() -> Vec<Vec<SeriesCase>> {
    let mut runner = TestRunner::deterministic();
    let strategy = calendar();
    (0..CASES)
        .map(|_| strategy.new_tree(&mut runner).unwrap().current())
        .collect()
}

#[test]
fn each_series_matches_the_rrule_crate() {
    let (mut compared, mut refused) = (0, 0);
    for cases in generated() {
        // Each timed series on its own: its rule, DTSTART and EXDATEs.
        for case in cases.iter().filter(|c| !c.all_day) {
            let case = &SeriesCase {
                overrides: Vec::new(),
                rdates: Vec::new(),
                revision: None,
                ..case.clone()
            };
            let text = calendar_text(std::slice::from_ref(case));
            let hearth = hearth_occurrences(&text);
            let mut lines = vec![
                time_line("DTSTART", case, case.start),
                format!("RRULE:{}", rule_text(case, &case.rule, case.start)),
            ];
            lines.extend(
                case.exdates
                    .iter()
                    .map(|d| time_line("EXDATE", case, case.start + Duration::days(*d))),
            );
            let Ok(set) = lines.join("\n").parse::<rrule::RRuleSet>() else {
                refused += 1;
                continue;
            };
            let excluded: BTreeSet<DateTime<Utc>> = set
                .get_exdate()
                .iter()
                .map(|d| d.with_timezone(&Utc))
                .collect();
            // DTSTART is an occurrence in iCalendar even off the rule (not past UNTIL).
            let first = set.get_dt_start().with_timezone(&Utc);
            let until = set.get_rrule().first().and_then(|r| r.get_until().copied());
            let mut expected: BTreeSet<DateTime<Utc>> = set
                .all(5000)
                .dates
                .iter()
                .map(|d| d.with_timezone(&Utc))
                .collect();
            if until.is_none_or(|u| first <= u.with_timezone(&Utc)) && !excluded.contains(&first) {
                expected.insert(first);
            }
            expected.retain(|t| *t >= utc_day(FROM) && *t < utc_day(TO));
            let actual: BTreeSet<DateTime<Utc>> = hearth
                .iter()
                .filter(|(uid, _, _)| *uid == case.uid)
                .map(|(_, start, _)| *start)
                .collect();
            assert_eq!(actual, expected, "{text}");
            compared += 1;
        }
    }
    println!("compared {compared} series with the rrule crate ({refused} rules it refuses)");
    assert!(
        compared > CASES as usize / 4,
        "too few series compared: {compared}"
    );
}

fn python() -> Option<PathBuf> {
    let venv = std::env::var_os("HEARTH_PYTHON_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/python-venv")
        });
    let python = venv.join("bin/python");
    if python.exists() {
        return Some(python);
    }
    let reason = format!(
        "{} not found; run .ci/install-python-packages to compare with recurring-ical-events",
        python.display()
    );
    if std::env::var("HEARTH_REQUIRE_PYTHON").as_deref() == Ok("1") {
        panic!("HEARTH_REQUIRE_PYTHON=1 but {reason}");
    }
    println!("skipped: {reason}");
    None
}

#[test]
fn whole_calendars_match_recurring_ical_events() {
    let Some(python) = python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let calendars = generated();
    let texts: Vec<String> = calendars.iter().map(|c| calendar_text(c)).collect();
    for (i, text) in texts.iter().enumerate() {
        std::fs::write(dir.path().join(format!("{i:04}.ics")), text).unwrap();
    }
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/differential/occurrences.py");
    let output = Command::new(&python)
        .arg(&script)
        .arg(dir.path())
        .args([FROM, TO])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    let mut differences = Vec::new();
    let mut compared = 0;
    for line in stdout.lines() {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        let file = value["file"].as_str().unwrap_or_default();
        let index: usize = file.trim_end_matches(".ics").parse().unwrap();
        let text = &texts[index];
        if let Some(error) = value["error"].as_str() {
            differences.push(format!(
                "{file}: recurring-ical-events failed: {error}\n{text}"
            ));
            continue;
        }
        let theirs: Found = value["occurrences"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| {
                let time = |i: usize| {
                    DateTime::parse_from_rfc3339(o[i].as_str().unwrap())
                        .unwrap()
                        .with_timezone(&Utc)
                };
                (o[0].as_str().unwrap().to_owned(), time(1), time(2))
            })
            .collect();
        let ours = hearth_occurrences(text);
        compared += 1;
        if ours != theirs {
            let only_ours: Vec<_> = ours.difference(&theirs).collect();
            let only_theirs: Vec<_> = theirs.difference(&ours).collect();
            differences.push(format!(
                "{file}: only Hearth: {only_ours:?}\nonly recurring-ical-events: {only_theirs:?}\n{text}"
            ));
        }
    }
    assert_eq!(compared, texts.len());
    println!(
        "compared {compared} calendars with recurring-ical-events: {} differ",
        differences.len()
    );
    println!("Known differences (not generated):");
    for (case, reason) in KNOWN_DIFFERENCES {
        println!("- {case}: {reason}");
    }
    assert!(
        differences.is_empty(),
        "{} of {compared} calendars differ:\n\n{}",
        differences.len(),
        differences.join("\n\n")
    );
}
