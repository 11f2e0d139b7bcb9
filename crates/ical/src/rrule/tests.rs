//! Parsing and writing recurrence rules.

use super::*;
use pretty_assertions::assert_eq;
use proptest::prelude::*;

#[test]
fn parses_and_writes_canonically() {
    let rule: RecurrenceRule =
        "RRULE:freq=monthly;byday=-1fr,2MO;INTERVAL=2;UNTIL=20261231T235959Z;WKST=SU"
            .parse()
            .unwrap();
    assert_eq!(rule.freq, Frequency::Monthly);
    assert_eq!(rule.interval, 2);
    assert_eq!(
        rule.by_day,
        vec![
            WeekdayNum {
                ordinal: Some(-1),
                weekday: Weekday::Fri
            },
            WeekdayNum {
                ordinal: Some(2),
                weekday: Weekday::Mon
            },
        ]
    );
    assert_eq!(
        rule.to_string(),
        "FREQ=MONTHLY;UNTIL=20261231T235959Z;INTERVAL=2;BYDAY=-1FR,2MO;WKST=SU"
    );
    assert_eq!(
        rule.describe(),
        "every 2 months on last Fri, second Mon, until 2026-12-31 23:59 UTC"
    );
}

#[test]
fn errors_say_what_to_fix() {
    for (text, needle) in [
        ("", "empty"),
        ("BYDAY=MO", "FREQ is missing"),
        ("FREQ=FORTNIGHTLY", "not one of"),
        ("FREQ=DAILY;COUNT=0", "COUNT"),
        ("FREQ=DAILY;COUNT=3;UNTIL=20260101", "cannot both"),
        ("FREQ=WEEKLY;BYDAY=XX", "not a weekday"),
        ("FREQ=MONTHLY;BYMONTHDAY=32", "out of range"),
        ("FREQ=MONTHLY;BYMONTHDAY=0", "out of range"),
        ("FREQ=YEARLY;BYMONTH=13", "out of range"),
        ("FREQ=DAILY;FREQ=WEEKLY", "twice"),
        ("FREQ=DAILY;BYFOO=1", "unknown part"),
        ("FREQ=DAILY;UNTIL=tomorrow", "UNTIL"),
        ("FREQ=DAILY;INTERVAL", "KEY=VALUE"),
    ] {
        let error = text.parse::<RecurrenceRule>().unwrap_err().to_string();
        assert!(error.contains(needle), "{text}: {error}");
    }
}

#[test]
fn ignores_extension_parts() {
    let rule: RecurrenceRule = "FREQ=DAILY;X-NAME=foo;".parse().unwrap();
    assert_eq!(rule.to_string(), "FREQ=DAILY");
}

fn arbitrary_rule() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["DAILY", "WEEKLY", "MONTHLY", "YEARLY", "HOURLY"]),
        1u32..5,
        prop::option::of(1u32..100),
        prop::collection::vec(prop::sample::select(vec!["MO", "-1FR", "2TU", "SU"]), 0..3),
        prop::collection::vec(-31i8..=31, 0..3),
    )
        .prop_map(|(freq, interval, count, days, month_days)| {
            let mut text = format!("FREQ={freq};INTERVAL={interval}");
            if let Some(count) = count {
                text.push_str(&format!(";COUNT={count}"));
            }
            if !days.is_empty() {
                text.push_str(&format!(";BYDAY={}", days.join(",")));
            }
            let month_days: Vec<String> = month_days
                .into_iter()
                .filter(|d| *d != 0)
                .map(|d| d.to_string())
                .collect();
            if !month_days.is_empty() {
                text.push_str(&format!(";BYMONTHDAY={}", month_days.join(",")));
            }
            text
        })
}

proptest! {
    #[test]
    fn display_parses_back_to_the_same_rule(text in arbitrary_rule()) {
        let rule: RecurrenceRule = text.parse().unwrap();
        let again: RecurrenceRule = rule.to_string().parse().unwrap();
        prop_assert_eq!(again, rule);
    }

    #[test]
    fn parsing_never_panics(text in "\\PC{0,80}") {
        drop(text.parse::<RecurrenceRule>());
    }
}
