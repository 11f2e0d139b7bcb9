//! What every command shares: the data directory, the configuration, the store and the
//! host.

use std::path::Path;
use std::sync::Arc;

use hearth_config::{Config, Paths};
use hearth_core::Agent;
use hearth_host::{Host, HostConfig, MessageLimits};
use hearth_store::SqliteStore;

/// The data directory and configuration of this run.
#[derive(Clone)]
pub struct App {
    pub paths: Paths,
    pub config: Config,
    /// The port this process serves on (`hearth serve`), which the fetcher denies.
    pub serving_port: Option<u16>,
}

impl App {
    /// Resolves the data directory and reads the configuration.
    pub fn load(home: Option<&Path>, config: Option<&Path>) -> anyhow::Result<Self> {
        let paths = Paths::resolve(home, config)?;
        let config = Config::load(&paths.config_file)?;
        Ok(Self {
            paths,
            config,
            serving_port: None,
        })
    }

    /// Opens the database (creating it on first use).
    pub async fn open_store(&self) -> anyhow::Result<Arc<SqliteStore>> {
        let store = SqliteStore::open(&self.paths.database()).await?;
        Ok(Arc::new(store))
    }

    /// Starts a host with these harnesses over an open store.
    pub fn start_host(
        &self,
        store: Arc<SqliteStore>,
        agents: Vec<Arc<dyn Agent>>,
        source: &str,
    ) -> Host {
        let config = HostConfig {
            source: source.to_owned(),
            working_directories: std::env::current_dir().into_iter().collect(),
            limits: self.limits(),
            ..HostConfig::default()
        };
        Host::start(store, agents, config)
    }

    /// The largest message accepted, from `[limits]`.
    pub fn limits(&self) -> MessageLimits {
        let defaults = MessageLimits::default();
        MessageLimits {
            prompt_bytes: self
                .config
                .limits
                .prompt_bytes
                .unwrap_or(defaults.prompt_bytes),
            attachment_bytes: self
                .config
                .limits
                .attachment_bytes
                .unwrap_or(defaults.attachment_bytes),
        }
    }
}
