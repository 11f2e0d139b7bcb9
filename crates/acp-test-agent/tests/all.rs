//! Integration tests: the real `hearth-acp-test-agent` binary, driven by the client
//! side of the Agent Client Protocol SDK over its stdio.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite {
    mod auth;
    mod basics;
    mod cancel;
    mod client_calls;
    mod misbehaviour;
    mod persistence;
    mod support;
    mod tools;
    mod write;
}
