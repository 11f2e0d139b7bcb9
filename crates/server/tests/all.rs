//! Integration tests of the server, in process: a real host on a temporary database, a
//! fake harness the tests drive, the real router on a free loopback port, and the
//! protocol client.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite {
    mod audit;
    mod calendar;
    mod connections;
    mod export;
    mod fanout;
    mod login;
    mod mcp;
    mod mcp_users;
    mod methods;
    mod oidc;
    mod pages;
    mod proposal_watch;
    mod provider_setup;
    mod queued_attachments;
    mod rename;
    mod rpc;
    mod stdio;
    mod support;
    mod trash;
    mod user_providers;
    mod users;
}
