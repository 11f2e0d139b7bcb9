//! Importing the agents' own stores: each external agent's store located from the
//! environment Hearth starts that agent with, imported into Hearth's store.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;

use hearth_history::{Agent, AgentReport, ImportOptions, ImportSource};

use crate::App;

/// The record of earlier imports, in the data directory.
const RECORD: &str = "history-imports.json";

/// How often `hearth serve` imports again.
pub const IMPORT_INTERVAL: std::time::Duration = std::time::Duration::from_secs(10 * 60);

/// The environment an agent gets from Hearth (as its process would).
fn agent_env(spec: &hearth_harness_acp::AgentSpec) -> BTreeMap<OsString, OsString> {
    hearth_process::ChildEnv::minimal()
        .pass(spec.pass_env.iter().cloned())
        .set(spec.env.iter().cloned())
        .resolve()
}

/// The stores to import: one per agent Hearth knows whose store it reads (`only`: that
/// agent's), where that agent keeps it. Agents reading one store (both Claude adapters)
/// share it: the first is the provider of its sessions, the others its peers.
pub fn import_sources(app: &App, only: Option<Agent>) -> Vec<ImportSource> {
    let (agents, _) = crate::harnesses::all_external_agents(app);
    let mut sources: Vec<ImportSource> = Vec::new();
    for configured in agents {
        let spec = &configured.spec;
        let known = Agent::from_id(spec.id.as_str()).or_else(|| {
            configured
                .preset
                .and_then(|preset| Agent::from_id(preset.id))
        });
        let Some(agent) = known.filter(|agent| only.is_none_or(|only| only == *agent)) else {
            continue;
        };
        let env = agent_env(spec);
        let lookup = |name: &str| {
            env.get(&OsString::from(name))
                .map(|value| value.to_string_lossy().into_owned())
        };
        let Some(location) = hearth_history::locate(agent, &lookup) else {
            continue;
        };
        match sources
            .iter_mut()
            .find(|source| source.location == location)
        {
            Some(source) => source.peers.push(spec.id.clone()),
            None => sources.push(ImportSource {
                location,
                provider: spec.id.clone(),
                peers: Vec::new(),
            }),
        }
    }
    sources
}

/// Imports the agents' stores (`only`: one agent's) into Hearth's store; a report per
/// store.
pub async fn import(app: &App, only: Option<Agent>) -> anyhow::Result<Vec<AgentReport>> {
    let store = app.open_store().await?;
    let options = ImportOptions {
        sources: import_sources(app, only),
        record: record_file(app),
    };
    let reports = hearth_history::import(
        store.as_ref(),
        &hearth_harness_acp::ImportedConversations,
        &options,
    )
    .await?;
    Ok(reports)
}

/// The record of earlier imports.
pub fn record_file(app: &App) -> PathBuf {
    app.paths.home.join(RECORD)
}

/// Imports now and then every [`IMPORT_INTERVAL`], for as long as the task runs: what
/// fails is logged, never fatal.
pub async fn import_in_background(app: App) {
    loop {
        match import(&app, None).await {
            Ok(reports) => {
                for report in &reports {
                    tracing::info!(
                        agent = %report.agent,
                        store = %report.store.display(),
                        found = report.found,
                        imported = report.imported,
                        updated = report.updated,
                        skipped = report.skipped,
                        errors = report.errors.len(),
                        "imported the agent's own history"
                    );
                    for error in &report.errors {
                        tracing::warn!(agent = %report.agent, %error, "could not import part of the agent's own history");
                    }
                }
            }
            Err(error) => tracing::warn!(%error, "could not import the agents' own history"),
        }
        tokio::time::sleep(IMPORT_INTERVAL).await;
    }
}
