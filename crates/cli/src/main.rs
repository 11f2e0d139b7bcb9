//! `hearth`: the one binary. Parses the command line, opens the data directory and runs
//! the command; errors end as one line on stderr and a non-zero exit, except a closed
//! stdout (`| head -1`), which ends quietly with status 0.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod acp_agent;
mod agents;
mod attach;
mod audit;
mod calendar;
mod chat;
mod chat_help;
mod context;
mod decisions;
mod doctor;
mod drive;
mod export;
mod highlight;
mod history;
mod interrupts;
mod keyboard;
mod log_format;
mod markdown;
mod mcp_servers;
mod names;
mod offered;
mod permissions;
mod printer;
mod projects;
mod proposals;
mod providers;
mod remote;
mod render;
mod resume;
mod run;
mod search;
mod serve;
mod sessions;
mod shown;
mod sign_in;
mod style;
mod toolbox;
mod trash;
mod users;

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
    /// Use the Hearth server at this URL (default: the running `hearth serve` of the data
    /// directory, if any, else run in this process).
    #[arg(
        long,
        global = true,
        value_name = "URL",
        env = "HEARTH_SERVER",
        conflicts_with = "local"
    )]
    server: Option<String>,
    /// Run in this process even when a server is running.
    #[arg(long, global = true)]
    local: bool,
    /// Colours, and answers rendered from Markdown: on a terminal unless NO_COLOR is set
    /// (auto), always, or never.
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "WHEN",
        default_value = "auto"
    )]
    color: style::ColourChoice,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Send one prompt and stream the answer to stdout.
    Run(run::RunArgs),
    /// Chat in the terminal: answers stream, Ctrl-C stops one, /fork, /model, /mode, /new, /quit.
    Chat(chat::ChatArgs),
    /// Pick one of the newest sessions (title, folder, agent, last message) and chat on.
    Resume(resume::ResumeArgs),
    /// Find the turns of every session that hold the words.
    Search(search::SearchArgs),
    /// Check every model provider: latency, or the exact error and what to fix.
    Doctor(doctor::DoctorArgs),
    /// List, show, delete and fork sessions.
    #[command(subcommand)]
    Sessions(sessions::SessionsCommand),
    /// The agents' own history: import the sessions Codex, Claude Code, Gemini CLI, OpenCode
    /// and GitHub Copilot keep in their own stores.
    #[command(subcommand)]
    History(history::HistoryCommand),
    /// List and show the chats of a session.
    #[command(subcommand)]
    Chats(sessions::ChatsCommand),
    /// Projects: folders with instructions and context sources, each with its own sessions.
    #[command(subcommand)]
    Projects(projects::ProjectsCommand),
    /// The context cache of projects' sources: status, retry, clear, gc.
    #[command(subcommand)]
    Context(context::ContextCommand),
    /// Review the changes agents proposed: list, show (with the diff), approve, reject.
    #[command(subcommand)]
    Proposals(proposals::ProposalsCommand),
    /// The model providers found: base URL (and why), default model, key.
    #[command(subcommand)]
    Providers(providers::ProvidersCommand),
    /// External agents (Claude, Codex, Gemini CLI, OpenCode, GitHub Copilot, …): installed,
    /// version, abilities; sign in and out.
    #[command(subcommand)]
    Agents(agents::AgentsCommand),
    /// Answer external agents' permission requests waiting in `hearth serve`.
    #[command(subcommand)]
    Permissions(permissions::PermissionsCommand),
    /// Read, verify and export the audit log of tool calls and decisions.
    #[command(subcommand)]
    Audit(audit::AuditCommand),
    /// Write a session as Markdown or JSON Lines, or everything as one archive (--all).
    Export(export::ExportArgs),
    /// Read an archive from `hearth export` into this data directory (ids kept; what is
    /// already here is skipped).
    Import(export::ImportArgs),
    /// Deleted sessions and projects: list, restore, empty.
    #[command(subcommand)]
    Trash(trash::TrashCommand),
    /// A team server's users: add them (printing their API token), tokens, teams, and
    /// roles on calendars and projects.
    #[command(subcommand)]
    Users(users::UsersCommand),
    /// Calendars: list, events, add, import, export.
    #[command(subcommand)]
    Calendar(calendar::CalendarCommand),
    /// The tools agents may call: list them, or try one (writes only stage proposals).
    #[command(subcommand)]
    Tools(toolbox::ToolsCommand),
    /// Serve Agent Home (/), the JSON-RPC protocol (WebSocket /rpc) and MCP (/mcp) on 127.0.0.1.
    Serve(serve::ServeArgs),
    /// Print a one-time link that logs a browser into the running server's Agent Home
    /// (--revoke: log every browser out).
    Login(serve::LoginArgs),
    /// Speak the JSON-RPC protocol on stdin/stdout (JSON Lines), for editors.
    AppServer(serve::AppServerArgs),
    /// Lend Hearth's tools to an MCP client on stdin/stdout (writes only stage proposals).
    Mcp(serve::McpArgs),
    /// Serve Hearth's agent to an editor over the Agent Client Protocol on stdin/stdout.
    Acp(acp_agent::AcpArgs),
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let asked = std::env::var_os("HEARTH_LOG").is_some();
    let filter = tracing_subscriber::EnvFilter::try_from_env("HEARTH_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(shown::LogWriter)
        .with_target(false)
        .with_ansi(colour_on_stderr());
    // At a terminal, without -v or HEARTH_LOG, the log reads like Hearth's other notes.
    if verbose == 0 && !asked && std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        builder
            .event_format(log_format::Short {
                colour: colour_on_stderr(),
            })
            .init();
    } else {
        builder.init();
    }
}

/// Whether stderr may carry colours (see [`style::on_stderr`]).
pub(crate) fn colour_on_stderr() -> bool {
    style::on_stderr()
}

/// Runs an agent under Hearth's supervisor (`hearth __supervise-agent …`, started by
/// Hearth itself, never by a user).
fn supervise(arguments: Vec<std::ffi::OsString>) -> ExitCode {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(hearth_harness_acp::supervise::supervise(arguments)),
        Err(error) => {
            report(&anyhow::anyhow!(
                "cannot start the agent supervisor: {error}"
            ));
            ExitCode::FAILURE
        }
    }
}

/// The work Hearth runs in a child of its own binary under limits
/// (`hearth __isolated-job <job> …`, started by Hearth itself): converting an untrusted
/// document or web page.
const ISOLATED_JOBS: &[(&str, hearth_process::JobFn)] = &[
    (
        hearth_projects::convert::DOCUMENT_JOB,
        hearth_projects::convert::document_job,
    ),
    (hearth_fetch::PAGE_JOB, hearth_fetch::page_job),
];

fn main() -> ExitCode {
    let mut arguments = std::env::args_os();
    match arguments.nth(1) {
        Some(first) if first == hearth_harness_acp::supervise::SUBCOMMAND => {
            return supervise(arguments.collect());
        }
        Some(first) if first == hearth_process::ISOLATED_JOB_SUBCOMMAND => {
            return hearth_process::job_main(arguments.collect(), ISOLATED_JOBS);
        }
        _ => {}
    }
    let cli = Cli::parse();
    style::choose(cli.color);
    init_logging(cli.verbose);
    remote::choose(match (cli.server.clone(), cli.local) {
        (Some(url), _) => remote::ServerChoice::Url(url),
        (None, true) => remote::ServerChoice::Local,
        (None, false) => remote::ServerChoice::Auto,
    });
    // Servers use every core; one-shot commands need only one thread, and so does
    // `hearth acp`, which serves one editor.
    let mut builder = match cli.command {
        Command::Serve(_) | Command::AppServer(_) | Command::Mcp(_) => {
            tokio::runtime::Builder::new_multi_thread()
        }
        _ => tokio::runtime::Builder::new_current_thread(),
    };
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            report(&anyhow::anyhow!("cannot start the async runtime: {error}"));
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async move {
        let mut app = hearth_app::App::load(cli.home.as_deref(), cli.config.as_deref())?;
        if matches!(
            cli.command,
            Command::Serve(_) | Command::AppServer(_) | Command::Mcp(_) | Command::Acp(_)
        ) {
            app.notices = hearth_app::Notices::Log;
        }
        app.prepare_home()?;
        let result = dispatch(&app, cli.command).await;
        app.close_store().await;
        result
    });
    match result {
        Ok(code) => code,
        // Whoever read stdout has gone (`hearth sessions list | head -1`): nothing failed
        // that the user needs to hear of.
        Err(error) if reader_gone(&error) => ExitCode::SUCCESS,
        Err(error) => {
            report(&error);
            ExitCode::FAILURE
        }
    }
}

/// Runs the command asked for, in the prepared app.
async fn dispatch(app: &hearth_app::App, command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Run(args) => run::run(app, args).await,
        Command::Chat(args) => chat::chat(app, args).await,
        Command::Resume(args) => resume::resume(app, args).await,
        Command::Search(args) => search::search(app, args).await,
        Command::Doctor(args) => doctor::doctor(app, args).await,
        Command::Sessions(command) => sessions::sessions(app, command).await,
        Command::Chats(command) => sessions::chats(app, command).await,
        Command::History(command) => history::history(app, command).await,
        Command::Projects(command) => projects::projects(app, command).await,
        Command::Context(command) => context::context(app, command).await,
        Command::Proposals(command) => proposals::proposals(app, command).await,
        Command::Providers(command) => providers::providers(app, command).await,
        Command::Agents(command) => agents::agents(app, command).await,
        Command::Permissions(command) => permissions::permissions(app, command).await,
        Command::Audit(command) => audit::audit(app, command).await,
        Command::Export(args) => export::export(app, args).await,
        Command::Import(args) => export::import(app, args).await,
        Command::Trash(command) => trash::trash(app, command).await,
        Command::Users(command) => users::users(app, command).await,
        Command::Calendar(command) => calendar::calendar(app, command).await,
        Command::Tools(command) => toolbox::tools(app, command).await,
        Command::Serve(args) => serve::serve(app, args).await,
        Command::Login(args) => serve::login(app, args).await,
        Command::AppServer(args) => serve::app_server(app, args).await,
        Command::Mcp(args) => serve::mcp(app, args).await,
        Command::Acp(args) => acp_agent::acp(app, args).await,
    }
}

/// Whether an error comes from writing to a pipe whose reader closed it.
fn reader_gone(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Prints an error as one line (credentials of URLs redacted, controls escaped).
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
    eprintln!("hearth: error: {}", shown::message(&message));
}
