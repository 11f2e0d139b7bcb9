//! Integration tests of hearth-calendar.

mod bad_input;
mod notes;
mod recurrence;
mod roundtrip;
mod staging;
mod support;
mod tools;
