//! Integration tests of hearth-test-support: the real ACP agents, driven by a raw ACP
//! client against the mock model server.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod suite {
    mod model_server_routing;
    mod real_agents;
}
