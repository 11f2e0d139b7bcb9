//! Test support shared by Hearth's crates. Real code, used only from tests and
//! benchmarks: every mock speaks the real wire format, so production code paths are the
//! ones exercised.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::large_enum_variant)]

pub mod conformance;
mod fake_agent;
pub mod hostile;
pub mod model_server;
pub mod oidc;
mod outside;
pub mod postgres;
mod process;
mod python;
pub mod real_agents;
mod test_agent;
mod test_host;

pub use fake_agent::{Call, FakeAgent};
pub use model_server::{
    AnthropicStream, Gate, GeminiStream, MockModelServer, MockResponse, OpenAiStream,
    RecordedRequest, Responder, ResponsesStream, WindowedModel,
};
pub use outside::{OUTSIDE_PORT, OutsideHost};
pub use process::{BoundedChild, BoundedCommand, PROCESS_WAIT};
pub use python::venv_python;
pub use real_agents::{AgentLaunch, ModelTurn, RealAgent, ScriptedModel};
pub use test_agent::acp_test_agent;
pub use test_host::{
    Backend, TestHost, WAIT, current_backend, eventually, next_envelope, on_backend, test_config,
    until_turn_completes,
};
