//! The MCP servers Hearth's agent uses (`[mcp_servers.<name>]`): `hearth mcp list`
//! starts each and shows its status and tools; `hearth doctor` reports the same.

use std::process::ExitCode;

use clap::Subcommand;
use hearth_mcp_client::{McpTools, ServerReport, ServerStatus};
use serde_json::json;

use crate::toolbox::{json_line, write_out};
use hearth_app::App;
use hearth_app::tools::fetch_policy;

/// `hearth mcp …` subcommands.
#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Start the configured MCP servers and list their status and tools.
    List {
        /// One JSON object per server.
        #[arg(long)]
        json: bool,
    },
}

/// The configured MCP servers.
pub fn mcp_tools(app: &App) -> McpTools {
    McpTools::from_config(&app.config.mcp_servers, fetch_policy(app))
}

/// Runs a `hearth mcp` subcommand.
pub async fn run(app: &App, command: McpCommand) -> anyhow::Result<ExitCode> {
    match command {
        McpCommand::List { json } => list(app, json).await,
    }
}

async fn list(app: &App, json: bool) -> anyhow::Result<ExitCode> {
    let tools = mcp_tools(app);
    let reports = tools.reports().await;
    tools.shutdown().await;
    if json {
        for report in &reports {
            json_line(&report_json(report))?;
        }
    } else {
        write_out(&render(app, &tools, &reports))?;
    }
    Ok(if healthy(&tools, &reports) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn healthy(tools: &McpTools, reports: &[ServerReport]) -> bool {
    tools.problems().is_empty()
        && reports
            .iter()
            .all(|report| !matches!(report.status, ServerStatus::Failed(_)))
}

fn report_json(report: &ServerReport) -> serde_json::Value {
    json!({
        "name": report.name,
        "location": report.location,
        "status": report.status.label(),
        "stderr": report.stderr,
        "tools": report.tools.iter().map(|tool| json!({
            "name": format!("{}{}{}", report.name, hearth_mcp_client::SEPARATOR, tool.name),
            "readOnly": tool.read_only,
            "allowed": tool.allowed,
            "unavailable": tool.unavailable,
        })).collect::<Vec<_>>(),
    })
}

/// The servers as text: one block per server, its tools below it.
pub fn render(app: &App, tools: &McpTools, reports: &[ServerReport]) -> String {
    let mut out = String::new();
    if reports.is_empty() && tools.problems().is_empty() {
        out.push_str(&format!(
            "no MCP servers are configured; add [mcp_servers.<name>] with `command` or `url` to {}\n",
            app.paths.config_file.display()
        ));
        return out;
    }
    for problem in tools.problems() {
        out.push_str(&format!(
            "! {}\n",
            crate::shown::message(&problem.to_string())
        ));
    }
    for report in reports {
        out.push_str(&format!(
            "{}  {}  ({})\n",
            report.name,
            // A server's own words (its errors) and its URL: escaped, credentials redacted.
            crate::shown::message(&report.status.label()),
            crate::shown::message(&report.location)
        ));
        for tool in &report.tools {
            let how = match (&tool.unavailable, tool.read_only, tool.allowed) {
                (Some(why), _, _) => format!("unavailable: {}", crate::shown::message(why)),
                (None, true, _) => "read-only".to_owned(),
                (None, false, true) => "allowed without asking".to_owned(),
                (None, false, false) => "asks first".to_owned(),
            };
            out.push_str(&format!(
                "  {}{}{}  {how}\n",
                report.name,
                hearth_mcp_client::SEPARATOR,
                hearth_core::escape_controls_inline(&tool.name)
            ));
        }
    }
    out
}

/// The MCP section of `hearth doctor`, and whether every server works.
pub async fn doctor_section(app: &App) -> (String, bool) {
    let tools = mcp_tools(app);
    if tools.is_empty() && tools.problems().is_empty() {
        return (String::new(), true);
    }
    let reports = tools.reports().await;
    tools.shutdown().await;
    let mut out = String::from("\nMCP servers:\n");
    out.push_str(&render(app, &tools, &reports));
    (out, healthy(&tools, &reports))
}
