//! Hearth's orchestrator. It owns the session registry (provider, provenance, scope,
//! tombstones), each session's chat catalog, the in-memory state tree with a synchronous
//! peek and an async resolve, active-turn tracking, lazy restore, idle eviction,
//! disposal order, external discovery, and the fan-out of numbered action envelopes.
//!
//! It routes and records; it does not know any concrete harness (harnesses are handed
//! in as [`hearth_core::Agent`] objects and gated by their capabilities) and it has no
//! transport (servers and the CLI sit on top of it).

mod chats;
mod error;
mod events;
mod host;
mod sessions;
mod state;
mod writer;

pub use error::{HostError, HostResult};
pub use host::{Host, HostConfig, Resumed, Subscription};
pub use sessions::NewSessionRequest;
