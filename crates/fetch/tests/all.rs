//! Integration tests of hearth-fetch.
//!
//! No test sends traffic anywhere but 127.0.0.1: refused URLs are refused before any
//! connection, and allowed ones are served by loopback servers under a test-only policy
//! that treats 127.0.0.1 as public.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite {
    mod hostile;
    mod methods;
    mod proxy;
    mod rebinding;
    mod served;
    mod support;
    mod tool;
}
