//! Integration tests of hearth-confine: the confinement matrix (every way out of a
//! root, refused with its exact error, nothing outside touched, and controls that
//! succeed), atomic writes, root construction, and races against the kernel's
//! resolution.
//!
//! Each test builds its own tree in a temporary directory; see `suite/support.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite {
    mod confined_dir;
    mod directory;
    mod outside;
    mod race;
    mod read;
    mod roots;
    mod support;
    mod write;
}
