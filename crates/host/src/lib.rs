//! Hearth's orchestrator. It owns the session registry (provider, provenance, scope,
//! tombstones), each session's chat catalog, the in-memory state tree with a synchronous
//! peek and an async resolve, active-turn tracking, lazy restore, idle eviction,
//! disposal order, external discovery, and the fan-out of numbered action envelopes.
//!
//! What a harness streams into a running turn is kept within the configured output
//! limits ([`HostConfig::output_limits`]): every signal passes the turn's
//! [`TurnBudget`](hearth_core::TurnBudget) before it is shown or stored, and costs time
//! in its own size only, however much the turn holds.
//!
//! It routes and records; it does not know any concrete harness (harnesses are handed
//! in as [`hearth_core::Harness`] objects and gated by their capabilities) and it has no
//! transport (servers and the CLI sit on top of it).
//!
//! What it records is retried when the store fails for a moment, and what the store still
//! refuses is kept in memory and reported ([`Host::unsaved`]). A turn runs only while the
//! host holds its chat's lease in the store, so two processes never answer in one chat at
//! once, and a chat another process wrote is read again before this host answers in it.
//!
//! Session and chat URIs are never overloaded: an operation on a session does not
//! accept a chat URI, and the reverse, at compile time.
//!
//! ```compile_fail
//! # async fn example(host: hearth_host::Host, chat: hearth_core::ChatUri) {
//! host.delete_session(&chat).await; // a chat URI where a session URI is expected
//! # }
//! ```
//!
//! ```compile_fail
//! # async fn example(host: hearth_host::Host, session: hearth_core::SessionUri) {
//! host.dispose_chat(&session).await; // a session URI where a chat URI is expected
//! # }
//! ```
//!
//! ```
//! # async fn example(host: hearth_host::Host, session: hearth_core::SessionUri) {
//! let _ = host.delete_session(&session).await; // the right kind compiles
//! # }
//! ```

mod catch_up;
mod chats;
mod compact;
mod discovery;
mod durability;
mod elsewhere;
mod error;
mod events;
mod harnesses;
mod host;
mod lease;
mod limits;
mod outside;
mod pages;
mod permissions;
mod receiver;
mod rename;
mod sessions;
mod state;
mod trash;
mod turns;
mod writer;

pub use durability::{Unsaved, UnsavedPart};
pub use error::{HostError, HostResult};
pub use host::{Host, HostConfig, Resumed, ScopeSeam, Subscription};
pub use limits::{DEFAULT_ATTACHMENT_BYTES, DEFAULT_PROMPT_BYTES, MessageLimits};
pub use pages::{PageEnd, TurnPage, TurnWindow};
pub use permissions::PendingPermission;
pub use receiver::EnvelopeReceiver;
pub use rename::MAX_TITLE_CHARS;
pub use sessions::NewSessionRequest;
pub use trash::Deleted;
