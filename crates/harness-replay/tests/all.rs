//! Integration tests of hearth-harness-replay: the harness driven directly through the `Harness`
//! trait with a sink that records every event.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite {
    mod chats;
    mod conformance;
    mod control;
    mod scenarios;
    mod streaming;
    mod subagent;
    mod support;
}
