//! `hearth agents list`: every external agent Hearth knows — the built-in ones and those
//! of `config.toml` — whether it is installed, and for those that are, what it says
//! about itself when started: its version, what it can do, how one signs in.
//! `hearth agents login` and `logout` are in [`crate::sign_in`].

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use clap::Subcommand;
use hearth_harness_acp::{AgentStatus, ConfiguredAgent, PermissionMode, StartPhase};
use serde_json::json;

use hearth_app::App;
use hearth_app::harnesses;

use crate::toolbox::write_out;

/// `hearth agents` subcommands.
#[derive(Debug, Subcommand)]
pub enum AgentsCommand {
    /// List the external agents: installed or not, version, abilities, sign-in methods.
    List {
        /// Do not start the agents (faster; no version or abilities).
        #[arg(long)]
        no_start: bool,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Sign in to an agent: runs its own sign-in in this terminal, or asks it to sign in
    /// with the method chosen.
    Login {
        /// The agent (see `hearth agents list`).
        agent: String,
        /// The sign-in method, one of the ids the agent offers (`hearth agents list`
        /// shows them); by default its own terminal sign-in, or its only method.
        #[arg(long)]
        method: Option<String>,
    },
    /// Sign out of an agent (for agents that offer it).
    Logout {
        /// The agent.
        agent: String,
    },
    /// On a team server (`--server URL`, your `HEARTH_TOKEN`): run one of its agents with
    /// your own sign-in: the variables named, with their values from this command's
    /// environment (never its command line), kept sealed for you alone. Your sessions
    /// then use it as your own harness, which `connect` prints.
    Connect {
        /// The server's agent (`claude-code`, …).
        agent: String,
        /// A variable to pass, read from this environment (`ANTHROPIC_API_KEY`);
        /// repeat for more.
        #[arg(long = "pass", value_name = "NAME", required = true)]
        pass: Vec<String>,
    },
    /// On a team server: forget your own sign-in for one of its agents.
    Disconnect {
        /// The server's agent.
        agent: String,
    },
}

/// What checking one agent found.
pub struct AgentCheck {
    /// The agent.
    pub agent: ConfiguredAgent,
    /// Not checked (not installed, or not started on purpose).
    pub status: Option<Result<(AgentStatus, Duration), String>>,
}

impl AgentCheck {
    /// Whether the agent failed when it should work (installed, or configured).
    pub fn failed(&self) -> bool {
        matches!(self.status, Some(Err(_)))
    }
}

/// How long `agents list` and `doctor` wait for one agent to start: one that hangs
/// (usually trying to reach the network) is reported, not waited for a minute.
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// How far a check goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// Installed or not, without starting anything.
    Installed,
    /// Started: what the agent says about itself.
    Start,
    /// Started, and a session opened in a temporary folder and ended again: a sign-in
    /// the agent lacks shows here.
    Session,
}

/// Checks every known agent: installed ones are started (all at once, each given
/// [`PROBE_TIMEOUT`]) and stopped.
pub async fn check_all(app: &App, probe: Probe) -> (Vec<AgentCheck>, Vec<String>) {
    let (agents, problems) = harnesses::all_external_agents(app);
    let checks = futures::future::join_all(agents.into_iter().map(|agent| async move {
        let status = if agent.installed.is_ok() && probe != Probe::Installed {
            let harness = harnesses::acp_harness(app, &agent, None, None);
            let checking = async {
                let checked = harness.check().await?;
                if probe == Probe::Session {
                    let trial = std::env::temp_dir().join(format!(
                        "hearth-doctor-{}-{}",
                        std::process::id(),
                        agent.spec.id
                    ));
                    std::fs::create_dir_all(&trial)
                        .map_err(|error| hearth_harness_acp::Error::Invalid(error.to_string()))?;
                    let tried = harness.try_session(&trial).await;
                    if let Err(error) = std::fs::remove_dir_all(&trial) {
                        tracing::debug!(%error, "could not remove {}", trial.display());
                    }
                    tried.map_err(|error| {
                        hearth_harness_acp::Error::Invalid(format!(
                            "it starts, but opening a session fails: {error} (if it needs a sign-in: `hearth agents login {}`, or its own sign-in)",
                            agent.spec.id
                        ))
                    })?;
                }
                Ok::<_, hearth_harness_acp::Error>(checked)
            };
            let checked = match tokio::time::timeout(PROBE_TIMEOUT, checking).await {
                Ok(checked) => checked.map_err(|error| error.to_string()),
                Err(_) => Err(format!(
                    "it did not finish starting within {} s (an agent that hangs at start-up is usually trying to reach the network; its own log or `{}` run by hand shows why)",
                    PROBE_TIMEOUT.as_secs(),
                    agent.spec.command.display()
                )),
            };
            harness.stop().await;
            Some(checked)
        } else {
            None
        };
        AgentCheck { agent, status }
    }))
    .await;
    (checks, problems)
}

fn yes(flag: bool) -> &'static str {
    if flag { "yes" } else { "no" }
}

/// One agent as text.
pub fn render(check: &AgentCheck, out: &mut String) {
    let spec = &check.agent.spec;
    out.push_str(&format!("{} — {}\n", spec.id, spec.name));
    out.push_str(&format!(
        "  command   {}{}\n",
        spec.command.display(),
        if spec.args.is_empty() {
            String::new()
        } else {
            format!(" {}", spec.args.join(" "))
        }
    ));
    match (&check.agent.installed, &check.status) {
        (Err(missing), _) => out.push_str(&format!("  status    not installed: {missing}\n")),
        (Ok(()), None) => out.push_str("  status    installed (not started)\n"),
        (Ok(()), Some(Err(error))) => out.push_str(&format!(
            "  status    ✗ {}\n",
            crate::shown::message(&error.to_string())
        )),
        (Ok(()), Some(Ok((status, elapsed)))) => render_status(spec, status, *elapsed, out),
    }
    let policy = &spec.policy;
    out.push_str(&format!(
        "  asks      {}{}\n",
        match policy.mode {
            PermissionMode::Ask => "you, for every request",
            PermissionMode::Reject => "nobody: requests are refused",
        },
        if policy.allow_kinds.is_empty() {
            String::new()
        } else {
            format!(
                "; allowed without asking: {}",
                policy
                    .allow_kinds
                    .iter()
                    .map(|kind| kind.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    ));
    out.push_str(&format!(
        "  tools     {}\n",
        if spec.lent_tools.is_some() {
            "Hearth's tools are lent to it (MCP)"
        } else {
            "Hearth's tools are not lent"
        }
    ));
}

/// What a started agent said about itself.
fn render_status(
    spec: &hearth_harness_acp::AgentSpec,
    status: &AgentStatus,
    elapsed: Duration,
    out: &mut String,
) {
    out.push_str(&format!(
        "  status    ok: {} (started in {:.1} s)\n",
        // The agent's own words, escaped.
        hearth_core::escape_controls_inline(
            status.version.as_deref().unwrap_or("no version given")
        ),
        elapsed.as_secs_f64()
    ));
    out.push_str(&format!("  reopen    {}\n", reopen_text(status)));
    out.push_str(&format!(
        "  sessions  load: {}, list: {}, resume: {}, fork: {}\n",
        yes(status.load),
        yes(status.list),
        yes(status.resume),
        yes(status.fork)
    ));
    out.push_str(&format!(
        "  prompts   images: {}, embedded files: {}\n",
        yes(status.images),
        yes(status.embedded_context)
    ));
    out.push_str(&format!(
        "  sign-in   {}\n",
        if status.auth_methods.is_empty() {
            "none offered".to_owned()
        } else {
            format!(
                "{}{}; `hearth agents login {}`{}",
                hearth_core::escape_controls_inline(&status.auth_methods.join(", ")),
                spec.auth_method
                    .as_deref()
                    .map(|method| format!(" (uses `{method}`)"))
                    .unwrap_or_default(),
                spec.id,
                if status.logout {
                    format!(", `hearth agents logout {}`", spec.id)
                } else {
                    String::new()
                }
            )
        }
    ));
}

/// How a chat of the agent goes on after a restart: the way the agent offers, and how
/// the last reopening on this data directory went (every chat goes on either way: when
/// the agent does not reopen its session, a new one gets the chat's transcript).
fn reopen_text(status: &AgentStatus) -> String {
    let offered = match (status.load, status.resume) {
        (true, _) => "session/load",
        (false, true) => "session/resume",
        (false, false) => {
            return "chats continue from Hearth's transcript (the agent cannot reopen its sessions)"
                .to_owned();
        }
    };
    match &status.last_reopen {
        None => format!("with {offered}; else chats continue from Hearth's transcript"),
        Some(last) if last.reopened => format!(
            "with {offered}; last reopening worked ({}); else chats continue from Hearth's transcript",
            last.at.format("%Y-%m-%d %H:%M")
        ),
        Some(last) => format!(
            "with {offered}, but the last reopening failed ({}: {}), so that chat continued from Hearth's transcript",
            last.at.format("%Y-%m-%d %H:%M"),
            hearth_core::escape_controls_inline(last.message.as_deref().unwrap_or("refused"))
        ),
    }
}

fn check_json(check: &AgentCheck) -> serde_json::Value {
    let spec = &check.agent.spec;
    let status = match &check.status {
        Some(Ok((status, elapsed))) => json!({
            "ok": true,
            "version": status.version,
            "startSeconds": elapsed.as_secs_f64(),
            "loadSession": status.load,
            "listSessions": status.list,
            "resumeSession": status.resume,
            "forkSession": status.fork,
            "lastReopen": status.last_reopen,
            "images": status.images,
            "embeddedContext": status.embedded_context,
            "authMethods": status.auth_methods,
            "logout": status.logout,
        }),
        Some(Err(error)) => json!({ "ok": false, "error": error }),
        None => serde_json::Value::Null,
    };
    json!({
        "id": spec.id.as_str(),
        "name": spec.name,
        "command": spec.command.display().to_string(),
        "args": spec.args,
        "installed": check.agent.installed.is_ok(),
        "missing": check.agent.installed.as_ref().err(),
        "status": status,
    })
}

/// Runs `hearth agents …`.
pub async fn agents(app: &App, command: AgentsCommand) -> anyhow::Result<ExitCode> {
    let (no_start, json) = match command {
        AgentsCommand::List { no_start, json } => (no_start, json),
        AgentsCommand::Login { agent, method } => {
            return crate::sign_in::login(app, &agent, method.as_deref()).await;
        }
        AgentsCommand::Logout { agent } => return crate::sign_in::logout(app, &agent).await,
        AgentsCommand::Connect { agent, pass } => {
            let env = passed(&pass)?;
            let remote = on_a_server(app, "connect").await?;
            let harness = crate::remote::connect_agent(&remote, &agent, env).await?;
            write_out(&format!(
                "Connected: your sessions on {agent} run as your own harness {harness} (`hearth --server URL run --provider {harness} …`).\n"
            ))?;
            return Ok(ExitCode::SUCCESS);
        }
        AgentsCommand::Disconnect { agent } => {
            let remote = on_a_server(app, "disconnect").await?;
            let harness = crate::remote::disconnect_agent(&remote, &agent).await?;
            write_out(&format!("Disconnected: {harness} is gone.\n"))?;
            return Ok(ExitCode::SUCCESS);
        }
    };
    let (checks, problems) = check_all(
        app,
        if no_start {
            Probe::Installed
        } else {
            Probe::Start
        },
    )
    .await;
    let mut out = String::new();
    if json {
        for check in &checks {
            out.push_str(&check_json(check).to_string());
            out.push('\n');
        }
    } else {
        for check in &checks {
            render(check, &mut out);
            out.push('\n');
        }
        for problem in &problems {
            out.push_str(&format!("! {problem}\n"));
        }
        out.push_str(&format!(
            "Configure or add agents under [agents.<id>] in {}; run one with `hearth run --agent <id> \"…\"`.\n",
            app.paths.config_file.display()
        ));
    }
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(out.as_bytes())?;
    stdout.flush()?;
    Ok(
        if checks.iter().any(AgentCheck::failed) || !problems.is_empty() {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        },
    )
}

/// Shows on a terminal how an external agent comes up: at once that it starts, then
/// every few seconds what it is still waiting for, so a slow or hanging agent is never
/// silence. `None` when stderr is no terminal.
#[allow(clippy::print_stderr)]
pub fn terminal_progress() -> Option<harnesses::AgentProgress> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let waiting: Arc<Mutex<Option<Waiting>>> = Arc::new(Mutex::new(None));
    let progress: hearth_harness_acp::StartProgress = Arc::new(move |agent, phase| {
        let mut slot = waiting.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(line) = progress_line(agent.as_str(), phase, slot.as_ref()) {
            eprintln!("{line}");
        }
        match phase {
            StartPhase::Starting | StartPhase::OpeningSession => {
                let since = Instant::now();
                let ticker = tokio::runtime::Handle::try_current().ok().map(|runtime| {
                    let agent = agent.to_string();
                    runtime.spawn(async move {
                        let mut every = tokio::time::interval_at(
                            tokio::time::Instant::now() + STILL_WAITING,
                            STILL_WAITING,
                        );
                        loop {
                            every.tick().await;
                            eprintln!(
                                "hearth: still waiting for {agent} to {} ({} s)",
                                waiting_for(phase),
                                since.elapsed().as_secs()
                            );
                        }
                    })
                });
                if let Some(previous) = slot.replace(Waiting { phase, ticker }) {
                    previous.stop();
                }
            }
            StartPhase::Started | StartPhase::SessionOpen | StartPhase::Failed => {
                if let Some(previous) = slot.take() {
                    previous.stop();
                }
            }
        }
    });
    Some(harnesses::AgentProgress(progress))
}

/// How often a terminal is told that an agent is still starting.
const STILL_WAITING: Duration = Duration::from_secs(5);

/// What the terminal is waiting for, and the task that says so now and then.
struct Waiting {
    phase: StartPhase,
    ticker: Option<tokio::task::JoinHandle<()>>,
}

impl Waiting {
    fn stop(self) {
        if let Some(ticker) = self.ticker {
            ticker.abort();
        }
    }
}

fn waiting_for(phase: StartPhase) -> &'static str {
    match phase {
        StartPhase::OpeningSession => "open the session",
        _ => "start",
    }
}

/// The line a phase is shown with, if any: starting is said at once; what follows only
/// when it took long enough to have been waited for.
fn progress_line(agent: &str, phase: StartPhase, waiting: Option<&Waiting>) -> Option<String> {
    match phase {
        StartPhase::Starting => Some(format!("hearth: starting {agent}…")),
        StartPhase::Failed => waiting
            .map(|waiting| format!("hearth: {agent} could not {}", waiting_for(waiting.phase))),
        StartPhase::Started | StartPhase::OpeningSession | StartPhase::SessionOpen => None,
    }
}

/// The variables `names` with their values from this process's environment.
fn passed(names: &[String]) -> anyhow::Result<std::collections::BTreeMap<String, String>> {
    names
        .iter()
        .map(|name| match std::env::var(name) {
            Ok(value) if !value.is_empty() => Ok((name.clone(), value)),
            _ => anyhow::bail!(
                "{name} is not set in this environment: set it (`export {name}=…`) and run the command again; values are never taken from the command line"
            ),
        })
        .collect()
}

/// The team server `hearth agents connect` and `disconnect` speak to.
async fn on_a_server(app: &App, what: &str) -> anyhow::Result<crate::remote::Remote> {
    crate::remote::connect(app).await?.ok_or_else(|| {
        anyhow::anyhow!(
            "`hearth agents {what}` is for a team server's users: name the server with --server URL and your token with HEARTH_TOKEN (on this machine, sign in with `hearth agents login`)"
        )
    })
}
