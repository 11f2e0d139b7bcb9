//! `hearth acp`: Hearth's native agent for editors that speak the Agent Client Protocol,
//! on stdin/stdout. The host is built as `hearth app-server --stdio` builds it (same
//! store, tools and harnesses), with sessions recorded as made through `acp`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use hearth_core::HarnessId;

use hearth_app::App;

/// `hearth acp` arguments.
#[derive(Debug, clap::Args)]
pub struct AcpArgs {
    /// The provider new sessions use (default: `[defaults] provider`, else the first
    /// model provider found).
    #[arg(long, value_name = "NAME")]
    provider: Option<String>,
    /// Replay scenario file for the `replay` provider (default: the built-in demo).
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
}

/// Runs `hearth acp` until the editor closes stdin.
pub async fn acp(app: &App, args: AcpArgs) -> anyhow::Result<ExitCode> {
    // The MCP servers the editor passes with each session, offered in that session only.
    let mcp = hearth_mcp_client::SessionMcpServers::new(hearth_app::tools::fetch_policy(app));
    // The sessions whose files the native agent reads through the editor (its buffers).
    let files = hearth_projects::ClientFiles::new();
    let (backend, gate) = hearth_app::backend::backend_and_gate(
        app,
        args.scenario,
        "acp",
        Some(mcp.clone()),
        Some(files.clone()),
    )
    .await?;
    let provider = match args.provider {
        Some(name) => HarnessId::parse(&name)?,
        None => backend
            .default_provider
            .clone()
            .context("no provider to answer with: configure one (`hearth doctor` shows how)")?,
    };
    // The provider's configured models, the default first.
    let mut models = Vec::new();
    if let Some(configured) = app.config.providers.get(provider.as_str()) {
        models.extend(configured.default_model.iter().cloned());
        for model in &configured.models {
            if !models.contains(model) {
                models.push(model.clone());
            }
        }
    }
    let host = backend.host.clone();
    let services = hearth_acp_server::Services {
        host: host.clone(),
        gate,
        provider,
        models,
        mcp,
        files,
    };
    let served = hearth_acp_server::serve(services, hearth_acp_server::stdio()).await;
    // Waits for every write of the sessions served, retried as needed.
    host.shutdown().await;
    served.map_err(|error| anyhow::anyhow!("serving ACP on stdin/stdout: {error}"))?;
    Ok(ExitCode::SUCCESS)
}
