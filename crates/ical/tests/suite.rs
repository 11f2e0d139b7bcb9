//! Integration tests of hearth-ical.

mod differential;
mod interop;
mod support;
