//! End-to-end tests: the real `hearth` binary on a temporary data directory.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite {
    mod bad_input;
    mod run;
    mod support;
}
