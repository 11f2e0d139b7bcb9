//! Where Hearth keeps its data and how its `config.toml` reads.
//!
//! Owns the data-directory layout ([`Paths`]) and the configuration schema ([`Config`]):
//! providers, calendars, MCP servers, server and agent settings, defaults. It does not
//! interpret them: each crate takes its section and validates what it means.

mod config;
mod paths;

pub use config::{
    AgentConfig, CalendarConfig, CalendarKind, ClockFormat, Config, ConfigError, Defaults,
    ExternalAgentConfig, LimitsConfig, McpServerConfig, PermissionsSetting, ProviderConfig,
    ProviderKind, ServerConfig,
};
pub use paths::{Paths, PathsError};
