//! The MCP servers Hearth's agent uses (`[mcp_servers.<name>]`): `hearth mcp list`
//! starts each and shows its status and tools; `hearth doctor` reports the same;
//! `hearth mcp add|remove|get` edit and show their entries in `config.toml` (as a TOML
//! document: the user's comments and other sections stay as they are).

use std::collections::BTreeMap;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use clap::Subcommand;
use hearth_config::{ConfigEdit, ConfigValue, McpServerConfig};
use hearth_mcp_client::{McpTools, ServerReport, ServerSpec, ServerStatus};
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
    /// Add an MCP server to config.toml: a program speaking MCP on stdio, given after
    /// `--` (`hearth mcp add notes -- python3 server.py`), or a streamable HTTP endpoint
    /// (`hearth mcp add docs --url https://mcp.example/mcp`).
    Add(AddArgs),
    /// Remove an MCP server from config.toml.
    Remove {
        /// The server's name.
        name: String,
    },
    /// Show how an MCP server is configured (the values of its variables and headers
    /// hidden: they are in config.toml).
    Get {
        /// The server's name.
        name: String,
        /// One JSON object.
        #[arg(long)]
        json: bool,
    },
}

/// `hearth mcp add` arguments.
#[derive(Debug, clap::Args)]
pub struct AddArgs {
    /// The server's name (1 to 32 letters, digits, `-` or `_`): its tools are offered as
    /// `<name>__<tool>`.
    name: String,
    /// A variable set for a stdio server (repeat for more).
    #[arg(long = "env", value_name = "KEY=VALUE", conflicts_with = "url")]
    env: Vec<String>,
    /// A streamable HTTP endpoint, instead of a command.
    #[arg(long)]
    url: Option<String>,
    /// A header sent with every request to the HTTP server (repeat for more).
    #[arg(long = "header", value_name = "NAME:VALUE", requires = "url")]
    headers: Vec<String>,
    /// The HTTP server is on your own machine or network (its URL may be a loopback or
    /// private address).
    #[arg(long, requires = "url")]
    local: bool,
    /// The program speaking MCP on stdio and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// The configured MCP servers.
pub fn mcp_tools(app: &App) -> McpTools {
    McpTools::from_config(&app.config.mcp_servers, fetch_policy(app))
}

/// Runs a `hearth mcp` subcommand.
pub async fn run(app: &App, command: McpCommand) -> anyhow::Result<ExitCode> {
    match command {
        McpCommand::List { json } => list(app, json).await,
        McpCommand::Add(args) => add(app, args),
        McpCommand::Remove { name } => remove(app, &name),
        McpCommand::Get { name, json } => get(app, &name, json),
    }
}

/// `KEY=VALUE` (or `NAME:VALUE`) split at its first `separator`.
fn pair<'a>(
    text: &'a str,
    separator: char,
    flag: &str,
    form: &str,
) -> anyhow::Result<(&'a str, &'a str)> {
    match text.split_once(separator) {
        Some((key, value)) if !key.trim().is_empty() => Ok((key.trim(), value)),
        _ => bail!(
            "{flag} takes {form}, got `{}`",
            hearth_core::escape_controls_inline(text)
        ),
    }
}

/// The configured names, for errors.
fn configured_names(app: &App) -> String {
    if app.config.mcp_servers.is_empty() {
        "none is configured".to_owned()
    } else {
        let names: Vec<&str> = app.config.mcp_servers.keys().map(String::as_str).collect();
        format!("configured: {}", names.join(", "))
    }
}

/// A config entry's keys and values, in the order they are written.
type Entries = Vec<(&'static str, ConfigValue)>;

/// `hearth mcp add`.
fn add(app: &App, args: AddArgs) -> anyhow::Result<ExitCode> {
    let path = &app.paths.config_file;
    let (config, entries) = match (&args.url, args.command.split_first()) {
        (Some(_), Some(_)) => bail!(
            "give either --url (a streamable HTTP server) or a command after `--` (a stdio server), not both"
        ),
        (None, None) => bail!(
            "say how to reach MCP server `{}`: a command after `--` (hearth mcp add {} -- python3 server.py) or --url URL",
            args.name,
            args.name
        ),
        (None, Some((command, rest))) => stdio_entry(command, rest, &args.env)?,
        (Some(url), None) => http_entry(url, &args.headers, args.local)?,
    };
    // The same checks as when Hearth starts it: the name, the transport, the headers.
    let spec = ServerSpec::from_config(&args.name, &config)
        .map_err(|error| anyhow::anyhow!("{}; nothing was added to {}", error, path.display()))?;
    let mut edit = ConfigEdit::open(path)?;
    if edit.has("mcp_servers", &args.name) {
        let existing = existing_location(app, &args.name);
        bail!(
            "an MCP server named `{}` is already configured in {}{existing}; remove it first with `hearth mcp remove {}`, or choose another name",
            args.name,
            path.display(),
            args.name
        );
    }
    edit.set_table("mcp_servers", &args.name, entries);
    edit.save()
        .with_context(|| format!("adding [mcp_servers.{}] to {}", args.name, path.display()))?;
    write_out(&format!(
        "added MCP server `{}` ({}) to {}; its tools are offered as {}__<tool>; check it with `hearth mcp list`\n",
        spec.name,
        crate::shown::message(&spec.location()),
        path.display(),
        spec.name
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// A stdio server's config and entries: `command` with its arguments and `--env`
/// variables.
fn stdio_entry(
    command: &str,
    rest: &[String],
    variables: &[String],
) -> anyhow::Result<(McpServerConfig, Entries)> {
    let mut env = BTreeMap::new();
    for text in variables {
        let (key, value) = pair(text, '=', "--env", "KEY=VALUE")?;
        env.insert(key.to_owned(), value.to_owned());
    }
    let config = McpServerConfig {
        command: Some(command.to_owned()),
        args: rest.to_vec(),
        env,
        ..McpServerConfig::default()
    };
    let mut entries: Entries = vec![("command", ConfigValue::from(command))];
    if !rest.is_empty() {
        entries.push(("args", rest.iter().map(String::as_str).collect()));
    }
    if !config.env.is_empty() {
        entries.push((
            "env",
            config
                .env
                .iter()
                .map(|(key, value)| (key.as_str(), value.as_str()))
                .collect(),
        ));
    }
    Ok((config, entries))
}

/// A streamable HTTP server's config and entries: `url` with its `--header`s and
/// `--local`.
fn http_entry(
    url: &str,
    header_texts: &[String],
    local: bool,
) -> anyhow::Result<(McpServerConfig, Entries)> {
    let mut headers = BTreeMap::new();
    for text in header_texts {
        let (name, value) = pair(text, ':', "--header", "NAME:VALUE")?;
        headers.insert(name.to_owned(), value.trim_start().to_owned());
    }
    let config = McpServerConfig {
        url: Some(url.to_owned()),
        headers,
        local,
        ..McpServerConfig::default()
    };
    let mut entries: Entries = vec![("url", ConfigValue::from(url))];
    if !config.headers.is_empty() {
        entries.push((
            "headers",
            config
                .headers
                .iter()
                .map(|(name, value)| (name.as_str(), value.as_str()))
                .collect(),
        ));
    }
    if local {
        entries.push(("local", ConfigValue::from(true)));
    }
    Ok((config, entries))
}

/// ` (it runs …)` for the server already configured as `name`, when its entry is valid.
fn existing_location(app: &App, name: &str) -> String {
    app.config
        .mcp_servers
        .get(name)
        .and_then(|existing| ServerSpec::from_config(name, existing).ok())
        .map(|existing| format!(" (it runs {})", crate::shown::message(&existing.location())))
        .unwrap_or_default()
}

/// `hearth mcp remove`.
fn remove(app: &App, name: &str) -> anyhow::Result<ExitCode> {
    let path = &app.paths.config_file;
    let mut edit = ConfigEdit::open(path)?;
    if !edit.remove_table("mcp_servers", name) {
        bail!(
            "no MCP server named `{}` in {} ({}); `hearth mcp list` shows them",
            hearth_core::escape_controls_inline(name),
            path.display(),
            configured_names(app)
        );
    }
    edit.save()
        .with_context(|| format!("removing [mcp_servers.{name}] from {}", path.display()))?;
    write_out(&format!(
        "removed MCP server `{name}` from {}\n",
        path.display()
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// What `get` shows instead of a value that may be a secret.
const HIDDEN: &str = "*****";

/// `hearth mcp get`.
fn get(app: &App, name: &str, json: bool) -> anyhow::Result<ExitCode> {
    let Some(config) = app.config.mcp_servers.get(name) else {
        bail!(
            "no MCP server named `{}` in {} ({}); add one with `hearth mcp add`",
            hearth_core::escape_controls_inline(name),
            app.paths.config_file.display(),
            configured_names(app)
        );
    };
    let problem = ServerSpec::from_config(name, config).err();
    let problem = problem.as_ref().map(ToString::to_string);
    if json {
        json_line(&entry_json(name, config, problem.as_deref()))?;
        return Ok(ExitCode::SUCCESS);
    }
    write_out(&entry_text(name, config, problem.as_deref()))?;
    Ok(if problem.is_some() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// How a server reaches its program: `http` or `stdio`.
fn transport(config: &McpServerConfig) -> &'static str {
    if config.url.is_some() {
        "http"
    } else {
        "stdio"
    }
}

/// `get --json`'s object: the entry, its variables' and headers' values hidden.
fn entry_json(name: &str, config: &McpServerConfig, problem: Option<&str>) -> serde_json::Value {
    let hidden = |map: &BTreeMap<String, String>| -> BTreeMap<String, &str> {
        map.keys().map(|key| (key.clone(), HIDDEN)).collect()
    };
    json!({
        "name": name,
        "transport": transport(config),
        "command": config.command,
        "args": config.args,
        "env": hidden(&config.env),
        "passEnv": config.pass_env,
        "url": config.url.as_deref().map(hearth_core::redact_userinfo),
        "headers": hidden(&config.headers),
        "bearerTokenEnv": config.bearer_token_env,
        "local": config.local,
        "allow": config.allow,
        "enabled": config.is_enabled(),
        "timeoutSeconds": config.timeout_seconds,
        "startupTimeoutSeconds": config.startup_timeout_seconds,
        "problem": problem,
    })
}

/// `get`'s lines: the entry's settings that are set, its variables' and headers'
/// values hidden, and how to remove it.
fn entry_text(name: &str, config: &McpServerConfig, problem: Option<&str>) -> String {
    let mut out = format!("{name}\n  transport: {}\n", transport(config));
    let mut line = |label: &str, value: String| {
        out.push_str(&format!("  {label}: {}\n", crate::shown::message(&value)));
    };
    if let Some(command) = &config.command {
        line("command", command.clone());
    }
    if !config.args.is_empty() {
        line("args", config.args.join(" "));
    }
    let listed = |map: &BTreeMap<String, String>, separator: &str| {
        map.keys()
            .map(|key| format!("{key}{separator}{HIDDEN}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !config.env.is_empty() {
        line("env", listed(&config.env, "="));
    }
    if !config.pass_env.is_empty() {
        line("pass_env", config.pass_env.join(", "));
    }
    if let Some(url) = &config.url {
        line("url", hearth_core::redact_userinfo(url).into_owned());
    }
    if !config.headers.is_empty() {
        line("headers", listed(&config.headers, ": "));
    }
    if let Some(variable) = &config.bearer_token_env {
        line("bearer_token_env", variable.clone());
    }
    if config.local {
        line("local", "yes".to_owned());
    }
    if !config.allow.is_empty() {
        line("allow", config.allow.join(", "));
    }
    line(
        "enabled",
        if config.is_enabled() { "yes" } else { "no" }.to_owned(),
    );
    if let Some(problem) = problem {
        line("problem", problem.to_owned());
    }
    line("remove", format!("hearth mcp remove {name}"));
    out
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
