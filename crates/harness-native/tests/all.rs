//! Integration tests of hearth-harness-native: the agent driven through the `Harness` trait (with a
//! sink that records every event) and through the real host, against the mock model
//! server.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite {
    mod abort;
    mod anthropic;
    mod chats;
    mod compaction;
    mod conformance;
    mod permissions;
    mod proposals;
    mod subagents;
    mod support;
    mod tool_loop;
}
