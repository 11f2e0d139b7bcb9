//! Each real ACP agent, started as installed by `.ci/install-acp-agents` and driven by a
//! raw ACP client (the client side of `agent-client-protocol`) against the mock model
//! server: initialize, a new session, a prompt answered with text, and a prompt whose
//! answer is the agent's own file-writing tool — which must ask permission, and write
//! the file either itself or through the client's `fs/write_text_file`.
//!
//! An agent that is not installed is skipped with the reason, unless
//! `HEARTH_REQUIRE_ACP_AGENTS=1`. Every wait is bounded. Each test prints what it saw
//! (initialize and session/new answers, the requests made to the model, timings and
//! memory) for `--no-capture` runs.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ContentBlock, FileSystemCapabilities, Implementation, InitializeRequest,
    NewSessionRequest, PermissionOptionKind, PromptRequest, ReadTextFileRequest,
    ReadTextFileResponse, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, SessionNotification, SessionUpdate,
    StopReason, TextContent, WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::{ByteStreams, Client};
use hearth_test_support::real_agents::{ModelTurn, RealAgent};
use hearth_test_support::{MockModelServer, RecordedRequest};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

/// Bound on starting an agent (initialize, then session/new).
const STARTUP: Duration = Duration::from_secs(90);
/// Bound on one prompt turn.
const TURN: Duration = Duration::from_secs(90);
/// Lines of the agent's stderr kept for error messages.
const STDERR_LINES: usize = 40;

/// How the file of the write prompt reached the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WritePath {
    /// The agent wrote it itself.
    AgentDisk,
    /// The agent asked the client, with `fs/write_text_file`.
    ClientFs,
}

/// Each agent's way, as its pinned version does it.
fn expected_write_path(agent: RealAgent) -> WritePath {
    match agent {
        RealAgent::ClaudeAgent | RealAgent::Codex | RealAgent::Copilot => WritePath::AgentDisk,
        RealAgent::ClaudeCode | RealAgent::Gemini | RealAgent::OpenCode => WritePath::ClientFs,
    }
}

/// What the client saw of the agent.
#[derive(Default)]
struct ClientLog {
    updates: Vec<SessionUpdate>,
    permissions: Vec<RequestPermissionRequest>,
    reads: Vec<PathBuf>,
    writes: Vec<(PathBuf, String)>,
}

type SharedLog = Arc<Mutex<ClientLog>>;

fn lock(log: &SharedLog) -> std::sync::MutexGuard<'_, ClientLog> {
    log.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The agent's process group, killed when dropped: several agents outlive a closed
/// stdin, and the Claude adapters run Claude Code as a child process.
struct AgentProcess {
    child: tokio::process::Child,
    group: rustix::process::Pid,
}

impl AgentProcess {
    /// Resident memory of every process in the group, in KiB.
    fn group_rss_kib(&self) -> u64 {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return 0;
        };
        entries
            .filter_map(Result::ok)
            .filter(|entry| {
                entry
                    .file_name()
                    .to_str()
                    .is_some_and(|name| name.bytes().all(|byte| byte.is_ascii_digit()))
            })
            .filter(|entry| process_group_of(&entry.path()) == Some(self.group.as_raw_pid()))
            .filter_map(|entry| rss_kib(&entry.path()))
            .sum()
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        if let Err(error) =
            rustix::process::kill_process_group(self.group, rustix::process::Signal::KILL)
        {
            eprintln!("could not kill process group {:?}: {error}", self.group);
        }
        if let Err(error) = self.child.start_kill() {
            eprintln!("could not kill the agent: {error}");
        }
    }
}

/// The process group in `/proc/<pid>/stat` (the field after state, parent).
fn process_group_of(process: &Path) -> Option<i32> {
    let stat = std::fs::read_to_string(process.join("stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(2)?.parse().ok()
}

fn rss_kib(process: &Path) -> Option<u64> {
    let status = std::fs::read_to_string(process.join("status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The agent's stderr, read continuously (a full pipe would block the agent); the
/// last lines are kept.
fn keep_stderr(stderr: tokio::process::ChildStderr) -> Arc<Mutex<VecDeque<String>>> {
    let tail = Arc::new(Mutex::new(VecDeque::new()));
    let kept = Arc::clone(&tail);
    tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let mut tail = kept.lock().unwrap_or_else(PoisonError::into_inner);
            if tail.len() == STDERR_LINES {
                tail.pop_front();
            }
            tail.push_back(line);
        }
    });
    tail
}

fn agent_text(log: &SharedLog) -> String {
    lock(log)
        .updates
        .iter()
        .filter_map(|update| match update {
            SessionUpdate::AgentMessageChunk(chunk) => match &chunk.content {
                ContentBlock::Text(text) => Some(text.text.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// The text of a file for `fs/read_text_file`: from `line` (1-based), at most `limit`
/// lines; a missing file reads as empty (Gemini CLI reads a file before creating it,
/// and gives up on the write when the read fails).
fn read_for_agent(request: &ReadTextFileRequest) -> String {
    let Ok(text) = std::fs::read_to_string(&request.path) else {
        return String::new();
    };
    if request.line.is_none() && request.limit.is_none() {
        return text;
    }
    let skip = request.line.map_or(0, |line| line.saturating_sub(1)) as usize;
    let take = request.limit.map_or(usize::MAX, |limit| limit as usize);
    text.split_inclusive('\n').skip(skip).take(take).collect()
}

/// Runs `future` with a deadline, naming the step when it is missed.
async fn within<T>(
    bound: Duration,
    step: &str,
    future: impl Future<Output = Result<T, agent_client_protocol::Error>>,
) -> Result<T, agent_client_protocol::Error> {
    match tokio::time::timeout(bound, future).await {
        Ok(result) => result,
        Err(_) => Err(agent_client_protocol::Error::internal_error()
            .data(format!("{step}: no answer within {bound:?}"))),
    }
}

fn abbreviated(text: String, limit: usize) -> String {
    if text.len() <= limit {
        return text;
    }
    let cut = (0..=limit)
        .rev()
        .find(|index| text.is_char_boundary(*index))
        .unwrap_or(0);
    format!("{}… ({} bytes)", &text[..cut], text.len())
}

fn describe(request: &RecordedRequest) -> String {
    format!(
        "{} {} ({} bytes)",
        request.method,
        request.path,
        request.body.len()
    )
}

/// What one run measured, printed at the end.
struct Report {
    initialize: String,
    new_session: String,
    initialize_time: Duration,
    new_session_time: Duration,
    first_prompt_time: Duration,
    write_prompt_time: Duration,
    rss_after_start_kib: u64,
    rss_at_end_kib: u64,
}

async fn say_ping_then_write_a_file(agent: RealAgent) {
    if agent.locate_or_skip().is_none() {
        return;
    }
    let server = MockModelServer::start().await.unwrap();
    let model = agent.model();
    model.install(&server);
    let home = tempfile::tempdir().unwrap();
    let workdir_holder = tempfile::tempdir().unwrap();
    let workdir = workdir_holder.path().canonicalize().unwrap();
    let target = workdir.join("hello.txt");
    let content = "hello from hearth\n";
    let launch = agent.prepare(home.path(), &server.url(), &workdir);

    let started = Instant::now();
    let mut child = launch.tokio_command(&workdir).spawn().unwrap();
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let stderr = keep_stderr(child.stderr.take().unwrap());
    let group = rustix::process::Pid::from_raw(child.id().unwrap().try_into().unwrap()).unwrap();
    let process = AgentProcess { child, group };

    let log = SharedLog::default();
    let transport = ByteStreams::new(stdin.compat_write(), stdout.compat());
    let notifications = Arc::clone(&log);
    let permissions = Arc::clone(&log);
    let reads = Arc::clone(&log);
    let writes = Arc::clone(&log);
    let run = Client
        .v1()
        .on_receive_notification(
            async move |notification: SessionNotification, _cx| {
                lock(&notifications).updates.push(notification.update);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: RequestPermissionRequest, responder, _cx| {
                let allow = request
                    .options
                    .iter()
                    .find(|option| option.kind == PermissionOptionKind::AllowOnce)
                    .map(|option| option.option_id.clone());
                lock(&permissions).permissions.push(request);
                let outcome = match allow {
                    Some(id) => {
                        RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id))
                    }
                    None => RequestPermissionOutcome::Cancelled,
                };
                responder.respond(RequestPermissionResponse::new(outcome))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ReadTextFileRequest, responder, _cx| {
                let content = read_for_agent(&request);
                lock(&reads).reads.push(request.path);
                responder.respond(ReadTextFileResponse::new(content))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: WriteTextFileRequest, responder, _cx| {
                if let Some(parent) = request.path.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(agent_client_protocol::Error::into_internal_error)?;
                }
                std::fs::write(&request.path, &request.content)
                    .map_err(agent_client_protocol::Error::into_internal_error)?;
                lock(&writes).writes.push((request.path, request.content));
                responder.respond(WriteTextFileResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, async |cx| {
            let initialize = within(
                STARTUP,
                "initialize",
                cx.send_request(
                    InitializeRequest::new(ProtocolVersion::V1)
                        .client_capabilities(
                            ClientCapabilities::new().fs(FileSystemCapabilities::new()
                                .read_text_file(true)
                                .write_text_file(true)),
                        )
                        .client_info(Implementation::new("hearth-test", "0.1.0")),
                )
                .block_task(),
            )
            .await?;
            let initialize_time = started.elapsed();
            let session = within(
                STARTUP,
                "session/new",
                cx.send_request(NewSessionRequest::new(workdir.clone()))
                    .block_task(),
            )
            .await?;
            let new_session_time = started.elapsed() - initialize_time;
            let rss_after_start_kib = process.group_rss_kib();

            model.push(ModelTurn::text("pong"));
            let prompt_started = Instant::now();
            let answer = within(
                TURN,
                "prompt \"say ping\"",
                cx.send_request(PromptRequest::new(
                    session.session_id.clone(),
                    vec![ContentBlock::Text(TextContent::new("say ping"))],
                ))
                .block_task(),
            )
            .await?;
            let first_prompt_time = prompt_started.elapsed();
            assert_eq!(answer.stop_reason, StopReason::EndTurn);
            let text = agent_text(&log);
            assert!(text.contains("pong"), "agent text {text:?} lacks pong");

            model
                .push(ModelTurn::write_file(&target, content))
                .push(ModelTurn::text("done"));
            let prompt_started = Instant::now();
            let answer = within(
                TURN,
                "prompt \"write hello.txt\"",
                cx.send_request(PromptRequest::new(
                    session.session_id.clone(),
                    vec![ContentBlock::Text(TextContent::new(
                        "create hello.txt saying hello from hearth",
                    ))],
                ))
                .block_task(),
            )
            .await?;
            let write_prompt_time = prompt_started.elapsed();
            assert_eq!(answer.stop_reason, StopReason::EndTurn);

            Ok(Report {
                initialize: abbreviated(serde_json::to_string(&initialize).unwrap(), 4000),
                new_session: abbreviated(serde_json::to_string(&session).unwrap(), 4000),
                initialize_time,
                new_session_time,
                first_prompt_time,
                write_prompt_time,
                rss_after_start_kib,
                rss_at_end_kib: process.group_rss_kib(),
            })
        });
    let outcome = tokio::time::timeout(STARTUP + TURN * 2, run).await;
    let stderr_tail = || {
        let tail = stderr.lock().unwrap_or_else(PoisonError::into_inner);
        tail.iter().cloned().collect::<Vec<_>>().join("\n")
    };
    let report = match outcome {
        Ok(Ok(report)) => report,
        Ok(Err(error)) => panic!(
            "{}: {error}\nrequests to the model: {:#?}\nagent stderr:\n{}",
            agent.id(),
            server.requests().iter().map(describe).collect::<Vec<_>>(),
            stderr_tail()
        ),
        Err(_) => panic!(
            "{}: the run took too long\nagent stderr:\n{}",
            agent.id(),
            stderr_tail()
        ),
    };
    let total = started.elapsed();
    drop(process);

    // The file, written with permission, by the path this agent takes.
    assert_eq!(std::fs::read_to_string(&target).unwrap(), content);
    let log = lock(&log);
    assert_eq!(
        log.permissions.len(),
        1,
        "{}: one permission request for the write",
        agent.id()
    );
    let kinds: Vec<PermissionOptionKind> = log.permissions[0]
        .options
        .iter()
        .map(|option| option.kind)
        .collect();
    assert!(
        kinds.contains(&PermissionOptionKind::AllowOnce),
        "{kinds:?}"
    );
    let write_path = if log.writes.iter().any(|(path, _)| *path == target) {
        WritePath::ClientFs
    } else {
        WritePath::AgentDisk
    };
    assert_eq!(write_path, expected_write_path(agent), "{}", agent.id());

    // Three turns of the agent's loop: pong, the tool call, the answer to its result.
    let served = model.served();
    assert_eq!(served.len(), 3, "{}: turns served", agent.id());
    assert!(served.iter().all(|turn| turn.turn.is_some()));
    assert_eq!(model.pending(), 0);

    eprintln!("==== {} ====", agent.id());
    eprintln!("command: {} {:?}", launch.command.display(), launch.args);
    eprintln!("initialize: {}", report.initialize);
    eprintln!("session/new: {}", report.new_session);
    eprintln!(
        "times: initialize {:?}, session/new {:?}, say ping {:?}, write {:?}, total {total:?}",
        report.initialize_time,
        report.new_session_time,
        report.first_prompt_time,
        report.write_prompt_time
    );
    eprintln!(
        "memory (process group RSS): after session/new {} MiB, at the end {} MiB",
        report.rss_after_start_kib / 1024,
        report.rss_at_end_kib / 1024
    );
    eprintln!("permission options: {kinds:?}");
    eprintln!(
        "write path: {write_path:?}; fs reads {:?}; fs writes {:?}",
        log.reads,
        log.writes.iter().map(|(path, _)| path).collect::<Vec<_>>()
    );
    eprintln!("requests to the model:");
    for request in server.requests() {
        eprintln!("  {}", describe(&request));
    }
    eprintln!(
        "tools advertised: {:?}",
        model.advertised_tools(&served[0].request)
    );
    eprintln!("agent stderr (last lines):\n{}", stderr_tail());
    eprintln!(
        "incidental: {:?}",
        model
            .incidental()
            .iter()
            .map(|request| request.path.clone())
            .collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn claude_agent_acp_answers_and_writes_a_file() {
    say_ping_then_write_a_file(RealAgent::ClaudeAgent).await;
}

#[tokio::test]
async fn claude_code_acp_answers_and_writes_a_file() {
    say_ping_then_write_a_file(RealAgent::ClaudeCode).await;
}

#[tokio::test]
async fn codex_acp_answers_and_writes_a_file() {
    say_ping_then_write_a_file(RealAgent::Codex).await;
}

#[tokio::test]
async fn gemini_cli_answers_and_writes_a_file() {
    say_ping_then_write_a_file(RealAgent::Gemini).await;
}

#[tokio::test]
async fn opencode_answers_and_writes_a_file() {
    say_ping_then_write_a_file(RealAgent::OpenCode).await;
}

#[tokio::test]
async fn copilot_answers_and_writes_a_file() {
    say_ping_then_write_a_file(RealAgent::Copilot).await;
}
