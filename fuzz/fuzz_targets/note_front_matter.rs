//! Note front matter: a Full Calendar note (Markdown with YAML front matter) read as an
//! event.
//!
//! Input: the note's text. Reads it (not an event, an event, or a reason it is not one;
//! never a panic) and expands the event's occurrences in a few windows.

#![no_main]

use std::path::Path;

use hearth_calendar::{Taxonomy, read_note_text};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match read_note_text("fuzz", Path::new("2026-03-03 Note.md"), text) {
        Ok(Some(event)) => {
            std::hint::black_box(Taxonomy::of(&event));
            hearth_fuzz::expand(vec![event]);
        }
        Ok(None) => {}
        Err(reason) => {
            std::hint::black_box(reason);
        }
    }
});
