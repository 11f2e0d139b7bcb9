//! `hearth history import`: the sessions the agents keep in their own stores (Codex,
//! Claude Code, Gemini CLI, OpenCode, GitHub Copilot), read without changing them,
//! become external sessions of Hearth — found once, with their turns, new turns added
//! on the next import, a session deleted in Hearth never brought back.

use std::process::ExitCode;

use hearth_app::App;
use hearth_history::{Agent, AgentReport};
use serde_json::json;

use crate::toolbox::{json_line, write_out};

/// `hearth history` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum HistoryCommand {
    /// Import the sessions the agents keep in their own stores (read-only; run again to
    /// add what is new).
    Import(ImportArgs),
}

/// `hearth history import` arguments.
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// Only this agent's store.
    #[arg(long, value_name = "AGENT", value_parser = ["codex", "claude", "gemini", "opencode", "copilot"])]
    agent: Option<String>,
    /// One JSON object per agent store.
    #[arg(long)]
    json: bool,
}

/// Runs `hearth history`.
pub async fn history(app: &App, command: HistoryCommand) -> anyhow::Result<ExitCode> {
    match command {
        HistoryCommand::Import(args) => import(app, args).await,
    }
}

fn report_json(report: &AgentReport) -> serde_json::Value {
    json!({
        "agent": report.agent,
        "store": report.store.display().to_string(),
        "found": report.found,
        "imported": report.imported,
        "updated": report.updated,
        "skipped": report.skipped,
        "errors": report.errors,
    })
}

fn report_text(report: &AgentReport) -> String {
    let mut text = format!(
        "{}: {} found, {} imported, {} updated, {} skipped, {} errors ({})\n",
        report.agent,
        report.found,
        report.imported,
        report.updated,
        report.skipped,
        report.errors.len(),
        report.store.display()
    );
    for error in &report.errors {
        text.push_str(&format!("  error: {error}\n"));
    }
    text
}

async fn import(app: &App, args: ImportArgs) -> anyhow::Result<ExitCode> {
    let only = args.agent.as_deref().and_then(Agent::from_id);
    let reports = hearth_app::history::import(app, only).await?;
    if args.json {
        for report in &reports {
            json_line(&report_json(report))?;
        }
    } else if reports.is_empty() {
        write_out(
            "No agent store to import: no agent Hearth knows keeps its sessions where Hearth can find them.\n",
        )?;
    } else {
        for report in &reports {
            write_out(&report_text(report))?;
        }
    }
    let failed = reports.iter().any(|report| !report.errors.is_empty());
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
