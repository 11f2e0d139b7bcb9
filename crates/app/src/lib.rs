//! Hearth assembled once: what every command, the server, `hearth acp`, tests and
//! benchmarks build Hearth from.
//!
//! Owns:
//! - [`App`]: the data directory (made private on first use), the configuration, the
//!   store (one handle per process, opened on first use), the project scopes, the
//!   message limits and where untrusted documents are converted;
//! - [`tools`]: the tool registry and its approval gate, the toolbox Hearth's own agents
//!   get (behind the data-flow guard) and the toolbox lent to other agents over MCP;
//! - [`harnesses`]: which harnesses exist — the demo, Hearth's own agent for every model
//!   provider found, every external agent — and their registration with a host;
//! - [`backend`]: the host and everything around it for a server or an editor;
//! - [`history`]: importing the agents' own stores (`hearth history import`, and in
//!   the background of `hearth serve`);
//! - [`turn`]: one turn followed the same way in this process or through a running
//!   server — its envelopes, missed text, permission questions and end.
//!
//! It does not parse command lines or print: the `hearth` binary does.

mod app;
pub mod backend;
pub mod harnesses;
pub mod history;
pub mod remote_hearth;
mod shared_context;
pub mod team;
pub mod tools;
mod trash;
pub mod turn;

pub use app::{App, Notices};
