//! Integration tests of hearth-calendar.

mod bad_input;
mod caldav;
#[path = "../../caldav/tests/suite/server.rs"]
mod caldav_server;
mod composing;
mod honest_edits;
mod interop;
mod missing;
mod notes;
mod recurrence;
mod roundtrip;
mod staging;
mod support;
mod tools;
