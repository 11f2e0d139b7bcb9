//! `hearth`: the one binary. Parses the command line, opens the data directory and runs
//! the command; errors end as one line on stderr and a non-zero exit.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod app;
mod harnesses;
mod render;
mod run;
mod sessions;

/// Hearth: a local-first agent host.
#[derive(Debug, Parser)]
#[command(name = "hearth", version, about, long_about = None)]
struct Cli {
    /// Data directory (database, token, caches). Default: $HEARTH_HOME, else the
    /// platform data directory.
    #[arg(long, global = true, value_name = "DIR")]
    home: Option<PathBuf>,
    /// Configuration file. Default: $HEARTH_CONFIG, else config.toml in --home when given,
    /// else the platform config directory.
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    /// More logging on stderr (-v, -vv).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Send one prompt and stream the answer to stdout.
    Run(run::RunArgs),
    /// List, show, delete and fork sessions.
    #[command(subcommand)]
    Sessions(sessions::SessionsCommand),
    /// List and show the chats of a session.
    #[command(subcommand)]
    Chats(sessions::ChatsCommand),
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("HEARTH_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .init();
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            report(&anyhow::anyhow!("cannot start the async runtime: {error}"));
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async move {
        let app = app::App::load(cli.home.as_deref(), cli.config.as_deref())?;
        match cli.command {
            Command::Run(args) => run::run(&app, args).await,
            Command::Sessions(command) => sessions::sessions(&app, command).await,
            Command::Chats(command) => sessions::chats(&app, command).await,
        }
    });
    match result {
        Ok(code) => code,
        Err(error) => {
            report(&error);
            ExitCode::FAILURE
        }
    }
}

/// Prints an error as one line.
#[allow(clippy::print_stderr)]
fn report(error: &anyhow::Error) {
    let mut message = error.to_string();
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !message.contains(&cause) {
            message.push_str(": ");
            message.push_str(&cause);
        }
    }
    eprintln!("hearth: error: {message}");
}
