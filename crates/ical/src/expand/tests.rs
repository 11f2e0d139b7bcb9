//! Recurrence expansion against RFC 5545's examples, edge cases, and (property test)
//! the `rrule` crate on random rules.

use super::days::week_number;
use super::*;
use pretty_assertions::assert_eq;
use proptest::prelude::*;

fn at(text: &str) -> NaiveDateTime {
    NaiveDateTime::parse_from_str(text, "%Y%m%dT%H%M%S").unwrap()
}

fn expand_all(
    rule: &str,
    dtstart: &str,
    include_dtstart: bool,
    from: &str,
    to: &str,
) -> Vec<String> {
    let rule: RecurrenceRule = rule.parse().unwrap();
    let until = rule.until().map(|u| match u {
        crate::rrule::Until::Date(d) => d.and_hms_opt(23, 59, 59).unwrap(),
        crate::rrule::Until::Floating(t) | crate::rrule::Until::Utc(t) => t,
    });
    let expander = Expander::new(&rule, at(dtstart), until, false);
    let mut out = Vec::new();
    let ended = expander.expand(include_dtstart, at(from), at(to), &mut |t| {
        out.push(t.format("%Y%m%dT%H%M%S").to_string());
        Visit::Continue
    });
    assert_ne!(ended, Ended::OverBudget);
    out
}

fn rfc(rule: &str, dtstart: &str) -> Vec<String> {
    expand_all(rule, dtstart, true, "19000101T000000", "21000101T000000")
}

fn dates(list: &[&str]) -> Vec<String> {
    list.iter().map(|d| format!("{d}T090000")).collect()
}

#[test]
fn daily_count() {
    assert_eq!(
        rfc("FREQ=DAILY;COUNT=10", "19970902T090000"),
        dates(&[
            "19970902", "19970903", "19970904", "19970905", "19970906", "19970907", "19970908",
            "19970909", "19970910", "19970911"
        ])
    );
}

#[test]
fn weekly_until_with_wkst() {
    assert_eq!(
        rfc(
            "FREQ=WEEKLY;UNTIL=19971007T000000Z;WKST=SU;BYDAY=TU,TH",
            "19970902T090000"
        ),
        dates(&[
            "19970902", "19970904", "19970909", "19970911", "19970916", "19970918", "19970923",
            "19970925", "19970930", "19971002"
        ])
    );
}

#[test]
fn wkst_changes_biweekly_results() {
    assert_eq!(
        rfc(
            "FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=MO",
            "19970805T090000"
        ),
        dates(&["19970805", "19970810", "19970819", "19970824"])
    );
    assert_eq!(
        rfc(
            "FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU",
            "19970805T090000"
        ),
        dates(&["19970805", "19970817", "19970819", "19970831"])
    );
}

#[test]
fn monthly_first_friday() {
    assert_eq!(
        rfc("FREQ=MONTHLY;COUNT=10;BYDAY=1FR", "19970905T090000"),
        dates(&[
            "19970905", "19971003", "19971107", "19971205", "19980102", "19980206", "19980306",
            "19980403", "19980501", "19980605"
        ])
    );
}

#[test]
fn last_weekday_of_the_month_with_setpos() {
    assert_eq!(
        expand_all(
            "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1",
            "19970930T090000",
            true,
            "19970101T000000",
            "19980401T000000"
        ),
        dates(&[
            "19970930", "19971031", "19971128", "19971231", "19980130", "19980227", "19980331"
        ])
    );
}

#[test]
fn third_of_tue_wed_thu() {
    assert_eq!(
        rfc(
            "FREQ=MONTHLY;COUNT=3;BYDAY=TU,WE,TH;BYSETPOS=3",
            "19970904T090000"
        ),
        dates(&["19970904", "19971007", "19971106"])
    );
}

#[test]
fn friday_the_13th() {
    assert_eq!(
        expand_all(
            "FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13",
            "19970902T090000",
            false,
            "19970101T000000",
            "20010101T000000"
        ),
        dates(&["19980213", "19980313", "19981113", "19990813", "20001013"])
    );
}

#[test]
fn yearly_in_june_and_july() {
    assert_eq!(
        rfc("FREQ=YEARLY;COUNT=6;BYMONTH=6,7", "19970610T090000"),
        dates(&[
            "19970610", "19970710", "19980610", "19980710", "19990610", "19990710"
        ])
    );
}

#[test]
fn week_numbers_and_year_ordinals() {
    assert_eq!(
        expand_all(
            "FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO",
            "19970512T090000",
            true,
            "19970101T000000",
            "20000101T000000"
        ),
        dates(&["19970512", "19980511", "19990517"])
    );
    assert_eq!(
        expand_all(
            "FREQ=YEARLY;BYDAY=20MO",
            "19970519T090000",
            true,
            "19970101T000000",
            "20000101T000000"
        ),
        dates(&["19970519", "19980518", "19990517"])
    );
    assert_eq!(
        expand_all(
            "FREQ=YEARLY;BYYEARDAY=1,100,200,-1;COUNT=5",
            "19970101T090000",
            true,
            "19970101T000000",
            "20000101T000000"
        ),
        dates(&["19970101", "19970410", "19970719", "19971231", "19980101"])
    );
}

#[test]
fn sub_daily_rules() {
    assert_eq!(
        rfc(
            "FREQ=HOURLY;INTERVAL=3;UNTIL=19970902T170000Z",
            "19970902T090000"
        ),
        vec!["19970902T090000", "19970902T120000", "19970902T150000"]
    );
    assert_eq!(
        rfc("FREQ=MINUTELY;INTERVAL=15;COUNT=6", "19970902T090000"),
        vec![
            "19970902T090000",
            "19970902T091500",
            "19970902T093000",
            "19970902T094500",
            "19970902T100000",
            "19970902T101500"
        ]
    );
    // Every 20 minutes from 9:00 to 9:40, only on two days.
    assert_eq!(
        expand_all(
            "FREQ=MINUTELY;INTERVAL=20;BYHOUR=9",
            "19970902T090000",
            true,
            "19970902T000000",
            "19970904T000000"
        ),
        vec![
            "19970902T090000",
            "19970902T092000",
            "19970902T094000",
            "19970903T090000",
            "19970903T092000",
            "19970903T094000"
        ]
    );
}

#[test]
fn nonexistent_dates_are_skipped() {
    assert_eq!(
        rfc("FREQ=YEARLY;COUNT=3", "20000229T090000"),
        dates(&["20000229", "20040229", "20080229"])
    );
    assert_eq!(
        rfc("FREQ=MONTHLY;COUNT=4", "20260131T090000"),
        dates(&["20260131", "20260331", "20260531", "20260731"])
    );
    assert_eq!(
        rfc("FREQ=MONTHLY;COUNT=3;BYMONTHDAY=-1", "20260131T090000"),
        dates(&["20260131", "20260228", "20260331"])
    );
}

#[test]
fn jumps_ahead_centuries_and_keeps_interval_alignment() {
    assert_eq!(
        expand_all(
            "FREQ=DAILY",
            "19000101T090000",
            true,
            "23000301T000000",
            "23000303T000000"
        ),
        dates(&["23000301", "23000302"])
    );
    assert_eq!(
        expand_all(
            "FREQ=WEEKLY;INTERVAL=2",
            "20260105T090000",
            true,
            "20260301T000000",
            "20260320T000000"
        ),
        dates(&["20260302", "20260316"])
    );
    assert_eq!(
        expand_all(
            "FREQ=MONTHLY;INTERVAL=5;BYMONTHDAY=10",
            "20200110T090000",
            true,
            "20260101T000000",
            "20270101T000000"
        ),
        // 2020-01 + 5k months: 2026-04 (k = 15), 2026-09.
        dates(&["20260410", "20260910"])
    );
}

#[test]
fn a_dtstart_off_the_rule_is_an_occurrence_that_count_does_not_count() {
    // DTSTART on a Wednesday, rule on Mondays: the Wednesday shows, and the rule still
    // gives its three Mondays (dateutil's reading; a user who moves a series' first
    // event off the pattern keeps its last one).
    assert_eq!(
        rfc("FREQ=WEEKLY;BYDAY=MO;COUNT=3", "20260304T090000"),
        dates(&["20260304", "20260309", "20260316", "20260323"])
    );
    // On the pattern, DTSTART is the first of the three.
    assert_eq!(
        rfc("FREQ=WEEKLY;BYDAY=MO;COUNT=3", "20260302T090000"),
        dates(&["20260302", "20260309", "20260316"])
    );
    assert_eq!(
        expand_all(
            "FREQ=WEEKLY;BYDAY=MO;COUNT=3",
            "20260304T090000",
            false,
            "20260101T000000",
            "20270101T000000"
        ),
        dates(&["20260309", "20260316", "20260323"])
    );
}

#[test]
fn impossible_rules_end_without_hanging() {
    let rule: RecurrenceRule = "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30".parse().unwrap();
    let expander = Expander::new(&rule, at("20260101T090000"), None, false);
    let mut seen = 0;
    let ended = expander.expand(
        false,
        at("20260101T000000"),
        at("99991231T000000"),
        &mut |_| {
            seen += 1;
            Visit::Continue
        },
    );
    assert_eq!((ended, seen), (Ended::Complete, 0));
}

#[test]
fn week_numbers_follow_iso_with_monday_start() {
    let date = |y, m, d| NaiveDate::from_ymd_opt(y, m, d).unwrap();
    assert_eq!(week_number(date(2026, 1, 1), Weekday::Mon), (1, 53));
    assert_eq!(week_number(date(2027, 1, 1), Weekday::Mon), (53, 53));
    assert_eq!(week_number(date(2024, 12, 30), Weekday::Mon), (1, 52));
}

/// A random rule the `rrule` crate accepts, as RRULE text.
fn random_rule() -> impl Strategy<Value = String> {
    let weekday = prop::sample::select(vec!["MO", "TU", "WE", "TH", "FR", "SA", "SU"]);
    (
        0usize..4,
        1u32..4,
        1u32..25,
        prop::collection::vec(1u8..=12, 0..3),
        prop::collection::vec(prop_oneof![1i8..=31, -31i8..=-1], 0..3),
        prop::collection::vec(
            (
                prop::option::of(prop_oneof![1i8..=4, -4i8..=-1]),
                weekday.clone(),
            ),
            0..3,
        ),
        prop::collection::vec(prop_oneof![1i16..=3, -3i16..=-1], 0..2),
        prop::collection::vec(0u8..24, 0..2),
        weekday,
    )
        .prop_map(
            |(freq, interval, count, months, month_days, days, set_pos, hours, wkst)| {
                let freq = ["YEARLY", "MONTHLY", "WEEKLY", "DAILY"][freq];
                let mut text = format!("FREQ={freq};INTERVAL={interval};COUNT={count};WKST={wkst}");
                let list = |v: Vec<String>| v.join(",");
                if !months.is_empty() {
                    text += &format!(
                        ";BYMONTH={}",
                        list(months.iter().map(|m| m.to_string()).collect())
                    );
                }
                if !month_days.is_empty() && freq != "WEEKLY" {
                    text += &format!(
                        ";BYMONTHDAY={}",
                        list(month_days.iter().map(|m| m.to_string()).collect())
                    );
                }
                if !days.is_empty() {
                    let ordinals_allowed = freq == "MONTHLY" || freq == "YEARLY";
                    let any_ordinal = days.iter().any(|(n, _)| n.is_some());
                    // One entry per weekday: the reference drops `MO` when `1MO` is there.
                    let mut seen = Vec::new();
                    let days: Vec<String> = days
                        .iter()
                        .filter(|(_, d)| {
                            if seen.contains(d) {
                                false
                            } else {
                                seen.push(*d);
                                true
                            }
                        })
                        // The reference mishandles ordinal and plain weekdays mixed.
                        .map(|(n, d)| match (ordinals_allowed, any_ordinal, n) {
                            (true, true, Some(n)) => format!("{n}{d}"),
                            (true, true, None) => format!("1{d}"),
                            _ => (*d).to_owned(),
                        })
                        .collect();
                    text += &format!(";BYDAY={}", list(days));
                }
                if !hours.is_empty() {
                    text += &format!(
                        ";BYHOUR={}",
                        list(hours.iter().map(|h| h.to_string()).collect())
                    );
                }
                let has_by = text.contains(";BY");
                // dateutil (and so the reference) truncates the first week at DTSTART
                // before BYSETPOS; RFC 5545 counts positions in the whole week.
                if has_by && !set_pos.is_empty() && freq != "WEEKLY" {
                    text += &format!(
                        ";BYSETPOS={}",
                        list(set_pos.iter().map(|p| p.to_string()).collect())
                    );
                }
                text
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn agrees_with_the_rrule_crate(
        rule in random_rule(),
        year in 1995i32..2030,
        ordinal in 1u32..365,
        hour in 0u32..24,
    ) {
        let dtstart = NaiveDate::from_yo_opt(year, ordinal).unwrap().and_hms_opt(hour, 30, 0).unwrap();
        let text = format!("DTSTART:{}Z\nRRULE:{rule}", dtstart.format("%Y%m%dT%H%M%S"));
        let Ok(set) = text.parse::<rrule::RRuleSet>() else {
            // The reference refuses some combinations; nothing to compare.
            return Ok(());
        };
        let far = NaiveDate::from_ymd_opt(2400, 1, 1).unwrap().and_hms_opt(0, 0, 0).unwrap();
        let expected: Vec<NaiveDateTime> = set
            .all(200)
            .dates
            .iter()
            .map(|d| d.naive_utc())
            .filter(|t| *t < far)
            .collect();

        let parsed: RecurrenceRule = rule.parse().unwrap();
        let expander = Expander::new(&parsed, dtstart, None, false);
        let mut actual = Vec::new();
        expander.expand(false, dtstart, far, &mut |t| { actual.push(t); Visit::Continue });
        prop_assert_eq!(actual, expected, "{}", text);
    }

    #[test]
    fn jumping_ahead_matches_expanding_from_the_start(
        rule in random_rule(),
        skip_days in 0i64..4000,
    ) {
        let mut parsed: RecurrenceRule = rule.parse().unwrap();
        parsed.count = None;
        prop_assert!(parsed.count().is_none());
        let dtstart = at("20100315T093000");
        let from = dtstart + Duration::days(skip_days);
        let to = from + Duration::days(120);
        let expander = Expander::new(&parsed, dtstart, None, false);
        let mut jumped = Vec::new();
        expander.expand(true, from, to, &mut |t| { jumped.push(t); Visit::Continue });
        let mut walked = Vec::new();
        expander.expand(true, dtstart, to, &mut |t| { if t >= from { walked.push(t); } Visit::Continue });
        prop_assert_eq!(jumped, walked, "{}", rule);
    }
}
