//! The agent's file requests (`fs/read_text_file`, `fs/write_text_file`), confined to
//! the session's working directories by `hearth-confine` — never `..`, a symlink, a
//! hard link or a special file out of them, never into Hearth's data directory.
//!
//! A read of a missing file answers empty text (agents read a file before creating it).
//! A write goes through only when a tool call the user allowed in the running turn
//! covers the file; otherwise Hearth asks the user itself, showing the diff. Writes are
//! atomic and recorded in the audit log with the file's hashes before and after.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Error as RpcError, ErrorCode};
use hearth_confine::Roots;
use hearth_core::{
    ChatUri, Signal, ToolCallContent, ToolCallPart, ToolCallStatus, ToolKind, ToolLocation,
    ToolResult, TurnId,
};
use hearth_tools::{Actor, AuditEntry, AuditKind, AuditOutcome, Decision};
use serde_json::json;

use crate::grants::Scope;
use crate::handlers::{Handlers, respond};
use crate::lines::Admission;
use crate::permissions::{Raised, hearth_options, session_verdict, settled};
use crate::shared::Shared;

/// Largest file an agent may read through Hearth.
const READ_LIMIT: u64 = 16 * 1024 * 1024;
/// Largest old content shown in a write's diff.
const DIFF_LIMIT: u64 = 256 * 1024;
/// Why every file request of a session whose directories could not be opened fails.
const NO_ROOTS: &str = "the session's working directories could not be opened; Hearth refuses every file request of this session";

fn refused(message: impl Into<String>) -> RpcError {
    RpcError::new(ErrorCode::INVALID_PARAMS, message.into())
}

fn failed(message: impl Into<String>) -> RpcError {
    RpcError::new(ErrorCode::INTERNAL_ERROR, message.into())
}

/// Lines `line..line+limit` (1-based) of a text, as `fs/read_text_file` asks.
fn slice(text: &str, line: Option<u32>, limit: Option<u32>) -> String {
    if line.is_none() && limit.is_none() {
        return text.to_owned();
    }
    let skip = line.map_or(0, |line| line.saturating_sub(1)) as usize;
    let take = limit.map_or(usize::MAX, |limit| limit as usize);
    text.split_inclusive('\n').skip(skip).take(take).collect()
}

/// What a write needs from its session.
struct WriteRoute {
    chat: ChatUri,
    roots: Roots,
    turn_id: TurnId,
    covered: bool,
}

impl Shared {
    /// Records a file write (or its refusal).
    fn audit_write(
        &self,
        chat: &ChatUri,
        path: &std::path::Path,
        outcome: AuditOutcome,
        hashes: serde_json::Value,
    ) {
        let decision = if matches!(outcome, AuditOutcome::Ok(_)) {
            Decision::Written
        } else {
            Decision::Refused
        };
        self.audit(
            AuditEntry::new(
                Actor::Agent(chat.clone()),
                AuditKind::FileWrite,
                decision,
                outcome,
            )
            .detail(json!({
                "agent": self.agent(),
                "chat": chat.to_string(),
                "path": path.display().to_string(),
                "hashes": hashes,
            })),
        );
    }
}

impl Handlers {
    /// `fs/read_text_file`.
    pub async fn read_file(
        &self,
        request: acp::ReadTextFileRequest,
        responder: Responder<acp::ReadTextFileResponse>,

        admission: Admission,
    ) {
        let roots = self
            .shared
            .routes()
            .get(&request.session_id.to_string())
            .map(|route| (route.roots.clone(), route.read_only.clone()));
        drop(admission);
        let Some((roots, read_only)) = roots else {
            respond(
                responder,
                Err(refused(format!("unknown session `{}`", request.session_id))),
            );
            return;
        };
        let agent = self.shared.agent().to_owned();
        tokio::spawn(async move {
            let Some(roots) = roots else {
                respond(responder, Err(refused(NO_ROOTS)));
                return;
            };
            let path = request.path.clone();
            let read = tokio::task::spawn_blocking(move || {
                match roots.read(&path, READ_LIMIT) {
                    // A path outside the working directories may be in a read-only one.
                    Err(outside @ hearth_confine::Error::OutsideRoots { .. }) => match read_only {
                        Some(read_only) => {
                            read_only
                                .read(&path, READ_LIMIT)
                                .map_err(|error| match error {
                                    hearth_confine::Error::OutsideRoots { .. } => outside,
                                    other => other,
                                })
                        }
                        None => Err(outside),
                    },
                    other => other,
                }
            })
            .await;
            let result = match read {
                Ok(Ok(Some(bytes))) => Ok(acp::ReadTextFileResponse::new(slice(
                    &String::from_utf8_lossy(&bytes),
                    request.line,
                    request.limit,
                ))),
                Ok(Ok(None)) => Ok(acp::ReadTextFileResponse::new(String::new())),
                Ok(Err(error)) => {
                    tracing::info!(%agent, path = %request.path.display(), %error, "refused a read");
                    Err(refused(error.to_string()))
                }
                Err(error) => Err(failed(format!(
                    "reading {}: {error}",
                    request.path.display()
                ))),
            };
            respond(responder, result);
        });
    }

    /// `fs/write_text_file`: a write goes through at once when a call the user allowed
    /// in the running turn covers the file; otherwise Hearth asks, showing the diff.
    pub async fn write_file(
        &self,
        request: acp::WriteTextFileRequest,
        responder: Responder<acp::WriteTextFileResponse>,

        admission: Admission,
    ) {
        let session = request.session_id.to_string();
        let path = request.path.clone();
        let route = match self.write_route(&session, &path) {
            Ok(route) => route,
            Err(error) => {
                respond(responder, Err(error));
                drop(admission);
                return;
            }
        };
        if !route.roots.contains_lexically(&path) {
            let error = self.refuse_outside(&route, &path).await;
            respond(responder, Err(error));
            drop(admission);
            return;
        }
        if route.covered {
            drop(admission);
            let shared = Arc::clone(&self.shared);
            tokio::spawn(async move {
                let result = write(&shared, &route.chat, route.roots, path, request.content).await;
                respond(responder, result);
            });
            return;
        }
        self.ask_to_write(&session, route, path, request.content, responder)
            .await;
        drop(admission);
    }

    /// What a write of `path` needs from its session, or why the session refuses it (a
    /// refusal while no turn runs is recorded).
    fn write_route(&self, session: &str, path: &Path) -> Result<WriteRoute, RpcError> {
        let found = self.shared.routes().get(session).map(|route| {
            let covered = route
                .turn
                .as_ref()
                .is_some_and(|turn| turn.allows_write(path));
            (
                route.chat.clone(),
                route.roots.clone(),
                route.turn.as_ref().map(|turn| turn.turn_id.clone()),
                covered,
            )
        });
        let Some((chat, roots, turn_id, covered)) = found else {
            return Err(refused(format!("unknown session `{session}`")));
        };
        let Some(roots) = roots else {
            return Err(refused(NO_ROOTS));
        };
        let Some(turn_id) = turn_id else {
            self.shared.audit_write(
                &chat,
                path,
                AuditOutcome::error("no turn was running"),
                json!(null),
            );
            return Err(refused(
                "Hearth accepts writes only while the user's turn runs",
            ));
        };
        Ok(WriteRoute {
            chat,
            roots,
            turn_id,
            covered,
        })
    }

    /// Refuses a write outside the session's working directories: recorded, and shown in
    /// the turn.
    async fn refuse_outside(&self, route: &WriteRoute, path: &Path) -> RpcError {
        let roots: Vec<String> = route
            .roots
            .roots()
            .iter()
            .map(|root| root.display().to_string())
            .collect();
        let message = format!(
            "refused to write `{}`: it is outside the session's working directories ({})",
            path.display(),
            roots.join(", ")
        );
        self.shared.audit_write(
            &route.chat,
            path,
            AuditOutcome::error(message.clone()),
            json!(null),
        );
        self.shared
            .signal(
                &route.chat,
                vec![Signal::Error {
                    turn_id: route.turn_id.clone(),
                    message: format!("{}: {message}", self.shared.agent()),
                }],
            )
            .await;
        refused(message)
    }

    /// Asks the user about a write nothing allowed covers, showing the diff; writes when
    /// allowed, and settles the call shown.
    async fn ask_to_write(
        &self,
        session: &str,
        route: WriteRoute,
        path: PathBuf,
        content: String,
        responder: Responder<acp::WriteTextFileResponse>,
    ) {
        let old_text = read_for_diff(&route.roots, &path).await;
        let call = write_call(
            self.shared.fresh_id("write"),
            &path,
            old_text,
            content.clone(),
        );
        let call_id = call.call_id.clone();
        let scope = Scope::write(&path);
        let raised = Raised {
            chat: route.chat.clone(),
            turn_id: route.turn_id.clone(),
            request_id: self.shared.permission_id(),
            title: format!("Allow {} to write {}?", self.shared.agent(), path.display()),
            options: hearth_options(),
            call,
            new_call: true,
            verdict: session_verdict(&self.shared, session, &scope),
            scope,
        };
        let shared = Arc::clone(&self.shared);
        self.raise(raised, move |outcome| {
            tokio::spawn(async move {
                let WriteRoute {
                    chat,
                    roots,
                    turn_id,
                    ..
                } = route;
                let result = if outcome.allows() {
                    write(&shared, &chat, roots, path.clone(), content).await
                } else {
                    shared.audit_write(
                        &chat,
                        &path,
                        AuditOutcome::error("the user did not allow it"),
                        json!(null),
                    );
                    Err(failed(format!(
                        "the user did not allow writing `{}`",
                        path.display()
                    )))
                };
                let shown = ToolResult {
                    content: match &result {
                        Ok(_) => format!("wrote {}", path.display()),
                        Err(error) => error.message.clone(),
                    },
                    is_error: result.is_err(),
                };
                let update = settled(turn_id, call_id, result.is_ok(), Some(shown));
                shared.signal(&chat, vec![update]).await;
                respond(responder, result);
            });
        })
        .await;
    }
}

/// The current text of a file about to be written, for the diff shown (none when it is
/// missing, unreadable or larger than [`DIFF_LIMIT`]).
async fn read_for_diff(roots: &Roots, path: &Path) -> Option<String> {
    let roots = roots.clone();
    let path = path.to_path_buf();
    tokio::task::spawn_blocking(move || roots.read(&path, DIFF_LIMIT))
        .await
        .ok()
        .and_then(Result::ok)
        .flatten()
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
}

/// The call Hearth shows in the turn when it asks about a write: the file and its diff.
fn write_call(id: String, path: &Path, old_text: Option<String>, new_text: String) -> ToolCallPart {
    let shown = path.display().to_string();
    let mut call = ToolCallPart::new(
        id,
        "write_text_file",
        json!({"path": shown}),
        ToolCallStatus::Pending,
    );
    call.title = Some(format!("Write {shown}"));
    call.kind = Some(ToolKind::Edit);
    call.locations = vec![ToolLocation {
        path: shown.clone(),
        line: None,
    }];
    call.content = vec![ToolCallContent::Diff {
        path: shown,
        old_text,
        new_text,
    }];
    call
}

/// Writes a file atomically inside the roots and records it.
async fn write(
    shared: &Shared,
    chat: &ChatUri,
    roots: Roots,
    path: PathBuf,
    content: String,
) -> Result<acp::WriteTextFileResponse, RpcError> {
    let target = path.clone();
    let written =
        tokio::task::spawn_blocking(move || roots.write(&target, content.as_bytes())).await;
    match written {
        Ok(Ok(written)) => {
            shared.audit_write(
                chat,
                &written.path,
                AuditOutcome::ok(),
                json!({"before": written.before_sha256, "after": written.after_sha256}),
            );
            Ok(acp::WriteTextFileResponse::new())
        }
        Ok(Err(error)) => {
            shared.audit_write(
                chat,
                &path,
                AuditOutcome::error(error.to_string()),
                json!(null),
            );
            Err(refused(error.to_string()))
        }
        Err(error) => Err(failed(format!("writing {}: {error}", path.display()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_sliced_by_line_and_limit() {
        let text = "one\ntwo\nthree\n";
        assert_eq!(slice(text, None, None), text);
        assert_eq!(slice(text, Some(2), None), "two\nthree\n");
        assert_eq!(slice(text, Some(2), Some(1)), "two\n");
        assert_eq!(slice(text, None, Some(1)), "one\n");
    }
}
