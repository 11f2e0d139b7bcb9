//! hearth-mcp-client's integration tests, in one binary.

// Helpers outside `#[test]` functions panic on failure by design.
#![allow(clippy::unwrap_used)]
// A skipped test says why on stderr.
#![allow(clippy::print_stderr)]

mod suite;
