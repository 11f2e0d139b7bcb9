//! Each real ACP agent (installed by `.ci/install-acp-agents`, run offline against the
//! mock model server) driven through Hearth's harness and a real host, as a user would,
//! in this order:
//!
//! 1. a prompt streams the model's answer into the chat;
//! 2. a file write asks permission in the turn; the user allows it once and the file
//!    lands in the working directory (audited when it is written through Hearth);
//! 3. a write aimed outside the working directory is refused and nothing is written;
//! 4. the agent killed (`kill -9` of its process group) mid-turn: the next prompt
//!    restarts it and reopens the session;
//! 5. an abort mid-turn ends the turn as aborted and keeps what streamed;
//! 6. Hearth restarted with a new harness: the chat is listed with its history and goes
//!    on in the reopened session;
//! 7. the agent's session discovery never lists the sessions behind Hearth's chats (a
//!    peer chat's included) as external ones, and does list a conversation Hearth does
//!    not know (held by the agent from another Hearth database);
//! 8. Hearth restarted again: a session that never had a turn answers its first prompt;
//! 9. a fork of the chat at its last turn, never used before that restart, goes on with
//!    the conversation it copied (the agent reopens it, or a new session that gets the
//!    chat's transcript takes over);
//! 10. a new chat's prompt makes the agent call one of Hearth's lent tools, which stages
//!     a proposal: the call reaches the tools as that chat's (by the chat's token on
//!     the process's one lent-tools endpoint), with the arguments the model sent.
//!
//! Every harness lends the tools as Hearth does: an agent that declares MCP over HTTP
//! (all six do) gets the bench's endpoint, Hearth's own, in this process, over a
//! toolbox that records its calls; any other would get a stdio MCP server (the test
//! agent's).
//!
//! Each agent starts five times: once for the conversation held elsewhere, once for
//! steps 1–5, again after the kill, and once more after each of Hearth's restarts. Where an
//! agent's own behaviour differs (how it writes, how it refuses, its known defects),
//! the tables below say so and the test asserts what the agent really does.
//!
//! An agent that is not installed is skipped with the reason, unless
//! `HEARTH_REQUIRE_ACP_AGENTS=1`. Every wait is bounded; each test prints its timings and
//! what the agent sent in its permission requests.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;
use hearth_core::{
    Action, ChatSeed, ChatUri, Envelope, HarnessId, PermissionAnswer, PermissionOption,
    PermissionOptionKind, ProposalId, Provenance, ResponsePart, Scope, SessionUri, StagedProposal,
    StopReason, ToolCallContent, ToolCallContext, ToolCallOutcome, ToolCallPart, ToolCallStatus,
    ToolDescription, Toolbox, TurnId, UserMessage,
};
use hearth_harness_acp::{
    AcpHarness, AcpOptions, AgentSpec, LentOverHttp, LentTools, PermissionPolicy, Timeouts,
};
use hearth_host::{Host, NewSessionRequest, Subscription};
use hearth_store::SessionQuery;
use hearth_test_support::model_server::Outcome;
use hearth_test_support::real_agents::{AgentLaunch, ModelTurn, RealAgent, ScriptedModel};
use hearth_test_support::{MockModelServer, TestHost};
use hearth_tools::AuditLog;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

/// Bound on one turn of a real agent (its start or restart included).
const TURN: Duration = Duration::from_secs(90);
/// Pause between the events of a slow model answer.
const SLOW: Duration = Duration::from_millis(250);

/// How the file of an allowed write reaches the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WritePath {
    /// The agent writes it itself.
    AgentDisk,
    /// The agent asks Hearth, with `fs/write_text_file`.
    ThroughHearth,
}

fn write_path(agent: RealAgent) -> WritePath {
    match agent {
        RealAgent::ClaudeAgent | RealAgent::Codex | RealAgent::Copilot => WritePath::AgentDisk,
        RealAgent::ClaudeCode | RealAgent::Gemini | RealAgent::OpenCode => WritePath::ThroughHearth,
    }
}

/// What an agent does with a write aimed outside its working directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OutsideWrite {
    /// It asks permission for a tool call that names the file (or its folder), which
    /// Hearth's policy refuses without asking the user.
    AsksNamingIt,
    /// It refuses by itself ("Path not in workspace") and never asks.
    RefusesItself,
}

fn outside_write(agent: RealAgent) -> OutsideWrite {
    match agent {
        RealAgent::Gemini => OutsideWrite::RefusesItself,
        RealAgent::ClaudeAgent
        | RealAgent::ClaudeCode
        | RealAgent::Codex
        | RealAgent::OpenCode
        | RealAgent::Copilot => OutsideWrite::AsksNamingIt,
    }
}

/// How an agent's turn ends after a refused write: Codex offers one way to refuse,
/// "abort", which cancels its turn. (Copilot ends its turn at a refusal too, but as an
/// ordinary end, without asking its model again: see [`notice_after_a_refusal`].)
fn after_refusal(agent: RealAgent) -> StopReason {
    match agent {
        RealAgent::Codex => StopReason::Aborted,
        _ => StopReason::EndTurn,
    }
}

/// The text an agent adds to a turn's answer, of its own, after a file it wrote: GitHub
/// Copilot (1.0.102) sends its `session.info` notices as answer text, "Info: <path>"
/// after a file it created, right before the model's next words (with nothing between
/// them). Hearth shows the text as the agent sent it.
fn notice_after_a_write(agent: RealAgent, path: &std::path::Path) -> String {
    match agent {
        RealAgent::Copilot => format!("Info: {}", path.display()),
        _ => String::new(),
    }
}

/// The text an agent adds of its own after a tool call was refused, where it then ends
/// its turn without asking its model again: Copilot's "Info: Operation cancelled by
/// user". `None`: the agent goes on to its model (which has nothing scripted).
fn notice_after_a_refusal(agent: RealAgent) -> Option<&'static str> {
    match agent {
        RealAgent::Copilot => Some("Info: Operation cancelled by user"),
        _ => None,
    }
}

/// Whether the agent answers the prompt that follows an aborted one. Claude's current
/// adapter (`claude-agent-acp` 0.23.1) ends that prompt at once, without text, and from
/// then on shows each prompt the answer to the one before: its cancelled prompt returns
/// on the interrupted query's result and leaves the query's "idle" notice behind, which
/// the next prompt takes for its own end.
fn answers_after_an_abort(agent: RealAgent) -> bool {
    agent != RealAgent::ClaudeAgent
}

/// Whether the agent can reopen a session only in a later minute than the one it was
/// created in. Gemini CLI (0.61.0) reopens a session (`session/load`) by first starting
/// a new record of it, in a file named after the current minute and the session's id:
/// within the minute the session was created in, that is the session's own file, whose
/// history the new record wipes; the reopening then fails ("Invalid session
/// identifier") and the chat goes on in a new session from Hearth's transcript. The
/// test waits for the next minute, to see the agent's own reopening work.
fn reopens_only_in_a_later_minute(agent: RealAgent) -> bool {
    agent == RealAgent::Gemini
}

/// How an agent answers, after Hearth restarted, `session/load` of a session that never
/// had a turn (a new session, or a fork never used), as measured: Codex and both Claude
/// adapters never saved it ("Resource not found", "Session not found"), Gemini CLI looks
/// for a file the session never got ("Invalid session identifier"); OpenCode saves a
/// session when it makes it, and reopens it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum UnusedReopen {
    /// The agent reopens it.
    Reopens,
    /// The agent refuses; a new session that gets the chat's transcript takes over,
    /// with a notice.
    Refuses,
}

fn unused_reopen(agent: RealAgent) -> UnusedReopen {
    if agent == RealAgent::OpenCode {
        UnusedReopen::Reopens
    } else {
        UnusedReopen::Refuses
    }
}

/// The name an agent gives its model for the lent tool `event_create` of Hearth's MCP
/// server (`hearth`). Every one of the six declares `mcpCapabilities.http` in
/// `initialize`, so each takes Hearth's tools over the process's one HTTP endpoint,
/// with the chat's bearer token (the `hearth mcp --stdio` of its own is not used). Codex
/// offers an MCP server's tools in a Responses `namespace` tool (`mcp__hearth`), listed
/// here as `<namespace>/<tool>`.
fn lent_tool_name(agent: RealAgent) -> &'static str {
    match agent {
        RealAgent::ClaudeAgent | RealAgent::ClaudeCode => "mcp__hearth__event_create",
        RealAgent::Codex => "mcp__hearth/event_create",
        RealAgent::Gemini => "mcp_hearth_event_create",
        RealAgent::OpenCode => "hearth_event_create",
        RealAgent::Copilot => "hearth-event_create",
    }
}

/// Whether an agent asks permission before it calls a lent tool that changes something
/// (the tool is annotated as not read-only, not destructive), as measured: both Claude
/// adapters, Gemini CLI and Copilot ask; Codex (its default approval policy) and
/// OpenCode call it at once.
fn asks_for_a_lent_tool(agent: RealAgent) -> bool {
    match agent {
        RealAgent::ClaudeAgent | RealAgent::ClaudeCode | RealAgent::Gemini | RealAgent::Copilot => {
            true
        }
        RealAgent::Codex | RealAgent::OpenCode => false,
    }
}

/// Waits until the (UTC) minute after the one `since` falls in.
async fn until_the_minute_after(since: SystemTime) {
    let seconds = since
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let next = UNIX_EPOCH + Duration::from_secs((seconds / 60 + 1) * 60);
    let wait = next.duration_since(SystemTime::now()).unwrap_or_default();
    tokio::time::sleep(wait + Duration::from_millis(200)).await;
}

/// The lent tool that stages a proposal, as the tools' server names it.
const LENT_TOOL: &str = "event_create";

/// The proposal [`LENT_TOOL`] stages.
const LENT_PROPOSAL: &str = "p-lent-1";

/// One call of the lent tools: the tool, its arguments, and whose call it was.
#[derive(Clone, Debug)]
struct LentCall {
    name: String,
    arguments: Value,
    context: ToolCallContext,
}

/// Hearth's lent toolbox in little: one mutating tool, which stages a proposal, and a
/// record of every call.
#[derive(Default)]
struct LentToolbox {
    calls: Mutex<Vec<LentCall>>,
}

impl LentToolbox {
    fn calls(&self) -> Vec<LentCall> {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Toolbox for LentToolbox {
    fn tools(&self) -> Vec<ToolDescription> {
        vec![ToolDescription {
            name: LENT_TOOL.into(),
            description: "Adds an event to the user's calendar.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"title": {"type": "string"}},
                "required": ["title"],
            }),
            mutates: true,
        }]
    }

    fn call<'a>(
        &'a self,
        call: &'a ToolCallContext,
        name: &'a str,
        arguments: Value,
    ) -> BoxFuture<'a, ToolCallOutcome> {
        Box::pin(async move {
            self.calls
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(LentCall {
                    name: name.to_owned(),
                    arguments: arguments.clone(),
                    context: call.clone(),
                });
            if name != LENT_TOOL {
                return ToolCallOutcome {
                    content: format!("no tool `{name}`"),
                    is_error: true,
                    proposal: None,
                };
            }
            let title = arguments["title"].as_str().unwrap_or_default();
            ToolCallOutcome {
                content: format!("Staged {LENT_PROPOSAL}: add {title:?}, waiting for approval."),
                is_error: false,
                proposal: Some(StagedProposal {
                    id: ProposalId::parse(LENT_PROPOSAL).unwrap(),
                    summary: format!("Add {title:?}"),
                }),
            }
        })
    }
}

/// The lent-tools endpoint of the bench's Hearth: one HTTP endpoint in this process,
/// as Hearth's binary runs it, recording the chats it lends to.
struct Lending {
    toolbox: Arc<LentToolbox>,
    endpoint: hearth_server::LentEndpoint,
    lent: Mutex<Vec<ChatUri>>,
    stop: CancellationToken,
}

impl Lending {
    fn start() -> Self {
        let toolbox = Arc::new(LentToolbox::default());
        let stop = CancellationToken::new();
        let endpoint = hearth_server::LentEndpoint::start(toolbox.clone(), stop.clone()).unwrap();
        Self {
            toolbox,
            endpoint,
            lent: Mutex::new(Vec::new()),
            stop,
        }
    }

    /// The chats lent the tools over HTTP, in order.
    fn lent(&self) -> Vec<ChatUri> {
        self.lent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl LentOverHttp for Lending {
    fn lend(&self, chat: &ChatUri) -> Option<(String, String)> {
        self.lent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(chat.clone());
        let token = self.endpoint.token_for(chat).unwrap();
        Some((self.endpoint.url().to_owned(), token))
    }

    fn revoke(&self, chat: &ChatUri) {
        self.endpoint.revoke(chat);
    }
}

impl Drop for Lending {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// One real agent set up for Hearth: the mock model it talks to, its home (kept across
/// harness instances and Hearth restarts), the working directory, Hearth's data
/// directory and audit log.
pub(super) struct Bench {
    agent: RealAgent,
    server: MockModelServer,
    pub(super) model: ScriptedModel,
    _home: TempDir,
    work: TempDir,
    pub(super) data: TempDir,
    pub(super) launch: AgentLaunch,
    audit: AuditLog,
    lending: Arc<Lending>,
}

impl Bench {
    pub(super) async fn new(agent: RealAgent) -> Self {
        let server = MockModelServer::start().await.unwrap();
        let model = agent.model();
        model.install(&server);
        let home = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let workdir = work.path().canonicalize().unwrap();
        let launch = agent.prepare(home.path(), &server.url(), &workdir);
        let store = hearth_store::SqliteStore::open(&data.path().join("audit.db"))
            .await
            .unwrap();
        let audit = AuditLog::new(Arc::new(store));
        let lending = Arc::new(Lending::start());
        Self {
            agent,
            server,
            model,
            _home: home,
            work,
            data,
            launch,
            audit,
            lending,
        }
    }

    fn provider(&self) -> HarnessId {
        HarnessId::parse(self.agent.id()).unwrap()
    }

    /// The working directory, canonical.
    pub(super) fn work(&self) -> PathBuf {
        self.work.path().canonicalize().unwrap()
    }

    fn spec(&self) -> AgentSpec {
        AgentSpec {
            id: self.provider(),
            name: self.agent.id().to_owned(),
            command: self.launch.command.clone(),
            args: self.launch.args.clone(),
            env: self.launch.env.clone(),
            pass_env: Vec::new(),
            policy: PermissionPolicy::default(),
            // An agent that takes MCP over HTTP gets the bench's endpoint instead.
            lent_tools: Some(LentTools {
                command: hearth_test_support::acp_test_agent(),
                args: vec!["mcp-server".to_owned()],
                env: Vec::new(),
            }),
            auth_method: None,
            reads_agents_file: false,
        }
    }

    /// A new harness instance for the agent.
    pub(super) fn harness(&self) -> AcpHarness {
        AcpHarness::new(
            self.spec(),
            AcpOptions {
                data_directory: Some(self.data.path().to_path_buf()),
                supervisor: None,
                process_directory: Some(self.work()),
                audit: Some(self.audit.clone()),
                timeouts: Timeouts::default(),
                readable: Vec::new(),
                output_limits: hearth_core::OutputLimits::default(),
                progress: None,
                live: hearth_harness_acp::LiveLimits::default(),
                lent_http: Some(self.lending.clone()),
            },
        )
    }

    /// A session of the agent working in the working directory.
    async fn session(&self, host: &Host) -> SessionUri {
        host.create_session(NewSessionRequest {
            provider: self.provider(),
            scope: Scope::Global,
            title: None,
            model: None,
            working_directories: vec![self.work()],
            owner: None,
        })
        .await
        .unwrap_or_else(|error| panic!("{}: create session: {error}", self.agent.id()))
    }

    /// The audit rows, oldest first, as (kind, decision, outcome, detail).
    async fn audit_rows(&self) -> Vec<(String, String, String, serde_json::Value)> {
        let mut rows = self
            .audit
            .list(&hearth_store::AuditQuery {
                limit: 1000,
                ..hearth_store::AuditQuery::default()
            })
            .await
            .unwrap();
        rows.reverse();
        rows.into_iter()
            .map(|row| {
                (
                    row.entry.kind,
                    row.entry.decision,
                    row.entry.outcome,
                    row.entry.detail.unwrap_or_default(),
                )
            })
            .collect()
    }

    /// The body of the last request of the agent's loop, as text.
    pub(super) fn last_model_request(&self) -> String {
        self.model
            .served()
            .last()
            .map(|served| String::from_utf8_lossy(&served.request.body).into_owned())
            .unwrap_or_default()
    }
}

/// A permission request of a turn, with the tool call it is about as the turn shows it.
#[derive(Clone, Debug)]
pub(super) struct Asked {
    request_id: String,
    title: String,
    options: Vec<PermissionOption>,
    call: Option<ToolCallPart>,
}

impl Asked {
    /// The id of the option of this kind.
    fn option(&self, kind: PermissionOptionKind) -> String {
        self.options
            .iter()
            .find(|option| option.kind == Some(kind))
            .map(|option| option.id.clone())
            .unwrap_or_else(|| panic!("no {kind:?} option in {:#?}", self.options))
    }

    /// The files the call names (its locations and diffs).
    fn paths(&self) -> Vec<PathBuf> {
        let Some(call) = &self.call else {
            return Vec::new();
        };
        call.locations
            .iter()
            .map(|location| PathBuf::from(&location.path))
            .chain(call.content.iter().filter_map(|content| match content {
                ToolCallContent::Diff { path, .. } => Some(PathBuf::from(path)),
                _ => None,
            }))
            .collect()
    }
}

/// What a turn showed.
pub(super) struct Ran {
    envelopes: Vec<Envelope>,
    pub(super) reason: StopReason,
    asked: Vec<Asked>,
    /// Requests answered, as (request id, option id), by the user or by Hearth.
    resolved: Vec<(String, String)>,
}

impl Ran {
    pub(super) fn streamed(&self) -> String {
        self.envelopes
            .iter()
            .filter_map(|envelope| match &envelope.action {
                Action::TextDelta { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    fn deltas(&self) -> usize {
        self.envelopes
            .iter()
            .filter(|envelope| matches!(envelope.action, Action::TextDelta { .. }))
            .count()
    }
}

/// The next envelope of a subscription, failing the test when none comes in time.
async fn next_before(
    subscription: &mut Subscription,
    deadline: tokio::time::Instant,
    what: &str,
) -> Envelope {
    match tokio::time::timeout_at(deadline, subscription.receiver.recv()).await {
        Ok(Ok(envelope)) => envelope,
        Ok(Err(error)) => panic!("{what}: the chat's subscription broke: {error}"),
        Err(_) => panic!("{what}: the turn did not end within {TURN:?}"),
    }
}

/// Sends a prompt; returns the turn and its subscription.
async fn send(host: &Host, chat: &ChatUri, text: &str) -> (TurnId, Subscription) {
    host.send_streaming(chat, UserMessage::text(text))
        .await
        .unwrap_or_else(|error| panic!("send {text:?}: {error}"))
}

/// The tool call of the chat's running turn with this id.
async fn call_of(host: &Host, chat: &ChatUri, call_id: Option<&str>) -> Option<ToolCallPart> {
    let call_id = call_id?;
    let state = host.chat(chat).await.ok()?;
    state
        .turns
        .last()?
        .parts
        .iter()
        .find_map(|part| match part {
            ResponsePart::ToolCall(call) if call.call_id == call_id => Some(call.clone()),
            _ => None,
        })
}

/// Follows a turn until it completes (at most [`TURN`]). Every permission request is
/// handed to `decide`; when it names an option, the user answers with it (a request it
/// leaves is one Hearth's policy answers).
async fn run_turn(
    host: &Host,
    chat: &ChatUri,
    turn_id: &TurnId,
    subscription: &mut Subscription,
    what: &str,
    mut decide: impl FnMut(&Asked) -> Option<String>,
) -> Ran {
    let deadline = tokio::time::Instant::now() + TURN;
    let mut ran = Ran {
        envelopes: Vec::new(),
        reason: StopReason::EndTurn,
        asked: Vec::new(),
        resolved: Vec::new(),
    };
    loop {
        let envelope = next_before(subscription, deadline, what).await;
        match &envelope.action {
            Action::TurnCompleted {
                turn_id: id,
                stop_reason,
                ..
            } if id == turn_id => {
                ran.reason = stop_reason.clone();
                ran.envelopes.push(envelope);
                return ran;
            }
            Action::PartAdded {
                part:
                    ResponsePart::PermissionRequest {
                        request_id,
                        title,
                        options,
                        tool_call_id,
                        ..
                    },
                ..
            } => {
                let asked = Asked {
                    request_id: request_id.clone(),
                    title: title.clone(),
                    options: options.clone(),
                    call: call_of(host, chat, tool_call_id.as_deref()).await,
                };
                if let Some(option_id) = decide(&asked) {
                    host.respond_permission(
                        chat,
                        request_id,
                        &PermissionAnswer {
                            option_id,
                            via: "test".into(),
                        },
                    )
                    .await
                    .unwrap_or_else(|error| panic!("{what}: answering {asked:#?}: {error}"));
                }
                ran.asked.push(asked);
            }
            Action::PermissionResolved {
                request_id,
                outcome,
                ..
            } => ran.resolved.push((request_id.clone(), outcome.clone())),
            _ => {}
        }
        ran.envelopes.push(envelope);
    }
}

/// Waits for the first (non-empty) answer text of a turn (at most [`TURN`]).
async fn until_first_text(subscription: &mut Subscription, turn_id: &TurnId, what: &str) {
    let deadline = tokio::time::Instant::now() + TURN;
    loop {
        match next_before(subscription, deadline, what).await.action {
            // Some agents open their answer with an empty chunk.
            Action::TextDelta { text, .. } if !text.is_empty() => return,
            Action::TurnCompleted {
                turn_id: id,
                stop_reason,
                ..
            } if &id == turn_id => {
                panic!("{what}: the turn ended ({stop_reason:?}) before any text")
            }
            _ => {}
        }
    }
}

pub(super) fn error_of(turn: &hearth_core::Turn) -> String {
    turn.parts
        .iter()
        .filter_map(|part| match part {
            ResponsePart::Error { message } => Some(message.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The last turn of a chat.
pub(super) async fn last_turn(host: &Host, chat: &ChatUri) -> hearth_core::Turn {
    host.chat(chat)
        .await
        .unwrap()
        .turns
        .last()
        .cloned()
        .unwrap()
}

/// The conversations of a session's chats, as Hearth recorded them.
async fn conversations(test: &TestHost, session: &SessionUri) -> Vec<String> {
    test.store
        .chats(session)
        .await
        .unwrap()
        .into_iter()
        .map(|record| {
            record
                .conversation
                .map(|conversation| conversation.as_str().to_owned())
                .unwrap_or_else(|| panic!("chat {} has no conversation", record.summary.uri))
        })
        .collect()
}

/// The pieces of a slow answer.
fn ticks(count: usize) -> Vec<String> {
    (1..=count).map(|tick| format!("tick {tick} ")).collect()
}

fn paced(count: usize) -> ModelTurn {
    let pieces = ticks(count);
    let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
    ModelTurn::paced(&pieces, SLOW)
}

/// Times of the steps of a run.
struct Clock {
    started: Instant,
    last: Instant,
    steps: Vec<(&'static str, Duration)>,
}

impl Clock {
    fn start() -> Self {
        let now = Instant::now();
        Self {
            started: now,
            last: now,
            steps: Vec::new(),
        }
    }

    fn lap(&mut self, step: &'static str) {
        let now = Instant::now();
        self.steps.push((step, now - self.last));
        self.last = now;
    }
}

/// A prompt, and its turn followed to the end (see [`run_turn`]).
pub(super) async fn ask(
    host: &Host,
    chat: &ChatUri,
    text: &str,
    decide: impl FnMut(&Asked) -> Option<String>,
) -> Ran {
    let (turn_id, mut subscription) = send(host, chat, text).await;
    run_turn(host, chat, &turn_id, &mut subscription, text, decide).await
}

/// Leaves every permission request to Hearth's policy (one that waits for the user
/// holds the turn until its bound, and the test fails).
pub(super) fn no_answer(_: &Asked) -> Option<String> {
    None
}

/// Where the model's answer to the last request of the agent's loop went, once it ended.
async fn last_model_outcome(bench: &Bench) -> Option<Outcome> {
    let served = bench.model.served().pop()?;
    let index = bench
        .server
        .requests()
        .iter()
        .position(|request| *request == served.request)?;
    bench.server.wait_for_outcome(index, TURN).await
}

/// A conversation the agent had outside this Hearth (through another database), for
/// discovery to find; returns the agent's session id.
async fn conversation_elsewhere(bench: &Bench) -> String {
    let elsewhere = TestHost::start(vec![Arc::new(bench.harness())]).await;
    let session = bench.session(&elsewhere.host).await;
    let chat = ChatUri::default_for(&session);
    bench.model.push(ModelTurn::text("noted elsewhere"));
    let ran = ask(&elsewhere.host, &chat, "written elsewhere", no_answer).await;
    assert_eq!(ran.reason, StopReason::EndTurn, "{}", bench.agent.id());
    let conversation = conversations(&elsewhere, &session).await.remove(0);
    elsewhere.host.shutdown().await;
    conversation
}

/// The model's answer streams into the chat.
async fn streams_an_answer(bench: &Bench, host: &Host, chat: &ChatUri) {
    let id = bench.agent.id();
    bench.model.push(ModelTurn::text("pong"));
    let ran = ask(host, chat, "say ping", no_answer).await;
    assert_eq!(ran.reason, StopReason::EndTurn, "{id}");
    assert!(ran.deltas() > 0, "{id}: no text streamed");
    assert_eq!(ran.streamed(), "pong", "{id}");
    assert_eq!(last_turn(host, chat).await.response_text(), "pong", "{id}");
}

/// A write inside the working directory asks permission in the turn; the user allows it
/// once and the file lands, audited when it is written through Hearth.
async fn writes_what_the_user_allows(bench: &Bench, host: &Host, chat: &ChatUri) {
    let id = bench.agent.id();
    let target = bench.work().join("hello.txt");
    let content = "hello from hearth\n";
    bench
        .model
        .push(ModelTurn::write_file(&target, content))
        .push(ModelTurn::text("done"));
    let ran = ask(host, chat, "create hello.txt", |asked| {
        Some(asked.option(PermissionOptionKind::AllowOnce))
    })
    .await;
    let turn = last_turn(host, chat).await;
    assert_eq!(ran.reason, StopReason::EndTurn, "{id}: {}", error_of(&turn));
    assert_eq!(ran.asked.len(), 1, "{id}: {:#?}", ran.asked);
    let asked = &ran.asked[0];
    eprintln!("{id}: the permission request of a write: {asked:#?}");
    assert!(!asked.title.is_empty(), "{id}: {asked:#?}");
    assert!(asked.paths().contains(&target), "{id}: {asked:#?}");
    assert_eq!(
        ran.resolved,
        vec![(
            asked.request_id.clone(),
            asked.option(PermissionOptionKind::AllowOnce)
        )],
        "{id}"
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), content, "{id}");
    assert_eq!(
        turn.response_text(),
        format!("{}done", notice_after_a_write(bench.agent, &target)),
        "{id}"
    );
    let rows = bench.audit_rows().await;
    let writes: Vec<_> = rows
        .iter()
        .filter(|(kind, _, _, _)| kind == "file_write")
        .collect();
    match write_path(bench.agent) {
        WritePath::ThroughHearth => {
            assert_eq!(writes.len(), 1, "{id}: {rows:#?}");
            let (_, decision, _, detail) = writes[0];
            assert_eq!(decision, "written", "{id}");
            assert_eq!(detail["path"], target.display().to_string(), "{id}");
            assert!(detail["hashes"]["before"].is_null(), "{id}: {detail}");
            assert_eq!(
                detail["hashes"]["after"].as_str().map(str::len),
                Some(64),
                "{id}: {detail}"
            );
        }
        WritePath::AgentDisk => assert!(writes.is_empty(), "{id}: {rows:#?}"),
    }
}

/// A write aimed outside the working directory is refused and nothing is written.
async fn refuses_a_write_outside(bench: &Bench, host: &Host, chat: &ChatUri) {
    let id = bench.agent.id();
    let outside = tempfile::tempdir().unwrap();
    let escape = outside.path().canonicalize().unwrap().join("escape.txt");
    let audited_before = bench.audit_rows().await.len();
    let served_before = bench.model.served().len();
    // No answer is scripted after the refusal: some agents end their turn there, the
    // others get the mock model's note that nothing was scripted.
    bench
        .model
        .push(ModelTurn::write_file(&escape, "escaped\n"));
    // A request is left to Hearth's policy; one that waited for the user would hold the
    // turn until its bound and fail the test.
    let ran = ask(host, chat, "create escape.txt", no_answer).await;
    let turn = last_turn(host, chat).await;
    assert!(!escape.exists(), "{id}: the file outside was written");
    assert_eq!(
        ran.reason,
        after_refusal(bench.agent),
        "{id}: {}",
        error_of(&turn)
    );
    let rows = bench.audit_rows().await;
    let new_rows = &rows[audited_before..];
    assert!(
        !new_rows.iter().any(|(kind, _, _, _)| kind == "file_write"),
        "{id}: {new_rows:#?}"
    );
    if let Some(notice) = notice_after_a_refusal(bench.agent) {
        // The turn ended with the agent's notice; the model was asked for the write only.
        assert_eq!(turn.response_text(), notice, "{id}");
        assert_eq!(bench.model.served().len(), served_before + 1, "{id}");
    }
    match outside_write(bench.agent) {
        OutsideWrite::AsksNamingIt => {
            assert_eq!(ran.asked.len(), 1, "{id}: {:#?}", ran.asked);
            let asked = &ran.asked[0];
            eprintln!("{id}: the permission request of a write outside: {asked:#?}");
            assert!(
                asked
                    .paths()
                    .iter()
                    .any(|path| path.starts_with(outside.path().canonicalize().unwrap())),
                "{id}: {asked:#?}"
            );
            assert_eq!(
                ran.resolved,
                vec![(
                    asked.request_id.clone(),
                    asked.option(PermissionOptionKind::RejectOnce)
                )],
                "{id}"
            );
            let decisions: Vec<(&str, &str)> = new_rows
                .iter()
                .map(|(kind, decision, _, _)| (kind.as_str(), decision.as_str()))
                .collect();
            assert_eq!(
                decisions,
                vec![("permission", "requested"), ("permission", "policy")],
                "{id}: {new_rows:#?}"
            );
            assert!(
                new_rows[1]
                    .2
                    .contains("is outside the session's working directories"),
                "{id}: {new_rows:#?}"
            );
        }
        OutsideWrite::RefusesItself => {
            // Nothing reached Hearth: no permission request, no file request, so
            // nothing to audit; the agent's tool call failed on its own check.
            assert!(ran.asked.is_empty(), "{id}: {:#?}", ran.asked);
            assert!(new_rows.is_empty(), "{id}: {new_rows:#?}");
            let failed = turn.parts.iter().find_map(|part| match part {
                ResponsePart::ToolCall(call) => Some(call.clone()),
                _ => None,
            });
            let failed = failed.unwrap_or_else(|| panic!("{id}: no tool call in {turn:#?}"));
            eprintln!("{id}: its own refusal of a write outside: {failed:#?}");
            assert_eq!(failed.status, ToolCallStatus::Failed, "{id}: {failed:#?}");
        }
    }
}

/// The agent killed (`kill -9` of its process group) mid-turn: the turn ends with an
/// error that says so and keeps what streamed; the next prompt restarts the agent and
/// reopens the session, which still holds the conversation.
async fn survives_a_kill(
    bench: &Bench,
    host: &Host,
    harness: &AcpHarness,
    chat: &ChatUri,
    created: SystemTime,
) {
    let id = bench.agent.id();
    bench.model.push(paced(40));
    let (turn_id, mut subscription) = send(host, chat, "count slowly").await;
    until_first_text(&mut subscription, &turn_id, "kill").await;
    let pid = harness.process_id().await.expect("the agent runs");
    rustix::process::kill_process_group(
        rustix::process::Pid::from_raw(i32::try_from(pid).unwrap()).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    let ran = run_turn(host, chat, &turn_id, &mut subscription, "kill", no_answer).await;
    let turn = last_turn(host, chat).await;
    assert_eq!(ran.reason, StopReason::Error, "{id}");
    assert!(
        turn.response_text().starts_with("tick 1 "),
        "{id}: what streamed is kept: {turn:#?}"
    );
    let error = error_of(&turn);
    assert!(error.contains("killed by signal 9"), "{id}: {error}");
    if reopens_only_in_a_later_minute(bench.agent) {
        until_the_minute_after(created).await;
    }
    bench.model.push(ModelTurn::text("back again"));
    let ran = ask(host, chat, "are you back?", no_answer).await;
    let turn = last_turn(host, chat).await;
    assert_eq!(ran.reason, StopReason::EndTurn, "{id}: {}", error_of(&turn));
    assert_eq!(ran.streamed(), "back again", "{id}");
    assert_ne!(harness.process_id().await, Some(pid), "{id}: a new process");
    assert!(
        bench.last_model_request().contains("say ping"),
        "{id}: the reopened session lost the conversation"
    );
}

/// An abort mid-turn ends the turn as aborted, keeps what streamed, and stops the
/// model's answer; the chat goes on.
async fn aborts_mid_turn(bench: &Bench, host: &Host, chat: &ChatUri) {
    let id = bench.agent.id();
    bench.model.push(paced(40));
    let (turn_id, mut subscription) = send(host, chat, "count slowly again").await;
    until_first_text(&mut subscription, &turn_id, "abort").await;
    assert!(host.abort(chat).await.unwrap(), "{id}: no turn ran");
    let ran = run_turn(host, chat, &turn_id, &mut subscription, "abort", no_answer).await;
    let turn = last_turn(host, chat).await;
    assert_eq!(ran.reason, StopReason::Aborted, "{id}: {}", error_of(&turn));
    let kept = turn.response_text();
    eprintln!("{id}: an aborted turn kept {kept:?}");
    assert!(kept.starts_with("tick 1 "), "{id}: kept {kept:?}");
    assert!(kept.len() < ticks(40).concat().len(), "{id}: kept {kept:?}");
    // The agent hung up on the model: the rest of the answer was never sent.
    assert_eq!(
        last_model_outcome(bench).await,
        Some(Outcome::ClientGone),
        "{id}"
    );

    let served = bench.model.served().len();
    bench.model.push(ModelTurn::text("still listening"));
    let ran = ask(host, chat, "are you still there?", no_answer).await;
    let turn = last_turn(host, chat).await;
    assert_eq!(ran.reason, StopReason::EndTurn, "{id}: {}", error_of(&turn));
    if answers_after_an_abort(bench.agent) {
        assert_eq!(ran.streamed(), "still listening", "{id}");
    } else {
        // The answer is held back by the agent (it would come with the next prompt);
        // the model was asked all the same.
        assert_eq!(ran.streamed(), "", "{id}");
        assert!(
            bench.model.wait_for_served(served + 1, TURN).await,
            "{id}: the model was not asked"
        );
    }
}

/// Hearth restarted with a new harness instance: the chat is listed with its history,
/// and a prompt in it reopens the agent's session, which still holds the conversation.
async fn goes_on_after_a_restart(bench: &Bench, test: &TestHost, session: &SessionUri) {
    let id = bench.agent.id();
    let chat = ChatUri::default_for(session);
    let page = test
        .host
        .list_sessions(&SessionQuery::default())
        .await
        .unwrap();
    assert!(
        page.sessions.iter().any(|summary| &summary.uri == session),
        "{id}: {page:#?}"
    );
    let state = test.host.chat(&chat).await.unwrap();
    let history: Vec<(&str, String)> = state
        .turns
        .iter()
        .map(|turn| (turn.user.text.as_str(), turn.response_text()))
        .collect();
    assert_eq!(history.len(), 7, "{id}: {history:#?}");
    assert_eq!(history[0], ("say ping", "pong".to_owned()), "{id}");
    let target = bench.work().join("hello.txt");
    assert_eq!(
        history[1],
        (
            "create hello.txt",
            format!("{}done", notice_after_a_write(bench.agent, &target))
        ),
        "{id}"
    );
    assert_eq!(
        history[4],
        ("are you back?", "back again".to_owned()),
        "{id}"
    );
    bench.model.push(ModelTurn::text("still here"));
    let ran = ask(&test.host, &chat, "after the restart", no_answer).await;
    let turn = last_turn(&test.host, &chat).await;
    assert_eq!(ran.reason, StopReason::EndTurn, "{id}: {}", error_of(&turn));
    assert_eq!(ran.streamed(), "still here", "{id}");
    assert!(
        bench.last_model_request().contains("say ping"),
        "{id}: the reopened session lost the conversation"
    );
    // Stopped with Hearth, the agent had time to save the last turn (Claude Code writes
    // its transcripts in batches, and loses the last one when it is killed at once).
    assert!(
        bench.last_model_request().contains("are you still there?"),
        "{id}: the agent forgot the last turn before the restart"
    );
    assert_eq!(
        test.host.chat(&chat).await.unwrap().turns.len(),
        8,
        "{id}: the agent's replay added turns"
    );
}

/// A peer chat's session, like the default chat's, is never listed as an external
/// session by the agent's discovery; the conversation Hearth does not know is. Returns
/// whether the agent lists its sessions.
async fn discovery_skips_our_sessions(
    bench: &Bench,
    test: &TestHost,
    harness: &AcpHarness,
    session: &SessionUri,
    elsewhere: &str,
) -> bool {
    let id = bench.agent.id();
    let peer = test
        .host
        .create_chat(session, ChatSeed::Fresh)
        .await
        .unwrap();
    bench.model.push(ModelTurn::text("peer pong"));
    let ran = ask(&test.host, &peer, "peer talk", no_answer).await;
    assert_eq!(ran.reason, StopReason::EndTurn, "{id}");
    assert_eq!(ran.streamed(), "peer pong", "{id}");
    let ours = conversations(test, session).await;
    assert_eq!(ours.len(), 2, "{id}: {ours:?}");
    test.host.start_harness(&bench.provider()).await.unwrap();
    let page = test
        .host
        .list_sessions(&SessionQuery::default())
        .await
        .unwrap();
    let external: Vec<&str> = page
        .sessions
        .iter()
        .filter(|summary| summary.provenance == Provenance::External)
        .map(|summary| summary.uri.id().as_str())
        .collect();
    assert!(
        external
            .iter()
            .all(|conversation| !ours.iter().any(|our| our == conversation)),
        "{id}: a session behind our chats was listed as external: {page:#?}"
    );
    let lists = harness.status().expect("the agent started").list;
    if lists {
        assert_eq!(external, vec![elsewhere], "{id}: {page:#?}");
    } else {
        assert!(external.is_empty(), "{id}: {page:#?}");
    }
    lists
}

/// A chat whose agent session is to be reopened after Hearth's next restart: a session
/// that never had a turn, and a fork of the chat at its last turn, never used.
struct Unused {
    session: SessionUri,
    fork: ChatUri,
}

/// Makes a session that gets no turn and a fork of the chat at its last turn, both left
/// unused until Hearth restarts.
async fn leaves_a_session_and_a_fork_unused(bench: &Bench, host: &Host, chat: &ChatUri) -> Unused {
    let id = bench.agent.id();
    let session = bench.session(host).await;
    let last = last_turn(host, chat).await;
    let fork = host
        .create_chat(
            &chat.session(),
            ChatSeed::Fork {
                source_chat: chat.clone(),
                turn_id: last.id,
            },
        )
        .await
        .unwrap_or_else(|error| panic!("{id}: fork: {error}"));
    Unused { session, fork }
}

/// How reopening a chat's session went, as the chat's last turn shows it (the notice of
/// a new session taking over, or none when the agent reopened it), checked against
/// [`unused_reopen`]; returns it for the report.
fn reopening(agent: RealAgent, turn: &hearth_core::Turn) -> String {
    let id = agent.id();
    let notice = turn.parts.iter().find_map(|part| match part {
        ResponsePart::Notice { message } => Some(message.clone()),
        _ => None,
    });
    match (unused_reopen(agent), notice) {
        (UnusedReopen::Refuses, Some(notice)) => {
            assert!(notice.contains("could not reopen"), "{id}: {notice}");
            format!("refused, a new session took over ({notice})")
        }
        (UnusedReopen::Reopens, None) => "reopened by the agent".to_owned(),
        (expected, notice) => panic!("{id}: expected {expected:?}, the turn shows {notice:?}"),
    }
}

/// A session that had no turn before Hearth restarted answers its first prompt (the
/// agent reopens it, or, as agents that keep only used sessions refuse, a new session
/// takes over with a notice). Returns what happened, for the report.
async fn an_unused_session_answers_after_a_restart(
    bench: &Bench,
    test: &TestHost,
    unused: &Unused,
) -> String {
    let id = bench.agent.id();
    let chat = ChatUri::default_for(&unused.session);
    bench.model.push(ModelTurn::text("first words"));
    let ran = ask(&test.host, &chat, "hello, new session", no_answer).await;
    let turn = last_turn(&test.host, &chat).await;
    assert_eq!(ran.reason, StopReason::EndTurn, "{id}: {}", error_of(&turn));
    assert_eq!(ran.streamed(), "first words", "{id}");
    reopening(bench.agent, &turn)
}

/// A fork of the chat at its last turn, never used before Hearth restarted, goes on:
/// the model is asked with the conversation the fork copied. Returns what happened,
/// for the report.
async fn a_fork_goes_on_after_a_restart(bench: &Bench, test: &TestHost, unused: &Unused) -> String {
    let id = bench.agent.id();
    bench.model.push(ModelTurn::text("forked answer"));
    let ran = ask(&test.host, &unused.fork, "and in the fork?", no_answer).await;
    let turn = last_turn(&test.host, &unused.fork).await;
    assert_eq!(ran.reason, StopReason::EndTurn, "{id}: {}", error_of(&turn));
    assert_eq!(ran.streamed(), "forked answer", "{id}");
    let request = bench.last_model_request();
    assert!(
        request.contains("say ping") && request.contains("after the restart"),
        "{id}: the fork lost the conversation it copied: {request}"
    );
    reopening(bench.agent, &turn)
}

/// Allows a request once where it offers that (a request it leaves is one Hearth's
/// policy answers).
fn allow_once(asked: &Asked) -> Option<String> {
    asked
        .options
        .iter()
        .find(|option| option.kind == Some(PermissionOptionKind::AllowOnce))
        .map(|option| option.id.clone())
}

/// A new chat's prompt makes the agent call one of Hearth's lent tools: the tools are
/// lent to that chat over the HTTP endpoint, the toolbox is called once, with the
/// arguments the model sent, as the chat that asked (by its token), and the proposal it
/// staged reaches the model. Returns what happened, for the report.
async fn lent_tools_work_for_the_chat(bench: &Bench, host: &Host) -> String {
    let id = bench.agent.id();
    // The agent's session may be opened with Hearth's (the tools lent then).
    let lent_before = bench.lending.lent().len();
    let session = bench.session(host).await;
    let chat = ChatUri::default_for(&session);
    let served_before = bench.model.served().len();
    let arguments = json!({"title": "Dentist at 9"});
    bench
        .model
        .push(ModelTurn::tool_call_ending_with(
            LENT_TOOL,
            arguments.clone(),
        ))
        .push(ModelTurn::text("staged"));
    let ran = ask(host, &chat, "put the dentist in my calendar", allow_once).await;
    let turn = last_turn(host, &chat).await;
    let served = bench.model.served();
    let offered = served.get(served_before).map(|first| {
        (
            bench.model.tool_ending_with(&first.request, LENT_TOOL),
            bench.model.advertised_tools(&first.request),
        )
    });
    let Some((Some(name), _)) = &offered else {
        panic!("{id}: no tool ending with {LENT_TOOL:?} offered: {offered:?}");
    };
    assert_eq!(name, lent_tool_name(bench.agent), "{id}");
    assert_eq!(ran.reason, StopReason::EndTurn, "{id}: {}", error_of(&turn));
    assert_eq!(ran.streamed(), "staged", "{id}: {turn:#?}");
    assert_eq!(served.len(), served_before + 2, "{id}");

    let lent = bench.lending.lent();
    assert!(
        lent[lent_before..].contains(&chat),
        "{id}: lent to {lent:?}"
    );
    let calls = bench.lending.toolbox.calls();
    assert_eq!(calls.len(), 1, "{id}: {calls:#?}");
    let call = &calls[0];
    assert_eq!(call.name, LENT_TOOL, "{id}");
    assert_eq!(call.arguments, arguments, "{id}");
    assert_eq!(call.context.chat, chat, "{id}: the call was not the chat's");
    assert_eq!(call.context.session, session, "{id}");
    let result = bench.last_model_request();
    assert!(
        result.contains(LENT_PROPOSAL),
        "{id}: the staged proposal did not reach the model: {result}"
    );

    if asks_for_a_lent_tool(bench.agent) {
        assert_eq!(ran.asked.len(), 1, "{id}: {:#?}", ran.asked);
        let asked = &ran.asked[0];
        eprintln!("{id}: the permission request of a lent tool: {asked:#?}");
        assert_eq!(
            ran.resolved,
            vec![(
                asked.request_id.clone(),
                asked.option(PermissionOptionKind::AllowOnce)
            )],
            "{id}"
        );
    } else {
        assert!(ran.asked.is_empty(), "{id}: {:#?}", ran.asked);
    }
    let asked: Vec<&str> = ran.asked.iter().map(|asked| asked.title.as_str()).collect();
    format!(
        "over HTTP, offered as {name:?}, permission {}",
        if asked.is_empty() {
            "not asked".to_owned()
        } else {
            format!("asked ({asked:?}), allowed once")
        }
    )
}

async fn scenario(agent: RealAgent) {
    if agent.locate_or_skip().is_none() {
        return;
    }
    let id = agent.id();
    let mut clock = Clock::start();
    let bench = Bench::new(agent).await;

    let elsewhere = conversation_elsewhere(&bench).await;
    clock.lap("a conversation elsewhere (its own start)");

    let harness = bench.harness();
    let test = TestHost::start(vec![Arc::new(harness.clone())]).await;
    let session = bench.session(&test.host).await;
    let created = SystemTime::now();
    let chat = ChatUri::default_for(&session);
    clock.lap("start, session/new");
    streams_an_answer(&bench, &test.host, &chat).await;
    clock.lap("an answer streams");
    writes_what_the_user_allows(&bench, &test.host, &chat).await;
    clock.lap("a write the user allows");
    refuses_a_write_outside(&bench, &test.host, &chat).await;
    clock.lap("a write outside refused");
    survives_a_kill(&bench, &test.host, &harness, &chat, created).await;
    clock.lap(if reopens_only_in_a_later_minute(agent) {
        "kill -9 mid-turn, the next minute, restart, session/load"
    } else {
        "kill -9 mid-turn, restart, session/load"
    });
    aborts_mid_turn(&bench, &test.host, &chat).await;
    clock.lap("abort mid-turn, the next prompt");

    let harness = bench.harness();
    let test = test.restart(vec![Arc::new(harness.clone())]).await;
    goes_on_after_a_restart(&bench, &test, &session).await;
    clock.lap("Hearth restarted, session/load");
    let lists = discovery_skips_our_sessions(&bench, &test, &harness, &session, &elsewhere).await;
    clock.lap("a peer chat, discovery");
    let unused = leaves_a_session_and_a_fork_unused(&bench, &test.host, &chat).await;
    clock.lap("a session and a fork left unused");

    let harness = bench.harness();
    let test = test.restart(vec![Arc::new(harness.clone())]).await;
    let unused_session = an_unused_session_answers_after_a_restart(&bench, &test, &unused).await;
    clock.lap("Hearth restarted, the unused session answers");
    let fork = a_fork_goes_on_after_a_restart(&bench, &test, &unused).await;
    clock.lap("the unused fork goes on");
    let last_reopen = harness.status().and_then(|status| status.last_reopen);
    assert_eq!(
        last_reopen.as_ref().map(|last| last.reopened),
        Some(unused_reopen(agent) == UnusedReopen::Reopens),
        "{id}: {last_reopen:?}"
    );
    let lent = lent_tools_work_for_the_chat(&bench, &test.host).await;
    clock.lap("a new chat calls a lent tool");
    assert_eq!(bench.model.pending(), 0, "{id}: scripted answers left");
    test.host.shutdown().await;

    eprintln!(
        "==== {id}: {:?} in all; {} requests of the agent's loop, {} incidental; discovery {}",
        clock.started.elapsed(),
        bench.model.served().len(),
        bench.model.incidental().len(),
        if lists {
            "lists sessions"
        } else {
            "not offered"
        }
    );
    eprintln!("  reopening a session with no turn: {unused_session}");
    eprintln!("  reopening an unused fork: {fork}");
    eprintln!("  last reopening recorded: {last_reopen:?}");
    eprintln!("  lent tools: {lent}");
    for (step, time) in &clock.steps {
        eprintln!("  {step}: {time:?}");
    }
}

#[tokio::test]
async fn claude_agent_acp_through_hearth() {
    scenario(RealAgent::ClaudeAgent).await;
}

#[tokio::test]
async fn claude_code_acp_through_hearth() {
    scenario(RealAgent::ClaudeCode).await;
}

#[tokio::test]
async fn codex_acp_through_hearth() {
    scenario(RealAgent::Codex).await;
}

#[tokio::test]
async fn gemini_cli_through_hearth() {
    scenario(RealAgent::Gemini).await;
}

#[tokio::test]
async fn opencode_through_hearth() {
    scenario(RealAgent::OpenCode).await;
}

#[tokio::test]
async fn copilot_through_hearth() {
    scenario(RealAgent::Copilot).await;
}
