//! hearth-harness-acp's integration tests: the harness driving the deterministic ACP test agent
//! through a real host on a real database.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod suite;
