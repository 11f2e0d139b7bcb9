//! `hearth providers list`: the model providers Hearth found — from `config.toml`, the
//! environment, a local Ollama — each with the base URL its requests go to and why that
//! one, the default model and where its key comes from (never the key).

use std::process::ExitCode;

use crate::toolbox::{json_line, write_out};
use hearth_app::App;
use hearth_app::harnesses;

/// `hearth providers` commands.
#[derive(Debug, clap::Subcommand)]
pub enum ProvidersCommand {
    /// The providers found: id, API, base URL (and why it is that one), model, key.
    List {
        /// One JSON object per provider (camelCase, as `provider/list`).
        #[arg(long)]
        json: bool,
    },
}

/// Runs `hearth providers …`.
pub async fn providers(app: &App, command: ProvidersCommand) -> anyhow::Result<ExitCode> {
    let ProvidersCommand::List { json } = command;
    let discovery = harnesses::discover(app, true).await;
    if json {
        for provider in &discovery.providers {
            json_line(&serde_json::json!({
                "id": provider.id,
                "protocol": provider.protocol.to_string(),
                "baseUrl": provider.base_url(),
                "baseUrlSource": provider.base_url_source.to_string(),
                "defaultModel": provider.default_model,
                "models": provider.models,
                "source": provider.source.to_string(),
                "key": provider.key.to_string(),
                "default": discovery.default_provider.as_deref() == Some(provider.id.as_str()),
            }))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if discovery.is_empty() {
        let mut text = String::from(
            "no model provider found: `hearth run` answers with the demo; see `hearth doctor`\n",
        );
        for problem in &discovery.problems {
            text.push_str(&format!("! {problem}\n"));
        }
        write_out(&text)?;
        return Ok(ExitCode::SUCCESS);
    }
    write_out(&format!("providers (* = default):\n{}", discovery.render()))?;
    Ok(ExitCode::SUCCESS)
}
