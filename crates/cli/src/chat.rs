//! `hearth chat`: an interactive terminal chat. Answers stream to stdout; Ctrl-C aborts
//! the running turn (not the program), and a second Ctrl-C (while the answer stops, soon
//! after the first, or at the prompt) leaves with status 130; `/fork`, `/model NAME`, `/compact`,
//! `/mode [ID]`, `/new`, `/quit`; `/help` also lists the agent's own commands, which go
//! to the agent as typed. After an answer, the usage it reported (tokens, the context
//! window, the cost) is shown on a dim line. Reads lines from stdin, so it works on a pipe too. An answer the store
//! refused to save is reported at once and tried again with the next message; one still
//! unsaved at the end makes the exit status 74, as for `hearth run`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use hearth_core::{ChatSeed, ChatUri, HarnessId, StopReason, escape_controls_inline};
use hearth_host::Host;

use crate::decisions::{Decision, Decisions};
use crate::drive::{Driven, drive};
use crate::interrupts::{Interrupts, Press};
use crate::keyboard::{Completions, Keyboard, Setup, Typed};
use crate::printer::Printer;
use crate::run::{announce, start, target_chat};
use hearth_app::App;
use hearth_app::harnesses::Titles;
use hearth_app::turn::TurnStream;
use hearth_projects::{OpenEnd, PendingOpen, ScopeView};

mod input;

use input::{COMMANDS, Input, parse};

/// `hearth chat` arguments.
#[derive(Debug, clap::Args)]
pub struct ChatArgs {
    #[command(flatten)]
    target: crate::run::TargetArgs,
    /// Replay scenario file for the `replay` provider (default: the built-in demo).
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
    /// Also print the model's visible reasoning (to stderr).
    #[arg(long)]
    show_reasoning: bool,
}

const HELP: &str = crate::chat_help::SHORT;

impl ChatArgs {
    /// The arguments that continue `session` (its URI).
    pub(crate) fn continuing(session: String, show_reasoning: bool) -> Self {
        Self {
            target: crate::run::TargetArgs::continuing(session),
            scenario: None,
            show_reasoning,
        }
    }
}

/// The chat's prompt.
const PROMPT: &str = "› ";
/// The file in the data directory that keeps what was typed at the chat's prompt.
const HISTORY_FILE: &str = "chat-history";
/// The chat in use and what new sessions are made of.
struct Conversation {
    host: Host,
    provider: HarnessId,
    model: Option<String>,
    /// The scope the user is in and its active session (`/new` makes sessions in it).
    view: ScopeView,
    /// The projects `/project` enters.
    projects: hearth_projects::Projects,
    chat: ChatUri,
    show_reasoning: bool,
    /// The chat's harness is an external agent.
    external_agent: bool,
    /// Answers the store refused were reported and not saved since.
    unsaved: Unreported,
    /// What the prompt completes.
    completions: Completions,
    /// The user's side of the changes the chat stages.
    decisions: Decisions,
}

/// How a turn of the chat ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TurnEnd {
    /// The answer came to its end (or failed).
    Answered,
    /// Ctrl-C stopped it; another Ctrl-C at the prompt leaves.
    Stopped,
    /// Ctrl-C twice: leave the chat now.
    Leave,
}

/// Why the chat ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Leaving {
    /// `/quit`, or the end of input.
    Asked,
    /// Ctrl-C twice.
    Interrupted,
}

/// The exit status after leaving with Ctrl-C, as a shell reports a SIGINT (128 + 2).
const EXIT_INTERRUPTED: u8 = 130;

/// Whether the user was told of answers the store refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unreported {
    /// Nothing refused, or refused and saved since.
    AllSaved,
    /// Refused, and the user was told.
    Told,
}

impl Conversation {
    /// Where the user still is, for a message saying an open failed.
    fn still_in(&self) -> String {
        format!(
            "still in {} (session {})",
            crate::shown::scope_name(self.view.scope()),
            self.chat.session()
        )
    }

    /// Ends an open the view began: the chat is active now (`true`) unless the user moved
    /// on meanwhile; a failure puts the previous scope and session back and says so.
    #[allow(clippy::print_stderr)]
    fn end_open(&mut self, pending: PendingOpen, opened: Result<ChatUri, String>) -> bool {
        match opened {
            Ok(chat) => {
                let done = self.view.finish_open(pending, chat.session()) == OpenEnd::Opened;
                if done {
                    self.chat = chat;
                }
                done
            }
            Err(failure) => {
                if self.view.fail_open(pending) == OpenEnd::RolledBack {
                    eprintln!(
                        "hearth: {}; {}",
                        crate::shown::message(&failure),
                        self.still_in()
                    );
                }
                false
            }
        }
    }

    /// `/open URI`: the session (its default chat) or chat, in its scope. The scope is
    /// switched first; a failed open puts the previous scope and session back.
    #[allow(clippy::print_stderr)]
    async fn open(&mut self, uri: &str) {
        // A bare id or its start, as `hearth sessions` takes it.
        let named = match hearth_core::ResourceUri::parse(uri) {
            Ok(_) => Ok(uri.trim().to_owned()),
            Err(_) => crate::names::session_or_chat(self.host.store().as_ref(), uri).await,
        };
        let chat = match named.as_deref().map(hearth_core::ResourceUri::parse) {
            Ok(Ok(hearth_core::ResourceUri::Session(session))) => ChatUri::default_for(&session),
            Ok(Ok(hearth_core::ResourceUri::Chat(chat))) => chat,
            Err(error) => {
                eprintln!(
                    "hearth: {}; {}",
                    crate::shown::error(error),
                    self.still_in()
                );
                return;
            }
            _ => {
                eprintln!(
                    "hearth: `{}` is not a session or chat",
                    escape_controls_inline(uri)
                );
                return;
            }
        };
        let scope = match self.host.session(&chat.session()).await {
            Ok(state) => state.summary.scope,
            Err(error) => {
                eprintln!(
                    "hearth: cannot open {}: {}; {}",
                    escape_controls_inline(uri),
                    crate::shown::message(&error.to_string()),
                    self.still_in()
                );
                return;
            }
        };
        let switched = &scope != self.view.scope();
        let pending = self.view.begin_open(scope.clone());
        let opened = match self.host.chat(&chat).await {
            Ok(_) => Ok(chat),
            Err(error) => Err(format!("cannot open {uri}: {error}")),
        };
        if self.end_open(pending, opened) {
            if switched {
                eprintln!("hearth: now in {}", crate::shown::scope_name(&scope));
            }
            eprintln!("hearth: opened {}", self.chat);
            crate::resume::show_recent(&self.host, &self.chat).await;
        }
    }

    /// `/resume`: the newest sessions, one picked opened.
    async fn resume(&mut self, keyboard: &mut Keyboard) -> anyhow::Result<()> {
        let listed = crate::resume::newest(self.host.store().as_ref(), 20).await?;
        crate::toolbox::write_out(&crate::resume::numbered(&listed))?;
        let picked = crate::resume::pick(&listed, keyboard)
            .await
            .map(|session| session.uri.to_string());
        if let Some(uri) = picked {
            self.open(&uri).await;
        }
        Ok(())
    }

    /// `/project NAME|global`: a new session in that scope. A project that cannot take
    /// one leaves the user where they were.
    #[allow(clippy::print_stderr)]
    async fn enter(&mut self, key: &str) {
        let scope = if key.eq_ignore_ascii_case("global") {
            hearth_core::Scope::Global
        } else {
            match self.projects.find(key).await {
                Ok(record) => hearth_core::Scope::Project {
                    project_id: record.id,
                },
                Err(error) => {
                    eprintln!("hearth: {}", crate::shown::message(&error.to_string()));
                    return;
                }
            }
        };
        let pending = self.view.begin_open(scope.clone());
        let created = target_chat(
            &self.host,
            None,
            &self.provider,
            self.model.as_deref(),
            &scope,
        )
        .await
        .map_err(|error| format!("{error:#}"));
        if self.end_open(pending, created) {
            eprintln!(
                "hearth: now in {}; new session {}",
                crate::shown::scope_name(&scope),
                self.chat.session()
            );
        }
    }

    /// Runs a command of Hearth's own.
    #[allow(clippy::print_stderr)]
    async fn command(&mut self, input: Input<'_>) -> anyhow::Result<()> {
        match input {
            Input::Compact => self.compact().await?,
            Input::Fork(turn) => self.fork(turn).await?,
            Input::Model(Some(model)) => {
                self.host.set_model(&self.chat, model.to_owned()).await?;
                self.model = Some(model.to_owned());
                eprintln!("hearth: model {}", escape_controls_inline(model));
            }
            Input::Model(None) => self.show_model().await?,
            Input::Mode(Some(mode)) => {
                self.host.set_mode(&self.chat, mode.to_owned()).await?;
                eprintln!("hearth: mode {}", escape_controls_inline(mode));
            }
            Input::Mode(None) => self.show_modes().await?,
            Input::New => {
                self.chat = target_chat(
                    &self.host,
                    None,
                    &self.provider,
                    self.model.as_deref(),
                    self.view.scope(),
                )
                .await?;
                if let Err(scope) = self
                    .view
                    .activate(self.chat.session(), self.view.scope().clone())
                {
                    tracing::warn!(?scope, "a new session is not of the active scope");
                }
                eprintln!("hearth: new session {}", self.chat.session());
            }
            Input::Open(uri) => self.open(uri).await,
            Input::Project(None) => {
                eprintln!("hearth: in {}", crate::shown::scope_name(self.view.scope()))
            }
            Input::Project(Some(key)) => self.enter(key).await,
            Input::Help => self.help().await,
            Input::Proposals => self.decisions.list(self.chat.session_ref()).await?,
            Input::Approve(id) => {
                self.decisions
                    .decide_named(self.chat.session_ref(), id, Decision::Approve, None)
                    .await?;
            }
            Input::Reject(id, reason) => {
                self.decisions
                    .decide_named(self.chat.session_ref(), id, Decision::Reject, reason)
                    .await?;
            }
            Input::Unknown(name) => eprintln!(
                "hearth: unknown command /{}; {HELP}",
                escape_controls_inline(name)
            ),
            Input::Prompt(_) | Input::Quit | Input::Nothing | Input::Resume => {}
        }
        Ok(())
    }

    /// `/compact`: the chat's earlier turns summarised now; its next turns send the
    /// summary instead of them.
    #[allow(clippy::print_stderr)]
    async fn compact(&mut self) -> anyhow::Result<()> {
        let compacted = self.host.compact(&self.chat).await?;
        if compacted.summarised == 0 {
            eprintln!("hearth: nothing new to summarise");
        } else {
            eprintln!("{}", crate::render::compaction_line(Some(compacted.turns)));
        }
        Ok(())
    }

    /// `/fork [TURN]`: a new chat of the session branching at the last turn, or at the
    /// turn named by its number (`-1` the last) or the start of its id.
    #[allow(clippy::print_stderr)]
    async fn fork(&mut self, turn: Option<&str>) -> anyhow::Result<()> {
        let turns = self.host.chat(&self.chat).await?.turns;
        if turns.is_empty() {
            eprintln!("hearth: nothing to fork yet: send a message first");
            return Ok(());
        }
        let ids: Vec<&str> = turns.iter().map(|turn| turn.id.as_str()).collect();
        let index = match turn {
            Some(turn) => crate::names::turn_index(&ids, turn)?,
            None => turns.len() - 1,
        };
        let turn_id = turns[index].id.clone();
        let seed = ChatSeed::Fork {
            source_chat: self.chat.clone(),
            turn_id,
        };
        self.chat = self.host.create_chat(self.chat.session_ref(), seed).await?;
        eprintln!("hearth: forked; now in chat {}", self.chat);
        Ok(())
    }

    /// `/model`: the chat's model and, when the agent lists them, the ones to choose.
    #[allow(clippy::print_stderr)]
    async fn show_model(&self) -> anyhow::Result<()> {
        let state = self.host.chat(&self.chat).await?;
        let model = state
            .summary
            .model
            .as_deref()
            .unwrap_or("the provider's default");
        eprintln!(
            "hearth: model {} (switch with /model NAME)",
            escape_controls_inline(model)
        );
        if let Some(models) = state.agent.and_then(|agent| agent.models) {
            for choice in models.choices {
                let mark = if choice.id == models.current {
                    "*"
                } else {
                    " "
                };
                let name = if choice.name.is_empty() || choice.name == choice.id {
                    String::new()
                } else {
                    format!(" — {}", escape_controls_inline(&choice.name))
                };
                eprintln!("  {mark} {}{name}", escape_controls_inline(&choice.id));
            }
        }
        Ok(())
    }

    /// `/mode`: the agent's modes, the current one marked.
    #[allow(clippy::print_stderr)]
    async fn show_modes(&self) -> anyhow::Result<()> {
        let state = self.host.chat(&self.chat).await?;
        match state.agent.and_then(|agent| agent.modes) {
            Some(modes) => {
                eprintln!("hearth: modes (switch with /mode ID):");
                for line in crate::offered::mode_lines(&modes) {
                    eprintln!("{line}");
                }
            }
            None => eprintln!("hearth: this chat's agent offers no modes"),
        }
        Ok(())
    }

    /// `/help`: Hearth's commands, then the agent's own.
    #[allow(clippy::print_stderr)]
    async fn help(&self) {
        for line in crate::chat_help::lines() {
            eprintln!("{line}");
        }
        let agent = self
            .host
            .chat(&self.chat)
            .await
            .ok()
            .and_then(|state| state.agent);
        for line in crate::offered::command_lines(self.chat.harness().as_str(), agent.as_ref()) {
            eprintln!("{line}");
        }
    }

    /// The usage the chat's last turn reported, on a dim line (plain off a terminal).
    #[allow(clippy::print_stderr)]
    async fn show_usage(&self) {
        let Ok(state) = self.host.chat(&self.chat).await else {
            return;
        };
        let model = state
            .agent
            .as_ref()
            .and_then(|agent| agent.models.as_ref())
            .map(|models| models.current.as_str())
            .or(state.summary.model.as_deref());
        let Some(line) = state
            .turns
            .last()
            .and_then(|turn| turn.usage.as_ref())
            .and_then(|usage| crate::offered::usage_line(usage, model))
        else {
            return;
        };
        if crate::colour_on_stderr() {
            eprintln!("\x1b[2m{line}\x1b[0m");
        } else {
            eprintln!("{line}");
        }
    }

    /// Tells the user when the store refused what was just said, and when what it refused
    /// before is saved after all.
    #[allow(clippy::print_stderr)]
    async fn check_saved(&mut self) {
        self.host.flush().await;
        let unsaved = self.host.unsaved_chats();
        if unsaved.is_empty() {
            if self.unsaved == Unreported::Told {
                eprintln!("hearth: the answers not saved before are saved now");
                self.unsaved = Unreported::AllSaved;
            }
            return;
        }
        for item in &unsaved {
            eprintln!(
                "hearth: {}; Hearth keeps it in memory and tries again with the next message (it is lost if you leave first)",
                crate::shown::message(&item.to_string())
            );
        }
        self.unsaved = Unreported::Told;
    }

    /// Brings what the prompt completes up to date: Hearth's commands and the agent's,
    /// and the ids of the newest sessions.
    async fn offer_completions(&self) {
        let mut commands: Vec<String> = COMMANDS.iter().map(|name| (*name).to_owned()).collect();
        if let Ok(state) = self.host.chat(&self.chat).await
            && let Some(agent) = state.agent
        {
            commands.extend(
                agent
                    .commands
                    .iter()
                    .map(|command| format!("/{}", command.name)),
            );
        }
        commands.sort();
        commands.dedup();
        self.completions.set_commands(commands);
        let query = hearth_store::SessionQuery::default();
        if let Ok(page) = self.host.store().list_sessions(&query).await {
            let ids: Vec<&str> = page
                .sessions
                .iter()
                .map(|session| session.uri.id().as_str())
                .collect();
            self.completions
                .set_sessions(crate::names::short_among(&ids));
        }
    }

    /// Whether a `/name` line goes to the agent: a command it offers, or any command
    /// Hearth does not know when the agent is an external one (it may offer commands it
    /// has not listed yet).
    async fn agent_offers(&self, name: &str) -> bool {
        if self.external_agent {
            return true;
        }
        self.host.chat(&self.chat).await.is_ok_and(|state| {
            state
                .agent
                .is_some_and(|agent| agent.commands.iter().any(|command| command.name == name))
        })
    }

    /// Sends a prompt and streams the answer; Ctrl-C aborts the turn, and a second
    /// Ctrl-C (while it stops, or soon after the first) leaves. An agent's permission
    /// requests are asked inline and answered from `lines`.
    #[allow(clippy::print_stderr)]
    async fn turn(
        &self,
        prompt: &str,
        interrupts: &mut Interrupts,
        keyboard: &mut Keyboard,
    ) -> anyhow::Result<TurnEnd> {
        // `@path` attaches the file.
        let message = crate::attach::message(prompt.to_owned(), &[])?;
        let mut stream = TurnStream::local(&self.host, &self.chat, message).await?;
        let mut printer = Printer::new(false, self.show_reasoning);
        let driven = drive(&mut stream, &mut printer, interrupts, Some(keyboard)).await?;
        let stop_reason = match driven {
            Driven::Leave => return Ok(TurnEnd::Leave),
            Driven::Ended {
                broken_output: Some(error),
                ..
            } => return Err(error.context("writing the answer failed; the turn was stopped")),
            Driven::Ended { stop_reason, .. } => stop_reason,
        };
        if stop_reason == StopReason::Aborted {
            eprintln!("hearth: answer stopped; what arrived is kept");
            return Ok(TurnEnd::Stopped);
        }
        if !printer.usage_shown() {
            self.show_usage().await;
        }
        if keyboard.has_a_person() {
            let turn = stream.turn_id().clone();
            self.decisions
                .review_turn(&self.chat, &turn, keyboard)
                .await?;
        }
        Ok(TurnEnd::Answered)
    }
}

/// Runs `hearth chat`.
#[allow(clippy::print_stderr)]
pub async fn chat(app: &App, args: ChatArgs) -> anyhow::Result<ExitCode> {
    let mut conversation = Conversation::begin(app, &args).await?;
    let interactive = std::io::stdin().is_terminal();
    if interactive {
        eprintln!(
            "hearth chat — session {} — {HELP}",
            conversation.chat.session()
        );
    }
    let mut keyboard = keyboard(app, &conversation.completions)?;
    let mut interrupts = Interrupts::new()?;
    let leaving = conversation
        .converse(&mut keyboard, &mut interrupts)
        .await?;
    if leaving == Leaving::Interrupted {
        eprintln!("\nhearth: leaving the chat");
    }
    // Tries once more what the store refused before.
    conversation.host.shutdown().await;
    let unsaved = crate::run::report_unsaved(&conversation.host.unsaved_chats(), false)?;
    if interactive {
        eprintln!(
            "hearth: session {} (continue with --session)",
            conversation.chat.session()
        );
    }
    if unsaved {
        return Ok(ExitCode::from(crate::run::EXIT_UNSAVED));
    }
    Ok(match leaving {
        Leaving::Asked => ExitCode::SUCCESS,
        Leaving::Interrupted => ExitCode::from(EXIT_INTERRUPTED),
    })
}

/// The keyboard of the chat: a line editor when stdin and stdout are a terminal (its
/// history kept in the data directory), plain lines otherwise.
fn keyboard(app: &App, completions: &Completions) -> anyhow::Result<Keyboard> {
    let terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let setup = if terminal && std::env::var_os("TERM").is_none_or(|term| term != "dumb") {
        Setup::Editor {
            history: app.paths.home.join(HISTORY_FILE),
            completions: completions.clone(),
        }
    } else {
        Setup::Stdin {
            prompts: std::io::stdin().is_terminal(),
        }
    };
    Keyboard::start(setup)
}

impl Conversation {
    /// The conversation `hearth chat` starts in: the session it continues, or a new one
    /// in the chosen project, with its provider and model.
    async fn begin(app: &App, args: &ChatArgs) -> anyhow::Result<Self> {
        let crate::run::Target {
            project,
            session,
            provider,
            model,
        } = args.target.resolve(app).await?;
        let start = start(
            app,
            provider.as_deref(),
            session.as_deref(),
            args.scenario.clone(),
            Titles::Generate,
        )
        .await?;
        let chat = start
            .target_chat(session.as_deref(), model.as_deref(), &project.scope)
            .await?;
        announce(app, &start, &chat);
        if session.is_some() {
            crate::resume::show_recent(&start.host, &chat).await;
        }
        // A continued session is in its own scope.
        let start_scope = match start.host.session(&chat.session()).await {
            Ok(state) => state.summary.scope,
            Err(_) => project.scope.clone(),
        };
        Ok(Self {
            decisions: Decisions::new(app, start.store.clone())?,
            external_agent: hearth_app::harnesses::is_external_agent(app, chat.harness().as_str()),
            host: start.host,
            provider: start.provider,
            model,
            view: ScopeView::restore(chat.session(), start_scope),
            projects: crate::projects::registry(app).await?,
            chat,
            show_reasoning: args.show_reasoning,
            unsaved: Unreported::AllSaved,
            completions: Completions::default(),
        })
    }

    /// Reads lines and answers them until the user leaves: prompts go to the agent (as
    /// do its own commands), Hearth's commands run here.
    #[allow(clippy::print_stderr)]
    async fn converse(
        &mut self,
        keyboard: &mut Keyboard,
        interrupts: &mut Interrupts,
    ) -> anyhow::Result<Leaving> {
        // A Ctrl-C came (at the prompt, or stopping an answer) and no line since.
        let mut interrupted = false;
        loop {
            self.offer_completions().await;
            let typed = tokio::select! {
                typed = keyboard.prompt(PROMPT) => typed,
                pressed = interrupts.recv_press() => match pressed? {
                    Press::Single => Typed::Interrupted,
                    Press::Double => return Ok(Leaving::Interrupted),
                },
            };
            let line = match typed {
                Typed::Line(line) => line,
                Typed::Ended => return Ok(Leaving::Asked),
                Typed::Interrupted => {
                    if interrupted {
                        return Ok(Leaving::Interrupted);
                    }
                    interrupted = true;
                    eprintln!("hearth: press Ctrl-C again, or type /quit, to leave");
                    continue;
                }
            };
            interrupted = false;
            let prompt = match parse(&line) {
                Input::Nothing => continue,
                Input::Quit => return Ok(Leaving::Asked),
                Input::Prompt(prompt) => prompt,
                Input::Resume => {
                    if let Err(error) = self.resume(keyboard).await {
                        eprintln!("hearth: error: {}", crate::shown::error(&error));
                    }
                    continue;
                }
                // A command of the agent's own: it goes to the agent as typed.
                Input::Unknown(name) if self.agent_offers(name).await => line.trim(),
                // An agent that manages its own context compacts itself.
                Input::Compact if self.agent_offers("compact").await => line.trim(),
                command => {
                    if let Err(error) = self.command(command).await {
                        eprintln!("hearth: error: {}", crate::shown::error(&error));
                    }
                    continue;
                }
            };
            let end = self.turn(prompt, interrupts, keyboard).await;
            self.check_saved().await;
            match end {
                Ok(TurnEnd::Answered) => {}
                Ok(TurnEnd::Stopped) => interrupted = true,
                Ok(TurnEnd::Leave) => return Ok(Leaving::Interrupted),
                Err(error) => eprintln!("hearth: error: {}", crate::shown::error(&error)),
            }
        }
    }
}
