//! The iCalendar reader: a calendar file or subscription as Hearth loads it.
//!
//! Input: the file's text. Reads its events (each problem a warning, never a panic),
//! renders the warnings and expands the events' occurrences in a few windows.

#![no_main]

use hearth_calendar::Taxonomy;
use hearth_ical::read_ics;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(parsed) = read_ics("fuzz", "fuzz.ics", text) else {
        return;
    };
    for warning in &parsed.warnings {
        std::hint::black_box(warning.to_string());
    }
    for event in &parsed.events {
        std::hint::black_box((Taxonomy::of(event), event.start.ical_value()));
        if let Some(recurrence) = &event.recurrence {
            for rule in &recurrence.rules {
                std::hint::black_box(rule.describe());
            }
        }
    }
    hearth_fuzz::expand(parsed.events);
});
