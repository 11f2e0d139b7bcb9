//! Integration tests of hearth-host: the design's invariants and the host's behaviours,
//! against a real SQLite store and a fake harness the tests drive.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite {
    mod durability;
    mod features;
    mod invariants;
    mod leases;
    mod output;
    mod restore;
    mod streaming;
}
