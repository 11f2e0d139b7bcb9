//! `hearth run`: one prompt, the answer streamed to stdout. Ctrl-C aborts the turn and
//! keeps what streamed; a second Ctrl-C leaves at once. An answer the store refused to
//! save, or a chat another Hearth process is answering in, ends with an exit status of
//! its own (see [`EXIT_UNSAVED`], [`EXIT_ANSWERING_ELSEWHERE`] and `hearth run --help`).

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use hearth_core::{ChatUri, HarnessId, ResourceUri, Scope, StopReason};
use hearth_host::{Host, HostError, NewSessionRequest, Unsaved};
use hearth_llm::{Discovery, KeyStatus, LlmError, no_provider_help};
use hearth_store::StoreError;

use crate::drive::Driven;
use crate::interrupts::Interrupts;
use crate::printer::Printer;
use hearth_app::App;
use hearth_app::harnesses::{self, HarnessOptions, REPLAY, Titles};
use hearth_app::turn::TurnStream;

/// Exit status of `hearth run` when the answer was printed but the store refused it
/// (a full disk, a failing database): the session keeps the prompt, not the answer.
pub(crate) const EXIT_UNSAVED: u8 = 74;
/// Exit status of `hearth run` when another Hearth process is answering in the chat:
/// nothing was sent; run again once it is done.
pub(crate) const EXIT_ANSWERING_ELSEWHERE: u8 = 75;

const EXIT_STATUS: &str = "\
Exit status:
  0    the answer was printed and saved
  1    something failed (the message says what), or the turn ended with an error
  74   the answer was printed but could not be saved (the message says why)
  75   another Hearth process is answering in the chat; nothing was sent
  130  the turn was interrupted (Ctrl-C) or aborted";

/// Who answers and where, as `hearth run` and `hearth chat` take it.
#[derive(Debug, clap::Args)]
pub struct TargetArgs {
    /// Provider id: a model provider (`openai`, `anthropic`, `ollama`, a config.toml id)
    /// or `replay`, the offline demo (default: the configured default, else the first
    /// provider found, else the demo).
    #[arg(long)]
    provider: Option<String>,
    /// An external agent to answer (`claude`, `codex`, `gemini`, `opencode`, `copilot`,
    /// an [agents.<id>] of config.toml; see `hearth agents list`).
    #[arg(long, conflicts_with = "provider")]
    agent: Option<String>,
    /// Model to use.
    #[arg(long)]
    model: Option<String>,
    /// Continue a session (its default chat) or a chat: its URI, its id, or the first 4+
    /// characters of the id.
    #[arg(long, value_name = "URI")]
    session: Option<String>,
    /// Continue the most recently updated session of the current folder (of the
    /// project, with --project).
    #[arg(short = 'c', long = "continue", conflicts_with = "session")]
    continue_latest: bool,
    /// Start the session in a project (its name or id): it works in the project's folder
    /// with its instructions and context, and uses its default agent and model.
    #[arg(long, conflicts_with = "session")]
    project: Option<String>,
}

impl TargetArgs {
    /// The arguments that continue `session` (its URI) as it is.
    pub(crate) fn continuing(session: String) -> Self {
        Self {
            provider: None,
            agent: None,
            model: None,
            session: Some(session),
            continue_latest: false,
            project: None,
        }
    }
}

/// What [`TargetArgs`] come to: the project (or the global scope), the session to
/// continue, and the harness and model (the project's defaults where none was named).
pub(crate) struct Target {
    pub project: ProjectChoice,
    pub session: Option<String>,
    pub provider: Option<String>,
    pub model: Option<String>,
}

impl TargetArgs {
    /// Resolves the project, the session to continue, the harness and the model.
    pub(crate) async fn resolve(&self, app: &App) -> anyhow::Result<Target> {
        let project = ProjectChoice::resolve(app, self.project.as_deref()).await?;
        let session = continued_session(
            app,
            self.session.as_deref(),
            self.continue_latest,
            &project.scope,
        )
        .await?;
        if let Some(session) = &session {
            self.check_continued_harness(session)?;
        }
        let provider = project.provider(app, self.agent.as_deref(), self.provider.as_deref())?;
        let model = self.model.clone().or_else(|| project.model());
        Ok(Target {
            project,
            session,
            provider,
            model,
        })
    }
}

impl TargetArgs {
    /// A continued session answers through its own harness: an `--agent` or `--provider`
    /// naming another one is refused rather than silently ignored.
    fn check_continued_harness(&self, session: &str) -> anyhow::Result<()> {
        let Some(harness) = provider_of(session) else {
            return Ok(());
        };
        let (flag, named) = match (&self.agent, &self.provider) {
            (Some(agent), _) => ("--agent", agent),
            (None, Some(provider)) => ("--provider", provider),
            (None, None) => return Ok(()),
        };
        if named.as_str() == harness {
            return Ok(());
        }
        bail!(
            "session {session} belongs to `{harness}`, but {flag} {named} was given: a session goes on with the agent or provider it started with; drop {flag} to continue it, or leave out {} to start a new session on `{named}`",
            if self.continue_latest {
                "-c"
            } else {
                "--session"
            }
        )
    }
}

/// `hearth run` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = EXIT_STATUS)]
pub struct RunArgs {
    /// The prompt; `-` reads it from stdin. Text piped to stdin otherwise goes with the
    /// prompt as what it is about (`cat log | hearth run "why?"`); `@path` in the prompt
    /// attaches that file.
    #[arg(required = true, num_args = 1.., value_name = "PROMPT")]
    prompt: Vec<String>,
    /// Attach a file (text or image) to the prompt; stored with the turn. Repeatable.
    #[arg(long, value_name = "FILE")]
    attach: Vec<PathBuf>,
    #[command(flatten)]
    target: TargetArgs,
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

/// The prompt: the words given, `-` for stdin; text piped beside the words goes after
/// them.
fn read_prompt(parts: &[String]) -> anyhow::Result<String> {
    if parts.len() == 1 && parts[0] == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading the prompt from stdin")?;
        return Ok(text);
    }
    let prompt = parts.join(" ");
    Ok(match crate::attach::piped_stdin()? {
        Some(piped) => crate::attach::with_piped(&prompt, &piped),
        None => prompt,
    })
}

/// The harnesses of a run or chat, and the provider new sessions use.
pub(crate) struct Start {
    /// The host with every harness.
    pub host: Host,
    /// The provider of new sessions.
    pub provider: HarnessId,
    /// No provider is set up at all: the demo answers, and the user is told how to add one.
    pub no_provider: bool,
    /// The store the host works on.
    pub store: std::sync::Arc<dyn hearth_store::Stores>,
}

impl Start {
    /// The chat a run or chat starts in ([`target_chat`] on this start's host and
    /// provider); when there is none, the host is shut down before the error returns.
    pub(crate) async fn target_chat(
        &self,
        session: Option<&str>,
        model: Option<&str>,
        scope: &Scope,
    ) -> anyhow::Result<ChatUri> {
        let chat = target_chat(&self.host, session, &self.provider, model, scope).await;
        if chat.is_err() {
            self.host.shutdown().await;
        }
        chat
    }
}

/// The provider a `--session`/`--chat` URI belongs to, if it parses.
fn provider_of(uri: &str) -> Option<String> {
    match ResourceUri::parse(uri).ok()? {
        ResourceUri::Session(session) => Some(session.harness().to_string()),
        ResourceUri::Chat(chat) => Some(chat.harness().to_string()),
        ResourceUri::Root => None,
    }
}

/// The provider id of `--agent`: an external agent Hearth knows and can start.
pub(crate) fn agent_provider(app: &App, agent: &str) -> anyhow::Result<String> {
    let (agents, _) = harnesses::all_external_agents(app);
    match agents.iter().find(|known| known.spec.id.as_str() == agent) {
        Some(known) => match &known.installed {
            Ok(()) => Ok(agent.to_owned()),
            Err(missing) => bail!("agent `{agent}` is not installed: {missing}"),
        },
        None => {
            let known: Vec<&str> = agents.iter().map(|known| known.spec.id.as_str()).collect();
            bail!(
                "no agent `{agent}`: the agents Hearth knows are {} (see `hearth agents list`); add others under [agents.<id>] in {}",
                known.join(", "),
                app.paths.config_file.display()
            )
        }
    }
}

/// Finds the model providers, picks the one to use, and starts a host with every harness.
#[allow(clippy::print_stderr)]
pub(crate) async fn start(
    app: &App,
    provider: Option<&str>,
    session: Option<&str>,
    scenario: Option<PathBuf>,
    titles: Titles,
) -> anyhow::Result<Start> {
    // A bare session id or prefix is looked up now, to know its provider.
    let session = match session {
        Some(text) => Some(resolve_session(app, text).await?),
        None => None,
    };
    let named = provider
        .map(str::to_owned)
        .or_else(|| session.as_deref().and_then(provider_of));
    let discovery = if named.as_deref() == Some(REPLAY) {
        Discovery::default()
    } else {
        harnesses::discover(app, harnesses::ollama_may_matter(app, named.as_deref())).await
    };
    for problem in &discovery.problems {
        eprintln!(
            "hearth: warning: {}",
            crate::shown::message(&problem.to_string())
        );
    }
    let provider = match &named {
        Some(id) => HarnessId::parse(id)?,
        None => harnesses::default_provider(app, &discovery)?,
    };
    if let Some(resolved) = discovery.get(provider.as_str())
        && let KeyStatus::Missing { expected } = &resolved.key
    {
        return Err(LlmError::MissingApiKey {
            provider: resolved.id.clone(),
            variable: expected.clone(),
        }
        .into());
    }
    let no_provider = named.is_none()
        && provider.as_str() == REPLAY
        && discovery.is_empty()
        && app.config.defaults.provider.is_none();
    let store = app.open_store().await?;
    let agents = harnesses::build(
        app,
        &HarnessOptions {
            scenario,
            discovery: Some(discovery),
            titles,
            store: Some(store.clone()),
            session_mcp: None,
            client_files: None,
            agent_progress: crate::agents::terminal_progress(),
        },
    )?;
    let host = app.start_host(store.clone(), agents, "cli");
    Ok(Start {
        host,
        provider,
        no_provider,
        store,
    })
}

/// Says when the answers will be the demo's: how to add a provider when none exists, or
/// that the chosen provider is the demo.
#[allow(clippy::print_stderr)]
pub(crate) fn announce(app: &App, start: &Start, chat: &ChatUri) {
    if start.no_provider {
        eprint!("{}", no_provider_help(&app.paths.config_file));
        eprintln!(
            "\nhearth: no model provider in use — this is the built-in demo (scripted answers, no model)."
        );
    } else if start
        .host
        .agent(chat.harness().as_str())
        .is_some_and(|agent| agent.descriptor().demo)
    {
        // Chosen on purpose (`--provider replay`, or a session of the demo's): real
        // providers may well be configured, so no advice on adding one.
        eprintln!("hearth: this is the built-in demo (scripted answers, no model).");
    }
}

/// The project of `--project`, and the defaults its `project.md` gives.
pub(crate) struct ProjectChoice {
    /// The scope of new sessions.
    pub scope: Scope,
    file: Option<hearth_projects::ProjectFile>,
}

impl ProjectChoice {
    /// The project named by `--project`, which must take new sessions; the global
    /// scope without one.
    pub(crate) async fn resolve(app: &App, key: Option<&str>) -> anyhow::Result<Self> {
        let Some(key) = key else {
            return Ok(Self {
                scope: Scope::Global,
                file: None,
            });
        };
        let (scope, file) = crate::projects::open_scope(app, key).await?;
        Ok(Self {
            scope,
            file: Some(file),
        })
    }

    /// The project's id, for a server.
    pub(crate) fn id(&self) -> Option<String> {
        self.scope.project_id().map(ToString::to_string)
    }

    /// The provider of new sessions: `--agent`, else `--provider`, else the project's
    /// agent, else its provider.
    pub(crate) fn provider(
        &self,
        app: &App,
        agent: Option<&str>,
        provider: Option<&str>,
    ) -> anyhow::Result<Option<String>> {
        if let Some(agent) = agent {
            return agent_provider(app, agent).map(Some);
        }
        if let Some(provider) = provider {
            return Ok(Some(provider.to_owned()));
        }
        let Some(file) = &self.file else {
            return Ok(None);
        };
        if let Some(agent) = &file.agent {
            return agent_provider(app, agent).map(Some);
        }
        Ok(file.provider.clone())
    }

    /// The project's model.
    pub(crate) fn model(&self) -> Option<String> {
        self.file.as_ref().and_then(|file| file.model.clone())
    }
}

/// The session or chat `--session` names, as a full URI. A bare id or prefix is looked up
/// in the store: a read, so it is done here even when a server is running.
pub(crate) async fn resolve_session(app: &App, text: &str) -> anyhow::Result<String> {
    if ResourceUri::parse(text).is_ok() {
        return Ok(text.trim().to_owned());
    }
    let store = app.open_store().await?;
    crate::names::session_or_chat(store.as_ref(), text).await
}

/// What `--session` or `--continue` of `run` picks: the session or chat to continue, as
/// a full URI, or none (a new session).
pub(crate) async fn continued_session(
    app: &App,
    session: Option<&str>,
    continue_latest: bool,
    scope: &Scope,
) -> anyhow::Result<Option<String>> {
    if continue_latest {
        let store = app.open_store().await?;
        let here = std::env::current_dir().context("finding the current directory")?;
        let latest = crate::names::latest_session(store.as_ref(), scope, &here).await?;
        return Ok(Some(latest.to_string()));
    }
    match session {
        Some(text) => Ok(Some(resolve_session(app, text).await?)),
        None => Ok(None),
    }
}

/// Finds the chat to send to: the given session's default chat, the given chat, or a new
/// session's default chat on `provider`. A model given with an existing chat switches it.
pub(crate) async fn target_chat(
    host: &Host,
    session: Option<&str>,
    provider: &HarnessId,
    model: Option<&str>,
    scope: &Scope,
) -> anyhow::Result<ChatUri> {
    if let Some(text) = session {
        let uri = if ResourceUri::parse(text).is_ok() {
            text.trim().to_owned()
        } else {
            crate::names::session_or_chat(host.store().as_ref(), text).await?
        };
        let uri = uri.as_str();
        let chat = match ResourceUri::parse(uri)? {
            ResourceUri::Session(session) => ChatUri::default_for(&session),
            ResourceUri::Chat(chat) => chat,
            ResourceUri::Root => bail!("`{uri}` is not a session or chat URI"),
        };
        host.chat(&chat).await?;
        if let Some(model) = model {
            host.set_model(&chat, model.to_owned()).await?;
        }
        return Ok(chat);
    }
    let session = host
        .create_session(NewSessionRequest {
            provider: provider.clone(),
            scope: scope.clone(),
            title: None,
            model: model.map(str::to_owned),
            working_directories: Vec::new(),
            owner: None,
        })
        .await?;
    Ok(ChatUri::default_for(&session))
}

/// Whether a host operation failed because another Hearth process answers in the chat.
pub(crate) fn answering_elsewhere(error: &HostError) -> bool {
    match error {
        HostError::Store(StoreError::Leased { .. }) => true,
        HostError::Shared(inner) => answering_elsewhere(inner),
        _ => false,
    }
}

/// Says on stderr what the store refused to save; returns whether it refused anything.
#[allow(clippy::print_stderr)]
pub(crate) fn report_unsaved(unsaved: &[Unsaved], json: bool) -> anyhow::Result<bool> {
    for item in unsaved {
        eprintln!("hearth: {}", crate::shown::message(&item.to_string()));
        if json {
            let line = serde_json::json!({
                "type": "unsaved",
                "chat": item.chat.to_string(),
                "answers": item.answers(),
                "reason": item.reason,
            });
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(crate::shown::json(&line)?.as_bytes())?;
            stdout.write_all(b"\n")?;
            stdout.flush()?;
        }
    }
    if unsaved.iter().any(|item| item.answers() > 0) {
        eprintln!(
            "hearth: the session keeps the prompt and what was saved before, marked incomplete; the answer printed here is the only copy"
        );
    }
    Ok(!unsaved.is_empty())
}

/// Runs `hearth run`.
#[allow(clippy::print_stderr)]
pub async fn run(app: &App, args: RunArgs) -> anyhow::Result<ExitCode> {
    let prompt = read_prompt(&args.prompt)?;
    if prompt.trim().is_empty() {
        bail!("the prompt is empty");
    }
    let message = crate::attach::message(prompt, &args.attach)?;
    // Refused before anything is created or sent.
    app.limits().check(&message)?;
    let Target {
        project,
        session,
        provider,
        model,
    } = args.target.resolve(app).await?;
    let request = crate::remote::RunRequest {
        message,
        provider: provider.as_deref(),
        project: project.id(),
        model: model.as_deref(),
        session: session.as_deref(),
        json: args.json,
        show_reasoning: args.show_reasoning,
    };
    // A running server answers when there is one (a scenario file is this process's).
    if args.scenario.is_none()
        && let Some(remote) = crate::remote::connect(app).await?
    {
        return crate::remote::run(remote, request).await;
    }
    run_here(app, request, args.scenario, &project.scope).await
}

/// `hearth run` answered by a host in this process.
#[allow(clippy::print_stderr)]
async fn run_here(
    app: &App,
    request: crate::remote::RunRequest<'_>,
    scenario: Option<PathBuf>,
    scope: &Scope,
) -> anyhow::Result<ExitCode> {
    let start = start(
        app,
        request.provider,
        request.session,
        scenario,
        Titles::Skip,
    )
    .await?;
    let chat = start
        .target_chat(request.session, request.model, scope)
        .await?;
    announce(app, &start, &chat);
    let host = start.host;
    let store = start.store;
    let mut interrupts = Interrupts::new()?;
    let output = request.output();
    let mut stream = match TurnStream::local(&host, &chat, request.message).await {
        Ok(stream) => stream,
        Err(error) => {
            host.shutdown().await;
            if answering_elsewhere(&error) {
                eprintln!("hearth: {}", crate::shown::message(&error.to_string()));
                return Ok(ExitCode::from(EXIT_ANSWERING_ELSEWHERE));
            }
            return Err(error.into());
        }
    };
    let Driven::Ended {
        stop_reason,
        broken_output,
    } = follow(&mut stream, &output, &mut interrupts).await?
    else {
        return Ok(leave_now());
    };
    if broken_output.is_none() && stop_reason != StopReason::Aborted {
        review_staged(app, store, &chat, stream.turn_id(), &output).await?;
    }
    // Waits for the turn's writes, retried as needed.
    host.shutdown().await;
    if let Some(error) = broken_output {
        return Err(error.context(if host.unsaved_chats().is_empty() {
            "writing the answer failed; the turn was aborted and its partial answer saved"
        } else {
            "writing the answer failed and the turn was aborted; its partial answer could not be saved either"
        }));
    }
    let unsaved = report_unsaved(&host.unsaved_chats(), request.json)?;
    if unsaved {
        output.session_line(&chat);
        return Ok(ExitCode::from(EXIT_UNSAVED));
    }
    Ok(output.finish(&chat, &stop_reason))
}

/// On a terminal, asks about each change the turn staged (approve, reject, or later).
async fn review_staged(
    app: &App,
    store: std::sync::Arc<dyn hearth_store::Stores>,
    chat: &ChatUri,
    turn: &hearth_core::TurnId,
    output: &Output,
) -> anyhow::Result<()> {
    if output.json {
        return Ok(());
    }
    let Some(mut keyboard) = crate::permissions::terminal_keyboard() else {
        return Ok(());
    };
    crate::decisions::Decisions::new(app, store)?
        .review_turn(chat, turn, &mut keyboard)
        .await
}

/// What `hearth run` prints of its turn, whoever answers it.
pub(crate) struct Output {
    /// Every envelope as a JSON line instead of the answer's text.
    pub json: bool,
    /// The model's reasoning on stderr.
    pub show_reasoning: bool,
}

impl Output {
    /// Says on a terminal which session to continue.
    #[allow(clippy::print_stderr)]
    fn session_line(&self, chat: &ChatUri) {
        if !self.json && std::io::stderr().is_terminal() {
            eprintln!(
                "hearth: session {} (continue with --session)",
                chat.session()
            );
        }
    }

    /// The exit status of a run whose turn ended with `stop_reason`, said after the
    /// session to continue.
    #[allow(clippy::print_stderr)]
    pub(crate) fn finish(&self, chat: &ChatUri, stop_reason: &StopReason) -> ExitCode {
        self.session_line(chat);
        match stop_reason {
            StopReason::Aborted => {
                if !self.json {
                    eprintln!("hearth: turn aborted; the partial answer is saved");
                }
                ExitCode::from(130)
            }
            StopReason::Error => ExitCode::FAILURE,
            _ => ExitCode::SUCCESS,
        }
    }
}

/// Follows a run's turn to its end: the `started` record in JSON, then the answer and
/// its questions as they come.
pub(crate) async fn follow(
    stream: &mut TurnStream<'_>,
    output: &Output,
    interrupts: &mut Interrupts,
) -> anyhow::Result<Driven> {
    if output.json {
        let started = serde_json::json!({
            "type": "started",
            "session": stream.chat().session().to_string(),
            "chat": stream.chat().to_string(),
            "turnId": stream.turn_id().to_string(),
        });
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(crate::shown::json(&started)?.as_bytes())?;
        stdout.write_all(b"\n")?;
    }
    let mut printer = Printer::new(output.json, output.show_reasoning);
    let mut answers = crate::permissions::terminal_keyboard();
    crate::drive::drive(stream, &mut printer, interrupts, answers.as_mut()).await
}

/// Leaving after a second Ctrl-C: the turn is left to stop on its own.
#[allow(clippy::print_stderr)]
pub(crate) fn leave_now() -> ExitCode {
    eprintln!("\nhearth: interrupted again; leaving now");
    ExitCode::from(130)
}
