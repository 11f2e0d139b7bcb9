//! What the calendar fuzz targets share: expanding the events they read.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use hearth_ical::{Event, EventIndex};

/// A zone with daylight saving time, so floating times cross its gaps and overlaps.
pub const FLOATING: chrono_tz::Tz = chrono_tz::Europe::Berlin;

/// Midnight UTC of a day.
fn day(year: i32, month: u32, day: u32) -> DateTime<Utc> {
    NaiveDate::from_ymd_opt(year, month, day)
        .and_then(|date| date.and_hms_opt(0, 0, 0))
        .map(|time| time.and_utc())
        .unwrap_or_default()
}

/// Indexes `events` and visits their occurrences in a few short windows: around each of
/// the first events' starts, in the spring of 2026 (the seeds' time), across a DST
/// change, and far ahead (jumping a series forward). The windows are short so a rule
/// repeating every second stays quick. Returns how many occurrences were visited.
pub fn expand(events: Vec<Event>) -> usize {
    let mut windows = vec![
        (day(2026, 3, 1), day(2026, 3, 3)),
        (day(2026, 3, 28), day(2026, 3, 30)),
        (day(2091, 11, 2), day(2091, 11, 3)),
    ];
    for event in events.iter().take(4) {
        let start = event.start.to_utc(FLOATING);
        if let Some(end) = start.checked_add_signed(Duration::days(2)) {
            windows.push((start, end));
        }
    }
    let index = EventIndex::new(events, FLOATING);
    let mut visited = 0;
    for (from, to) in windows {
        index.visit(from, to, &|_| true, &mut |occurrence| {
            visited += 1;
            std::hint::black_box(occurrence.is_all_day());
        });
    }
    visited
}
