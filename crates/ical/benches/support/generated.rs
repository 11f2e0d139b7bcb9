//! What the calendar benchmarks share: a deterministic calendar of 100,000 events (10%
//! recurring, zones mixed, some all-day) and the way figures are printed.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use chrono::{DateTime, Duration as Span, NaiveDate, TimeZone, Utc};

pub const EVENTS: usize = 100_000;
pub const RECURRING_EVERY: usize = 10;

/// A small deterministic generator (no dependency, same data every run).
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The calendar's text.
pub fn calendar_text() -> String {
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

pub fn figures(mut samples: Vec<Duration>) -> String {
    samples.sort_unstable();
    let mean = samples.iter().sum::<Duration>() / samples.len() as u32;
    let median = samples[samples.len() / 2];
    let p95 = samples[samples.len() * 95 / 100];
    let max = samples[samples.len() - 1];
    format!("mean {mean:.2?}, median {median:.2?}, p95 {p95:.2?}, max {max:.2?}")
}

/// Runs `f`, returning its wall-clock time.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let started = Instant::now();
    let value = f();
    (value, started.elapsed())
}

/// Prints `label` and the figures of `wall`.
pub fn report(label: &str, wall: Vec<Duration>) {
    println!("{label}\n    {}", figures(wall));
}

/// Midnight UTC of a day.
pub fn at(year: i32, month: u32, day: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(year, month, day, 0, 0, 0).unwrap()
}

/// Prints the machine's CPUs and load.
pub fn machine() {
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
