//! Calendar figures for 100,000 events (10% recurring) through the calendars: loading
//! a file into an indexed calendar (and again while it is unchanged), and a normal
//! calendar queried beside one whose rules would run for billions of occurrences. Run
//! with `cargo bench -p hearth-calendar`; parsing, indexing and expansion alone are
//! `cargo bench -p hearth-ical`.
//!
//! Target: a one-week query on a normal calendar beside a runaway one within 2 ms.

// A benchmark's output is its figures.
#![allow(clippy::print_stdout, clippy::unwrap_used)]

#[path = "../../ical/benches/support/generated.rs"]
mod generated;

use std::time::Instant;

use chrono::{DateTime, Duration as Span, Utc};
use generated::{EVENTS, Lcg, RECURRING_EVERY, at, calendar_text, report, timed};

/// A five-line calendar whose rule would run for two billion occurrences, configured
/// beside the 100,000-event one: loading it, a week of the normal calendar through the
/// service, and a day of both.
fn runaway_beside_a_normal_calendar(
    runtime: &tokio::runtime::Runtime,
    dir: &std::path::Path,
    normal: &std::path::Path,
    zone: chrono_tz::Tz,
) {
    let runaway = dir.join("runaway.ics");
    std::fs::write(
        &runaway,
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Bench//EN\r\n\
BEGIN:VEVENT\r\nUID:tick\r\nDTSTART:20200101T000000Z\r\nRRULE:FREQ=SECONDLY;COUNT=2000000000\r\nSUMMARY:Tick\r\nEND:VEVENT\r\n\
BEGIN:VEVENT\r\nUID:tock\r\nDTSTART:20200101T000000Z\r\nRRULE:FREQ=MINUTELY;BYSECOND=0,30;COUNT=2000000000\r\nSUMMARY:Tock\r\nEND:VEVENT\r\n\
END:VCALENDAR\r\n",
    )
    .unwrap();
    let toml = format!(
        "[calendars.bench]\nkind = \"ics\"\npath = \"{}\"\n\n[calendars.runaway]\nkind = \"ics\"\npath = \"{}\"\n",
        normal.display(),
        runaway.display()
    );
    let config = hearth_config::Config::parse(&toml, std::path::Path::new("config.toml")).unwrap();
    let calendars = hearth_calendar::Calendars::from_config(
        &config.calendars,
        hearth_calendar::CalendarOptions::new(dir, zone),
    );
    runtime.block_on(calendars.load("bench")).unwrap();
    let started = Instant::now();
    let loaded = runtime.block_on(calendars.load("runaway")).unwrap();
    println!(
        "runaway calendar (SECONDLY;COUNT=2000000000 and MINUTELY;BYSECOND=0,30;COUNT=2000000000): loaded and indexed in {:.2?}, {} rule(s) cut off and flagged",
        started.elapsed(),
        loaded.index.limited().len()
    );
    let query =
        |calendar: Option<&str>, from: DateTime<Utc>, days: i64| hearth_calendar::EventQuery {
            from,
            to: from + Span::days(days),
            text: None,
            category: None,
            calendar: calendar.map(str::to_owned),
            limit: 200,
        };
    let mut random = Lcg(11);
    let (mut wall, mut found) = (Vec::new(), 0);
    for _ in 0..200 {
        let from = at(2020, 1, 1) + Span::days(random.below(11 * 365 - 7) as i64);
        let (listing, w) = timed(|| {
            runtime
                .block_on(calendars.events(&query(Some("bench"), from, 7)))
                .unwrap()
        });
        wall.push(w);
        found += listing.total;
    }
    report(
        &format!(
            "one-week query of the normal calendar beside the runaway one, through the service ({} occurrences a week on average):",
            found / 200
        ),
        wall,
    );
    let (mut wall, mut found) = (Vec::new(), 0);
    for _ in 0..20 {
        let from = at(2020, 1, 1) + Span::days(random.below(11 * 365 - 7) as i64);
        let (listing, w) = timed(|| {
            runtime
                .block_on(calendars.events(&query(None, from, 1)))
                .unwrap()
        });
        wall.push(w);
        found = listing.total;
    }
    report(
        &format!("one-day query of both calendars, through the service ({found} occurrences):"),
        wall,
    );
}

fn main() {
    let zone = chrono_tz::Europe::Berlin;
    let text = calendar_text();
    println!(
        "hearth-calendar benchmark: {EVENTS} events, 1 in {RECURRING_EVERY} recurring, {:.1} MB of iCalendar",
        text.len() as f64 / 1e6
    );
    // Through the service, from a file: read, fingerprint, parse, index.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.ics");
    std::fs::write(&path, &text).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let toml = format!(
        "[calendars.bench]\nkind = \"ics\"\npath = \"{}\"\n",
        path.display()
    );
    let config = hearth_config::Config::parse(&toml, std::path::Path::new("config.toml")).unwrap();
    let calendars = hearth_calendar::Calendars::from_config(
        &config.calendars,
        hearth_calendar::CalendarOptions::new(dir.path(), zone),
    );
    let started = Instant::now();
    let loaded = runtime.block_on(calendars.load("bench")).unwrap();
    println!(
        "load: file → indexed calendar {:.2?} ({} events)",
        started.elapsed(),
        loaded.index.events().len()
    );
    let started = Instant::now();
    runtime.block_on(calendars.load("bench")).unwrap();
    println!("load: cached (file unchanged) {:.2?}", started.elapsed());

    runaway_beside_a_normal_calendar(&runtime, dir.path(), &path, zone);
    println!("target: one-week query on a normal calendar beside a runaway one ≤ 2 ms");
    generated::machine();
}
