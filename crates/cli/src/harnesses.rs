//! The harnesses this binary offers. This is the only place concrete harnesses are
//! registered with a host: the replay harness (the offline demo) and Hearth's own agent
//! for every model provider found (`config.toml`, the environment, a local Ollama).

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;

use futures::FutureExt;
use hearth_agent::{AgentSettings, NativeAgent};
use hearth_config::ProviderKind;
use hearth_core::{Agent, ProviderId, Toolbox};
use hearth_llm::{Discovery, DiscoveryOptions, Environment, discover_providers};
use hearth_replay::ReplayAgent;

use crate::app::App;

/// The replay harness's provider id.
pub const REPLAY: &str = "replay";

/// Whether Hearth's agents title a chat after its first turn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Titles {
    /// One short extra model call after a chat's first turn.
    #[default]
    Generate,
    /// None (one-shot runs: the host titles the chat from its prompt).
    Skip,
}

/// Choices from the command line that shape the harnesses.
#[derive(Debug, Default)]
pub struct HarnessOptions {
    /// A replay scenario file instead of the built-in demo.
    pub scenario: Option<PathBuf>,
    /// The model providers found; when `None`, those in `config.toml` and the
    /// environment (without asking the network for a local Ollama).
    pub discovery: Option<Discovery>,
    /// Whether chats get generated titles.
    pub titles: Titles,
}

/// The tools Hearth's own agents may call, with the approval gate behind them.
fn toolbox(app: &App) -> anyhow::Result<Arc<dyn Toolbox>> {
    crate::toolbox::agent_toolbox(app)
}

/// Builds every available harness: the replay harness and one native agent per model
/// provider.
pub fn build(app: &App, options: &HarnessOptions) -> anyhow::Result<Vec<Arc<dyn Agent>>> {
    let replay = ReplayAgent::from_env(options.scenario.as_deref())?;
    let mut agents: Vec<Arc<dyn Agent>> = vec![Arc::new(replay)];
    let discovery = match &options.discovery {
        Some(discovery) => Cow::Borrowed(discovery),
        None => Cow::Owned(configured_providers(app)),
    };
    if discovery.providers.is_empty() {
        return Ok(agents);
    }
    let toolbox = toolbox(app)?;
    let settings =
        AgentSettings::from_config(&app.config).with_titles(options.titles == Titles::Generate);
    for provider in &discovery.providers {
        if let Err(error) = ProviderId::parse(&provider.id) {
            tracing::warn!(
                "the model provider `{}` in config.toml cannot be used: {error}; rename its [providers.{}] section",
                provider.id,
                provider.id
            );
            continue;
        }
        if provider.id == REPLAY {
            tracing::warn!(
                "the model provider `{REPLAY}` in config.toml is hidden by the built-in demo; give it another id"
            );
            continue;
        }
        match NativeAgent::from_provider(provider, Arc::clone(&toolbox), settings.clone()) {
            Ok(agent) => agents.push(Arc::new(agent)),
            // Not fatal: other providers and the demo still work; `hearth doctor` and
            // `hearth run --provider` say what is wrong with this one.
            Err(error) => tracing::debug!("{error}"),
        }
    }
    Ok(agents)
}

/// The configuration as provider discovery reads it: `[defaults] provider` is left out
/// when it names a harness that is not a model provider (the demo, an ACP agent), so it
/// is not reported as a missing model provider.
fn discovery_config(app: &App) -> Cow<'_, hearth_config::Config> {
    match app.config.defaults.provider.as_deref() {
        Some(id) if !is_model_provider(app, id) && !id.is_empty() => {
            let mut config = app.config.clone();
            config.defaults.provider = None;
            Cow::Owned(config)
        }
        _ => Cow::Borrowed(&app.config),
    }
}

/// Whether an id can name a model provider (not the demo, not an ACP agent).
fn is_model_provider(app: &App, id: &str) -> bool {
    id != REPLAY
        && app
            .config
            .providers
            .get(id)
            .is_none_or(|provider| provider.kind != Some(ProviderKind::Acp))
}

/// The model providers in `config.toml` and the environment, without any network access.
fn configured_providers(app: &App) -> Discovery {
    let options = DiscoveryOptions {
        detect_ollama: false,
        ..DiscoveryOptions::default()
    };
    // Without Ollama detection, discovery never waits on anything.
    discover_providers(&discovery_config(app), &Environment::process(), &options)
        .now_or_never()
        .unwrap_or_else(|| {
            tracing::warn!("provider discovery did not finish at once; no model providers used");
            Discovery::default()
        })
}

/// Every model provider: `config.toml`, the environment, and (when `detect_ollama`) a
/// local Ollama that answers.
pub async fn discover(app: &App, detect_ollama: bool) -> Discovery {
    let options = DiscoveryOptions {
        detect_ollama,
        ..DiscoveryOptions::default()
    };
    discover_providers(&discovery_config(app), &Environment::process(), &options).await
}

/// The provider used when none is named: `[defaults] provider`, else the first model
/// provider found, else the offline demo.
pub fn default_provider(app: &App, discovery: &Discovery) -> anyhow::Result<ProviderId> {
    let configured = app.config.defaults.provider.as_deref();
    let id = match configured {
        Some(id) if !is_model_provider(app, id) || discovery.get(id).is_some() => id,
        _ => discovery
            .default_provider
            .as_deref()
            .or(configured)
            .unwrap_or(REPLAY),
    };
    Ok(ProviderId::parse(id)?)
}

/// Whether looking for a local Ollama can matter: no provider is named (on the command
/// line or as the configured default), or the one named is `ollama`.
pub fn ollama_may_matter(app: &App, named: Option<&str>) -> bool {
    match named.or(app.config.defaults.provider.as_deref()) {
        None => true,
        Some(id) => id == "ollama",
    }
}
