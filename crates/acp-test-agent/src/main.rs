//! `hearth-acp-test-agent`: a small, deterministic Agent Client Protocol agent.
//!
//! It speaks ACP v1 as newline-delimited JSON-RPC on stdin/stdout, logs to stderr only,
//! and exits when stdin closes. Hearth's tests and benchmarks drive it: the first line
//! of each prompt selects a behaviour (see [`prompt::COMMANDS`]), plain text is echoed,
//! and sessions persist as JSON files so a second process can list, load, resume and
//! fork them. Environment variables choose capabilities and authentication (see
//! [`config`]).
//!
//! `hearth-acp-test-agent mcp-server` runs a tiny stdio MCP server instead (tools
//! `echo` and `env`), for tests of `/mcp-call`; `hearth-acp-test-agent login` is its
//! terminal sign-in (see [`sign_in`]).
//!
//! What it does not do: think. Every answer is a fixed function of the prompt and the
//! session's state. The crate's README holds the reference table of commands and
//! environment variables.

mod agent;
mod ask;
mod client_calls;
mod commands;
mod config;
mod content;
mod flood;
mod hostile;
mod mcp;
mod output;
mod prompt;
mod server;
mod sessions;
mod sign_in;
mod store;
mod turn;

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tracing_subscriber::EnvFilter;

use crate::agent::{AGENT_NAME, AGENT_VERSION, TestAgent};
use crate::config::{LOG_VAR, Settings};
use crate::output::Output;

/// How long the last answers may take to reach stdout at exit.
const EXIT_FLUSH_LIMIT: Duration = Duration::from_secs(1);
/// How long ending the sessions (killing MCP servers) may take at exit.
const SHUTDOWN_LIMIT: Duration = Duration::from_secs(3);

/// What the process was started as.
enum Mode {
    /// The ACP agent (no arguments).
    Agent,
    /// The test MCP server (`mcp-server`).
    McpServer,
}

#[allow(clippy::print_stderr)]
fn main() {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    if let [word, rest @ ..] = arguments.as_slice()
        && word == sign_in::LOGIN_SUBCOMMAND
    {
        // The terminal sign-in: no runtime, no logs, just the user's terminal.
        std::process::exit(match sign_in::login(rest) {
            Ok(true) => 0,
            Ok(false) => 1,
            Err(error) => {
                eprintln!("{AGENT_NAME} {}: {error:#}", sign_in::LOGIN_SUBCOMMAND);
                2
            }
        });
    }
    let mode = match arguments.as_slice() {
        [] => Mode::Agent,
        [word] if word == "mcp-server" => Mode::McpServer,
        _ => {
            eprintln!("usage: {AGENT_NAME} [mcp-server | login [ARGS…]]");
            std::process::exit(2);
        }
    };
    if matches!(mode, Mode::Agent) {
        eprintln!("{AGENT_NAME} {AGENT_VERSION} pid {}", std::process::id());
    }

    init_logging();
    let outcome = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
        .and_then(|runtime| {
            runtime.block_on(async {
                match mode {
                    Mode::Agent => run_agent().await,
                    Mode::McpServer => mcp::serve_test_server().await,
                }
            })
        });
    // Exit without waiting for threads that may be blocked (a stdout flood, a stdin
    // read): everything that matters was flushed or shut down above.
    match outcome {
        Ok(()) => std::process::exit(0),
        Err(error) => {
            eprintln!("{AGENT_NAME}: {error:#}");
            std::process::exit(1);
        }
    }
}

fn init_logging() {
    let filter = EnvFilter::try_from_env(LOG_VAR)
        .unwrap_or_else(|_| EnvFilter::new("warn,agent_client_protocol=error"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
}

/// Serves ACP until stdin closes, then ends every session.
async fn run_agent() -> anyhow::Result<()> {
    let settings = Settings::from_env()?;
    let output = Output::start().context("starting the stdout writer")?;
    let agent = Arc::new(TestAgent::new(settings, output.clone()));
    let served = server::serve(agent.clone(), output.transport()).await;
    if tokio::time::timeout(SHUTDOWN_LIMIT, agent.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("ending the sessions took too long; exiting anyway");
    }
    agent.settings.state_dir.remove_if_temporary();
    output.flushed(EXIT_FLUSH_LIMIT).await;
    served.context("serving ACP on stdio")
}
