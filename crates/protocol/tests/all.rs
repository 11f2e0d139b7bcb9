//! Integration tests of the wire protocol.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite {
    mod conversions;
    mod schema;
    mod web_types;
}
