//! hearth-caldav's integration tests, in one binary.

// Helpers outside `#[test]` functions panic on failure by design.
#![allow(clippy::unwrap_used)]

mod suite;
