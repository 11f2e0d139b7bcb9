//! Calendar figures for 100,000 events (10% recurring): loading, a one-week range query,
//! and expanding one year. Run with `cargo bench -p hearth-calendar`.
//!
//! Targets: a one-week query within 2 ms, expanding a year within 50 ms.

// A benchmark's output is its figures.
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use chrono::{DateTime, Datelike, Duration as Span, NaiveDate, TimeZone, Utc};
use hearth_calendar::{EventIndex, read_ics};

const EVENTS: usize = 100_000;
const RECURRING_EVERY: usize = 10;

/// A small deterministic generator (no dependency, same data every run).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn calendar_text() -> String {
    let mut random = Lcg(42);
    let first = NaiveDate::from_ymd_opt(2020, 1, 1).unwrap();
    let span_days = 11 * 365;
    let mut text = String::with_capacity(EVENTS * 330);
    text.push_str("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Bench//EN\r\n");
    let categories = [
        "Work - Meetings",
        "Work - Travel",
        "Health",
        "Family",
        "Home - Chores",
    ];
    let days = ["MO", "TU", "WE", "TH", "FR"];
    for i in 0..EVENTS {
        let date = first + Span::days(random.below(span_days) as i64);
        let hour = 7 + random.below(12);
        let minute = [0, 15, 30, 45][random.below(4) as usize];
        let length = 30 + 15 * random.below(7) as i64;
        let start = date.and_hms_opt(hour as u32, minute, 0).unwrap();
        let end = start + Span::minutes(length);
        let title = format!("{} - Event {i}", categories[i % categories.len()]);
        let zone = match random.below(3) {
            0 => ";TZID=Europe/Berlin",
            1 => ";TZID=America/New_York",
            _ => "",
        };
        let all_day = random.below(20) == 0;
        let (dtstart, dtend) = if all_day {
            (
                format!("DTSTART;VALUE=DATE:{}", date.format("%Y%m%d")),
                format!(
                    "DTEND;VALUE=DATE:{}",
                    (date + Span::days(1)).format("%Y%m%d")
                ),
            )
        } else {
            (
                format!("DTSTART{zone}:{}", start.format("%Y%m%dT%H%M%S")),
                format!("DTEND{zone}:{}", end.format("%Y%m%dT%H%M%S")),
            )
        };
        let mut rule = String::new();
        if i % RECURRING_EVERY == 0 {
            let until = (date + Span::days(90 + random.below(600) as i64)).format("%Y%m%dT235959Z");
            rule = match random.below(10) {
                0..=3 => format!(
                    "RRULE:FREQ=WEEKLY;BYDAY={},{};UNTIL={until}\r\n",
                    days[random.below(5) as usize],
                    days[random.below(5) as usize]
                ),
                4 | 5 => format!("RRULE:FREQ=DAILY;COUNT={}\r\n", 5 + random.below(55)),
                6 => format!(
                    "RRULE:FREQ=MONTHLY;BYDAY={}TU;COUNT=12\r\n",
                    1 + random.below(4)
                ),
                7 => "RRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1\r\n".to_owned(),
                8 => format!(
                    "RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=FR\r\nEXDATE{zone}:{}\r\n",
                    (start + Span::days(14)).format("%Y%m%dT%H%M%S")
                ),
                _ => "RRULE:FREQ=YEARLY\r\n".to_owned(),
            };
        }
        write!(
            text,
            "BEGIN:VEVENT\r\nUID:bench-{i}@hearth\r\nDTSTAMP:20260101T000000Z\r\n{dtstart}\r\n{dtend}\r\n{rule}SUMMARY:{title}\r\nLOCATION:Room {}\r\nEND:VEVENT\r\n",
            i % 40
        )
        .unwrap();
    }
    text.push_str("END:VCALENDAR\r\n");
    text
}

fn figures(mut samples: Vec<Duration>) -> String {
    samples.sort_unstable();
    let mean = samples.iter().sum::<Duration>() / samples.len() as u32;
    let median = samples[samples.len() / 2];
    let p95 = samples[samples.len() * 95 / 100];
    let max = samples[samples.len() - 1];
    format!("mean {mean:.2?}, median {median:.2?}, p95 {p95:.2?}, max {max:.2?}")
}

/// Runs `f`, returning its wall-clock time.
fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let started = Instant::now();
    let value = f();
    (value, started.elapsed())
}

fn report(label: &str, wall: Vec<Duration>) {
    println!("{label}\n    {}", figures(wall));
}

fn at(year: i32, month: u32, day: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(year, month, day, 0, 0, 0).unwrap()
}

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
    runaway_beside_a_normal_calendar(&runtime, dir.path(), &path, zone);
    println!(
        "targets: one-week query ≤ 2 ms; one-year expansion ≤ 50 ms; one-week query on a normal calendar beside a runaway one ≤ 2 ms"
    );
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        println!(
            "machine: {cpus} CPUs, load average {}",
            load.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
}
