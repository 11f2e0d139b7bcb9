//! Which model providers are available: `config.toml`, then the environment
//! (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`,
//! `OLLAMA_HOST`), then a local Ollama. Keys are read here and kept in memory only.

mod ollama;
mod resolve;

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hearth_config::Config;

use crate::anthropic::AnthropicClient;
use crate::client::{ClientOptions, ModelClient, Protocol};
use crate::error::{LlmError, Result};
use crate::openai::OpenAiClient;
use crate::window::ContextWindows;

pub use ollama::OLLAMA_DEFAULT_ADDRESS;
use resolve::{apply_defaults, detect_ollama, from_config, from_environment};

/// Where a provider's settings came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProviderSource {
    /// A `[providers.<id>]` section of `config.toml`.
    ConfigFile,
    /// Environment variables.
    Environment {
        /// The variables that defined it.
        variables: Vec<String>,
    },
    /// A local Ollama that answered.
    DetectedOllama {
        /// Its address.
        address: String,
    },
}

impl fmt::Display for ProviderSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ConfigFile => f.write_str("config.toml"),
            Self::Environment { variables } => write!(f, "environment ({})", variables.join(", ")),
            Self::DetectedOllama { address } => write!(f, "Ollama detected at {address}"),
        }
    }
}

/// Where a provider's base URL came from: what `doctor` and the provider listings say
/// beside the URL, so a user sees which host their requests go to and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BaseUrlSource {
    /// `base_url` in its `config.toml` section.
    ConfigFile,
    /// The protocol's standard variable (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`).
    Environment {
        /// The variable.
        variable: String,
    },
    /// The official endpoint: no `base_url`, and the standard variable is not set.
    Official {
        /// The standard variable that would have changed it.
        unset: String,
    },
    /// The address a local server was detected at.
    Detected,
}

impl fmt::Display for BaseUrlSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ConfigFile => f.write_str("base_url in config.toml"),
            Self::Environment { variable } => write!(f, "from {variable}"),
            Self::Official { unset } => {
                write!(f, "official endpoint: no base_url and {unset} not set")
            }
            Self::Detected => f.write_str("detected"),
        }
    }
}

/// Whether a provider has its key (never the key itself).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyStatus {
    /// A key was found; `from` says where (`OPENAI_API_KEY`, `config.toml api_key`).
    Found {
        /// Its origin.
        from: String,
    },
    /// The provider needs a key and none was found in `expected`.
    Missing {
        /// The variable to set.
        expected: String,
    },
    /// The server needs no key (local servers).
    NotNeeded,
}

impl fmt::Display for KeyStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Found { from } => write!(f, "key from {from}"),
            Self::Missing { expected } => write!(f, "no key (set {expected})"),
            Self::NotNeeded => f.write_str("no key needed"),
        }
    }
}

/// A provider ready to build a client from.
#[derive(Clone, Debug)]
pub struct ResolvedProvider {
    /// `openai`, `anthropic`, `ollama`, or the config id.
    pub id: String,
    /// The API it speaks.
    pub protocol: Protocol,
    /// The model used when none is chosen.
    pub default_model: Option<String>,
    /// Models it is known to offer (from config or detection).
    pub models: Vec<String>,
    /// Where it came from.
    pub source: ProviderSource,
    /// Where its base URL came from.
    pub base_url_source: BaseUrlSource,
    /// Whether its key was found.
    pub key: KeyStatus,
    /// Client settings (base URL, key, retries, timeouts).
    pub options: ClientOptions,
    /// Its models' context windows (from config; the default for the rest).
    pub context_windows: ContextWindows,
}

impl ResolvedProvider {
    /// The API base URL.
    pub fn base_url(&self) -> &str {
        self.options.base_url.as_str()
    }

    /// A client for this provider.
    pub fn client(&self) -> Result<Arc<dyn ModelClient>> {
        self.client_with(self.options.clone())
    }

    /// A client with adjusted settings (e.g. shorter timeouts for a check).
    pub fn client_with(&self, options: ClientOptions) -> Result<Arc<dyn ModelClient>> {
        if let KeyStatus::Missing { expected } = &self.key {
            return Err(LlmError::MissingApiKey {
                provider: self.id.clone(),
                variable: expected.clone(),
            });
        }
        Ok(match self.protocol {
            Protocol::OpenAiChat => Arc::new(OpenAiClient::new(options)?),
            Protocol::AnthropicMessages => Arc::new(AnthropicClient::new(options)?),
        })
    }

    /// One line: `openai  openai  https://api.openai.com/v1 (official endpoint: …)  model
    /// gpt-4.1-mini  from environment (...)  key from OPENAI_API_KEY`.
    pub fn summary(&self) -> String {
        format!(
            "{}  {}  {} ({})  model {}  from {}  {}",
            self.id,
            self.protocol,
            self.base_url(),
            self.base_url_source,
            self.default_model.as_deref().unwrap_or("(none)"),
            self.source,
            self.key
        )
    }
}

/// The process environment, or a fixed set of variables (tests). Values never appear in
/// `Debug`.
#[derive(Clone, Default)]
pub struct Environment {
    fixed: Option<BTreeMap<String, String>>,
}

impl Environment {
    /// The process environment.
    pub fn process() -> Self {
        Self { fixed: None }
    }

    /// A fixed set of variables.
    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Self {
            fixed: Some(
                pairs
                    .into_iter()
                    .map(|(k, v)| (k.into(), v.into()))
                    .collect(),
            ),
        }
    }

    /// A variable's value, when set and not blank.
    pub fn get(&self, name: &str) -> Option<String> {
        let value = match &self.fixed {
            Some(fixed) => fixed.get(name).cloned(),
            None => std::env::var(name).ok(),
        };
        value.filter(|value| !value.trim().is_empty())
    }
}

impl fmt::Debug for Environment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.fixed {
            Some(fixed) => f
                .debug_tuple("Environment")
                .field(&fixed.keys().collect::<Vec<_>>())
                .finish(),
            None => f.write_str("Environment(process)"),
        }
    }
}

/// How to look for providers.
#[derive(Clone, Debug)]
pub struct DiscoveryOptions {
    /// Whether to ask 127.0.0.1:11434 (or `OLLAMA_HOST`) for a local Ollama.
    pub detect_ollama: bool,
    /// Where Ollama is asked when `OLLAMA_HOST` is unset.
    pub ollama_address: SocketAddr,
    /// How long the question may take.
    pub probe_timeout: Duration,
}

impl Default for DiscoveryOptions {
    fn default() -> Self {
        Self {
            detect_ollama: true,
            ollama_address: OLLAMA_DEFAULT_ADDRESS,
            probe_timeout: Duration::from_millis(300),
        }
    }
}

/// The providers found, problems with the configuration, and the default.
#[derive(Clone, Debug, Default)]
pub struct Discovery {
    /// Providers in order: config, then environment, then Ollama.
    pub providers: Vec<ResolvedProvider>,
    /// What was wrong with the configuration (each names the provider and the fix).
    pub problems: Vec<String>,
    /// The id of the default provider (`[defaults] provider`, else the first).
    pub default_provider: Option<String>,
}

impl Discovery {
    /// Whether no provider at all was found.
    pub fn is_empty(&self) -> bool {
        self.providers.is_empty()
    }

    /// The provider with this id.
    pub fn get(&self, id: &str) -> Option<&ResolvedProvider> {
        self.providers.iter().find(|provider| provider.id == id)
    }

    /// The default provider.
    pub fn default_choice(&self) -> Option<&ResolvedProvider> {
        self.default_provider.as_deref().and_then(|id| self.get(id))
    }

    /// The provider named by `id`, or the default one.
    pub fn select(&self, id: Option<&str>) -> Result<&ResolvedProvider> {
        let available = || {
            self.providers
                .iter()
                .map(|provider| provider.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match id {
            Some(id) => self.get(id).ok_or_else(|| {
                LlmError::InvalidRequest(if self.is_empty() {
                    format!("there is no model provider `{id}`: no provider is set up")
                } else {
                    format!(
                        "there is no model provider `{id}`; available: {}",
                        available()
                    )
                })
            }),
            None => self
                .default_choice()
                .ok_or_else(|| LlmError::InvalidRequest("no model provider is set up".to_owned())),
        }
    }

    /// One line per provider, for listings.
    pub fn render(&self) -> String {
        let mut text = String::new();
        for provider in &self.providers {
            let marker = if self.default_provider.as_deref() == Some(provider.id.as_str()) {
                "* "
            } else {
                "  "
            };
            text.push_str(marker);
            text.push_str(&provider.summary());
            text.push('\n');
        }
        for problem in &self.problems {
            text.push_str("! ");
            text.push_str(problem);
            text.push('\n');
        }
        text
    }
}

/// Finds every provider: those in `config`, those the environment defines, and a local
/// Ollama (asked only on loopback, for at most `probe_timeout`).
pub async fn discover_providers(
    config: &Config,
    env: &Environment,
    options: &DiscoveryOptions,
) -> Discovery {
    let mut discovery = Discovery::default();
    for (id, provider) in &config.providers {
        match from_config(id, provider, env) {
            Ok(Some(resolved)) => discovery.providers.push(resolved),
            Ok(None) => {}
            Err(problem) => discovery.problems.push(problem),
        }
    }
    for protocol in [Protocol::OpenAiChat, Protocol::AnthropicMessages] {
        let id = protocol.to_string();
        if discovery.get(&id).is_none() {
            match from_environment(protocol, env) {
                Ok(Some(resolved)) => discovery.providers.push(resolved),
                Ok(None) => {}
                Err(problem) => discovery.problems.push(problem),
            }
        }
    }
    if options.detect_ollama && discovery.get("ollama").is_none() {
        match detect_ollama(&discovery, env, options).await {
            Ok(Some(resolved)) => discovery.providers.push(resolved),
            Ok(None) => {}
            Err(problem) => discovery.problems.push(problem),
        }
    }
    apply_defaults(&mut discovery, config);
    discovery
}

#[cfg(test)]
mod tests;
