//! JSON Schema checks shared by Hearth's tools and its model clients, with no I/O and no
//! dependency beyond `serde_json`, so the tool registry can check arguments without
//! pulling in HTTP clients.
//!
//! Owns:
//! - [`validate`]: a value against the JSON Schema subset tool parameters use, every
//!   violation with its path, in words a model can act on;
//! - [`schema_problem`]: whether a tool's input schema (say, one an MCP server sent) is
//!   one arguments can be checked against, and if not, why.
//!
//! It does not own tool registration (hearth-tools) or repairing a model's arguments
//! (hearth-llm).

mod usable;
mod validate;

pub use usable::schema_problem;
pub use validate::{SchemaViolation, validate};
