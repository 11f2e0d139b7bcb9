//! Integration tests of hearth-store.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite {
    mod filesystems;
    mod fixtures;
    mod open;
    mod registry;
    mod turns;
    mod visibility;
}
