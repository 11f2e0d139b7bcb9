//! Terminals the agent asks Hearth for (`terminal/*`): a command started in a directory
//! inside the session's working directories, in a process group of its own, its output
//! kept up to a byte limit (the oldest output goes first), killed with the turn that
//! started it. A command runs only when a command call the user allowed in the running
//! turn covers it, or after Hearth asked the user.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Error as RpcError, ErrorCode};
use hearth_confine::Roots;
use hearth_core::{ChatUri, ToolCallPart, ToolCallStatus, ToolKind, TurnId};
use hearth_tools::{Actor, AuditEntry, AuditKind, AuditOutcome, Decision};
use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::sync::watch;

use crate::grants::{Scope, ShownCommand};
use crate::handlers::{Handlers, respond};
use crate::lines::Admission;
use crate::permissions::{Raised, Verdict, hearth_options, settled, verdict};
use crate::shared::Shared;
use hearth_process::{ChildEnv, ExitReport, Launch, Leftovers, Process, Stderr, Stdin};

/// The most output a terminal keeps, whatever the agent asks.
const OUTPUT_CAP: u64 = 1024 * 1024;

#[derive(Default)]
struct Output {
    bytes: Vec<u8>,
    truncated: bool,
}

impl Output {
    fn push(&mut self, data: &[u8], limit: usize) {
        self.bytes.extend_from_slice(data);
        if self.bytes.len() > limit {
            let mut cut = self.bytes.len() - limit;
            // Keep whole characters.
            while cut < self.bytes.len() && (self.bytes[cut] & 0b1100_0000) == 0b1000_0000 {
                cut += 1;
            }
            self.bytes.drain(..cut);
            self.truncated = true;
        }
    }
}

struct Terminal {
    chat: ChatUri,
    output: Arc<Mutex<Output>>,
    /// The command's process (its group is killed when the terminal is dropped).
    process: Process,
    /// The tool calls (turn, call id) whose shown content follows this terminal's output.
    followed_by: Vec<(TurnId, String)>,
}

/// The terminals of an agent, by id.
#[derive(Default)]
pub(crate) struct Terminals(Mutex<HashMap<String, Terminal>>);

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn exit_status(report: ExitReport) -> acp::TerminalExitStatus {
    let status = acp::TerminalExitStatus::new();
    let status = match report.code.and_then(|code| u32::try_from(code).ok()) {
        Some(code) => status.exit_code(code),
        None => status,
    };
    match report.signal {
        Some(signal) => status.signal(format!("signal {signal}")),
        None => status,
    }
}

impl Terminals {
    /// Starts a command in a process group of its own, with a minimal environment and
    /// the variables the agent asked for (shown to the user with the command): never
    /// the agent's own environment or Hearth's.
    fn start(&self, run: &CommandRun) -> std::io::Result<()> {
        let launch = Launch::new(format!("terminal {}", run.id), &run.program)
            .args(run.args.iter().cloned())
            .env(ChildEnv::minimal().set(run.env.iter().cloned()))
            .directory(&run.directory)
            .stdin(Stdin::Null)
            .stderr(Stderr::Piped)
            .leftovers(Leftovers::Keep);
        let (process, pipes) = Process::spawn(&launch)?;
        let output = Arc::new(Mutex::new(Output::default()));
        let limit = run.limit;
        for pipe in [
            Some(Box::new(pipes.stdout) as Box<dyn tokio::io::AsyncRead + Send + Unpin>),
            pipes
                .stderr
                .map(|pipe| Box::new(pipe) as Box<dyn tokio::io::AsyncRead + Send + Unpin>),
        ]
        .into_iter()
        .flatten()
        {
            let output = Arc::clone(&output);
            tokio::spawn(async move {
                let mut pipe = pipe;
                let mut buffer = [0u8; 8192];
                while let Ok(read) = pipe.read(&mut buffer).await {
                    if read == 0 {
                        break;
                    }
                    lock(&output).push(&buffer[..read], limit);
                }
            });
        }
        lock(&self.0).insert(
            run.id.clone(),
            Terminal {
                chat: run.chat.clone(),
                output,
                process,
                followed_by: Vec::new(),
            },
        );
        Ok(())
    }

    fn output(&self, id: &str) -> Option<acp::TerminalOutputResponse> {
        let terminals = lock(&self.0);
        let terminal = terminals.get(id)?;
        let output = lock(&terminal.output);
        let response = acp::TerminalOutputResponse::new(
            String::from_utf8_lossy(&output.bytes).into_owned(),
            output.truncated,
        );
        Some(match terminal.process.exit_report() {
            Some(report) => response.exit_status(exit_status(report)),
            None => response,
        })
    }

    /// Notes that `call` shows this terminal's output; `false` when it already does or
    /// there is no such terminal.
    pub(crate) fn follow(&self, id: &str, turn_id: &TurnId, call: &str) -> bool {
        match lock(&self.0).get_mut(id) {
            Some(terminal) if !terminal.followed_by.iter().any(|(_, known)| known == call) => {
                terminal
                    .followed_by
                    .push((turn_id.clone(), call.to_owned()));
                true
            }
            _ => false,
        }
    }

    /// The chat of a terminal and the calls that show its output.
    pub(crate) fn followers(&self, id: &str) -> Option<(ChatUri, Vec<(TurnId, String)>)> {
        let terminals = lock(&self.0);
        let terminal = terminals.get(id)?;
        Some((terminal.chat.clone(), terminal.followed_by.clone()))
    }

    /// The output so far, whether older output was dropped, and how the command ended;
    /// `None` when there is no such terminal (any more).
    pub(crate) fn shown(&self, id: &str) -> Option<(String, bool, Option<ExitReport>)> {
        let terminals = lock(&self.0);
        let terminal = terminals.get(id)?;
        let output = lock(&terminal.output);
        Some((
            String::from_utf8_lossy(&output.bytes).into_owned(),
            output.truncated,
            terminal.process.exit_report(),
        ))
    }

    pub(crate) fn exit_of(&self, id: &str) -> Option<watch::Receiver<Option<ExitReport>>> {
        lock(&self.0)
            .get(id)
            .map(|terminal| terminal.process.exit_watch())
    }

    fn kill(&self, id: &str) -> bool {
        match lock(&self.0).get(id) {
            Some(terminal) => {
                terminal.process.kill();
                true
            }
            None => false,
        }
    }

    fn release(&self, id: &str) -> bool {
        match lock(&self.0).remove(id) {
            Some(terminal) => {
                terminal.process.kill();
                true
            }
            None => false,
        }
    }

    /// Kills and forgets every terminal of a chat (its turn ended).
    pub fn release_chat(&self, chat: &ChatUri) {
        lock(&self.0).retain(|_, terminal| {
            if &terminal.chat == chat {
                terminal.process.kill();
                false
            } else {
                true
            }
        });
    }

    /// Kills and forgets every terminal.
    pub fn release_all(&self) {
        for (_, terminal) in lock(&self.0).drain() {
            terminal.process.kill();
        }
    }
}

fn unknown(id: &acp::TerminalId) -> RpcError {
    RpcError::new(ErrorCode::RESOURCE_NOT_FOUND, format!("no terminal `{id}`"))
}

impl Shared {
    fn audit_command(
        &self,
        chat: &ChatUri,
        command: &str,
        directory: &std::path::Path,
        outcome: AuditOutcome,
    ) {
        let decision = if matches!(outcome, AuditOutcome::Ok(_)) {
            Decision::Ran
        } else {
            Decision::Refused
        };
        self.audit(
            AuditEntry::new(
                Actor::Agent(chat.clone()),
                AuditKind::Terminal,
                decision,
                outcome,
            )
            .detail(json!({
                "agent": self.agent(),
                "chat": chat.to_string(),
                "command": command,
                "directory": directory.display().to_string(),
            })),
        );
    }
}

/// A command the agent asked for, checked against its session and ready to start once
/// allowed.
struct CommandRun {
    shared: Arc<Shared>,
    /// The terminal's id, once started.
    id: String,
    chat: ChatUri,
    program: String,
    args: Vec<String>,
    /// The program and its arguments, joined with spaces.
    line: String,
    /// The variables it sets.
    env: Vec<(String, String)>,
    /// Where it runs, inside the session's working directories.
    directory: PathBuf,
    /// The output it keeps, in bytes.
    limit: usize,
}

impl CommandRun {
    /// Exactly what runs, as the user is shown it: the command line, the variables it
    /// sets, where it runs.
    fn shown(&self) -> ShownCommand {
        ShownCommand {
            line: self.line.clone(),
            env: self.env.clone(),
            cwd: Some(self.directory.clone()),
        }
    }

    /// Starts the command when it is `allowed`, and records the run or its refusal.
    fn run(self, allowed: bool) -> Result<acp::CreateTerminalResponse, RpcError> {
        let line = &self.line;
        let audit = |outcome| {
            self.shared
                .audit_command(&self.chat, line, &self.directory, outcome);
        };
        if !allowed {
            audit(AuditOutcome::error("the user did not allow it"));
            return Err(RpcError::new(
                ErrorCode::INTERNAL_ERROR,
                format!("the user did not allow running `{line}`"),
            ));
        }
        let started = self.shared.terminals.start(&self);
        match started {
            Ok(()) => {
                audit(AuditOutcome::ok());
                Ok(acp::CreateTerminalResponse::new(self.id.clone()))
            }
            Err(error) => {
                audit(AuditOutcome::error(error.to_string()));
                Err(RpcError::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!("could not run `{line}`: {error}"),
                ))
            }
        }
    }
}

/// The output a terminal keeps: what the agent asked for, at most [`OUTPUT_CAP`].
fn output_limit(asked: Option<u64>) -> usize {
    usize::try_from(asked.unwrap_or(OUTPUT_CAP).min(OUTPUT_CAP)).unwrap_or(usize::MAX)
}

/// Where a command of a session runs (the directory it asked for, or the first working
/// directory, confined to them) and the turn it runs in; why not, when it cannot.
fn run_where(
    roots: Option<Roots>,
    turn_id: Option<TurnId>,
    cwd: Option<&Path>,
) -> Result<(PathBuf, TurnId), String> {
    let Some(roots) = roots else {
        return Err("the session's working directories could not be opened".to_owned());
    };
    let Some(turn_id) = turn_id else {
        return Err("Hearth runs commands only while the user's turn runs".to_owned());
    };
    let wanted = cwd.map_or_else(
        || roots.roots().first().cloned().unwrap_or_default(),
        Path::to_path_buf,
    );
    match roots.directory(&wanted) {
        Ok(directory) => Ok((directory, turn_id)),
        Err(error) => Err(error.to_string()),
    }
}

/// The call Hearth shows in the turn when it asks about a command: all of it, since a
/// variable like LD_PRELOAD changes what runs.
fn command_call(
    id: String,
    request: &acp::CreateTerminalRequest,
    shown: &ShownCommand,
) -> ToolCallPart {
    let env: Vec<_> = shown
        .env
        .iter()
        .map(|(name, value)| json!({"name": name, "value": value}))
        .collect();
    let mut call = ToolCallPart::new(
        id,
        "terminal",
        json!({
            "command": request.command,
            "args": request.args,
            "env": env,
            "cwd": shown.cwd.as_ref().map(|cwd| cwd.display().to_string()),
        }),
        ToolCallStatus::Pending,
    );
    call.title = Some(format!("Run `{}`", shown.line));
    call.kind = Some(ToolKind::Execute);
    call
}

impl Handlers {
    /// `terminal/create`: a command runs at once when a call the user allowed in the
    /// running turn covers it; otherwise Hearth asks.
    pub async fn terminal_create(
        &self,
        request: acp::CreateTerminalRequest,
        responder: Responder<acp::CreateTerminalResponse>,

        admission: Admission,
    ) {
        let session = request.session_id.to_string();
        let (run, turn_id) = match self.command_run(&session, &request) {
            Ok(prepared) => prepared,
            Err(error) => {
                respond(responder, Err(error));
                drop(admission);
                return;
            }
        };
        let shown = run.shown();
        let scope = Scope::command(shown.clone());
        let (covered, verdict) = self.cover_or_judge(&session, &shown, &scope);
        if covered {
            respond(responder, run.run(true));
            drop(admission);
            return;
        }
        let call = command_call(self.shared.fresh_id("command"), &request, &shown);
        let raised = Raised {
            chat: run.chat.clone(),
            turn_id,
            request_id: self.shared.permission_id(),
            title: format!(
                "Allow {} to run {}?",
                self.shared.agent(),
                scope.describe().trim_start_matches("execute of ")
            ),
            options: hearth_options(),
            call,
            new_call: true,
            verdict,
            scope,
        };
        self.ask_to_run(raised, run, responder).await;
        drop(admission);
    }

    /// The command the agent asked for, checked against its session (refusals are
    /// recorded), with the turn it runs in.
    fn command_run(
        &self,
        session: &str,
        request: &acp::CreateTerminalRequest,
    ) -> Result<(CommandRun, TurnId), RpcError> {
        let line = call_line(&request.command, &request.args);
        let found = self.shared.routes().get(session).map(|route| {
            (
                route.chat.clone(),
                route.roots.clone(),
                route.turn.as_ref().map(|turn| turn.turn_id.clone()),
            )
        });
        let Some((chat, roots, turn_id)) = found else {
            return Err(RpcError::new(
                ErrorCode::INVALID_PARAMS,
                format!("unknown session `{session}`"),
            ));
        };
        let (directory, turn_id) =
            run_where(roots, turn_id, request.cwd.as_deref()).map_err(|message| {
                self.shared.audit_command(
                    &chat,
                    &line,
                    request.cwd.as_deref().unwrap_or(Path::new("")),
                    AuditOutcome::error(message.clone()),
                );
                RpcError::new(
                    ErrorCode::INVALID_PARAMS,
                    format!("refused to run `{line}`: {message}"),
                )
            })?;
        let run = CommandRun {
            shared: Arc::clone(&self.shared),
            id: self.shared.fresh_id("terminal"),
            chat,
            program: request.command.clone(),
            args: request.args.clone(),
            line,
            env: request
                .env
                .iter()
                .map(|variable| (variable.name.clone(), variable.value.clone()))
                .collect(),
            directory,
            limit: output_limit(request.output_byte_limit),
        };
        Ok((run, turn_id))
    }

    /// Whether a call allowed in the running turn covers the command (using up a run
    /// allowed once), and the verdict on asking about it otherwise.
    fn cover_or_judge(
        &self,
        session: &str,
        shown: &ShownCommand,
        scope: &Scope,
    ) -> (bool, Verdict) {
        let mut routes = self.shared.routes();
        let Some(route) = routes.get_mut(session) else {
            return (false, Verdict::Refuse("the session went away".to_owned()));
        };
        let default_cwd = route
            .roots
            .as_ref()
            .and_then(|roots| roots.roots().first().cloned());
        let covered = route
            .turn
            .as_mut()
            .is_some_and(|turn| turn.take_command(shown, default_cwd.as_deref()));
        (covered, verdict(&self.shared, route, scope))
    }

    /// Asks about a command, runs it when allowed, and settles the call shown.
    async fn ask_to_run(
        &self,
        raised: Raised,
        run: CommandRun,
        responder: Responder<acp::CreateTerminalResponse>,
    ) {
        let shared = Arc::clone(&self.shared);
        let chat = raised.chat.clone();
        let turn_id = raised.turn_id.clone();
        let call_id = raised.call.call_id.clone();
        self.raise(raised, move |outcome| {
            let result = run.run(outcome.allows());
            let settled = settled(turn_id, call_id, result.is_ok(), None);
            tokio::spawn(async move { shared.signal(&chat, vec![settled]).await });
            respond(responder, result);
        })
        .await;
    }

    /// `terminal/output`.
    pub async fn terminal_output(
        &self,
        request: acp::TerminalOutputRequest,
        responder: Responder<acp::TerminalOutputResponse>,

        admission: Admission,
    ) {
        let result = self
            .shared
            .terminals
            .output(&request.terminal_id.to_string())
            .ok_or_else(|| unknown(&request.terminal_id));
        respond(responder, result);
        drop(admission);
    }

    /// `terminal/wait_for_exit`.
    pub async fn terminal_wait(
        &self,
        request: acp::WaitForTerminalExitRequest,
        responder: Responder<acp::WaitForTerminalExitResponse>,

        admission: Admission,
    ) {
        let exit = self
            .shared
            .terminals
            .exit_of(&request.terminal_id.to_string());
        drop(admission);
        let Some(mut exit) = exit else {
            respond(responder, Err(unknown(&request.terminal_id)));
            return;
        };
        tokio::spawn(async move {
            let report = match exit.wait_for(Option::is_some).await {
                Ok(report) => report.unwrap_or(ExitReport {
                    code: None,
                    signal: None,
                }),
                Err(_) => ExitReport {
                    code: None,
                    signal: None,
                },
            };
            respond(
                responder,
                Ok(acp::WaitForTerminalExitResponse::new(exit_status(report))),
            );
        });
    }

    /// `terminal/kill`.
    pub async fn terminal_kill(
        &self,
        request: acp::KillTerminalRequest,
        responder: Responder<acp::KillTerminalResponse>,

        admission: Admission,
    ) {
        let result = if self.shared.terminals.kill(&request.terminal_id.to_string()) {
            Ok(acp::KillTerminalResponse::new())
        } else {
            Err(unknown(&request.terminal_id))
        };
        respond(responder, result);
        drop(admission);
    }

    /// `terminal/release`.
    pub async fn terminal_release(
        &self,
        request: acp::ReleaseTerminalRequest,
        responder: Responder<acp::ReleaseTerminalResponse>,

        admission: Admission,
    ) {
        // The calls that show its output show all of it before it goes.
        crate::terminal_output::show_last(&self.shared, &request.terminal_id.to_string()).await;
        let result = if self
            .shared
            .terminals
            .release(&request.terminal_id.to_string())
        {
            Ok(acp::ReleaseTerminalResponse::new())
        } else {
            Err(unknown(&request.terminal_id))
        };
        respond(responder, result);
        drop(admission);
    }
}

fn call_line(command: &str, args: &[String]) -> String {
    std::iter::once(command.to_owned())
        .chain(args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_keeps_the_newest_bytes_and_whole_characters() {
        let mut output = Output::default();
        output.push(b"hello ", 8);
        assert!(!output.truncated);
        output.push("wörld".as_bytes(), 8);
        assert!(output.truncated);
        assert!(String::from_utf8(output.bytes.clone()).is_ok());
        assert!(output.bytes.len() <= 8);
        assert!(String::from_utf8_lossy(&output.bytes).ends_with("wörld"));
    }
}
