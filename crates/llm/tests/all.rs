//! Integration tests of hearth-llm, against the mock model server of hearth-test-support
//! on 127.0.0.1. Every case checks both what was sent (the server's recorder) and what
//! the caller sees.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite {
    mod anthropic;
    mod cancellation;
    mod doctor;
    mod faults;
    mod openai;
    mod providers;
    mod resolver;
    mod retries;
    mod support;
}
