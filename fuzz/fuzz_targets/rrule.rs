//! The RRULE parser: a recurrence rule as calendars and models write it.
//!
//! Input: the rule's text (`FREQ=WEEKLY;BYDAY=MO,WE`, with or without `RRULE:`). Checks
//! that a rule Hearth reads is written back as text that reads as the same rule, and
//! that expanding it from a timed and an all-day start never panics.

#![no_main]

use hearth_ical::{RecurrenceRule, read_ics};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(rule) = text.parse::<RecurrenceRule>() else {
        return;
    };
    let written = rule.to_string();
    let again = written.parse::<RecurrenceRule>().unwrap_or_else(|error| {
        panic!("{written:?}, written from {text:?}, does not read: {error}")
    });
    assert_eq!(
        again, rule,
        "{written:?} reads as another rule than {text:?}"
    );
    std::hint::black_box(rule.describe());
    let calendar = format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\n\
         BEGIN:VEVENT\r\nUID:timed\r\nSUMMARY:Timed\r\nDTSTART;TZID=Europe/Berlin:20260302T093000\r\n\
         DURATION:PT30M\r\nRRULE:{written}\r\nEND:VEVENT\r\n\
         BEGIN:VEVENT\r\nUID:all-day\r\nSUMMARY:All day\r\nDTSTART;VALUE=DATE:20260301\r\n\
         RRULE:{written}\r\nEND:VEVENT\r\n\
         END:VCALENDAR\r\n"
    );
    let parsed = read_ics("fuzz", "fuzz.ics", &calendar).expect("a calendar Hearth wrote");
    hearth_fuzz::expand(parsed.events);
});
