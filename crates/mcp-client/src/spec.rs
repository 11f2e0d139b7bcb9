//! A server as configured: how to reach it and what it may do without asking.

use std::collections::BTreeMap;
use std::time::Duration;

use hearth_config::McpServerConfig;

use crate::error::{McpError, Result};

/// How long a tool call may take unless configured.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// How long starting a server and listing its tools may take unless configured.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(20);

/// How Hearth reaches a server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    /// A program speaking MCP on its stdin/stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables set for it.
        env: BTreeMap<String, String>,
        /// Variables of Hearth's environment it gets by name (`NAME` or `PREFIX*`); it
        /// gets no other but the minimal ones (`PATH`, `HOME`, the locale, …).
        pass_env: Vec<String>,
    },
    /// Streamable HTTP.
    Http {
        /// The endpoint.
        url: String,
        /// The environment variable holding the bearer token.
        bearer_token_env: Option<String>,
        /// Headers sent with every request (checked to be valid HTTP).
        headers: BTreeMap<String, String>,
        /// Whether the user marked the server local (loopback and private addresses
        /// allowed).
        local: bool,
    },
}

/// One configured server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerSpec {
    /// The name in `[mcp_servers.<name>]`, the prefix of its tools.
    pub name: String,
    /// How to reach it.
    pub transport: Transport,
    /// Tools (the server's names) that run without asking.
    pub allow: Vec<String>,
    /// Whether the agent uses it.
    pub enabled: bool,
    /// Time limit of one call.
    pub call_timeout: Duration,
    /// Time limit of start and listing.
    pub startup_timeout: Duration,
}

fn valid_server_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 32
        && !name.contains("__")
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
}

/// Why `name: value` cannot be sent as an HTTP header, if it cannot.
pub(crate) fn header_problem(name: &str, value: &str) -> Option<String> {
    if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
        return Some(format!(
            "`{name}` is not an HTTP header name (letters, digits and `-`, e.g. `X-Api-Key`)"
        ));
    }
    if http::HeaderValue::from_str(value).is_err() {
        return Some(format!(
            "the value of header `{name}` is not valid in HTTP (no line breaks or control characters)"
        ));
    }
    None
}

impl ServerSpec {
    /// The server `name` as configured.
    pub fn from_config(name: &str, config: &McpServerConfig) -> Result<Self> {
        let problem = |message: &str| McpError::Config {
            server: name.to_owned(),
            message: message.to_owned(),
        };
        if !valid_server_name(name) {
            return Err(problem(
                "the name must be 1 to 32 letters, digits, `-` or `_`, without `__` (it prefixes the server's tools as `<name>__<tool>`)",
            ));
        }
        let transport = match (&config.command, &config.url) {
            (Some(_), None) if !config.headers.is_empty() => {
                return Err(problem(
                    "`headers` are sent to an HTTP server (`url`); a stdio server (`command`) gets `env` instead",
                ));
            }
            (Some(command), None) if !command.trim().is_empty() => Transport::Stdio {
                command: command.clone(),
                args: config.args.clone(),
                env: config.env.clone(),
                pass_env: config.pass_env.clone(),
            },
            (None, Some(url)) if !url.trim().is_empty() => {
                if let Some(problem) = config
                    .headers
                    .iter()
                    .find_map(|(name, value)| header_problem(name, value))
                {
                    return Err(McpError::Config {
                        server: name.to_owned(),
                        message: problem,
                    });
                }
                Transport::Http {
                    url: url.clone(),
                    bearer_token_env: config.bearer_token_env.clone(),
                    headers: config.headers.clone(),
                    local: config.local,
                }
            }
            (Some(_), Some(_)) => {
                return Err(problem(
                    "set either `command` (stdio) or `url` (streamable HTTP), not both",
                ));
            }
            _ => {
                return Err(problem(
                    "set `command` (a program speaking MCP on stdio) or `url` (a streamable HTTP endpoint)",
                ));
            }
        };
        let seconds = |value: Option<u64>, default: Duration| {
            value
                .filter(|seconds| *seconds > 0)
                .map_or(default, Duration::from_secs)
        };
        Ok(Self {
            name: name.to_owned(),
            transport,
            allow: config.allow.clone(),
            enabled: config.is_enabled(),
            call_timeout: seconds(config.timeout_seconds, DEFAULT_CALL_TIMEOUT),
            startup_timeout: seconds(config.startup_timeout_seconds, DEFAULT_STARTUP_TIMEOUT),
        })
    }

    /// Where the server is, for people: the command line or the URL (its credentials
    /// redacted).
    pub fn location(&self) -> String {
        match &self.transport {
            Transport::Stdio { command, args, .. } => {
                let mut line = command.clone();
                for arg in args {
                    line.push(' ');
                    line.push_str(arg);
                }
                line
            }
            Transport::Http { url, .. } => hearth_core::redact_userinfo(url).into_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_server_is_stdio_or_http_never_both_nor_neither() {
        let stdio = McpServerConfig {
            command: Some("srv".into()),
            timeout_seconds: Some(5),
            ..McpServerConfig::default()
        };
        let spec = ServerSpec::from_config("files", &stdio).unwrap();
        assert_eq!(spec.call_timeout, Duration::from_secs(5));
        assert_eq!(spec.startup_timeout, DEFAULT_STARTUP_TIMEOUT);
        assert!(spec.enabled);
        let both = McpServerConfig {
            url: Some("http://x".into()),
            ..stdio.clone()
        };
        assert!(ServerSpec::from_config("files", &both).is_err());
        assert!(ServerSpec::from_config("files", &McpServerConfig::default()).is_err());
        assert!(ServerSpec::from_config("a__b", &stdio).is_err());
        assert!(ServerSpec::from_config("a.b", &stdio).is_err());
        let with_headers = |name: &str, value: &str| McpServerConfig {
            url: Some("https://mcp.example/mcp".into()),
            headers: BTreeMap::from([(name.to_owned(), value.to_owned())]),
            ..McpServerConfig::default()
        };
        let Transport::Http { headers, .. } =
            ServerSpec::from_config("web", &with_headers("X-Api-Key", "k1"))
                .unwrap()
                .transport
        else {
            panic!("an HTTP server");
        };
        assert_eq!(headers["X-Api-Key"], "k1");
        let bad_name = ServerSpec::from_config("web", &with_headers("X Key", "k1")).unwrap_err();
        assert!(
            bad_name
                .to_string()
                .contains("`X Key` is not an HTTP header name"),
            "{bad_name}"
        );
        assert!(ServerSpec::from_config("web", &with_headers("X-Key", "a\nb")).is_err());
        let stdio_headers = McpServerConfig {
            headers: BTreeMap::from([("X-Key".to_owned(), "v".to_owned())]),
            ..stdio
        };
        assert!(ServerSpec::from_config("files", &stdio_headers).is_err());
    }
}
