//! Terminals the agent asks Hearth for (`terminal/*`): a command started in a directory
//! inside the session's working directories, in a process group of its own, its output
//! kept up to a byte limit (the oldest output goes first), killed with the turn that
//! started it. A command runs only when a command call the user allowed in the running
//! turn covers it, or after Hearth asked the user.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Error as RpcError, ErrorCode};
use hearth_core::{ChatUri, Signal, ToolCallPart, ToolCallStatus, ToolKind};
use hearth_tools::{Actor, AuditEntry, AuditKind, AuditOutcome, Decision};
use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::sync::watch;

use crate::grants::{Scope, ShownCommand};
use crate::handlers::Handlers;
use crate::lines::Admission;
use crate::permissions::{Raised, Verdict, hearth_options, verdict};
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
    #[allow(clippy::too_many_arguments)]
    fn start(
        &self,
        id: String,
        chat: &ChatUri,
        command: &str,
        args: &[String],
        env: &[(String, String)],
        directory: PathBuf,
        limit: usize,
    ) -> std::io::Result<()> {
        let launch = Launch::new(format!("terminal {id}"), command)
            .args(args.iter().cloned())
            .env(ChildEnv::minimal().set(env.iter().cloned()))
            .directory(directory)
            .stdin(Stdin::Null)
            .stderr(Stderr::Piped)
            .leftovers(Leftovers::Keep);
        let (process, pipes) = Process::spawn(&launch)?;
        let output = Arc::new(Mutex::new(Output::default()));
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
            id,
            Terminal {
                chat: chat.clone(),
                output,
                process,
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

    fn exit_of(&self, id: &str) -> Option<watch::Receiver<Option<ExitReport>>> {
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

fn respond<T: agent_client_protocol::JsonRpcResponse>(
    responder: Responder<T>,
    result: Result<T, RpcError>,
) {
    let sent = match result {
        Ok(answer) => responder.respond(answer),
        Err(error) => responder.respond_with_error(error),
    };
    if let Err(error) = sent {
        tracing::debug!(%error, "could not answer the agent");
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

impl Handlers {
    /// `terminal/create`.
    pub async fn terminal_create(
        &self,
        request: acp::CreateTerminalRequest,
        responder: Responder<acp::CreateTerminalResponse>,

        admission: Admission,
    ) {
        let session = request.session_id.to_string();
        let command_line = std::iter::once(request.command.clone())
            .chain(request.args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ");
        let env: Vec<(String, String)> = request
            .env
            .iter()
            .map(|variable| (variable.name.clone(), variable.value.clone()))
            .collect();
        let found = {
            let routes = self.shared.routes();
            routes.get(&session).map(|route| {
                let default_cwd = route
                    .roots
                    .as_ref()
                    .and_then(|roots| roots.roots().first().cloned());
                (
                    route.chat.clone(),
                    route.roots.clone(),
                    route.turn.as_ref().map(|turn| turn.turn_id.clone()),
                    default_cwd,
                )
            })
        };
        let (chat, roots, turn_id, default_cwd) = match found {
            Some(found) => found,
            None => {
                respond(
                    responder,
                    Err(RpcError::new(
                        ErrorCode::INVALID_PARAMS,
                        format!("unknown session `{session}`"),
                    )),
                );
                drop(admission);
                return;
            }
        };
        let prepared = match (roots, turn_id) {
            (None, _) => Err("the session's working directories could not be opened".to_owned()),
            (_, None) => Err("Hearth runs commands only while the user's turn runs".to_owned()),
            (Some(roots), Some(turn_id)) => {
                let wanted = request
                    .cwd
                    .clone()
                    .unwrap_or_else(|| roots.roots().first().cloned().unwrap_or_default());
                match roots.directory(&wanted) {
                    Ok(directory) => Ok((directory, turn_id)),
                    Err(error) => Err(error.to_string()),
                }
            }
        };
        let (directory, turn_id) = match prepared {
            Ok(prepared) => prepared,
            Err(message) => {
                self.shared.audit_command(
                    &chat,
                    &command_line,
                    request.cwd.as_deref().unwrap_or(std::path::Path::new("")),
                    AuditOutcome::error(message.clone()),
                );
                respond(
                    responder,
                    Err(RpcError::new(
                        ErrorCode::INVALID_PARAMS,
                        format!("refused to run `{command_line}`: {message}"),
                    )),
                );
                drop(admission);
                return;
            }
        };
        // Exactly what runs: the command line, the variables it sets, where it runs.
        let shown = ShownCommand {
            line: command_line.clone(),
            env: env.clone(),
            cwd: Some(directory.clone()),
        };
        let scope = Scope::command(shown.clone());
        let (covered, verdict) = {
            let mut routes = self.shared.routes();
            match routes.get_mut(&session) {
                Some(route) => {
                    let covered = route
                        .turn
                        .as_mut()
                        .is_some_and(|turn| turn.take_command(&shown, default_cwd.as_deref()));
                    (covered, verdict(&self.shared, route, &scope))
                }
                None => (false, Verdict::Refuse("the session went away".to_owned())),
            }
        };
        let limit = usize::try_from(
            request
                .output_byte_limit
                .unwrap_or(OUTPUT_CAP)
                .min(OUTPUT_CAP),
        )
        .unwrap_or(usize::MAX);
        let id = self.shared.fresh_id("terminal");
        let shared = Arc::clone(&self.shared);
        let asking_chat = chat.clone();
        let program = request.command.clone();
        let arguments = request.args.clone();
        let run = move |allowed: bool| -> Result<acp::CreateTerminalResponse, RpcError> {
            if !allowed {
                shared.audit_command(
                    &chat,
                    &command_line,
                    &directory,
                    AuditOutcome::error("the user did not allow it"),
                );
                return Err(RpcError::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!("the user did not allow running `{command_line}`"),
                ));
            }
            match shared.terminals.start(
                id.clone(),
                &chat,
                &program,
                &arguments,
                &env,
                directory.clone(),
                limit,
            ) {
                Ok(()) => {
                    shared.audit_command(&chat, &command_line, &directory, AuditOutcome::ok());
                    Ok(acp::CreateTerminalResponse::new(id))
                }
                Err(error) => {
                    shared.audit_command(
                        &chat,
                        &command_line,
                        &directory,
                        AuditOutcome::error(error.to_string()),
                    );
                    Err(RpcError::new(
                        ErrorCode::INTERNAL_ERROR,
                        format!("could not run `{command_line}`: {error}"),
                    ))
                }
            }
        };
        if covered {
            respond(responder, run(true));
            drop(admission);
            return;
        }
        // The question shows all of it: a variable like LD_PRELOAD changes what runs.
        let mut call = ToolCallPart::new(
            self.shared.fresh_id("command"),
            "terminal",
            json!({
                "command": request.command,
                "args": request.args,
                "env": shown.env.iter().map(|(name, value)| json!({"name": name, "value": value})).collect::<Vec<_>>(),
                "cwd": shown.cwd.as_ref().map(|cwd| cwd.display().to_string()),
            }),
            ToolCallStatus::Pending,
        );
        call.title = Some(format!(
            "Run `{}`",
            call_line(&request.command, &request.args)
        ));
        call.kind = Some(ToolKind::Execute);
        let raised = Raised {
            chat: asking_chat,
            turn_id: turn_id.clone(),
            request_id: self.shared.permission_id(),
            title: format!(
                "Allow {} to run {}?",
                self.shared.agent(),
                Scope::command(ShownCommand {
                    line: call_line(&request.command, &request.args),
                    ..shown.clone()
                })
                .describe()
                .trim_start_matches("execute of ")
            ),
            options: hearth_options(),
            call: call.clone(),
            new_call: true,
            verdict,
            scope,
        };
        let shared = Arc::clone(&self.shared);
        let chat = raised.chat.clone();
        self.raise(raised, move |outcome| {
            let result = run(outcome.allows());
            let status = if result.is_ok() {
                ToolCallStatus::Completed
            } else {
                ToolCallStatus::Failed
            };
            tokio::spawn(async move {
                shared
                    .signal(
                        &chat,
                        vec![Signal::ToolCallUpdated {
                            turn_id: turn_id.clone(),
                            call_id: call.call_id.clone(),
                            status,
                            result: None,
                            patch: hearth_core::ToolCallPatch::default(),
                        }],
                    )
                    .await;
            });
            respond(responder, result);
        })
        .await;
        drop(admission);
    }

    /// `terminal/output`.
    pub fn terminal_output(
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
    pub fn terminal_wait(
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
    pub fn terminal_kill(
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
    pub fn terminal_release(
        &self,
        request: acp::ReleaseTerminalRequest,
        responder: Responder<acp::ReleaseTerminalResponse>,

        admission: Admission,
    ) {
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
