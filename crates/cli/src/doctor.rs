//! `hearth doctor`: finds every model provider and checks that each one answers, printing
//! the latency, or the exact error and what to fix; reports each calendar as ok or
//! missing (with its path and what to do), and each MCP server with its tools; then starts every installed external agent
//! and reports what it says about itself. Exits non-zero when any fails.

use std::io::Write;
use std::process::ExitCode;

use hearth_llm::{CancellationToken, check_provider, check_providers, no_provider_help};

use crate::agents;
use crate::calendar;
use hearth_app::App;
use hearth_app::harnesses;

/// `hearth doctor` arguments.
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// Check only this provider.
    #[arg(long)]
    provider: Option<String>,
}

/// Runs `hearth doctor`.
pub async fn doctor(app: &App, args: DoctorArgs) -> anyhow::Result<ExitCode> {
    if let Some(id) = args.provider.as_deref()
        && harnesses::is_external_agent(app, id)
    {
        return doctor_agents(app, Some(id), String::new()).await;
    }
    let discovery = harnesses::discover(app, true).await;
    let mut out = format!("config: {}\n", app.paths.config_file.display());
    let installed_agents = harnesses::external_agents(app).0;
    // A check of one provider leaves the calendars out.
    let (calendars, calendars_ok) = match args.provider {
        Some(_) => (String::new(), true),
        None => {
            let (mut text, calendars_ok) = calendar::doctor_section(app).await?;
            let (projects, projects_ok) = crate::projects::doctor_section(app).await?;
            text.push_str(&projects);
            let (mcp, mcp_ok) = crate::mcp_servers::doctor_section(app).await;
            text.push_str(&mcp);
            (text, calendars_ok && projects_ok && mcp_ok)
        }
    };
    if discovery.is_empty() && discovery.problems.is_empty() && installed_agents.is_empty() {
        out.push('\n');
        out.push_str(&no_provider_help(&app.paths.config_file));
        out.push_str(&calendars);
        write_out(&out)?;
        return Ok(ExitCode::FAILURE);
    }
    out.push_str("providers (* = default):\n");
    out.push_str(&discovery.render());
    let checks = match args.provider.as_deref() {
        Some(id) => {
            vec![check_provider(discovery.select(Some(id))?, &CancellationToken::new()).await]
        }
        None => check_providers(&discovery, &CancellationToken::new()).await,
    };
    out.push('\n');
    for check in &checks {
        out.push_str(&check.to_string());
        out.push('\n');
    }
    let working = checks.iter().filter(|check| check.is_ok()).count();
    let problems = discovery.problems.len();
    out.push_str(&format!(
        "\n{working} of {} provider(s) work{}\n",
        checks.len(),
        match problems {
            0 => String::new(),
            1 => "; 1 problem in the configuration (marked !)".to_owned(),
            count => format!("; {count} problems in the configuration (marked !)"),
        }
    ));
    let providers_ok = working == checks.len() && problems == 0;
    out.push_str(&calendars);
    if args.provider.is_some() {
        write_out(&out)?;
        return Ok(if providers_ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    let agents = doctor_agents(app, None, out).await?;
    Ok(if providers_ok && calendars_ok {
        agents
    } else {
        ExitCode::FAILURE
    })
}

/// Starts the installed external agents (or the one named) and reports each.
async fn doctor_agents(app: &App, only: Option<&str>, mut out: String) -> anyhow::Result<ExitCode> {
    let (checks, problems) = agents::check_all(app, agents::Probe::Session).await;
    let checks: Vec<_> = checks
        .into_iter()
        .filter(|check| match only {
            Some(id) => check.agent.spec.id.as_str() == id,
            None => {
                check.agent.installed.is_ok()
                    || app.config.agents.contains_key(check.agent.spec.id.as_str())
            }
        })
        .collect();
    out.push_str("\nexternal agents:\n");
    if checks.is_empty() {
        out.push_str("  none installed (see `hearth agents list` for the ones Hearth knows)\n");
    }
    for check in &checks {
        agents::render(check, &mut out);
    }
    for problem in &problems {
        out.push_str(&format!("! {problem}\n"));
    }
    let failed = checks
        .iter()
        .filter(|check| check.failed() || check.agent.installed.is_err())
        .count();
    out.push_str(&format!(
        "\n{} of {} agent(s) work\n",
        checks.len() - failed,
        checks.len()
    ));
    write_out(&out)?;
    Ok(if failed == 0 && problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Writes the report: what servers, agents and files said is in it, so it is shown
/// escaped and without the credentials of any URL.
fn write_out(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(crate::shown::message(text).as_bytes())?;
    stdout.flush()?;
    Ok(())
}
