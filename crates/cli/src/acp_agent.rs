//! `hearth acp`: Hearth's native agent for editors that speak the Agent Client Protocol,
//! on stdin/stdout. The host is built as `hearth app-server --stdio` builds it (same
//! store, tools and harnesses), with sessions recorded as made through `acp`.
//!
//! With `--server URL` (or `HEARTH_SERVER`) nothing is built here: the editor's requests
//! go to that server as the person whose token the command presents (`HEARTH_TOKEN`, a
//! team server user's API token, else the data directory's), so the sessions are kept
//! there and the server's access rules apply to every one of them.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

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
    if let Some(url) = crate::remote::named_server() {
        return acp_through_server(app, args, &url).await;
    }
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
        hearth: Arc::new(hearth_acp_server::LocalHearth {
            host: host.clone(),
            gate,
        }),
        provider,
        models,
        mcp: Some(mcp),
        files: Some(files),
    };
    let served = hearth_acp_server::serve(services, hearth_acp_server::stdio()).await;
    // Waits for every write of the sessions served, retried as needed.
    host.shutdown().await;
    served.map_err(|error| anyhow::anyhow!("serving ACP on stdin/stdout: {error}"))?;
    Ok(ExitCode::SUCCESS)
}

/// `hearth acp` against the server at `url`: sessions of `--provider` (default: the
/// server's default harness), kept on the server.
async fn acp_through_server(app: &App, args: AcpArgs, url: &str) -> anyhow::Result<ExitCode> {
    if args.scenario.is_some() {
        anyhow::bail!(
            "--scenario is for a replay provider run in this process; the server at {url} uses its own"
        );
    }
    let using = || format!("using the Hearth server at {url}");
    let token = crate::remote::client_token(app).with_context(using)?;
    let (remote, info) = hearth_app::remote_hearth::RemoteHearth::connect(url, token)
        .await
        .with_context(using)?;
    let provider = match args
        .provider
        .or(info.default_harness)
        .or(info.default_provider)
    {
        Some(name) => HarnessId::parse(&name)?,
        None => anyhow::bail!(
            "the Hearth server at {url} names no default harness: pass --provider (its harnesses: {})",
            info.harnesses
                .iter()
                .map(|harness| harness.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let services = hearth_acp_server::Services {
        hearth: Arc::new(remote),
        provider,
        models: Vec::new(),
        mcp: None,
        files: None,
    };
    hearth_acp_server::serve(services, hearth_acp_server::stdio())
        .await
        .map_err(|error| anyhow::anyhow!("serving ACP on stdin/stdout: {error}"))?;
    Ok(ExitCode::SUCCESS)
}
