//! `provider/list` and `provider/test`: the model providers Hearth found, and checks of
//! them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Whether a provider has its API key (never the key itself).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum KeyState {
    /// A key was found.
    Found {
        /// Where (`OPENAI_API_KEY`, `config.toml api_key`).
        from: String,
    },
    /// The provider needs a key and none was found.
    Missing {
        /// The variable to set.
        expected: String,
    },
    /// The server needs no key.
    NotNeeded,
}

/// A model provider.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderInfo {
    /// Provider id.
    pub id: String,
    /// The API it speaks.
    pub protocol: String,
    /// API base URL.
    pub base_url: String,
    /// Why this base URL: `base_url in config.toml`, `from OPENAI_BASE_URL`, `official
    /// endpoint: …`, `detected`.
    #[serde(default)]
    pub base_url_source: String,
    /// The model used when none is chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_model: Option<String>,
    /// Models it is known to offer.
    pub models: Vec<String>,
    /// Where it was found (`config.toml`, the environment, a local Ollama).
    pub source: String,
    /// Whether its key is there.
    pub key: KeyState,
}

/// `provider/list`: the model providers from `config.toml`, the environment and a local
/// Ollama.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderListParams {}

/// What `provider/list` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderListResponse {
    /// The providers.
    pub providers: Vec<ProviderInfo>,
    /// Configured providers that cannot be used, and why.
    pub problems: Vec<String>,
}

/// `provider/test`: asks providers whether they answer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderTestParams {
    /// Only this provider (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
}

/// How one check went.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ProviderTestOutcome {
    /// The provider answered.
    Ok {
        /// How it was asked, in words.
        method: String,
        /// How long the answer took, in milliseconds.
        latency_ms: u64,
        /// Models it offers.
        models: Vec<String>,
        /// Things worth fixing that do not stop it working.
        notes: Vec<String>,
    },
    /// It did not work.
    Failed {
        /// The exact error.
        error: String,
        /// What to do about it.
        fix: String,
    },
}

/// One provider's check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderTestResult {
    /// Provider id.
    pub provider: String,
    /// Its base URL.
    pub base_url: String,
    /// What happened.
    pub outcome: ProviderTestOutcome,
}

/// What `provider/test` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderTestResponse {
    /// One result per provider checked.
    pub results: Vec<ProviderTestResult>,
}

/// The API a provider added from a client speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ProviderKindParam {
    /// An OpenAI-compatible Chat Completions server.
    Openai,
    /// The Anthropic Messages API.
    Anthropic,
}

/// Where an added provider's API key comes from.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ProviderKeyParam {
    /// The key itself: kept in a file of the data directory (mode 0600) that
    /// `config.toml` names, never in `config.toml` itself.
    Pasted {
        /// The key.
        key: String,
    },
    /// The environment variable holding it (in the server's environment).
    Environment {
        /// Its name.
        variable: String,
    },
    /// The server needs no key (a local one).
    None,
}

impl std::fmt::Debug for ProviderKeyParam {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Pasted { .. } => f.write_str("Pasted { key: <redacted> }"),
            Self::Environment { variable } => f
                .debug_struct("Environment")
                .field("variable", variable)
                .finish(),
            Self::None => f.write_str("None"),
        }
    }
}

/// `provider/add`: tests a provider with the same check as `hearth doctor` and, only
/// if it answers, adds it to `config.toml` (comments and other entries kept).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderAddParams {
    /// Its id in `config.toml` (`[providers.<id>]`): letters, digits, `-` and `_`.
    pub id: String,
    /// The API it speaks.
    pub kind: ProviderKindParam,
    /// API base URL (default: the official endpoint of `kind`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The model used when none is chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Its API key.
    pub key: ProviderKeyParam,
}

/// What `provider/add` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ProviderAddResponse {
    /// It answered and was saved.
    Added {
        /// How the check went.
        test: ProviderTestResult,
        /// The provider as `provider/list` now shows it.
        provider: Box<ProviderInfo>,
        /// Whether new chats can use it now; otherwise `hearth serve` must be
        /// restarted first.
        usable_now: bool,
    },
    /// It did not answer: nothing was saved.
    Failed {
        /// How the check went.
        test: ProviderTestResult,
    },
}

/// `provider/remove`: removes a provider that `config.toml` declares (and its key file).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderRemoveParams {
    /// Its id.
    pub id: String,
}

/// What `provider/remove` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderRemoveResponse {
    /// Its id.
    pub id: String,
    /// Whether its key file was deleted too.
    pub key_file_removed: bool,
}

/// `agent/connect`: a team server user's own sign-in for one of the server's external
/// agents, as the variables the agent reads it from (`ANTHROPIC_API_KEY` for Claude
/// Code). The agent then also runs as a harness of theirs (`<user id>_<agent>`), with
/// those variables and a home folder of their own, and never with the server's
/// credentials.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentConnectParams {
    /// The server's external agent (`claude-code`).
    pub agent: String,
    /// Variables to run it with: names of capital letters, digits and `_`.
    pub env: std::collections::BTreeMap<String, String>,
}

impl std::fmt::Debug for AgentConnectParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentConnectParams")
            .field("agent", &self.agent)
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// What `agent/connect` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentConnectResponse {
    /// The user's own harness of the agent.
    pub harness: String,
}

/// `agent/disconnect`: forgets a user's own variables for an agent; their harness of it
/// goes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentDisconnectParams {
    /// The server's external agent.
    pub agent: String,
}

/// What `agent/disconnect` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentDisconnectResponse {
    /// The harness that went.
    pub harness: String,
}
