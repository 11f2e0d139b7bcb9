//! Turning configuration sections and environment variables into providers.

use std::time::Duration;

use hearth_config::{Config, ProviderConfig, ProviderKind};

use super::{
    BaseUrlSource, Discovery, DiscoveryOptions, Environment, KeyStatus, ProviderSource,
    ResolvedProvider, ollama,
};
use crate::client::{ClientOptions, Protocol, endpoint};
use crate::secret::ApiKey;
use crate::window::ContextWindows;

/// The provider a `[providers.<id>]` section declares, or `None` for a section that
/// declares an external agent rather than a model provider.
pub(super) fn from_config(
    id: &str,
    config: &ProviderConfig,
    env: &Environment,
) -> Result<Option<ResolvedProvider>, String> {
    let Some(protocol) = config_protocol(id, config)? else {
        return Ok(None);
    };
    let (base_url, base_url_source) = config_base_url(config, protocol, env);
    let official = matches!(base_url_source, BaseUrlSource::Official { .. });
    let mut options =
        ClientOptions::new(id, &base_url).map_err(|error| match &base_url_source {
            BaseUrlSource::Environment { variable } => {
                format!("{error}; fix {variable} (provider `{id}` in config.toml has no base_url)")
            }
            _ => format!("{error}; fix [providers.{id}] in config.toml"),
        })?;
    let key = config_key(&mut options, id, config, protocol, env, &base_url_source)?;
    apply_config_options(&mut options, config);
    let default_model = config
        .default_model
        .clone()
        .or_else(|| config.models.first().cloned())
        .or_else(|| official.then(|| builtin_model(protocol).to_owned()));
    Ok(Some(ResolvedProvider {
        id: id.to_owned(),
        protocol,
        default_model,
        models: config.models.clone(),
        source: ProviderSource::ConfigFile,
        base_url_source,
        key,
        options,
        context_windows: ContextWindows {
            provider: config.context_window,
            models: config.context_windows.clone(),
        },
    }))
}

/// The protocol a section's `kind` names; `None` for `kind = "acp"`, an error when the
/// section has no `kind`.
fn config_protocol(id: &str, config: &ProviderConfig) -> Result<Option<Protocol>, String> {
    match config.kind {
        Some(ProviderKind::Openai) => Ok(Some(Protocol::OpenAiChat)),
        Some(ProviderKind::Anthropic) => Ok(Some(Protocol::AnthropicMessages)),
        Some(ProviderKind::Acp) => Ok(None),
        None => Err(format!(
            "provider `{id}` in config.toml has no `kind`: add kind = \"openai\" or kind = \"anthropic\""
        )),
    }
}

/// The section's base URL and where it came from.
///
/// A section without `base_url` takes the protocol's standard variable when it is set
/// (as OpenAI's and Anthropic's SDKs do), else the official endpoint: adding a default
/// model to the configuration never moves the traffic to another host.
fn config_base_url(
    config: &ProviderConfig,
    protocol: Protocol,
    env: &Environment,
) -> (String, BaseUrlSource) {
    let url_variable = protocol.base_url_variable();
    match (&config.base_url, env.get(url_variable)) {
        (Some(url), _) => (url.clone(), BaseUrlSource::ConfigFile),
        (None, Some(url)) => (
            url,
            BaseUrlSource::Environment {
                variable: url_variable.to_owned(),
            },
        ),
        (None, None) => (
            protocol.default_base_url().to_owned(),
            BaseUrlSource::Official {
                unset: url_variable.to_owned(),
            },
        ),
    }
}

/// Sets the section's API key on `options` (inline, from its key file, or from its
/// variable) and says where it was found; a key file that cannot be read is an error.
fn config_key(
    options: &mut ClientOptions,
    id: &str,
    config: &ProviderConfig,
    protocol: Protocol,
    env: &Environment,
    base_url_source: &BaseUrlSource,
) -> Result<KeyStatus, String> {
    if let Some(inline) = config.api_key.as_deref().and_then(ApiKey::new) {
        options.api_key = Some(inline);
        return Ok(KeyStatus::Found {
            from: "config.toml api_key".to_owned(),
        });
    }
    if let Some(path) = &config.api_key_file {
        let text = std::fs::read_to_string(path).map_err(|error| {
            format!(
                "cannot read the key file {} of provider `{id}`: {error}; fix api_key_file in [providers.{id}] of config.toml, or add the provider again",
                path.display()
            )
        })?;
        let key = ApiKey::new(text.trim()).ok_or_else(|| {
            format!(
                "the key file {} of provider `{id}` is empty; put the key in it, or add the provider again",
                path.display()
            )
        })?;
        options.api_key = Some(key);
        return Ok(KeyStatus::Found {
            from: format!("key file {}", path.display()),
        });
    }
    // The standard key variable goes only where the standard variables point (the
    // official endpoint, or the environment's own base URL): a key is never sent to
    // another server unless the configuration names it for that server.
    let paired = !matches!(base_url_source, BaseUrlSource::ConfigFile);
    let variable = config
        .api_key_env
        .clone()
        .or_else(|| paired.then(|| protocol.api_key_variable().to_owned()));
    let official = matches!(base_url_source, BaseUrlSource::Official { .. });
    let required = official || config.api_key_env.is_some();
    Ok(key_from(options, variable.as_deref(), env, required))
}

/// Applies the section's retry, timeout, token and header settings to `options`.
fn apply_config_options(options: &mut ClientOptions, config: &ProviderConfig) {
    if let Some(retries) = config.max_retries {
        options.retry.max_retries = retries;
    }
    if let Some(seconds) = config.connect_timeout_secs {
        options.connect_timeout = Duration::from_secs(seconds.max(1));
    }
    if let Some(seconds) = config.idle_timeout_secs {
        options.idle_timeout = Duration::from_secs(seconds.max(1));
    }
    options.max_tokens = config.max_tokens;
    options.headers = config.headers.clone();
}

pub(super) fn from_environment(
    protocol: Protocol,
    env: &Environment,
) -> Result<Option<ResolvedProvider>, String> {
    let key_variable = protocol.api_key_variable();
    let url_variable = protocol.base_url_variable();
    let base = env.get(url_variable);
    let has_key = env.get(key_variable).is_some();
    if base.is_none() && !has_key {
        return Ok(None);
    }
    let id = protocol.to_string();
    let official = base.is_none();
    let mut options =
        ClientOptions::new(&id, base.as_deref().unwrap_or(protocol.default_base_url()))
            .map_err(|error| format!("{error}; fix {url_variable}"))?;
    let key = key_from(&mut options, Some(key_variable), env, official);
    let variables = [key_variable, url_variable]
        .into_iter()
        .filter(|name| env.get(name).is_some())
        .map(str::to_owned)
        .collect();
    Ok(Some(ResolvedProvider {
        id,
        protocol,
        default_model: official.then(|| builtin_model(protocol).to_owned()),
        models: Vec::new(),
        source: ProviderSource::Environment { variables },
        base_url_source: if official {
            BaseUrlSource::Official {
                unset: url_variable.to_owned(),
            }
        } else {
            BaseUrlSource::Environment {
                variable: url_variable.to_owned(),
            }
        },
        key,
        options,
        context_windows: ContextWindows::default(),
    }))
}

fn key_from(
    options: &mut ClientOptions,
    variable: Option<&str>,
    env: &Environment,
    required: bool,
) -> KeyStatus {
    match variable {
        Some(name) => match env.get(name).and_then(ApiKey::new) {
            Some(key) => {
                options.api_key = Some(key);
                KeyStatus::Found {
                    from: name.to_owned(),
                }
            }
            None if required => KeyStatus::Missing {
                expected: name.to_owned(),
            },
            None => KeyStatus::NotNeeded,
        },
        None => KeyStatus::NotNeeded,
    }
}

pub(super) async fn detect_ollama(
    discovery: &Discovery,
    env: &Environment,
    options: &DiscoveryOptions,
) -> Result<Option<ResolvedProvider>, String> {
    let from_env = env.get("OLLAMA_HOST");
    let root = match &from_env {
        Some(host) => ollama::ollama_root(host).ok_or_else(|| {
            format!("OLLAMA_HOST=`{host}` is not an address: use host:port, e.g. 127.0.0.1:11434")
        })?,
        None => url::Url::parse(&format!("http://{}", options.ollama_address))
            .map_err(|error| error.to_string())?,
    };
    let already_configured = discovery.providers.iter().any(|provider| {
        let url = &provider.options.base_url;
        url.host() == root.host() && url.port_or_known_default() == root.port_or_known_default()
    });
    if already_configured {
        return Ok(None);
    }
    let models = ollama::probe(&root, options.probe_timeout).await;
    if models.is_none() && from_env.is_none() {
        return Ok(None);
    }
    let base_url = endpoint(&root, "v1");
    let options =
        ClientOptions::new("ollama", base_url.as_str()).map_err(|error| error.to_string())?;
    let models = models.unwrap_or_default();
    let source = match from_env {
        Some(_) => ProviderSource::Environment {
            variables: vec!["OLLAMA_HOST".to_owned()],
        },
        None => ProviderSource::DetectedOllama {
            address: root.host_str().map_or_else(String::new, |host| {
                format!("{host}:{}", root.port_or_known_default().unwrap_or(11434))
            }),
        },
    };
    Ok(Some(ResolvedProvider {
        id: "ollama".to_owned(),
        protocol: Protocol::OpenAiChat,
        default_model: models.first().cloned(),
        models,
        source,
        base_url_source: BaseUrlSource::Detected,
        key: KeyStatus::NotNeeded,
        options,
        context_windows: ContextWindows::default(),
    }))
}

/// `[defaults] provider` picks the default (else the first provider); `[defaults] model`
/// becomes the default provider's model.
pub(super) fn apply_defaults(discovery: &mut Discovery, config: &Config) {
    let wanted = config.defaults.provider.as_deref();
    discovery.default_provider = match wanted {
        Some(id) if discovery.get(id).is_some() => Some(id.to_owned()),
        Some(id) => {
            discovery.problems.push(format!(
                "[defaults] provider = \"{id}\" is not an available model provider; using {}",
                discovery
                    .providers
                    .first()
                    .map_or("none", |provider| provider.id.as_str())
            ));
            discovery
                .providers
                .first()
                .map(|provider| provider.id.clone())
        }
        None => discovery
            .providers
            .first()
            .map(|provider| provider.id.clone()),
    };
    if let (Some(model), Some(id)) = (&config.defaults.model, discovery.default_provider.clone())
        && let Some(provider) = discovery
            .providers
            .iter_mut()
            .find(|provider| provider.id == id)
    {
        provider.default_model = Some(model.clone());
    }
}

fn builtin_model(protocol: Protocol) -> &'static str {
    match protocol {
        Protocol::OpenAiChat => "gpt-4.1-mini",
        Protocol::AnthropicMessages => "claude-sonnet-4-5",
    }
}
