//! iCalendar figures for 100,000 events (10% recurring): parsing, indexing, a one-week
//! range query, and expanding one year. Run with `cargo bench -p hearth-ical`; loading
//! from a file and querying through the calendars are `cargo bench -p hearth-calendar`.
//!
//! Targets: a one-week query within 2 ms, expanding a year within 50 ms.

// A benchmark's output is its figures.
#![allow(clippy::print_stdout, clippy::unwrap_used)]

#[path = "support/generated.rs"]
mod generated;

use std::time::Instant;

use chrono::{Datelike, Duration as Span};
use generated::{EVENTS, Lcg, RECURRING_EVERY, at, calendar_text, figures, report, timed};
use hearth_ical::{EventIndex, read_ics};

fn main() {
    let zone = chrono_tz::Europe::Berlin;
    let text = calendar_text();
    println!(
        "hearth-ical benchmark: {EVENTS} events, 1 in {RECURRING_EVERY} recurring, {:.1} MB of iCalendar",
        text.len() as f64 / 1e6
    );

    let mut parse_times = Vec::new();
    let mut index_times = Vec::new();
    let mut index = None;
    for _ in 0..3 {
        let started = Instant::now();
        let parsed = read_ics("bench", "bench.ics", &text).unwrap();
        parse_times.push(started.elapsed());
        assert!(
            parsed.warnings.is_empty(),
            "{:?}",
            &parsed.warnings[..parsed.warnings.len().min(3)]
        );
        let started = Instant::now();
        index = Some(EventIndex::new(parsed.events, zone));
        index_times.push(started.elapsed());
    }
    let index = index.unwrap();
    println!("load: parse {}", figures(parse_times));
    println!("load: index {}", figures(index_times));

    let mut random = Lcg(7);
    // `HEARTH_BENCH_WEEKS=n` runs more week queries (for profiling).
    let weeks: usize = std::env::var("HEARTH_BENCH_WEEKS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000);
    let (mut wall, mut found) = (Vec::new(), 0);
    for _ in 0..weeks {
        let from = at(2020, 1, 1) + Span::days(random.below(11 * 365 - 7) as i64);
        let (count, w) = timed(|| index.between(from, from + Span::days(7)).len());
        wall.push(w);
        found += count;
    }
    report(
        &format!(
            "one-week query, sorted ({weeks} random weeks in 2020–2030, {} occurrences a week on average):",
            found / weeks
        ),
        wall,
    );

    let (mut wall, mut expanded) = (Vec::new(), 0);
    for year in [2021, 2023, 2025, 2027, 2029] {
        let (from, to) = (at(year, 1, 1), at(year + 1, 1, 1));
        let (count, w) = timed(|| {
            let mut count = 0;
            index.visit(from, to, &|event| event.is_recurring(), &mut |_| count += 1);
            count
        });
        wall.push(w);
        expanded = count;
    }
    report(
        &format!("expansion of one year, all 10,000 series ({expanded} occurrences):"),
        wall,
    );

    let (mut wall, mut all) = (Vec::new(), 0);
    for year in [2021, 2023, 2025, 2027, 2029] {
        let (from, to) = (at(year, 1, 1), at(year + 1, 1, 1));
        let (count, w) = timed(|| {
            let occurrences = index.between(from, to);
            assert!(occurrences.iter().all(|o| o.start.year() >= year - 1));
            occurrences.len()
        });
        wall.push(w);
        all = count;
    }
    report(
        &format!("one-year query, all events, sorted ({all} occurrences):"),
        wall,
    );
    println!("targets: one-week query ≤ 2 ms; one-year expansion ≤ 50 ms");
    generated::machine();
}
