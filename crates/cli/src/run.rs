//! `hearth run`: one prompt, the answer streamed to stdout. Ctrl-C aborts the turn and
//! keeps what streamed; a second Ctrl-C leaves at once.

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use hearth_core::{
    Action, ChatUri, Envelope, ResourceUri, ResponsePart, Scope, StopReason, ToolCallStatus,
    UserMessage,
};
use hearth_host::{Host, NewSessionRequest};
use tokio::sync::broadcast::error::RecvError;

use crate::app::App;
use crate::harnesses::{self, HarnessOptions};
use crate::render;

/// `hearth run` arguments.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The prompt; `-` reads it from stdin.
    #[arg(required = true, num_args = 1.., value_name = "PROMPT")]
    prompt: Vec<String>,
    /// Provider id (default: the configured default, else the offline demo `replay`).
    #[arg(long)]
    provider: Option<String>,
    /// Model to use.
    #[arg(long)]
    model: Option<String>,
    /// Continue a session (its default chat) or a chat, by URI.
    #[arg(long, value_name = "URI")]
    session: Option<String>,
    /// Print every event as a JSON line instead of the answer text.
    #[arg(long)]
    json: bool,
    /// Replay scenario file for the `replay` provider (default: the built-in demo).
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
    /// Also print the model's visible reasoning (to stderr).
    #[arg(long)]
    show_reasoning: bool,
}

fn read_prompt(parts: &[String]) -> anyhow::Result<String> {
    if parts.len() == 1 && parts[0] == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading the prompt from stdin")?;
        return Ok(text);
    }
    Ok(parts.join(" "))
}

/// Finds the chat to send to: the given session's default chat, the given chat, or a new
/// session's default chat.
async fn target_chat(app: &App, host: &Host, args: &RunArgs) -> anyhow::Result<ChatUri> {
    if let Some(uri) = &args.session {
        let chat = match ResourceUri::parse(uri)? {
            ResourceUri::Session(session) => ChatUri::default_for(&session),
            ResourceUri::Chat(chat) => chat,
            ResourceUri::Root => bail!("`{uri}` is not a session or chat URI"),
        };
        host.chat(&chat).await?;
        return Ok(chat);
    }
    let provider = match &args.provider {
        Some(provider) => hearth_core::ProviderId::parse(provider)?,
        None => harnesses::default_provider(app)?,
    };
    let session = host
        .create_session(NewSessionRequest {
            provider,
            scope: Scope::Global,
            title: None,
            model: args.model.clone(),
        })
        .await?;
    Ok(ChatUri::default_for(&session))
}

#[allow(clippy::print_stderr)]
fn demo_notice(app: &App) {
    eprintln!(
        "hearth: no model provider in use — this is the built-in demo (scripted answers, no model).\n\
         hearth: to use a model, set OPENAI_API_KEY or ANTHROPIC_API_KEY, run Ollama locally, or add a\n\
         hearth: [providers.<id>] section to {}",
        app.paths.config_file.display()
    );
}

/// Prints a turn's envelopes as they arrive.
struct Printer {
    json: bool,
    show_reasoning: bool,
    printed: usize,
    ends_with_newline: bool,
}

impl Printer {
    #[allow(clippy::print_stderr)]
    fn envelope(&mut self, envelope: &Envelope) -> anyhow::Result<()> {
        let mut stdout = std::io::stdout().lock();
        if self.json {
            serde_json::to_writer(&mut stdout, envelope)?;
            stdout.write_all(b"\n")?;
            return Ok(stdout.flush()?);
        }
        match &envelope.action {
            Action::TextDelta { text, .. } => {
                stdout.write_all(text.as_bytes())?;
                stdout.flush()?;
                self.printed += text.len();
                self.ends_with_newline = text.ends_with('\n');
            }
            Action::ReasoningDelta { text, .. } if self.show_reasoning => eprint!("{text}"),
            Action::ToolCallStarted { call, .. } => eprintln!("{}", render::tool_call_line(call)),
            Action::ToolCallUpdated {
                status: ToolCallStatus::Completed | ToolCallStatus::Failed,
                result: Some(result),
                ..
            } => {
                let first: String = result
                    .content
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .chars()
                    .take(100)
                    .collect();
                eprintln!("  → {first}");
            }
            Action::PartAdded { part, .. } if !matches!(part, ResponsePart::Text { .. }) => {
                let mut text = String::new();
                render::part(part, &mut text);
                eprint!("{text}");
            }
            _ => {}
        }
        Ok(())
    }

    /// Prints text a lagging subscription missed.
    fn catch_up(&mut self, host: &Host, chat: &ChatUri) -> anyhow::Result<()> {
        let Some(state) = host.peek_chat(chat) else {
            return Ok(());
        };
        let Some(turn) = state.turns.last() else {
            return Ok(());
        };
        let text = turn.response_text();
        if let Some(missing) = text.get(self.printed..) {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(missing.as_bytes())?;
            stdout.flush()?;
            self.printed = text.len();
            self.ends_with_newline = text.ends_with('\n');
        }
        Ok(())
    }
}

/// Runs `hearth run`.
#[allow(clippy::print_stderr)]
pub async fn run(app: &App, args: RunArgs) -> anyhow::Result<ExitCode> {
    let prompt = read_prompt(&args.prompt)?;
    if prompt.trim().is_empty() {
        bail!("the prompt is empty");
    }
    let agents = harnesses::build(
        app,
        &HarnessOptions {
            scenario: args.scenario.clone(),
        },
    )?;
    let host = app.start_host(agents, "cli").await?;
    let chat = target_chat(app, &host, &args).await?;
    if host
        .agent(chat.provider().as_str())
        .is_some_and(|agent| agent.descriptor().demo)
    {
        demo_notice(app);
    }
    let (turn_id, mut subscription) = host
        .send_streaming(&chat, UserMessage::text(prompt))
        .await?;
    let mut printer = Printer {
        json: args.json,
        show_reasoning: args.show_reasoning,
        printed: 0,
        ends_with_newline: true,
    };
    if args.json {
        let started = serde_json::json!({
            "type": "started",
            "session": chat.session().to_string(),
            "chat": chat.to_string(),
            "turnId": turn_id.to_string(),
        });
        let mut stdout = std::io::stdout().lock();
        serde_json::to_writer(&mut stdout, &started)?;
        stdout.write_all(b"\n")?;
    }
    let mut interrupted = false;
    let mut broken_output = None;
    let stop_reason = loop {
        tokio::select! {
            received = subscription.receiver.recv() => match received {
                Ok(envelope) => {
                    if broken_output.is_none()
                        && let Err(error) = printer.envelope(&envelope)
                    {
                        // Nobody reads the answer any more: stop the turn, keep what streamed.
                        broken_output = Some(error);
                        host.abort(&chat).await?;
                    }
                    if let Action::TurnCompleted { turn_id: id, stop_reason, .. } = &envelope.action
                        && id == &turn_id
                    {
                        break stop_reason.clone();
                    }
                }
                Err(RecvError::Lagged(_)) => {
                    if broken_output.is_none()
                        && let Err(error) = printer.catch_up(&host, &chat)
                    {
                        broken_output = Some(error);
                        host.abort(&chat).await?;
                    }
                }
                Err(RecvError::Closed) => break StopReason::Incomplete,
            },
            signal = tokio::signal::ctrl_c() => {
                signal.context("listening for Ctrl-C")?;
                if interrupted {
                    eprintln!("\nhearth: interrupted again; leaving now");
                    host.flush().await;
                    return Ok(ExitCode::from(130));
                }
                interrupted = true;
                eprintln!("\nhearth: aborting the turn (Ctrl-C again to leave at once)");
                host.abort(&chat).await?;
            }
        }
    };
    if let Some(error) = broken_output {
        host.shutdown().await;
        return Err(error.context(
            "writing the answer failed; the turn was aborted and its partial answer saved",
        ));
    }
    host.shutdown().await;
    if !args.json && printer.printed > 0 && !printer.ends_with_newline {
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(b"\n")?;
        stdout.flush()?;
    }
    if !args.json && std::io::stderr().is_terminal() {
        eprintln!(
            "hearth: session {} (continue with --session)",
            chat.session()
        );
    }
    Ok(match stop_reason {
        StopReason::Aborted => {
            if !args.json {
                eprintln!("hearth: turn aborted; the partial answer is saved");
            }
            ExitCode::from(130)
        }
        StopReason::Error => ExitCode::FAILURE,
        _ => ExitCode::SUCCESS,
    })
}
