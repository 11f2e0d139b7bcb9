//! hearth-history's integration tests.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod suite;
