//! The harnesses this binary offers. This is the only place concrete harnesses are
//! registered with a host: the replay harness (the offline demo), Hearth's own agent
//! for every model provider found (`config.toml`, the environment, a local Ollama), and
//! every external agent (the built-in ones and `[agents.<id>]` of `config.toml`).

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;

use futures::FutureExt;
use hearth_core::{Harness, HarnessId, Toolbox};
use hearth_harness_acp::{AcpHarness, ConfiguredAgent, LentTools, StartProgress};
use hearth_harness_native::{AgentSettings, NativeHarness};
use hearth_harness_replay::ReplayHarness;
use hearth_llm::{Discovery, DiscoveryOptions, Environment, discover_providers};

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
    /// The store external agents record their permission requests, file writes and
    /// commands in (its audit log); `None` records nothing.
    pub store: Option<Arc<dyn hearth_store::Stores>>,
    /// The MCP servers of single sessions the native agent offers in those sessions
    /// (`hearth acp`'s editor-passed servers); `None` when the surface has none.
    pub session_mcp: Option<hearth_mcp_client::SessionMcpServers>,
    /// The sessions whose files the native agent's `file_read` reads through their
    /// client (`hearth acp`'s editor buffers); `None` when the surface has none.
    pub client_files: Option<hearth_projects::ClientFiles>,
    /// Told how starting external agents and opening their sessions goes (a terminal
    /// shows it while it waits).
    pub agent_progress: Option<AgentProgress>,
}

/// What is told how an external agent comes up.
#[derive(Clone)]
pub struct AgentProgress(pub StartProgress);

impl std::fmt::Debug for AgentProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AgentProgress")
    }
}

/// Hearth's MCP server, as lent to external agents: this binary's `mcp --stdio` over the
/// same data directory and configuration.
fn lent_tools(app: &App) -> Option<LentTools> {
    let hearth = std::env::current_exe().ok()?;
    let mut args = vec!["--home".to_owned(), app.paths.home.display().to_string()];
    // A default configuration file that does not exist is not named: a named file must.
    if app.paths.config_file.exists() {
        args.push("--config".to_owned());
        args.push(app.paths.config_file.display().to_string());
    }
    args.push("mcp".to_owned());
    args.push("--stdio".to_owned());
    Some(LentTools {
        command: hearth,
        args,
        env: Vec::new(),
    })
}

/// The external agents: those of `config.toml`, and the built-in ones that are
/// installed. Problems of their configuration come back as messages.
pub fn external_agents(app: &App) -> (Vec<ConfiguredAgent>, Vec<String>) {
    let (agents, problems) = all_external_agents(app);
    let agents = agents
        .into_iter()
        .filter(|agent| {
            agent.installed.is_ok() || app.config.agents.contains_key(agent.spec.id.as_str())
        })
        .collect();
    (agents, problems)
}

/// Every external agent Hearth knows, installed or not.
pub fn all_external_agents(app: &App) -> (Vec<ConfiguredAgent>, Vec<String>) {
    let lent = lent_tools(app);
    hearth_harness_acp::configured_agents(&app.config, &|_| lent.clone(), &|key| {
        std::env::var(key).ok()
    })
}

/// Hearth's tools lent to every external agent's sessions over one loopback HTTP
/// endpoint of this process, started when the first session needs it.
struct LentEndpoint {
    app: App,
    store: Arc<dyn hearth_store::Stores>,
    started: std::sync::OnceLock<Option<hearth_server::LentEndpoint>>,
    stop: tokio_util::sync::CancellationToken,
}

impl LentEndpoint {
    fn endpoint(&self) -> Option<&hearth_server::LentEndpoint> {
        self.started
            .get_or_init(|| {
                let tools = crate::tools::Tools::over(&self.app, Arc::clone(&self.store))
                    .map_err(|error| error.to_string());
                let started = tools.and_then(|tools| {
                    hearth_server::LentEndpoint::start(
                        crate::tools::lent_toolbox(&self.app, &tools),
                        self.stop.clone(),
                    )
                    .map_err(|error| error.to_string())
                });
                match started {
                    Ok(endpoint) => Some(endpoint),
                    Err(error) => {
                        tracing::warn!(%error, "Hearth's tools are lent to each agent session by a process of its own instead");
                        None
                    }
                }
            })
            .as_ref()
    }
}

impl hearth_harness_acp::LentOverHttp for LentEndpoint {
    fn lend(&self, chat: &hearth_core::ChatUri) -> Option<(String, String)> {
        let endpoint = self.endpoint()?;
        match endpoint.token_for(chat) {
            Ok(token) => Some((endpoint.url().to_owned(), token)),
            Err(error) => {
                tracing::warn!(%error, "no token for a chat's lent tools");
                None
            }
        }
    }

    fn revoke(&self, chat: &hearth_core::ChatUri) {
        if let Some(Some(endpoint)) = self.started.get() {
            endpoint.revoke(chat);
        }
    }
}

impl Drop for LentEndpoint {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// The lent-tools endpoint of this process's external agents, over `store`.
fn lent_endpoint(
    app: &App,
    store: Option<&Arc<dyn hearth_store::Stores>>,
) -> Option<Arc<dyn hearth_harness_acp::LentOverHttp>> {
    let store = store?;
    Some(Arc::new(LentEndpoint {
        app: app.clone(),
        store: Arc::clone(store),
        started: std::sync::OnceLock::new(),
        stop: tokio_util::sync::CancellationToken::new(),
    }))
}

/// What external agents run under: the small `hearth-supervise` next to this binary,
/// else this binary's own supervisor (`hearth __supervise-agent`).
fn supervisor() -> Option<std::path::PathBuf> {
    let hearth = std::env::current_exe().ok()?;
    let small = hearth.with_file_name("hearth-supervise");
    Some(if small.is_file() { small } else { hearth })
}

/// A harness for an external agent.
pub fn acp_harness(
    app: &App,
    agent: &ConfiguredAgent,
    store: Option<&Arc<dyn hearth_store::Stores>>,
    progress: Option<&AgentProgress>,
) -> AcpHarness {
    acp_harness_lending(app, agent, store, progress, None)
}

/// [`acp_harness`], lending Hearth's tools over `lent_http` to an agent that takes MCP
/// over HTTP.
fn acp_harness_lending(
    app: &App,
    agent: &ConfiguredAgent,
    store: Option<&Arc<dyn hearth_store::Stores>>,
    progress: Option<&AgentProgress>,
    lent_http: Option<Arc<dyn hearth_harness_acp::LentOverHttp>>,
) -> AcpHarness {
    let section = app.config.agents.get(agent.spec.id.as_str());
    let mut timeouts = hearth_harness_acp::Timeouts::default();
    if let Some(seconds) = section.and_then(|section| section.start_timeout_seconds) {
        timeouts.start = std::time::Duration::from_secs(seconds.max(1));
    }
    let mut live = hearth_harness_acp::LiveLimits::default();
    if let Some(sessions) = section.and_then(|section| section.max_live_sessions) {
        live.max_sessions = sessions.max(1);
    }
    if let Some(minutes) = section.and_then(|section| section.idle_release_minutes) {
        live.idle_release = std::time::Duration::from_secs(minutes.max(1) * 60);
    }
    let options = hearth_harness_acp::AcpOptions {
        data_directory: Some(app.paths.home.clone()),
        supervisor: supervisor(),
        process_directory: std::env::current_dir().ok(),
        audit: store.map(|store| app.audit_log(store.clone())),
        timeouts,
        readable: vec![app.paths.context_cache()],
        output_limits: app.output_limits(),
        progress: progress.map(|progress| progress.0.clone()),
        live,
        lent_http,
    };
    AcpHarness::new(agent.spec.clone(), options)
}

/// The tools Hearth's own agents may call, with the approval gate behind them.
fn toolbox(
    app: &App,
    session_mcp: Option<hearth_mcp_client::SessionMcpServers>,
    client_files: Option<hearth_projects::ClientFiles>,
) -> anyhow::Result<Arc<dyn Toolbox>> {
    crate::tools::agent_toolbox(app, session_mcp, client_files)
}

/// Builds every available harness: the replay harness and one native agent per model
/// provider.
pub fn build(app: &App, options: &HarnessOptions) -> anyhow::Result<Vec<Arc<dyn Harness>>> {
    let mut agents = fixed_harnesses(app, options)?;
    let discovery = match &options.discovery {
        Some(discovery) => Cow::Borrowed(discovery),
        None => Cow::Owned(configured_providers(app)),
    };
    if discovery.providers.is_empty() {
        return Ok(agents);
    }
    NativeAgents::new(app, options)?.add_found(&mut agents, &discovery);
    Ok(agents)
}

/// [`build`] for a server: the harnesses, and the maker of Hearth's own agent for a
/// provider added while it runs (`provider/add`).
pub fn build_for_server(
    app: &App,
    options: &HarnessOptions,
) -> anyhow::Result<(Vec<Arc<dyn Harness>>, NativeAgents)> {
    let mut agents = fixed_harnesses(app, options)?;
    let discovery = match &options.discovery {
        Some(discovery) => Cow::Borrowed(discovery),
        None => Cow::Owned(configured_providers(app)),
    };
    let natives = NativeAgents::new(app, options)?;
    natives.add_found(&mut agents, &discovery);
    Ok((agents, natives))
}

/// The demo and the external agents.
fn fixed_harnesses(app: &App, options: &HarnessOptions) -> anyhow::Result<Vec<Arc<dyn Harness>>> {
    let replay = ReplayHarness::from_env(options.scenario.as_deref())?
        .with_output_limits(app.output_limits());
    let mut agents: Vec<Arc<dyn Harness>> = vec![Arc::new(replay)];
    let (external, problems) = external_agents(app);
    for problem in problems {
        tracing::warn!("{problem}");
    }
    let lent_http = if external.is_empty() {
        None
    } else {
        lent_endpoint(app, options.store.as_ref())
    };
    for agent in &external {
        if agent.spec.id.as_str() == REPLAY {
            tracing::warn!(
                "the agent `{REPLAY}` in config.toml is hidden by the built-in demo; give it another id"
            );
            continue;
        }
        agents.push(Arc::new(acp_harness_lending(
            app,
            agent,
            options.store.as_ref(),
            options.agent_progress.as_ref(),
            lent_http.clone(),
        )));
    }
    Ok(agents)
}

/// Hearth's own agent over model providers: one toolbox and one set of settings for
/// every provider of this process, those found at start and those added while a server
/// runs alike.
#[derive(Clone)]
pub struct NativeAgents {
    app: App,
    toolbox: Arc<dyn Toolbox>,
    settings: AgentSettings,
    /// Where users' own agents record their permission requests and file writes.
    store: Option<Arc<dyn hearth_store::Stores>>,
}

impl NativeAgents {
    /// The toolbox and settings of `app`, shaped by `options`.
    pub fn new(app: &App, options: &HarnessOptions) -> anyhow::Result<Self> {
        Ok(Self {
            app: app.clone(),
            toolbox: toolbox(
                app,
                options.session_mcp.clone(),
                options.client_files.clone(),
            )?,
            settings: AgentSettings::from_config(&app.config)
                .with_titles(options.titles == Titles::Generate)
                .with_output_limits(app.output_limits()),
            store: options.store.clone(),
        })
    }

    /// Adds an agent for every provider found whose id is free (not the demo's, not an
    /// external agent's); the others are logged.
    fn add_found(&self, agents: &mut Vec<Arc<dyn Harness>>, discovery: &Discovery) {
        let taken: Vec<String> = agents
            .iter()
            .map(|agent| agent.descriptor().id.to_string())
            .collect();
        for provider in &discovery.providers {
            if let Err(error) = HarnessId::parse(&provider.id) {
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
            if taken.contains(&provider.id) {
                tracing::warn!(
                    "the model provider `{}` has the id of an external agent, which keeps it; rename one of them",
                    provider.id
                );
                continue;
            }
            match self.agent(provider) {
                Ok(agent) => agents.push(Arc::new(agent)),
                // Not fatal: other providers and the demo still work; `hearth doctor` and
                // `hearth run --provider` say what is wrong with this one.
                Err(error) => tracing::debug!("{error}"),
            }
        }
    }

    /// The agent over one provider.
    fn agent(
        &self,
        provider: &hearth_llm::ResolvedProvider,
    ) -> Result<NativeHarness, hearth_harness_native::Error> {
        NativeHarness::from_provider(provider, Arc::clone(&self.toolbox), self.settings.clone())
    }
}

impl hearth_server::ProviderHarnesses for NativeAgents {
    fn harness(
        &self,
        config: &hearth_config::Config,
        id: &str,
        env: &Environment,
        resolver: Option<Arc<dyn hearth_llm::DnsResolve>>,
    ) -> Result<Arc<dyn Harness>, String> {
        if !is_model_provider(&self.app, id) {
            return Err(format!(
                "`{id}` is the demo's or an external agent's id; a model provider needs another"
            ));
        }
        let mut app = self.app.clone();
        app.config = config.clone();
        let discovery = configured_providers_in(&app, env);
        let Some(provider) = discovery.get(id) else {
            return Err(format!(
                "the provider `{id}` is not found in the configuration: {}",
                discovery.problems.join("; ")
            ));
        };
        let mut provider = provider.clone();
        provider.options.resolver = resolver;
        match self.agent(&provider) {
            Ok(agent) => Ok(Arc::new(agent)),
            Err(error) => Err(error.to_string()),
        }
    }

    fn user_agent(
        &self,
        agent: &str,
        id: &str,
        env: Vec<(String, String)>,
        home: &std::path::Path,
    ) -> Result<Arc<dyn Harness>, String> {
        let (agents, _) = external_agents(&self.app);
        let mut configured = agents
            .into_iter()
            .find(|configured| configured.spec.id.as_str() == agent)
            .ok_or_else(|| format!("`{agent}` is not one of this server's external agents"))?;
        configured.installed.clone()?;
        configured.spec.id = HarnessId::parse(id).map_err(|error| error.to_string())?;
        configured.spec.name = format!("{} (your own sign-in)", configured.spec.name);
        // Nothing of the server's environment but the base variables: the user's own
        // variables, and a home (with its config and data folders) of their own.
        configured.spec.pass_env.clear();
        let folder = |relative: &str| home.join(relative).display().to_string();
        configured.spec.env.extend(
            [
                ("HOME", folder("")),
                ("XDG_CONFIG_HOME", folder(".config")),
                ("XDG_DATA_HOME", folder(".local/share")),
                ("XDG_CACHE_HOME", folder(".cache")),
                ("XDG_STATE_HOME", folder(".local/state")),
            ]
            .map(|(name, value)| (name.to_owned(), value)),
        );
        configured.spec.env.extend(env);
        Ok(Arc::new(acp_harness(
            &self.app,
            &configured,
            self.store.as_ref(),
            None,
        )))
    }
}

/// The configuration as provider discovery reads it: `[defaults] provider` is left out
/// when it names a harness that is not a model provider (the demo, an ACP agent), so it
/// is not reported as a missing model provider.
fn discovery_config(app: &App) -> Cow<'_, hearth_config::Config> {
    match app.config.defaults.provider.as_deref() {
        Some(id) if !id.is_empty() && (!is_model_provider(app, id) || !is_known(app, id)) => {
            let mut config = app.config.clone();
            config.defaults.provider = None;
            Cow::Owned(config)
        }
        _ => Cow::Borrowed(&app.config),
    }
}

/// Whether an id can name a model provider (not the demo, not an external agent).
fn is_model_provider(app: &App, id: &str) -> bool {
    id != REPLAY && !is_external_agent(app, id)
}

/// Whether an id names an external agent (one of `[agents]`, or an installed built-in
/// one).
pub fn is_external_agent(app: &App, id: &str) -> bool {
    app.config.agents.contains_key(id)
        || external_agents(app)
            .0
            .iter()
            .any(|agent| agent.spec.id.as_str() == id)
}

/// The model providers in `config.toml` and the environment, without any network access.
fn configured_providers(app: &App) -> Discovery {
    configured_providers_in(app, &Environment::process())
}

/// The model providers in `config.toml` and `env`, without any network access.
fn configured_providers_in(app: &App, env: &Environment) -> Discovery {
    let options = DiscoveryOptions {
        detect_ollama: false,
        ..DiscoveryOptions::default()
    };
    // Without Ollama detection, discovery never waits on anything.
    discover_providers(&discovery_config(app), env, &options)
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

/// The model providers Hearth has built in (with the environment or a local server).
const BUILT_IN_PROVIDERS: [&str; 4] = ["openai", "anthropic", "ollama", REPLAY];

/// Every id a provider setting may name: the built-in providers, those of
/// `config.toml`, and every external agent Hearth knows.
fn known_ids(app: &App) -> Vec<String> {
    let mut ids: Vec<String> = BUILT_IN_PROVIDERS
        .iter()
        .map(|id| (*id).to_owned())
        .collect();
    ids.extend(app.config.providers.keys().cloned());
    ids.extend(app.config.agents.keys().cloned());
    ids.extend(
        all_external_agents(app)
            .0
            .into_iter()
            .map(|agent| agent.spec.id.to_string()),
    );
    let mut seen = std::collections::BTreeSet::new();
    ids.retain(|id| seen.insert(id.clone()));
    ids
}

/// Whether a provider setting names something Hearth knows.
fn is_known(app: &App, id: &str) -> bool {
    known_ids(app).iter().any(|known| known == id)
}

/// The provider used when none is named: `[defaults] provider`, else the first model
/// provider found, else the offline demo. A `[defaults] provider` that names nothing
/// Hearth knows (a typo) is an error, never a quiet fall back to another provider.
pub fn default_provider(app: &App, discovery: &Discovery) -> anyhow::Result<HarnessId> {
    let configured = app.config.defaults.provider.as_deref();
    if let Some(id) = configured
        && !is_known(app, id)
    {
        anyhow::bail!(
            "[defaults] provider = \"{id}\" in {} names no provider or agent Hearth knows; the known ones are {} (fix the name, or add a [providers.{id}] section)",
            app.paths.config_file.display(),
            known_ids(app).join(", ")
        );
    }
    let id = match configured {
        Some(id) if !is_model_provider(app, id) || discovery.get(id).is_some() => id,
        _ => discovery
            .default_provider
            .as_deref()
            .or(configured)
            .unwrap_or(REPLAY),
    };
    Ok(HarnessId::parse(id)?)
}

/// Whether looking for a local Ollama can matter: no provider is named (on the command
/// line or as the configured default), or the one named is `ollama`.
pub fn ollama_may_matter(app: &App, named: Option<&str>) -> bool {
    match named.or(app.config.defaults.provider.as_deref()) {
        None => true,
        Some(id) => id == "ollama",
    }
}
