//! The tools Hearth's agents get — `web_fetch` and the calendar tools — behind the
//! approval gate, over the app's store; and `hearth tools list|call`, which lets the user
//! try a tool through the same path an agent takes (a mutating tool only stages a
//! proposal; an MCP server's tool that is neither read-only nor allowed is refused, as
//! in a turn nobody can answer).

use std::io::Write as _;
use std::process::ExitCode;

use clap::Subcommand;
use hearth_core::{
    ChatUri, HarnessId, Scope, SessionId, SessionUri, ToolCallContext, ToolDescription, TurnId,
    escape_controls, escape_controls_inline, new_id,
};
use hearth_tools::{Actor, UserActor};
use serde_json::Value;

use hearth_app::App;

/// The provider id of the session a tool call from `hearth tools call` is made in.
const CLI_PROVIDER: &str = "cli";

/// Writes text to stdout.
pub fn write_out(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    Ok(stdout.flush()?)
}

/// Writes one JSON value as a line to stdout (strings escaped so no terminal acts on them).
pub fn json_line(value: &impl serde::Serialize) -> anyhow::Result<()> {
    let mut line = crate::shown::json(value)?;
    line.push('\n');
    write_out(&line)
}

/// `hearth tools …`.
#[derive(Debug, Subcommand)]
pub enum ToolsCommand {
    /// List the tools agents may call, the configured MCP servers' included (as
    /// `<server>__<tool>`; listing starts them).
    List {
        /// One JSON object per line (name, description, parameters, mutates).
        #[arg(long)]
        json: bool,
    },
    /// Call a tool as an agent would (recorded as the user): a read tool runs, a
    /// mutating tool only stages a proposal for `hearth proposals approve`.
    Call {
        /// The tool's name.
        name: String,
        /// The arguments, as a JSON object.
        #[arg(default_value = "{}")]
        arguments: String,
        /// Print the outcome as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// The context of a call from the command line: a one-off session of its own.
fn cli_context() -> anyhow::Result<ToolCallContext> {
    let session = SessionUri::new(HarnessId::parse(CLI_PROVIDER)?, SessionId::generate());
    Ok(ToolCallContext {
        chat: ChatUri::default_for(&session),
        session,
        turn_id: TurnId::generate(),
        call_id: new_id(),
        scope: Scope::Global,
        working_directories: std::env::current_dir().into_iter().collect(),
    })
}

/// Where a tool's summary starts in `hearth tools list` (after the name and the kind).
const SUMMARY_INDENT: usize = 20 + 1 + 16 + 1;
/// How wide a summary line is, so that a listed line fits in 100 columns.
const SUMMARY_WIDTH: usize = 100 - SUMMARY_INDENT;

/// A description's first sentence (up to the first ". "), without its full stop.
fn first_sentence(description: &str) -> &str {
    let description = description.trim();
    // A full stop after an abbreviation ("e.g.", "i.e.") does not end the sentence.
    let end = description
        .match_indices(". ")
        .map(|(at, _)| at)
        .find(|&at| {
            let before = &description[..at];
            !(before.ends_with("e.g") || before.ends_with("i.e") || before.ends_with("etc"))
        });
    match end {
        Some(at) => &description[..at],
        None => description.trim_end_matches('.'),
    }
}

/// Text broken into lines of at most `width` characters at spaces; a word longer than a
/// line gets a line of its own, whole.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// Runs `hearth tools …`.
pub async fn tools(app: &App, command: ToolsCommand) -> anyhow::Result<ExitCode> {
    match command {
        ToolsCommand::List { json } => {
            let mut listed: Vec<(ToolDescription, &str)> = Vec::new();
            for tool in hearth_app::tools::handlers(app, None)? {
                let description = ToolDescription::of(tool.as_ref());
                let kind = if description.mutates {
                    "stages proposals"
                } else {
                    "read"
                };
                listed.push((description, kind));
            }
            listed.extend(mcp_listing(app).await?);
            for (description, kind) in listed {
                if json {
                    json_line(&description)?;
                } else {
                    // A tool's description may come from an MCP server: escaped.
                    let summary = wrap(
                        &escape_controls_inline(first_sentence(&description.description)),
                        SUMMARY_WIDTH,
                    )
                    .join(&format!("\n{:SUMMARY_INDENT$}", ""));
                    write_out(&format!(
                        "{:<20} {kind:<16} {summary}\n",
                        escape_controls_inline(&description.name)
                    ))?;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        ToolsCommand::Call {
            name,
            arguments,
            json,
        } => {
            let arguments: Value = serde_json::from_str(&arguments).map_err(|error| {
                anyhow::anyhow!("the arguments are not JSON ({error}); pass one JSON object, e.g. '{{\"title\": \"Dentist\"}}'")
            })?;
            let tools = hearth_app::tools::Tools::open(app).await?;
            let call = cli_context()?;
            let mcp = crate::mcp_servers::mcp_tools(app);
            let outcome = if mcp.owns(&name) {
                // The agent's path: checked against the schema, run at once when
                // read-only or allowed, otherwise put to the user, who cannot be asked
                // from here (so it is refused, saying how to allow it); audited.
                let outcome = mcp
                    .call(&call, &name, arguments, Some(tools.registry.audit()))
                    .await;
                mcp.shutdown().await;
                outcome
            } else {
                tools
                    .registry
                    .call_as(Actor::User(UserActor::cli()), &call, &name, arguments)
                    .await
            };
            if json {
                json_line(&outcome)?;
            } else {
                let mut text = outcome.content.clone();
                if !text.ends_with('\n') {
                    text.push('\n');
                }
                // What the tool read (event titles, a page) is shown escaped.
                write_out(&escape_controls(&text))?;
            }
            Ok(if outcome.is_error {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
    }
}

/// The configured MCP servers' tools as Hearth's agent sees them (`<server>__<tool>`),
/// each with how it runs; a server that cannot be started, or a tool not offered, is
/// noted on stderr.
#[allow(clippy::print_stderr)]
async fn mcp_listing(app: &App) -> anyhow::Result<Vec<(ToolDescription, &'static str)>> {
    let mcp = crate::mcp_servers::mcp_tools(app);
    for problem in mcp.problems() {
        eprintln!("hearth: {}", crate::shown::message(&problem.to_string()));
    }
    if mcp.is_empty() {
        return Ok(Vec::new());
    }
    let reports = mcp.reports().await;
    mcp.shutdown().await;
    let mut listed = Vec::new();
    for report in &reports {
        if let hearth_mcp_client::ServerStatus::Failed(why) = &report.status {
            eprintln!(
                "hearth: the tools of MCP server `{}` are left out: {}",
                report.name,
                crate::shown::message(why)
            );
            continue;
        }
        for tool in &report.tools {
            if let Some(why) = &tool.unavailable {
                eprintln!(
                    "hearth: {}{}{} is not offered: {}",
                    report.name,
                    hearth_mcp_client::SEPARATOR,
                    escape_controls_inline(&tool.name),
                    crate::shown::message(why)
                );
            }
        }
        let kinds: std::collections::HashMap<String, &'static str> = report
            .tools
            .iter()
            .map(|tool| {
                let kind = match (tool.read_only, tool.allowed) {
                    (true, _) => "read",
                    (false, true) => "allowed",
                    (false, false) => "asks first",
                };
                (
                    format!(
                        "{}{}{}",
                        report.name,
                        hearth_mcp_client::SEPARATOR,
                        tool.name
                    ),
                    kind,
                )
            })
            .collect();
        for description in report.offered_tools() {
            let kind = kinds
                .get(&description.name)
                .copied()
                .unwrap_or("asks first");
            listed.push((description, kind));
        }
    }
    Ok(listed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_summary_is_the_first_sentence() {
        assert_eq!(
            first_sentence("Lists events. Times are local."),
            "Lists events"
        );
        assert_eq!(first_sentence("  No full stop  "), "No full stop");
        assert_eq!(
            first_sentence("Propose several events (e.g. a rota). Each is staged."),
            "Propose several events (e.g. a rota)"
        );
    }

    #[test]
    fn wrapping_breaks_at_spaces_and_never_inside_a_word() {
        assert_eq!(
            wrap("one two three four", 9),
            vec!["one two", "three", "four"]
        );
        assert_eq!(
            wrap("a unbreakableword b", 5),
            vec!["a", "unbreakableword", "b"]
        );
        assert_eq!(wrap("", 5), vec![String::new()]);
        let text = "word ".repeat(40);
        for line in wrap(&text, 22) {
            assert!(line.chars().count() <= 22, "{line:?}");
            assert!(line.split(' ').all(|word| word == "word"), "{line:?}");
        }
    }
}
