//! What each command streams, and the stop reason it ends with.
//!
//! The commands that call the client (`/write`, `/read`, `/terminal`, `/mcp-call`)
//! live in [`crate::client_calls`]. An `Err` here means the connection failed (a
//! notification could not be queued); every other failure is reported as text.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use agent_client_protocol::Error;
use agent_client_protocol::v1::schema::{
    CompactionStatus, CompactionSummaryChunk, CompactionUpdate, ContentBlock, Cost, Plan,
    PlanEntry, PlanEntryPriority, PlanEntryStatus, SessionInfoUpdate, SessionUpdate, StopReason,
    TextContent, ToolCall, ToolCallContent, ToolCallId, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind, Usage, UsageUpdate,
};
use serde_json::json;

use crate::agent::internal;
use crate::client_calls;
use crate::content::PromptInput;
use crate::prompt::{Command, chunk_text, timed_text};
use crate::turn::Turn;

/// The pause between `/slow` ticks.
const TICK: Duration = Duration::from_millis(20);
/// The pause between `/timed` chunks: long enough that they never queue anywhere.
const TIMED_GAP: Duration = Duration::from_millis(1);
/// How long `/crash` waits for its partial chunk to reach stdout.
const CRASH_FLUSH_LIMIT: Duration = Duration::from_secs(2);
/// How long after its turn `/later` speaks.
const LATER: Duration = Duration::from_millis(100);
/// The exit status of `/crash`.
pub(crate) const CRASH_STATUS: i32 = 3;
/// What `/usage` reports.
const USAGE_USED: u64 = 1234;
const USAGE_SIZE: u64 = 200_000;
/// The token counts `/usage` answers with.
const USAGE_INPUT: u64 = 100;
const USAGE_OUTPUT: u64 = 20;
const USAGE_CACHED: u64 = 60;
const USAGE_THOUGHT: u64 = 5;

/// Numbers tool calls across the process.
static TOOL_CALLS: AtomicU64 = AtomicU64::new(1);

/// A fresh tool call id (`tool-1`, `tool-2`, ...).
pub(crate) fn next_tool_call_id() -> ToolCallId {
    ToolCallId::new(format!(
        "tool-{}",
        TOOL_CALLS.fetch_add(1, Ordering::Relaxed)
    ))
}

/// A tool call update that only changes the status (and maybe the content).
pub(crate) fn tool_status(
    id: &ToolCallId,
    status: ToolCallStatus,
    content: Option<Vec<ToolCallContent>>,
) -> SessionUpdate {
    let mut fields = ToolCallUpdateFields::new().status(status);
    if let Some(content) = content {
        fields = fields.content(content);
    }
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id.clone(), fields))
}

/// Runs `command` in `turn`.
pub(crate) async fn run(
    turn: &mut Turn,
    input: &PromptInput,
    command: Command,
) -> Result<StopReason, Error> {
    match command {
        Command::Echo => echo(turn, input),
        Command::BadArguments(usage) => {
            turn.say(usage)?;
            Ok(StopReason::EndTurn)
        }
        Command::Slow { ticks } => slow(turn, ticks).await,
        Command::Chunks { count, size } => {
            for index in 0..count {
                turn.say(chunk_text(index, size))?;
            }
            Ok(StopReason::EndTurn)
        }
        Command::Timed { count } => timed(turn, count).await,
        Command::Think => {
            turn.think("thinking 1\n")?;
            turn.think("thinking 2\n")?;
            turn.say("thought it through")?;
            Ok(StopReason::EndTurn)
        }
        Command::Plan => plan(turn),
        Command::Usage => {
            turn.update(SessionUpdate::UsageUpdate(
                UsageUpdate::new(USAGE_USED, USAGE_SIZE).cost(Cost::new(0.01, "USD")),
            ))?;
            turn.say("usage sent")?;
            turn.usage = Some(
                Usage::new(USAGE_INPUT + USAGE_OUTPUT, USAGE_INPUT, USAGE_OUTPUT)
                    .cached_read_tokens(USAGE_CACHED)
                    .thought_tokens(USAGE_THOUGHT),
            );
            Ok(StopReason::EndTurn)
        }
        Command::Settings => {
            let record = turn.session.record();
            turn.say(format!("model {} mode {}", record.model, record.mode))?;
            Ok(StopReason::EndTurn)
        }
        Command::Tool => tool(turn),
        Command::Write {
            path,
            content,
            permission,
        } => client_calls::write(turn, &path, &content, permission).await,
        Command::Read { path } => client_calls::read(turn, &path).await,
        Command::Ask { kind } => crate::ask::ask(turn, kind).await,
        Command::Terminal { command, args, env } => {
            client_calls::terminal(turn, command, args, env).await
        }
        Command::Live => {
            turn.say(format!("live sessions: {}", turn.agent.live_sessions()))?;
            Ok(StopReason::EndTurn)
        }
        Command::Mcp => {
            turn.say(client_calls::mcp_listing(
                &turn.session.record().mcp_servers,
            ))?;
            Ok(StopReason::EndTurn)
        }
        Command::McpCall {
            server,
            tool,
            arguments,
        } => client_calls::mcp_call(turn, &server, &tool, &arguments).await,
        Command::Crash => crash(turn).await,
        Command::Hang => {
            turn.cancel.cancelled().await;
            Ok(StopReason::Cancelled)
        }
        Command::Junk => junk(turn).await,
        Command::Flood => {
            turn.agent
                .output
                .flood()
                .map_err(|error| internal(&error.into()))?;
            turn.cancel.cancelled().await;
            Ok(StopReason::Cancelled)
        }
        Command::Stderr { lines } => {
            write_stderr_lines(lines);
            turn.say("ok")?;
            Ok(StopReason::EndTurn)
        }
        Command::SneakRun { command, args } => client_calls::sneak_run(turn, command, args).await,
        Command::Env { names } => {
            let lines: Vec<String> = names
                .iter()
                .map(|name| {
                    let state = if std::env::var_os(name).is_some() {
                        "set"
                    } else {
                        "unset"
                    };
                    format!("{name}={state}")
                })
                .collect();
            turn.say(lines.join("\n"))?;
            Ok(StopReason::EndTurn)
        }
        Command::Pid => {
            turn.say(std::process::id().to_string())?;
            Ok(StopReason::EndTurn)
        }
        Command::Refuse => {
            turn.say("refused")?;
            Ok(StopReason::Refusal)
        }
        Command::Max => {
            turn.say("truncated")?;
            Ok(StopReason::MaxTokens)
        }
        Command::Later { text } => {
            turn.say("ok")?;
            turn.say_later(LATER, text);
            Ok(StopReason::EndTurn)
        }
        Command::Compact => compact(turn),
        Command::Title { title } => {
            set_title(turn, title)?;
            turn.say("ok")?;
            Ok(StopReason::EndTurn)
        }
        Command::Hostile => crate::hostile::hostile(turn).await,
        Command::BigAnswer { bytes, chunk } => crate::flood::big_answer(turn, bytes, chunk),
        Command::ToolUpdates { updates, calls } => crate::flood::tool_updates(turn, updates, calls),
        Command::BigResult { bytes } => crate::flood::big_result(turn, bytes),
    }
}

/// The summary `/compact` writes.
const COMPACTION_SUMMARY: &str = "The user tried the test agent's commands.";

/// `/compact`: a compaction in progress, its summary in two chunks, then completed —
/// sent only to a client that declared `session.compaction`.
fn compact(turn: &mut Turn) -> Result<StopReason, Error> {
    if !turn.agent.client_takes_compaction() {
        turn.say("compacted (the client takes no compaction updates)")?;
        return Ok(StopReason::EndTurn);
    }
    let id = "compaction-1";
    turn.update(SessionUpdate::CompactionUpdate(CompactionUpdate::new(
        id,
        CompactionStatus::InProgress,
    )))?;
    let (first, rest) = COMPACTION_SUMMARY.split_at(9);
    for part in [first, rest] {
        turn.update(SessionUpdate::CompactionSummaryChunk(
            CompactionSummaryChunk::new(id, ContentBlock::Text(TextContent::new(part))),
        ))?;
    }
    turn.update(SessionUpdate::CompactionUpdate(CompactionUpdate::new(
        id,
        CompactionStatus::Completed,
    )))?;
    turn.say("compacted")?;
    Ok(StopReason::EndTurn)
}

/// Keeps `title` as the session's title and tells the client (`session_info_update`).
pub(crate) fn set_title(turn: &mut Turn, title: String) -> Result<(), Error> {
    let now = chrono::Utc::now();
    turn.session
        .update(&turn.agent.store, |record| {
            record.title = Some(title.clone());
            record.updated_at = now;
        })
        .map_err(|error| internal(&error))?;
    let updated_at = turn.session.record().updated_at_text();
    turn.update(SessionUpdate::SessionInfoUpdate(
        SessionInfoUpdate::new().title(title).updated_at(updated_at),
    ))
}

/// Plain text: `echo: `, the text, then one chunk per attachment and a count line.
fn echo(turn: &mut Turn, input: &PromptInput) -> Result<StopReason, Error> {
    turn.say("echo: ")?;
    turn.say(input.text.clone())?;
    for attachment in &input.attachments {
        turn.say(attachment.echo())?;
    }
    if let Some(summary) = input.attachment_summary() {
        turn.say(summary)?;
    }
    Ok(StopReason::EndTurn)
}

/// `tick 1\n` ... `tick N\n`, one every [`TICK`]; cancellation ends it at once.
async fn slow(turn: &mut Turn, ticks: u32) -> Result<StopReason, Error> {
    for tick in 1..=ticks {
        if turn.cancel.is_cancelled() {
            return Ok(StopReason::Cancelled);
        }
        turn.say(format!("tick {tick}\n"))?;
        if tick < ticks
            && turn
                .unless_cancelled(tokio::time::sleep(TICK))
                .await
                .is_none()
        {
            return Ok(StopReason::Cancelled);
        }
    }
    Ok(StopReason::EndTurn)
}

/// Chunk `i` is `i NANOS\n`, NANOS being the monotonic time just before it was
/// written; one every [`TIMED_GAP`]; cancellation ends it at once.
async fn timed(turn: &mut Turn, count: u32) -> Result<StopReason, Error> {
    for index in 0..count {
        if turn.cancel.is_cancelled() {
            return Ok(StopReason::Cancelled);
        }
        turn.say_stamped(move |nanos| timed_text(index, nanos))
            .await
            .map_err(|error| internal(&error.into()))?;
        if index + 1 < count
            && turn
                .unless_cancelled(tokio::time::sleep(TIMED_GAP))
                .await
                .is_none()
        {
            return Ok(StopReason::Cancelled);
        }
    }
    Ok(StopReason::EndTurn)
}

fn plan(turn: &mut Turn) -> Result<StopReason, Error> {
    turn.update(SessionUpdate::Plan(Plan::new(vec![
        PlanEntry::new("step 1", PlanEntryPriority::High, PlanEntryStatus::Pending),
        PlanEntry::new(
            "step 2",
            PlanEntryPriority::Medium,
            PlanEntryStatus::InProgress,
        ),
        PlanEntry::new("step 3", PlanEntryPriority::Low, PlanEntryStatus::Completed),
    ])))?;
    turn.say("plan sent")?;
    Ok(StopReason::EndTurn)
}

fn tool(turn: &mut Turn) -> Result<StopReason, Error> {
    let id = next_tool_call_id();
    turn.update(SessionUpdate::ToolCall(
        ToolCall::new(id.clone(), "Look something up")
            .kind(ToolKind::Fetch)
            .status(ToolCallStatus::Pending)
            .raw_input(json!({ "query": "something" })),
    ))?;
    turn.update(tool_status(&id, ToolCallStatus::InProgress, None))?;
    turn.update(tool_status(
        &id,
        ToolCallStatus::Completed,
        Some(vec![ToolCallContent::from("found it")]),
    ))?;
    turn.say("tool done")?;
    Ok(StopReason::EndTurn)
}

/// Lines on stderr, then one chunk straight to stdout, then exit mid-turn.
async fn crash(turn: &mut Turn) -> Result<StopReason, Error> {
    {
        let mut stderr = std::io::stderr().lock();
        for line in [
            "about to crash",
            "about to crash: the turn stops here",
            "about to crash: exit status 3",
        ] {
            // Nothing useful can be done if stderr is gone; the exit follows anyway.
            writeln!(stderr, "{line}").ok();
        }
    }
    if let Err(error) = turn.say_raw("partial") {
        tracing::warn!(%error, "the partial chunk could not be queued");
    }
    turn.agent.output.flushed(CRASH_FLUSH_LIMIT).await;
    turn.agent.settings.state_dir.remove_if_temporary();
    std::process::exit(CRASH_STATUS);
}

/// A chunk, three lines that are not JSON, another chunk, all in this exact order on
/// stdout; then a normal answer.
async fn junk(turn: &mut Turn) -> Result<StopReason, Error> {
    let written = (|| {
        turn.say_raw("before junk\n")?;
        for number in 1..=3 {
            turn.agent
                .output
                .raw(format!("this is not json ({number}/3)\n"))?;
        }
        turn.say_raw("after junk\n")
    })();
    written.map_err(|error| internal(&error.into()))?;
    // The answer must come after the raw lines.
    turn.agent.output.flushed(Duration::from_secs(5)).await;
    Ok(StopReason::EndTurn)
}

fn write_stderr_lines(lines: u32) {
    let mut stderr = std::io::stderr().lock();
    for line in 1..=lines {
        if writeln!(stderr, "stderr line {line} of {lines}").is_err() {
            return;
        }
    }
}
