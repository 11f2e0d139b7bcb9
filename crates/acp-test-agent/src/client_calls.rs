//! The commands that call out: the client's file system and terminals, the user's
//! permission, and MCP servers.
//!
//! Client methods are called only when the client declared them (unless
//! `HEARTH_TEST_AGENT_IGNORE_CLIENT_CAPS=1`). Paths are passed on exactly as typed:
//! deciding what a path may reach is the client's job, and tests send hostile ones.

use std::path::PathBuf;

use agent_client_protocol::Error;
use agent_client_protocol::v1::schema::{
    CreateTerminalRequest, Diff, KillTerminalRequest, McpServer, PermissionOption,
    PermissionOptionKind, ReadTextFileRequest, ReleaseTerminalRequest, RequestPermissionOutcome,
    RequestPermissionRequest, SessionUpdate, StopReason, TerminalExitStatus, TerminalId,
    TerminalOutputRequest, ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolKind,
    WaitForTerminalExitRequest, WriteTextFileRequest,
};
use serde_json::{Value, json};

use crate::agent::ClientMethod;
use crate::commands::{next_tool_call_id, tool_status};
use crate::mcp::McpConnection;
use crate::prompt::Permission;
use crate::turn::Turn;

/// `outputByteLimit` of `/terminal`.
const TERMINAL_OUTPUT_LIMIT: u64 = 4096;

/// The permission options of `/write`, as an explicit table.
const PERMISSION_OPTIONS: &[(&str, &str, PermissionOptionKind)] = &[
    ("allow-once", "Allow once", PermissionOptionKind::AllowOnce),
    (
        "allow-always",
        "Allow always",
        PermissionOptionKind::AllowAlways,
    ),
    (
        "reject-once",
        "Reject once",
        PermissionOptionKind::RejectOnce,
    ),
    (
        "reject-always",
        "Reject always",
        PermissionOptionKind::RejectAlways,
    ),
];

/// How a client error reads in a reply: its message, then its data if any.
pub(crate) fn describe(error: &Error) -> String {
    match &error.data {
        None | Some(Value::Null) => error.message.clone(),
        Some(Value::String(data)) => format!("{}: {data}", error.message),
        Some(data) => format!("{}: {data}", error.message),
    }
}

fn undeclared(method: ClientMethod) -> String {
    format!(
        "the client did not declare {} in initialize",
        method.capability_name()
    )
}

/// What the user chose.
enum Decision {
    Allow,
    Reject,
    Cancelled,
    Unknown(String),
}

/// `/write` and `/write-noask`.
pub(crate) async fn write(
    turn: &mut Turn,
    path: &str,
    content: &str,
    permission: Permission,
) -> Result<StopReason, Error> {
    let id = next_tool_call_id();
    let old_text = if turn.agent.client_can(ClientMethod::ReadTextFile) {
        // A file the client cannot read (often: it does not exist yet) has no old text.
        turn.request(ReadTextFileRequest::new(turn.session_id(), path))
            .await
            .ok()
            .map(|response| response.content)
    } else {
        None
    };
    let (verb, kind) = match permission {
        Permission::AskToRead => ("Read", ToolKind::Read),
        Permission::Ask | Permission::Skip => ("Write", ToolKind::Edit),
    };
    let call = ToolCall::new(id.clone(), format!("{verb} {path}"))
        .kind(kind)
        .status(ToolCallStatus::Pending)
        .locations(vec![ToolCallLocation::new(path)])
        .content(vec![ToolCallContent::Diff(
            Diff::new(path, content).old_text(old_text),
        )])
        .raw_input(json!({ "path": path, "content": content }));
    turn.update(SessionUpdate::ToolCall(call.clone()))?;

    if permission != Permission::Skip {
        let options = PERMISSION_OPTIONS
            .iter()
            .map(|(id, name, kind)| PermissionOption::new(*id, *name, *kind))
            .collect();
        let answer = turn
            .request(RequestPermissionRequest::new(
                turn.session_id(),
                call.into(),
                options,
            ))
            .await;
        let decision = match answer {
            Err(error) => {
                turn.update(tool_status(&id, ToolCallStatus::Failed, None))?;
                turn.say(format!("permission request failed: {}", describe(&error)))?;
                return Ok(StopReason::EndTurn);
            }
            Ok(response) => decide(&response.outcome),
        };
        match decision {
            Decision::Allow => {}
            Decision::Reject => {
                turn.update(tool_status(&id, ToolCallStatus::Failed, None))?;
                turn.say("not allowed")?;
                return Ok(StopReason::EndTurn);
            }
            Decision::Cancelled => {
                turn.update(tool_status(&id, ToolCallStatus::Failed, None))?;
                return Ok(StopReason::Cancelled);
            }
            Decision::Unknown(option) => {
                turn.update(tool_status(&id, ToolCallStatus::Failed, None))?;
                turn.say(format!("unknown permission option {option:?}"))?;
                return Ok(StopReason::EndTurn);
            }
        }
    }
    if turn.cancel.is_cancelled() {
        turn.update(tool_status(&id, ToolCallStatus::Failed, None))?;
        return Ok(StopReason::Cancelled);
    }
    if !turn.agent.client_can(ClientMethod::WriteTextFile) {
        turn.update(tool_status(&id, ToolCallStatus::Failed, None))?;
        turn.say(format!(
            "write failed: {}",
            undeclared(ClientMethod::WriteTextFile)
        ))?;
        return Ok(StopReason::EndTurn);
    }
    match turn
        .request(WriteTextFileRequest::new(turn.session_id(), path, content))
        .await
    {
        Ok(_) => {
            turn.update(tool_status(&id, ToolCallStatus::Completed, None))?;
            turn.say(format!("wrote {path}"))?;
        }
        Err(error) => {
            turn.update(tool_status(&id, ToolCallStatus::Failed, None))?;
            turn.say(format!("write failed: {}", describe(&error)))?;
        }
    }
    Ok(StopReason::EndTurn)
}

fn decide(outcome: &RequestPermissionOutcome) -> Decision {
    match outcome {
        RequestPermissionOutcome::Selected(selected) => {
            let chosen = selected.option_id.0.as_ref();
            match PERMISSION_OPTIONS.iter().find(|(id, _, _)| *id == chosen) {
                Some((
                    _,
                    _,
                    PermissionOptionKind::AllowOnce | PermissionOptionKind::AllowAlways,
                )) => Decision::Allow,
                Some(_) => Decision::Reject,
                None => Decision::Unknown(chosen.to_owned()),
            }
        }
        RequestPermissionOutcome::Cancelled => Decision::Cancelled,
        // An outcome this schema version does not know grants nothing.
        _ => Decision::Cancelled,
    }
}

/// `/read`.
pub(crate) async fn read(turn: &mut Turn, path: &str) -> Result<StopReason, Error> {
    if !turn.agent.client_can(ClientMethod::ReadTextFile) {
        turn.say(format!(
            "read failed: {}",
            undeclared(ClientMethod::ReadTextFile)
        ))?;
        return Ok(StopReason::EndTurn);
    }
    match turn
        .request(ReadTextFileRequest::new(turn.session_id(), path))
        .await
    {
        Ok(response) => turn.say(response.content)?,
        Err(error) => turn.say(format!("read failed: {}", describe(&error)))?,
    }
    Ok(StopReason::EndTurn)
}

/// `/sneak-run`: asks to run the command (an execute call showing it), then, when
/// allowed, runs it twice: a client must let one "allow once" cover one run.
pub(crate) async fn sneak_run(
    turn: &mut Turn,
    command: String,
    args: Vec<String>,
) -> Result<StopReason, Error> {
    let line = std::iter::once(command.clone())
        .chain(args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    let id = next_tool_call_id();
    let call = ToolCall::new(id.clone(), format!("Run `{line}`"))
        .kind(ToolKind::Execute)
        .status(ToolCallStatus::Pending)
        .raw_input(json!({ "command": line }));
    turn.update(SessionUpdate::ToolCall(call.clone()))?;
    let options = PERMISSION_OPTIONS
        .iter()
        .map(|(id, name, kind)| PermissionOption::new(*id, *name, *kind))
        .collect();
    let answer = turn
        .request(RequestPermissionRequest::new(
            turn.session_id(),
            call.into(),
            options,
        ))
        .await;
    match answer.map(|response| decide(&response.outcome)) {
        Ok(Decision::Allow) => {}
        Ok(Decision::Cancelled) => return Ok(StopReason::Cancelled),
        _ => {
            turn.say("not allowed")?;
            return Ok(StopReason::EndTurn);
        }
    }
    turn.say("first run:\n")?;
    terminal(turn, command.clone(), args.clone(), Vec::new()).await?;
    turn.say("\nsecond run:\n")?;
    terminal(turn, command, args, Vec::new()).await
}

/// `/terminal`: create, wait for exit, read the output, release.
pub(crate) async fn terminal(
    turn: &mut Turn,
    command: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
) -> Result<StopReason, Error> {
    if !turn.agent.client_can(ClientMethod::Terminal) {
        turn.say(format!(
            "terminal failed: {}",
            undeclared(ClientMethod::Terminal)
        ))?;
        return Ok(StopReason::EndTurn);
    }
    let cwd: PathBuf = turn.session.record().cwd;
    let created = turn
        .request(
            CreateTerminalRequest::new(turn.session_id(), command)
                .args(args)
                .env(
                    env.into_iter()
                        .map(|(name, value)| {
                            agent_client_protocol::v1::schema::EnvVariable::new(name, value)
                        })
                        .collect(),
                )
                .cwd(cwd)
                .output_byte_limit(TERMINAL_OUTPUT_LIMIT),
        )
        .await;
    let terminal = match created {
        Ok(response) => response.terminal_id,
        Err(error) => {
            turn.say(format!("terminal failed: {}", describe(&error)))?;
            return Ok(StopReason::EndTurn);
        }
    };
    // The call that runs in the terminal names it, as agents do, so the client can show
    // the output as it comes.
    let call = next_tool_call_id();
    turn.update(SessionUpdate::ToolCall(
        ToolCall::new(call.clone(), "Run a command")
            .kind(ToolKind::Execute)
            .status(ToolCallStatus::InProgress)
            .content(vec![ToolCallContent::Terminal(
                agent_client_protocol::v1::schema::Terminal::new(terminal.clone()),
            )]),
    ))?;
    let outcome = run_terminal(turn, &terminal).await;
    let status = match &outcome {
        TerminalOutcome::Finished { .. } => ToolCallStatus::Completed,
        _ => ToolCallStatus::Failed,
    };
    turn.update(tool_status(&call, status, None))?;
    if let Err(error) = turn
        .request(ReleaseTerminalRequest::new(turn.session_id(), terminal))
        .await
    {
        tracing::warn!(error = %describe(&error), "terminal/release failed");
    }
    match outcome {
        TerminalOutcome::Finished { status, output } => {
            turn.say(format!("{}\n", exit_line(&status)))?;
            turn.say(output)?;
            Ok(StopReason::EndTurn)
        }
        TerminalOutcome::Failed(message) => {
            turn.say(format!("terminal failed: {message}"))?;
            Ok(StopReason::EndTurn)
        }
        TerminalOutcome::Cancelled => Ok(StopReason::Cancelled),
    }
}

enum TerminalOutcome {
    Finished {
        status: TerminalExitStatus,
        output: String,
    },
    Failed(String),
    Cancelled,
}

async fn run_terminal(turn: &Turn, terminal: &TerminalId) -> TerminalOutcome {
    let waited = turn
        .unless_cancelled(turn.request(WaitForTerminalExitRequest::new(
            turn.session_id(),
            terminal.clone(),
        )))
        .await;
    let status = match waited {
        None => {
            if let Err(error) = turn
                .request(KillTerminalRequest::new(
                    turn.session_id(),
                    terminal.clone(),
                ))
                .await
            {
                tracing::warn!(error = %describe(&error), "terminal/kill failed");
            }
            return TerminalOutcome::Cancelled;
        }
        Some(Err(error)) => return TerminalOutcome::Failed(describe(&error)),
        Some(Ok(response)) => response.exit_status,
    };
    match turn
        .request(TerminalOutputRequest::new(
            turn.session_id(),
            terminal.clone(),
        ))
        .await
    {
        Ok(response) => {
            let mut output = response.output;
            if response.truncated {
                output.push_str("\n[output truncated]");
            }
            TerminalOutcome::Finished { status, output }
        }
        Err(error) => TerminalOutcome::Failed(describe(&error)),
    }
}

/// `exit code N`, `exit signal S`, or `exit status unknown`.
fn exit_line(status: &TerminalExitStatus) -> String {
    match (&status.exit_code, &status.signal) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("exit signal {signal}"),
        (None, None) => "exit status unknown".to_owned(),
    }
}

/// `/mcp`: one JSON line listing the session's MCP servers.
pub(crate) fn mcp_listing(servers: &[McpServer]) -> String {
    let listed: Vec<Value> = servers
        .iter()
        .map(|server| match server {
            McpServer::Stdio(stdio) => json!({
                "name": stdio.name,
                "type": "stdio",
                "command": stdio.command,
                "args": stdio.args,
            }),
            McpServer::Http(http) => json!({ "name": http.name, "type": "http", "url": http.url }),
            McpServer::Sse(sse) => json!({ "name": sse.name, "type": "sse", "url": sse.url }),
            _ => json!({ "type": "unknown" }),
        })
        .collect();
    Value::Array(listed).to_string()
}

/// `/mcp-call`: opens the connection on first use, keeps it for the session.
pub(crate) async fn mcp_call(
    turn: &mut Turn,
    server: &str,
    tool: &str,
    arguments: &str,
) -> Result<StopReason, Error> {
    let reply = match turn
        .unless_cancelled(call_tool(turn, server, tool, arguments))
        .await
    {
        None => return Ok(StopReason::Cancelled),
        Some(Ok(text)) => text,
        Some(Err(error)) => format!("mcp-call failed: {error:#}"),
    };
    turn.say(reply)?;
    Ok(StopReason::EndTurn)
}

async fn call_tool(
    turn: &Turn,
    server: &str,
    tool: &str,
    arguments: &str,
) -> anyhow::Result<String> {
    let arguments = if arguments.is_empty() {
        serde_json::Map::new()
    } else {
        match serde_json::from_str::<Value>(arguments) {
            Ok(Value::Object(map)) => map,
            Ok(_) => anyhow::bail!("JSONARGS must be a JSON object"),
            Err(error) => anyhow::bail!("JSONARGS is not JSON: {error}"),
        }
    };
    let servers = turn.session.record().mcp_servers;
    let found = servers
        .iter()
        .find(|candidate| server_name(candidate) == Some(server))
        .cloned();
    let Some(found) = found else {
        anyhow::bail!("this session has no MCP server named {server}");
    };
    let mut connections = turn.session.mcp.lock().await;
    if !connections.contains_key(server) {
        let connection = match &found {
            McpServer::Stdio(stdio) => McpConnection::open(stdio).await,
            McpServer::Http(http) => McpConnection::open_http(http).await,
            _ => anyhow::bail!(
                "MCP server {server} is neither a stdio nor an HTTP server; those cannot be called"
            ),
        }
        .map_err(|error| error.context(format!("connecting to MCP server {server}")))?;
        connections.insert(server.to_owned(), connection);
    }
    match connections.get(server) {
        Some(connection) => connection.call(tool, arguments).await,
        None => anyhow::bail!("the connection to MCP server {server} was lost"),
    }
}

fn server_name(server: &McpServer) -> Option<&str> {
    match server {
        McpServer::Stdio(stdio) => Some(&stdio.name),
        McpServer::Http(http) => Some(&http.name),
        McpServer::Sse(sse) => Some(&sse.name),
        _ => None,
    }
}
