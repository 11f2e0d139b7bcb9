//! `hearth doctor`: finds every model provider and checks that each one answers, printing
//! the latency, or the exact error and what to fix. Exits non-zero when any fails.

use std::io::Write;
use std::process::ExitCode;

use hearth_llm::{CancellationToken, check_provider, check_providers, no_provider_help};

use crate::app::App;
use crate::harnesses;

/// `hearth doctor` arguments.
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// Check only this provider.
    #[arg(long)]
    provider: Option<String>,
}

/// Runs `hearth doctor`.
pub async fn doctor(app: &App, args: DoctorArgs) -> anyhow::Result<ExitCode> {
    let discovery = harnesses::discover(app, true).await;
    let mut out = format!("config: {}\n", app.paths.config_file.display());
    if discovery.is_empty() && discovery.problems.is_empty() {
        out.push('\n');
        out.push_str(&no_provider_help(&app.paths.config_file));
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
    write_out(&out)?;
    Ok(if working == checks.len() && problems == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn write_out(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(())
}
