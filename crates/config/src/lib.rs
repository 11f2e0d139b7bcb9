//! Where Hearth keeps its data and how its `config.toml` reads.
//!
//! Owns the data-directory layout ([`Paths`]) and the configuration schema ([`Config`]):
//! providers, calendars, MCP servers, server and agent settings, defaults. It does not
//! interpret them: each crate takes its section and validates what it means. It also keeps
//! the data directory private (0700, files 0600): the one home of the helpers that create
//! private files and directories and tighten an existing install.

mod config;
mod context;
mod edit;
mod oidc;
mod paths;
mod private;

pub use config::{
    AgentConfig, CalendarConfig, CalendarKind, ClearPassword, ClockFormat, Config, ConfigError,
    Defaults, ExternalAgentConfig, FetchConfig, HistoryConfig, LimitsConfig, McpServerConfig,
    PermissionsSetting, ProviderConfig, ProviderKind, ServerConfig, StoreConfig,
};
pub use context::{CONTEXT_SHARED_VARIABLE, ContextConfig};
pub use edit::ConfigEdit;
pub use oidc::OidcConfig;
pub use paths::{ConfigOrigin, HomeError, Paths, PathsError};
pub use private::{
    PRIVATE_DIRECTORY_MODE, PRIVATE_FILE_MODE, Tightened, Tightening, create_private_dir,
    make_private, private_file_options, tighten,
};
pub use toml_edit::Value as ConfigValue;
