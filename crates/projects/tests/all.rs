//! Integration tests of hearth-projects, on real files in temporary directories.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite {
    mod context;
    mod convert;
    mod shared_cache;
    mod trust;
}
