//! `hearth agents login <id>` and `hearth agents logout <id>`: signing in to an external
//! agent with one of the methods it offers, and out again.
//!
//! A terminal method is the agent's own sign-in: its program runs attached to this
//! terminal (stdin, stdout and stderr inherited), with the environment and directory
//! Hearth starts the agent with, and its exit status is the result. Any other method is
//! ACP `authenticate`, whose answer is reported. Signing out is ACP `logout`, for an
//! agent that offers it.

use std::process::{ExitCode, Stdio};

use anyhow::{Context, bail};
use hearth_app::{App, harnesses};
use hearth_harness_acp::{AcpHarness, SignInMethod, SignInWay};

/// An installed agent's harness, or why there is none.
fn harness_of(app: &App, agent: &str) -> anyhow::Result<AcpHarness> {
    crate::run::agent_provider(app, agent)?;
    let (agents, _) = harnesses::all_external_agents(app);
    let configured = agents
        .into_iter()
        .find(|known| known.spec.id.as_str() == agent)
        .with_context(|| format!("no agent `{agent}`"))?;
    Ok(harnesses::acp_harness(
        app,
        &configured,
        None,
        crate::agents::terminal_progress().as_ref(),
    ))
}

/// `id (name: description)`, one per line, for messages.
fn listed(methods: &[SignInMethod]) -> String {
    methods
        .iter()
        .map(|method| {
            let how = if method.is_terminal() {
                "runs in this terminal"
            } else {
                "the agent signs in itself"
            };
            let described = match &method.description {
                Some(description) => format!("{}: {description}", method.name),
                None => method.name.clone(),
            };
            format!(
                "  {} ({}; {how})",
                method.id,
                hearth_core::escape_controls_inline(&described)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The method to use: the one named; else the only terminal method (the agent's own
/// sign-in); else the only method.
fn choose<'a>(
    agent: &str,
    methods: &'a [SignInMethod],
    named: Option<&str>,
) -> anyhow::Result<&'a SignInMethod> {
    if methods.is_empty() {
        bail!(
            "agent `{agent}` offers no sign-in method: it needs none, or is signed in another way (see its own documentation)"
        );
    }
    if let Some(named) = named {
        return methods
            .iter()
            .find(|method| method.id == named)
            .with_context(|| {
                format!(
                    "agent `{agent}` offers no sign-in method `{named}`; it offers:\n{}",
                    listed(methods)
                )
            });
    }
    let terminal: Vec<&SignInMethod> = methods
        .iter()
        .filter(|method| method.is_terminal())
        .collect();
    match (terminal.as_slice(), methods) {
        ([only], _) => Ok(only),
        ([], [only]) => Ok(only),
        _ => bail!(
            "agent `{agent}` offers several sign-in methods; choose one with `hearth agents login {agent} --method <id>`:\n{}",
            listed(methods)
        ),
    }
}

/// Runs `hearth agents login`.
#[allow(
    clippy::print_stderr,
    reason = "the sign-in talks to the user's terminal"
)]
pub async fn login(app: &App, agent: &str, method: Option<&str>) -> anyhow::Result<ExitCode> {
    let harness = harness_of(app, agent)?;
    let methods = harness.sign_in_methods().await;
    let chosen = match &methods {
        Ok(methods) => choose(agent, methods, method).cloned(),
        Err(error) => Err(anyhow::anyhow!("{error}")),
    };
    let chosen = match chosen {
        Ok(chosen) => chosen,
        Err(error) => {
            harness.stop().await;
            return Err(error);
        }
    };
    match &chosen.way {
        SignInWay::Terminal(command) => {
            // The agent is not needed while its own sign-in runs.
            harness.stop().await;
            eprintln!(
                "hearth: signing in to {agent} with `{}`: running {}",
                chosen.id,
                hearth_core::escape_controls_inline(&command.display())
            );
            // Ctrl-C belongs to the sign-in while it runs: Hearth waits for its end.
            let interrupts =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
                    .context("listening for Ctrl-C")?;
            let status = command
                .command()
                .stdin(Stdio::inherit())
                .stdout(Stdio::inherit())
                .stderr(Stdio::inherit())
                .status()
                .await
                .with_context(|| {
                    format!(
                        "could not run the sign-in of agent `{agent}` (`{}`)",
                        command.program.display()
                    )
                })?;
            drop(interrupts);
            if status.success() {
                eprintln!("hearth: signed in to {agent}");
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!(
                    "hearth: the sign-in of {agent} failed ({status}); run `hearth agents login {agent}` to try again"
                );
                Ok(ExitCode::FAILURE)
            }
        }
        SignInWay::Agent => {
            let answer = harness.authenticate(&chosen.id).await;
            harness.stop().await;
            match answer {
                Ok(()) => {
                    eprintln!(
                        "hearth: {agent} accepted the sign-in with `{}`. If it asks again when Hearth next starts it, set `auth_method = \"{}\"` under [agents.{agent}] in {}",
                        chosen.id,
                        chosen.id,
                        app.paths.config_file.display()
                    );
                    Ok(ExitCode::SUCCESS)
                }
                Err(error) => {
                    eprintln!(
                        "hearth: the sign-in of {agent} with `{}` failed: {error}",
                        chosen.id
                    );
                    Ok(ExitCode::FAILURE)
                }
            }
        }
    }
}

/// Runs `hearth agents logout`.
#[allow(clippy::print_stderr)]
pub async fn logout(app: &App, agent: &str) -> anyhow::Result<ExitCode> {
    let harness = harness_of(app, agent)?;
    let answer = harness.sign_out().await;
    harness.stop().await;
    match answer {
        Ok(()) => {
            eprintln!("hearth: signed out of {agent}");
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            eprintln!("hearth: {error}");
            Ok(ExitCode::FAILURE)
        }
    }
}
