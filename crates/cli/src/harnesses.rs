//! The harnesses this binary offers. This is the only place concrete harnesses are
//! registered with a host.

use std::path::PathBuf;
use std::sync::Arc;

use hearth_core::{Agent, ProviderId};
use hearth_replay::ReplayAgent;

use crate::app::App;

/// The replay harness's provider id.
pub const REPLAY: &str = "replay";

/// Choices from the command line that shape the harnesses.
#[derive(Debug, Default)]
pub struct HarnessOptions {
    /// A replay scenario file instead of the built-in demo.
    pub scenario: Option<PathBuf>,
}

/// Builds every available harness.
pub fn build(_app: &App, options: &HarnessOptions) -> anyhow::Result<Vec<Arc<dyn Agent>>> {
    let replay = ReplayAgent::from_env(options.scenario.as_deref())?;
    Ok(vec![Arc::new(replay)])
}

/// The provider used when none is named: the configured default, else the demo.
pub fn default_provider(app: &App) -> anyhow::Result<ProviderId> {
    let id = app.config.defaults.provider.as_deref().unwrap_or(REPLAY);
    Ok(ProviderId::parse(id)?)
}
