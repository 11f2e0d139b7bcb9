//! The `config.toml` schema.
//!
//! ```toml
//! [defaults]
//! provider = "openai"
//! model = "gpt-4.1-mini"
//! time_zone = "Europe/Berlin"
//! clock = "24h"
//!
//! [providers.openai]
//! kind = "openai"
//! api_key_env = "OPENAI_API_KEY"
//! models = ["gpt-4.1-mini"]
//!
//! [providers.local]
//! kind = "openai"
//! base_url = "http://127.0.0.1:11434/v1"
//!
//! [agents.codex]               # an external agent over the Agent Client Protocol
//! command = "codex-acp"         # optional for the built-in agents found on PATH
//! permissions = "ask"           # or "reject"
//! allow = ["read", "search"]    # tool kinds allowed without asking
//! lend_tools = true             # Hearth's tools as an MCP server of its sessions
//!
//! [calendars.personal]
//! kind = "ics"
//! path = "~/calendars/personal.ics"
//! default = true
//!
//! [calendars.work]
//! kind = "caldav"
//! url = "https://caldav.fastmail.com/dav/calendars/user/me@example.com/work/"
//! username = "me@example.com"
//! password_env = "FASTMAIL_APP_PASSWORD"   # or password_command = ["secret-tool", …]
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use thiserror::Error;

use crate::paths::ConfigOrigin;

/// The configuration file could not be read, understood or written.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// The file (or its folder) cannot be written.
    #[error("cannot write config file {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file exists but cannot be read.
    #[error("cannot read config file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The file was named (`--config`, `HEARTH_CONFIG`) but does not exist.
    #[error(
        "config file {} does not exist (named by --config or HEARTH_CONFIG); check the path, or leave both unset to use the default file",
        path.display()
    )]
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// The file is not valid TOML or does not match the schema.
    #[error("config file {} is invalid: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message, with line and column.
        message: String,
    },
}

/// The whole configuration. Every section is optional.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Defaults for new sessions and the agent's dynamic context.
    #[serde(default)]
    pub defaults: Defaults,
    /// Model providers, by id. (A section of `kind = "acp"` is the old spelling of an
    /// `[agents.<id>]` section: it is read into [`Config::agents`], with a note.)
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderConfig>,
    /// Calendars, by id.
    #[serde(default)]
    pub calendars: BTreeMap<String, CalendarConfig>,
    /// MCP servers whose tools agents may use, by id.
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    /// `hearth serve` settings.
    #[serde(default)]
    pub server: ServerConfig,
    /// Hearth's own agent loop.
    #[serde(default)]
    pub agent: AgentConfig,
    /// External agents over the Agent Client Protocol, by id (the id becomes the
    /// provider id of their sessions).
    #[serde(default)]
    pub agents: BTreeMap<String, ExternalAgentConfig>,
    /// How large a message may be, and how much of an agent's output a turn keeps.
    #[serde(default)]
    pub limits: LimitsConfig,
    /// Where agents' requests may go.
    #[serde(default)]
    pub fetch: FetchConfig,
    /// How long deleted sessions and projects stay restorable.
    #[serde(default)]
    pub history: HistoryConfig,
    /// Where Hearth keeps what it stores (the embedded SQLite database by default).
    #[serde(default)]
    pub store: StoreConfig,
    /// The context cache (a team server's shared store).
    #[serde(default)]
    pub context: crate::context::ContextConfig,
    /// What the file says in an old spelling that Hearth still reads, and how to say it
    /// now: one note each, for the user.
    #[serde(skip)]
    pub deprecations: Vec<String>,
}

/// Where agents' requests may go.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FetchConfig {
    /// Sites a request may go to without asking even after the conversation read private
    /// data: origins (`https://api.example.org`) or hosts (`example.org`, subdomains
    /// included).
    #[serde(default)]
    pub allow: Vec<String>,
}

/// How large a message may be, and how much of an agent's output a turn keeps.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsConfig {
    /// Largest prompt text, in bytes (default 1 MiB).
    pub prompt_bytes: Option<usize>,
    /// Largest attached file, in bytes (default 32 MiB).
    pub attachment_bytes: Option<u64>,
    /// Address space of the child process that converts one document or web page, in
    /// bytes (default 1 GiB): a document that needs more fails alone.
    pub converter_memory_bytes: Option<u64>,
    /// Answer text one turn keeps, in bytes (default 8 MiB); its reasoning is counted
    /// apart, up to the same. Past it the answer is cut, marked, and the rest dropped.
    pub answer_bytes: Option<usize>,
    /// Tool calls one turn keeps (default 5,000).
    pub tool_calls: Option<usize>,
    /// Updates of its tool calls one turn applies (default 100,000); past it only the
    /// update that ends a call passes.
    pub tool_call_updates: Option<usize>,
    /// One piece of a tool call, in bytes: its result, its arguments, its content; and
    /// one plan (default 1 MiB).
    pub tool_result_bytes: Option<usize>,
    /// Everything one turn's tool calls and plans send together, every update counted,
    /// in bytes (default 64 MiB).
    pub tool_output_bytes: Option<usize>,
}

impl Config {
    /// Reads a configuration file; a missing file is the empty configuration.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        Self::load_from(path, ConfigOrigin::Default)
    }

    /// Reads a configuration file chosen as `origin` says: a missing default file is the
    /// empty configuration, a missing file the user named is an error.
    pub fn load_from(path: &Path, origin: ConfigOrigin) -> Result<Self, ConfigError> {
        match fs::read_to_string(path) {
            Ok(text) => Self::parse(&text, path),
            Err(error) if error.kind() == io::ErrorKind::NotFound => match origin {
                ConfigOrigin::Default => Ok(Self::default()),
                ConfigOrigin::Given => Err(ConfigError::Missing {
                    path: path.to_path_buf(),
                }),
            },
            Err(source) => Err(ConfigError::Read {
                path: path.to_path_buf(),
                source,
            }),
        }
    }

    /// Parses configuration text; `path` is only used in messages.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        let mut config: Self = toml::from_str(text).map_err(|error| ConfigError::Parse {
            path: path.to_path_buf(),
            message: error.to_string(),
        })?;
        config.adopt_old_agent_sections();
        Ok(config)
    }

    /// Reads each `[providers.<id>] kind = "acp"` section (the old spelling) as the
    /// `[agents.<id>]` section it means: its command, arguments and variables fill what
    /// an `[agents.<id>]` section of the same id leaves unset. External agents are then
    /// declared in one place only.
    fn adopt_old_agent_sections(&mut self) {
        let old: Vec<String> = self
            .providers
            .iter()
            .filter(|(_, provider)| provider.kind == Some(ProviderKind::Acp))
            .map(|(id, _)| id.clone())
            .collect();
        for id in old {
            let Some(provider) = self.providers.remove(&id) else {
                continue;
            };
            let agent = self.agents.entry(id.clone()).or_default();
            if agent.command.is_none() {
                agent.command = provider.command;
            }
            if agent.args.is_none() {
                agent.args = Some(provider.args);
            }
            for (name, value) in provider.env {
                agent.env.entry(name).or_insert(value);
            }
            self.deprecations.push(format!(
                "[providers.{id}] with kind = \"acp\" is the old way to declare an external agent; Hearth reads it as [agents.{id}] — move its command, args and env there (same keys, without kind)"
            ));
        }
    }
}

/// 12- or 24-hour clock in the agent's dynamic context.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum ClockFormat {
    /// `3:30 PM`.
    #[serde(rename = "12h")]
    Hours12,
    /// `15:30`.
    #[serde(rename = "24h")]
    Hours24,
}

/// Defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    /// Provider id used when none is given.
    pub provider: Option<String>,
    /// Model used when none is given.
    pub model: Option<String>,
    /// IANA time zone of the user (e.g. `Europe/Berlin`); the system's when absent.
    pub time_zone: Option<String>,
    /// 12/24-hour preference.
    pub clock: Option<ClockFormat>,
}

/// What kind of provider a `[providers.<id>]` section describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// An OpenAI-compatible Chat Completions server.
    Openai,
    /// The Anthropic Messages API.
    Anthropic,
    /// An external agent spoken to over the Agent Client Protocol.
    Acp,
}

/// One provider.
#[derive(Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// The kind; required.
    pub kind: Option<ProviderKind>,
    /// API base URL (model providers).
    pub base_url: Option<String>,
    /// Environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// The API key itself (prefer `api_key_env`); never logged or stored.
    pub api_key: Option<String>,
    /// A file holding the API key (as Agent Home's provider setup writes it: in the
    /// data directory, mode 0600); read when the provider is used.
    pub api_key_file: Option<PathBuf>,
    /// Models offered.
    #[serde(default)]
    pub models: Vec<String>,
    /// Model used when none is chosen.
    pub default_model: Option<String>,
    /// Extra HTTP headers sent with every request.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Retries of failed requests (default 2).
    pub max_retries: Option<u32>,
    /// Connect timeout in seconds.
    pub connect_timeout_secs: Option<u64>,
    /// Seconds without a streamed byte before the request is abandoned.
    pub idle_timeout_secs: Option<u64>,
    /// Maximum output tokens per model call.
    pub max_tokens: Option<u32>,
    /// The context window of the provider's models, in tokens (Hearth's agent summarises
    /// older turns before a request would exceed it).
    pub context_window: Option<u32>,
    /// The context windows of single models, in tokens (`{ "llama3" = 8192 }`), over
    /// `context_window`.
    #[serde(default)]
    pub context_windows: BTreeMap<String, u32>,
    /// ACP agent: program to start.
    pub command: Option<String>,
    /// ACP agent: its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// ACP agent: extra environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

impl ProviderConfig {
    /// The API key: the inline value, else the key file, else the named environment
    /// variable.
    pub fn resolve_api_key(&self) -> Option<String> {
        self.api_key
            .clone()
            .filter(|key| !key.is_empty())
            .or_else(|| {
                self.api_key_file
                    .as_deref()
                    .and_then(|path| fs::read_to_string(path).ok())
                    .map(|key| key.trim().to_owned())
                    .filter(|key| !key.is_empty())
            })
            .or_else(|| {
                self.api_key_env
                    .as_deref()
                    .and_then(|name| std::env::var(name).ok())
                    .filter(|key| !key.is_empty())
            })
    }
}

impl fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("api_key_env", &self.api_key_env)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("api_key_file", &self.api_key_file)
            .field("models", &self.models)
            .field("default_model", &self.default_model)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("max_retries", &self.max_retries)
            .field("context_window", &self.context_window)
            .field("context_windows", &self.context_windows)
            .field("command", &self.command)
            .field("args", &self.args)
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// What kind of calendar a `[calendars.<id>]` section describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CalendarKind {
    /// A local iCalendar (.ics) file, read and written.
    Ics,
    /// A folder of Markdown event notes (Full Calendar format).
    Notes,
    /// A read-only iCalendar URL subscription.
    Subscription,
    /// A calendar on a CalDAV server (iCloud, Fastmail, Nextcloud, Radicale), synced
    /// into a local cache; writes go to the server.
    Caldav,
}

/// One calendar.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalendarConfig {
    /// The kind.
    pub kind: CalendarKind,
    /// Display name (the id when absent).
    pub name: Option<String>,
    /// File (ics) or folder (notes).
    pub path: Option<PathBuf>,
    /// Subscription URL, or the CalDAV calendar collection's URL.
    pub url: Option<String>,
    /// CalDAV: the user name.
    pub username: Option<String>,
    /// A password written in clear: refused (the calendar is not used) with a message
    /// saying where it goes instead; its value is never kept.
    #[serde(default)]
    pub password: Option<ClearPassword>,
    /// CalDAV: the environment variable holding the password (an app password).
    pub password_env: Option<String>,
    /// CalDAV: a program and its arguments printing the password, for a system keyring
    /// (`["secret-tool", "lookup", "service", "caldav"]`).
    pub password_command: Option<Vec<String>>,
    /// Display colour (`#rrggbb`), as a CalDAV server reports it or the user picks.
    pub color: Option<String>,
    /// Whether agents may stage writes to it (default: true for ics/notes).
    pub writable: Option<bool>,
    /// The calendar new events go to.
    #[serde(default)]
    pub default: bool,
    /// Time zone for floating times and all-day events.
    pub time_zone: Option<String>,
    /// Subscription and CalDAV: allow a private-network host (cloud metadata stays
    /// denied).
    #[serde(default)]
    pub allow_private_network: bool,
    /// Subscription and CalDAV: minutes between refreshes.
    pub refresh_minutes: Option<u64>,
}

/// The mark of a `password = "…"` key: its value is dropped while the file is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClearPassword;

impl<'de> Deserialize<'de> for ClearPassword {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(deserializer).map(|_| ClearPassword)
    }
}

/// One MCP server.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// Program to start (stdio transport).
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables set for it (it gets no other of Hearth's environment than `PATH`,
    /// `HOME`, the locale and the like, and `pass_env`).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Variables of Hearth's environment it gets by name (`NAME` or `PREFIX*`).
    #[serde(default)]
    pub pass_env: Vec<String>,
    /// Streamable HTTP URL (instead of a command).
    pub url: Option<String>,
    /// Environment variable holding a bearer token sent to the HTTP server.
    pub bearer_token_env: Option<String>,
    /// HTTP headers sent with every request to the HTTP server (name to value).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The user's mark that the HTTP server is on their own machine or network: its URL
    /// skips the guarded fetcher's refusal of loopback and private addresses.
    #[serde(default)]
    pub local: bool,
    /// Tools of this server that run without asking the user (names as the server
    /// lists them, without the `<server>__` prefix).
    #[serde(default)]
    pub allow: Vec<String>,
    /// Whether Hearth's agent uses the server (default true).
    pub enabled: Option<bool>,
    /// Seconds a tool call may take before it fails and the server is restarted on the
    /// next use (default 60).
    pub timeout_seconds: Option<u64>,
    /// Seconds starting the server and listing its tools may take (default 20).
    pub startup_timeout_seconds: Option<u64>,
}

impl McpServerConfig {
    /// Whether Hearth's agent uses the server.
    pub fn is_enabled(&self) -> bool {
        self.enabled.unwrap_or(true)
    }
}

/// Where Hearth keeps what it stores.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    /// A PostgreSQL database (`postgres://user:password@host:5432/hearth`) shared by a
    /// team server's nodes, instead of the data directory's SQLite database. The
    /// `HEARTH_STORE_URL` environment variable and `hearth serve --store` take precedence.
    pub url: Option<String>,
}

/// How long deleted sessions and projects stay restorable.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryConfig {
    /// Days a deleted session or project stays in the trash before it is erased (30 by
    /// default; 0 keeps it until `hearth trash empty`).
    pub trash_days: Option<u32>,
}

impl HistoryConfig {
    /// Days an item stays in the trash; `None`: until the trash is emptied by hand.
    pub fn trash_days(&self) -> Option<u32> {
        match self.trash_days {
            None => Some(30),
            Some(0) => None,
            Some(days) => Some(days),
        }
    }
}

/// `hearth serve` settings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// Port on 127.0.0.1.
    pub port: Option<u16>,
    /// Address to bind (loopback unless `--allow-remote`).
    pub bind: Option<String>,
    /// Days a browser stays logged in to Agent Home (default 30).
    pub login_days: Option<u32>,
    /// Seconds a new connection may take to send its first request's head (default 10).
    pub header_read_timeout_seconds: Option<u64>,
    /// Seconds a kept-alive connection may wait for its next request (default 60).
    pub idle_timeout_seconds: Option<u64>,
    /// HTTP connections held at once (default 4096, within the open-file limit).
    pub max_connections: Option<usize>,
    /// This node's name among a team server's nodes (one PostgreSQL store): what chat
    /// leases name their holder by (default: the machine's name; `HEARTH_NODE` wins).
    /// Nodes on one machine may share it: a node of this machine that stopped is then
    /// seen at once, and its chats answered elsewhere without waiting for its leases.
    pub node: Option<String>,
    /// Seconds a chat's lease lasts unless its node renews it (default 30): how long the
    /// chats a node that died mid-answer was answering wait before another node takes
    /// them over.
    pub lease_seconds: Option<u64>,
    /// A team server with users (`hearth serve --users` too): their API tokens
    /// (`hearth users add`) and web logins are accepted besides the install token, and
    /// each reaches only what is theirs or their teams'.
    pub users: Option<bool>,
    /// OpenID Connect login to Agent Home for a team server's users.
    pub oidc: Option<crate::oidc::OidcConfig>,
    /// Networks (CIDR, e.g. `10.20.0.0/16`) where a team server's users may point their
    /// own model providers besides public addresses (a company's model gateway).
    pub user_provider_networks: Option<Vec<String>>,
}

/// Hearth's own agent loop.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// Model calls per turn before the loop stops (default 25).
    pub step_limit: Option<u32>,
    /// Days until an unanswered proposal expires (default 7).
    pub proposal_expiry_days: Option<u32>,
}

/// Who answers an external agent's permission requests that its `allow` list does not
/// cover.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionsSetting {
    /// The user (the default).
    #[default]
    Ask,
    /// Nobody: every such request is refused.
    Reject,
}

/// One external agent spoken to over the Agent Client Protocol.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalAgentConfig {
    /// Display name.
    pub name: Option<String>,
    /// Program to start (optional for the built-in agents: found on PATH or in npm's
    /// global prefix).
    pub command: Option<String>,
    /// Its arguments (default: the built-in agent's).
    pub args: Option<Vec<String>>,
    /// Variables set for it (it gets no other of Hearth's environment than `PATH`,
    /// `HOME`, the locale and the like, its built-in vendor variables, and `pass_env`).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Variables of Hearth's environment it gets by name (`NAME` or `PREFIX*`).
    #[serde(default)]
    pub pass_env: Vec<String>,
    /// Who answers permission requests not covered by `allow`.
    #[serde(default)]
    pub permissions: PermissionsSetting,
    /// Tool kinds allowed without asking (`read`, `search`, `edit`, `execute`, `fetch`,
    /// `think`, `delete`, `move`, `switch_mode`, `other`).
    #[serde(default)]
    pub allow: Vec<String>,
    /// Whether its sessions get Hearth's tools as an MCP server (default true).
    pub lend_tools: Option<bool>,
    /// The sign-in method to use when the agent asks (one of the ids it offers).
    pub auth_method: Option<String>,
    /// `false` hides a built-in agent.
    pub enabled: Option<bool>,
    /// How long it may take to start (until it answers `initialize`), in seconds
    /// (default 60).
    pub start_timeout_seconds: Option<u64>,
    /// How many of its sessions stay open at most (default 4): the least recently used
    /// one beyond that is closed and reopened when its chat is used again.
    pub max_live_sessions: Option<usize>,
    /// Minutes after which an unused session is closed, and the agent stopped when none
    /// of its sessions is open (default 10).
    pub idle_release_minutes: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn trash_days_default_to_thirty_and_zero_keeps_everything() {
        let read = |text: &str| toml::from_str::<Config>(text).unwrap().history.trash_days();
        assert_eq!(read(""), Some(30));
        assert_eq!(read("[history]\ntrash_days = 7\n"), Some(7));
        assert_eq!(read("[history]\ntrash_days = 0\n"), None);
        assert!(toml::from_str::<Config>("[history]\ntrash_day = 7\n").is_err());
    }

    #[test]
    fn parses_every_section() {
        let text = r#"
            [defaults]
            provider = "local"
            clock = "12h"

            [providers.local]
            kind = "openai"
            base_url = "http://127.0.0.1:11434/v1"
            models = ["llama3.2"]

            [providers.claude]
            kind = "acp"
            command = "claude-code-acp"
            args = ["--verbose"]

            [calendars.home]
            kind = "ics"
            path = "/tmp/home.ics"
            default = true

            [server]
            port = 8421

            [agent]
            step_limit = 10

            [agents.codex]
            allow = ["read", "search"]
            permissions = "reject"
            lend_tools = false
            env = { CODEX_HOME = "/tmp/codex" }

            [agents.mine]
            command = "/opt/my-agent"
            args = ["--acp"]
            auth_method = "api-key"

            [limits]
            answer_bytes = 1048576
            tool_call_updates = 500
        "#;
        let config = Config::parse(text, Path::new("config.toml")).unwrap();
        assert_eq!(config.defaults.clock, Some(ClockFormat::Hours12));
        assert_eq!(config.providers["local"].kind, Some(ProviderKind::Openai));
        // The old spelling of an external agent is read as the agent it declares.
        assert!(!config.providers.contains_key("claude"));
        assert_eq!(
            config.agents["claude"].args,
            Some(vec!["--verbose".to_owned()])
        );
        assert_eq!(
            config.agents["claude"].command.as_deref(),
            Some("claude-code-acp")
        );
        assert_eq!(config.deprecations.len(), 1);
        assert!(
            config.deprecations[0].contains("[agents.claude]"),
            "{:?}",
            config.deprecations
        );
        assert_eq!(config.calendars["home"].kind, CalendarKind::Ics);
        assert_eq!(config.server.port, Some(8421));
        assert_eq!(config.agent.step_limit, Some(10));
        assert_eq!(
            config.agents["codex"],
            ExternalAgentConfig {
                permissions: PermissionsSetting::Reject,
                allow: vec!["read".into(), "search".into()],
                lend_tools: Some(false),
                env: [("CODEX_HOME".to_owned(), "/tmp/codex".to_owned())].into(),
                ..ExternalAgentConfig::default()
            }
        );
        assert_eq!(
            config.agents["mine"].command.as_deref(),
            Some("/opt/my-agent")
        );
        assert_eq!(config.agents["mine"].args, Some(vec!["--acp".to_owned()]));
        assert_eq!(
            config.agents["mine"].auth_method.as_deref(),
            Some("api-key")
        );
        assert_eq!(
            config.limits,
            LimitsConfig {
                answer_bytes: Some(1_048_576),
                tool_call_updates: Some(500),
                ..LimitsConfig::default()
            }
        );
    }

    #[test]
    fn an_old_agent_section_fills_only_what_the_agents_section_leaves_unset() {
        let text = r#"
            [providers.mine]
            kind = "acp"
            command = "/opt/old-agent"
            args = ["--old"]
            env = { A = "old", B = "old" }

            [agents.mine]
            command = "/opt/new-agent"
            env = { A = "new" }
        "#;
        let config = Config::parse(text, Path::new("config.toml")).unwrap();
        let agent = &config.agents["mine"];
        assert_eq!(agent.command.as_deref(), Some("/opt/new-agent"));
        assert_eq!(agent.args, Some(vec!["--old".to_owned()]));
        assert_eq!(agent.env["A"], "new");
        assert_eq!(agent.env["B"], "old");
        assert!(config.providers.is_empty());
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let error = Config::parse(
            "[providers.x]\nkind = \"openai\"\nbase_ulr = \"x\"\n",
            Path::new("/c.toml"),
        )
        .unwrap_err();
        let message = error.to_string();
        assert!(message.contains("/c.toml"), "{message}");
        assert!(message.contains("line 3"), "{message}");
        assert!(message.contains("base_ulr"), "{message}");
    }

    #[test]
    fn missing_file_is_empty_config() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            Config::load(&dir.path().join("none.toml")).unwrap(),
            Config::default()
        );
    }

    #[test]
    fn a_missing_named_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("none.toml");
        let message = Config::load_from(&path, ConfigOrigin::Given)
            .unwrap_err()
            .to_string();
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert!(message.contains("does not exist"), "{message}");
        assert_eq!(
            Config::load_from(&path, ConfigOrigin::Default).unwrap(),
            Config::default()
        );
    }

    #[test]
    fn debug_redacts_the_key() {
        let config = ProviderConfig {
            api_key: Some("sk-secret".into()),
            ..ProviderConfig::default()
        };
        assert!(!format!("{config:?}").contains("sk-secret"));
    }
}
