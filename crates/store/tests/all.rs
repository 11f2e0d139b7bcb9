//! Integration tests of hearth-store.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod suite {
    mod archive;
    mod audit;
    mod filesystems;
    mod fixtures;
    mod leases;
    mod open;
    mod postgres;
    mod privacy;
    mod projects;
    mod proposals;
    mod registry;
    mod search;
    mod trash;
    mod turns;
    mod user_credentials;
    mod users;
    mod visibility;
}
