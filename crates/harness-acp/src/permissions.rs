//! Permission requests: the agent's own (`session/request_permission`) and Hearth's (a
//! file write or a command the agent asked for without having been allowed).
//!
//! The order of checks: a request whose files lie outside the session's directories is
//! refused; an answer the user gave "always" for this kind of call in this chat is
//! reused; the agent's configured policy allows kinds it lists and refuses everything
//! when set to reject; everything else waits for the user. Only the user — through the
//! host, never through an agent — answers a waiting request. Every request and answer
//! is in the audit log.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema as acp;
use hearth_core::{
    ChatUri, PERMISSION_CANCELLED, PermissionOption, PermissionOptionKind, Signal, ToolCallContent,
    ToolCallPart, ToolCallPatch, ToolCallStatus, ToolResult, TurnId,
};
use hearth_tools::{Actor, AuditEntry, AuditKind, AuditOutcome, Decision};
use serde_json::json;
use tokio::sync::oneshot;

use crate::grants::{Grant, Scope, Target};
use crate::handlers::Handlers;
use crate::lines::Admission;
use crate::mapping;
use crate::shared::{Allowed, Answer, Route, Shared, TurnState, Waiting};
use crate::spec::PermissionMode;

/// What happens to a permission request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Allowed without asking, and why.
    Allow(String),
    /// Refused without asking, and why.
    Refuse(String),
    /// The user decides.
    Ask,
}

/// The files a tool call names (its locations and diffs), relative ones taken from the
/// working directory.
pub(crate) fn paths_of(call: &ToolCallPart, working_directory: Option<&Path>) -> Vec<PathBuf> {
    let absolute = |path: &str| {
        let path = Path::new(path);
        match working_directory {
            Some(base) if path.is_relative() => base.join(path),
            _ => path.to_path_buf(),
        }
    };
    let mut paths: Vec<PathBuf> = call
        .locations
        .iter()
        .map(|location| absolute(&location.path))
        .chain(call.content.iter().filter_map(|content| match content {
            ToolCallContent::Diff { path, .. } => Some(absolute(path)),
            _ => None,
        }))
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

/// The verdict on a call of `scope` in a chat.
pub(crate) fn verdict(shared: &Shared, route: &Route, scope: &Scope) -> Verdict {
    if let Target::Files(paths) = &scope.target
        && let Some(outside) = paths.iter().find(|path| {
            route
                .roots
                .as_ref()
                .is_none_or(|roots| !roots.contains_lexically(path))
        })
    {
        return Verdict::Refuse(format!(
            "`{}` is outside the session's working directories",
            outside.display()
        ));
    }
    // The user's standing answer for exactly this call (rule 3 of `grants`).
    if let Some(grant) = route.grants.iter().find(|grant| grant.scope.answers(scope)) {
        return if grant.allowed {
            Verdict::Allow(format!(
                "the user allowed {} for this chat (grant {})",
                scope.describe(),
                grant.id
            ))
        } else {
            Verdict::Refuse(format!(
                "the user refused {} for this chat (grant {})",
                scope.describe(),
                grant.id
            ))
        };
    }
    let kind = scope.kind;
    let policy = &shared.spec.policy;
    if let Some(kind) = kind
        && policy.allow_kinds.contains(&kind)
    {
        return Verdict::Allow(format!(
            "[agents.{}] allows {} calls without asking",
            shared.agent(),
            kind.as_str()
        ));
    }
    match policy.mode {
        PermissionMode::Ask => Verdict::Ask,
        PermissionMode::Reject => Verdict::Refuse(format!(
            "[agents.{}] permissions = \"reject\"",
            shared.agent()
        )),
    }
}

/// The verdict on a call of `scope` in an agent session (refused when the session went
/// away).
pub(crate) fn session_verdict(shared: &Shared, session: &str, scope: &Scope) -> Verdict {
    match shared.routes().get(session) {
        Some(route) => verdict(shared, route, scope),
        None => Verdict::Refuse("the session went away".to_owned()),
    }
}

/// The options Hearth offers when it asks itself.
pub(crate) fn hearth_options() -> Vec<PermissionOption> {
    [
        ("allow-once", "Allow", PermissionOptionKind::AllowOnce),
        (
            "allow-always",
            "Allow for this chat",
            PermissionOptionKind::AllowAlways,
        ),
        ("reject-once", "Refuse", PermissionOptionKind::RejectOnce),
        (
            "reject-always",
            "Refuse for this chat",
            PermissionOptionKind::RejectAlways,
        ),
    ]
    .into_iter()
    .map(|(id, label, kind)| PermissionOption {
        id: id.to_owned(),
        label: label.to_owned(),
        kind: Some(kind),
    })
    .collect()
}

/// The option the verdict picks without asking, with why; `None` when the user decides.
fn policy_answer(raised: &Raised) -> Option<(String, String)> {
    match &raised.verdict {
        Verdict::Allow(why) => mapping::pick(
            &raised.options,
            &[
                PermissionOptionKind::AllowOnce,
                PermissionOptionKind::AllowAlways,
            ],
        )
        .map(|option| (option, why.clone())),
        Verdict::Refuse(why) => Some((
            mapping::pick(
                &raised.options,
                &[
                    PermissionOptionKind::RejectOnce,
                    PermissionOptionKind::RejectAlways,
                ],
            )
            .unwrap_or_else(|| PERMISSION_CANCELLED.to_owned()),
            why.clone(),
        )),
        Verdict::Ask => None,
    }
}

/// The kind of the option with this id.
fn kind_of(options: &[PermissionOption], option_id: &str) -> Option<PermissionOptionKind> {
    options
        .iter()
        .find(|option| option.id == option_id)
        .and_then(|option| option.kind)
}

impl Shared {
    /// Records an audit entry, when there is an audit log (queued: written at once in
    /// the background, and at the latest when the turn ends).
    pub(crate) fn audit(&self, entry: AuditEntry) {
        if let Some(log) = &self.options.audit {
            log.record_detached(entry);
        }
    }

    /// Writes every queued audit entry.
    pub(crate) async fn flush_audit(&self) {
        if let Some(log) = &self.options.audit
            && let Err(error) = log.flush().await
        {
            tracing::error!(agent = %self.agent(), %error, "could not write to the audit log");
        }
    }

    /// Records a permission request or its answer.
    pub(crate) fn audit_permission(
        &self,
        chat: &ChatUri,
        decision: Decision,
        request_id: &str,
        title: &str,
        outcome: AuditOutcome,
        via: &str,
    ) {
        let actor = match decision {
            Decision::Answered => Actor::User(hearth_tools::UserActor::new(via)),
            Decision::Policy => Actor::Hearth,
            _ => Actor::Agent(chat.clone()),
        };
        self.audit(
            AuditEntry::new(actor, AuditKind::Permission, decision, outcome).detail(json!({
                "agent": self.agent(),
                "chat": chat.to_string(),
                "request_id": request_id,
                "title": title,
                "via": via,
            })),
        );
    }

    /// Delivers the user's answer to a waiting request of `chat`.
    pub(crate) fn answer(&self, chat: &ChatUri, request_id: &str, answer: Answer) -> bool {
        let mut waiting = self.waiting();
        let matches = waiting
            .get(request_id)
            .is_some_and(|entry| &entry.chat == chat);
        if !matches {
            return false;
        }
        match waiting.remove(request_id) {
            Some(entry) => entry.answer.send(answer).is_ok(),
            None => false,
        }
    }
}

/// How a request ends: the option chosen (with its kind), or cancelled.
pub(crate) struct Outcome {
    pub option_id: Option<String>,
    pub kind: Option<PermissionOptionKind>,
}

impl Outcome {
    pub fn allows(&self) -> bool {
        self.kind.is_some_and(PermissionOptionKind::allows)
    }
}

/// A request about to be raised: what the chat's turn shows and what to wait for.
pub(crate) struct Raised {
    pub chat: ChatUri,
    pub turn_id: TurnId,
    pub request_id: String,
    pub title: String,
    pub options: Vec<PermissionOption>,
    pub call: ToolCallPart,
    /// Whether the call is new to the turn (it is announced first).
    pub new_call: bool,
    pub verdict: Verdict,
    /// What the call acts on, as shown: what an answer covers.
    pub scope: Scope,
}

impl Raised {
    /// The signals that show the request in the turn, and, when the policy answered it,
    /// the answer.
    pub fn signals(&self, answered: Option<&str>) -> Vec<Signal> {
        let mut signals = Vec::new();
        if self.new_call {
            signals.push(Signal::ToolCallStarted {
                turn_id: self.turn_id.clone(),
                call: self.call.clone(),
            });
        }
        signals.push(Signal::PermissionRequested {
            turn_id: self.turn_id.clone(),
            request_id: self.request_id.clone(),
            title: self.title.clone(),
            options: self.options.clone(),
            tool_call_id: Some(self.call.call_id.clone()),
        });
        if let Some(outcome) = answered {
            signals.push(Signal::PermissionResolved {
                turn_id: self.turn_id.clone(),
                request_id: self.request_id.clone(),
                outcome: outcome.to_owned(),
            });
        }
        signals
    }
}

/// The update that settles a call Hearth showed when it asked itself: completed when
/// what it asked about ran, failed otherwise.
pub(crate) fn settled(
    turn_id: TurnId,
    call_id: String,
    succeeded: bool,
    result: Option<ToolResult>,
) -> Signal {
    Signal::ToolCallUpdated {
        turn_id,
        call_id,
        status: if succeeded {
            ToolCallStatus::Completed
        } else {
            ToolCallStatus::Failed
        },
        result,
        patch: ToolCallPatch::default(),
    }
}

impl Handlers {
    /// Raises a request in the chat's turn and settles it: at once by the verdict, or
    /// with the user's answer (waited for in the background). `respond` gets the outcome.
    pub(crate) async fn raise(
        &self,
        raised: Raised,
        respond: impl FnOnce(Outcome) + Send + 'static,
    ) {
        self.shared.audit_permission(
            &raised.chat,
            Decision::Requested,
            &raised.request_id,
            &raised.title,
            AuditOutcome::ok(),
            "agent",
        );
        match policy_answer(&raised) {
            Some((option_id, why)) => {
                let outcome = self.answer_by_policy(&raised, option_id, &why).await;
                respond(outcome);
            }
            None => self.wait_for_user(raised, respond).await,
        }
    }

    /// Settles a request the policy answered: recorded, shown with its answer.
    async fn answer_by_policy(&self, raised: &Raised, option_id: String, why: &str) -> Outcome {
        self.shared.audit_permission(
            &raised.chat,
            Decision::Policy,
            &raised.request_id,
            &raised.title,
            AuditOutcome::ok_with(format!("{option_id}: {why}")),
            "policy",
        );
        let kind = kind_of(&raised.options, &option_id);
        if kind.is_some_and(PermissionOptionKind::allows) {
            self.remember_allowed(raised);
        }
        self.shared
            .signal(&raised.chat, raised.signals(Some(&option_id)))
            .await;
        Outcome {
            option_id: (option_id != PERMISSION_CANCELLED).then_some(option_id),
            kind,
        }
    }

    /// Shows a request to the user and hands their answer to `respond` once it comes
    /// (cancelled when the turn ends first).
    async fn wait_for_user(&self, raised: Raised, respond: impl FnOnce(Outcome) + Send + 'static) {
        let (sender, receiver) = oneshot::channel();
        self.shared.waiting().insert(
            raised.request_id.clone(),
            Waiting {
                chat: raised.chat.clone(),
                turn_id: raised.turn_id.clone(),
                answer: sender,
            },
        );
        self.shared.signal(&raised.chat, raised.signals(None)).await;
        let handlers = self.clone();
        tokio::spawn(async move {
            let answer = receiver.await.unwrap_or(Answer::Cancelled);
            respond(handlers.take_answer(&raised, answer));
        });
    }

    /// Records the user's answer to a request (and what it allows or grants).
    fn take_answer(&self, raised: &Raised, answer: Answer) -> Outcome {
        let (option_id, via) = match answer {
            Answer::Selected { option_id, via } => (option_id, via),
            Answer::Cancelled => {
                self.shared.audit_permission(
                    &raised.chat,
                    Decision::Answered,
                    &raised.request_id,
                    &raised.title,
                    AuditOutcome::ok_with(PERMISSION_CANCELLED),
                    "turn ended",
                );
                return Outcome {
                    option_id: None,
                    kind: None,
                };
            }
        };
        let kind = kind_of(&raised.options, &option_id);
        // A refusal Hearth made because nobody could be asked is the policy's, not the
        // user's: audited as Hearth's, and never remembered for the rest of the chat.
        let by_policy = via == hearth_core::PERMISSION_BY_POLICY;
        self.shared.audit_permission(
            &raised.chat,
            if by_policy {
                Decision::Policy
            } else {
                Decision::Answered
            },
            &raised.request_id,
            &raised.title,
            AuditOutcome::ok_with(option_id.clone()),
            &via,
        );
        if kind.is_some_and(PermissionOptionKind::allows) {
            self.remember_allowed(raised);
        }
        if let Some(kind) = kind
            && !by_policy
        {
            self.remember_always(raised, kind);
        }
        Outcome {
            option_id: Some(option_id),
            kind,
        }
    }

    /// Notes an allowed call in the running turn, so the writes and commands it covers
    /// (exactly as shown) go through; a command allowed once covers one run.
    fn remember_allowed(&self, raised: &Raised) {
        let mut routes = self.shared.routes();
        if let Some(turn) = routes
            .values_mut()
            .find(|route| route.chat == raised.chat)
            .and_then(|route| route.turn.as_mut())
            .filter(|turn| turn.turn_id == raised.turn_id)
        {
            let uses_left = matches!(raised.scope.target, Target::Command(_)).then_some(1);
            turn.allowed.push(Allowed {
                scope: raised.scope.clone(),
                uses_left,
            });
        }
    }

    /// Notes an "always" answer as a grant of exactly this call for the rest of the chat.
    fn remember_always(&self, raised: &Raised, answer: PermissionOptionKind) {
        let allowed = match answer {
            PermissionOptionKind::AllowAlways => true,
            PermissionOptionKind::RejectAlways => false,
            PermissionOptionKind::AllowOnce | PermissionOptionKind::RejectOnce => return,
        };
        let id = self.shared.fresh_id("grant");
        if let Some(route) = self
            .shared
            .routes()
            .values_mut()
            .find(|route| route.chat == raised.chat)
        {
            route.grants.retain(|grant| grant.scope != raised.scope);
            route.grants.push(Grant {
                id,
                scope: raised.scope.clone(),
                allowed,
            });
        }
    }

    /// `session/request_permission`.
    pub async fn permission(
        &self,
        request: acp::RequestPermissionRequest,
        responder: Responder<acp::RequestPermissionResponse>,

        admission: Admission,
    ) {
        let Some((raised, update)) = self.raised_by_agent(&request) else {
            // No turn runs in that session: nobody could be asked.
            answer_agent(responder, acp::RequestPermissionOutcome::Cancelled);
            drop(admission);
            return;
        };
        if let Some(patch) = update {
            self.shared
                .signal(
                    &raised.chat,
                    vec![Signal::ToolCallUpdated {
                        turn_id: raised.turn_id.clone(),
                        call_id: raised.call.call_id.clone(),
                        status: raised.call.status,
                        result: None,
                        patch,
                    }],
                )
                .await;
        }
        self.raise(raised, move |outcome| {
            let outcome = match outcome.option_id {
                Some(option_id) => acp::RequestPermissionOutcome::Selected(
                    acp::SelectedPermissionOutcome::new(option_id),
                ),
                None => acp::RequestPermissionOutcome::Cancelled,
            };
            answer_agent(responder, outcome);
        })
        .await;
        drop(admission);
    }

    /// The request the agent asks about, for the running turn of its session, with what
    /// it changes of a call announced before; `None` when no turn runs there.
    fn raised_by_agent(
        &self,
        request: &acp::RequestPermissionRequest,
    ) -> Option<(Raised, Option<ToolCallPatch>)> {
        let mut routes = self.shared.routes();
        let route = routes.get_mut(&request.session_id.to_string())?;
        let chat = route.chat.clone();
        let working_directory = route
            .roots
            .as_ref()
            .and_then(|roots| roots.roots().first().cloned());
        let turn = route.turn.as_mut()?;
        let turn_id = turn.turn_id.clone();
        let (call, new_call, update) = asked_call(turn, &request.tool_call);
        let paths = paths_of(&call, working_directory.as_deref());
        let scope = Scope::of_call(&call, &paths);
        let title = call
            .title
            .clone()
            .unwrap_or_else(|| format!("Allow {}?", call.name));
        let verdict = verdict(&self.shared, route, &scope);
        let raised = Raised {
            chat,
            turn_id,
            request_id: self.shared.permission_id(),
            title,
            options: mapping::options(&request.options),
            call,
            new_call,
            verdict,
            scope,
        };
        Some((raised, update))
    }
}

/// The call a permission request is about, as the turn records it: a call announced
/// before takes what the request says of it (its files, its diff), for the turn to show
/// with the request; a new one is recorded. With whether it is new, and what changed.
fn asked_call(
    turn: &mut TurnState,
    asked: &acp::ToolCallUpdate,
) -> (ToolCallPart, bool, Option<ToolCallPatch>) {
    let id = asked.tool_call_id.to_string();
    match turn.calls.get_mut(&id) {
        Some(call) => {
            let (_, _, patch) = mapping::tool_call_update(asked, call.status);
            patch.apply(call);
            let update = (!patch.is_empty()).then_some(patch);
            (call.clone(), false, update)
        }
        None => {
            let call = mapping::tool_call_from_update(asked);
            turn.calls.insert(id, call.clone());
            (call, true, None)
        }
    }
}

/// Answers the agent's permission request.
fn answer_agent(
    responder: Responder<acp::RequestPermissionResponse>,
    outcome: acp::RequestPermissionOutcome,
) {
    if let Err(error) = responder.respond(acp::RequestPermissionResponse::new(outcome)) {
        tracing::debug!(%error, "could not answer a permission request");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_core::ToolLocation;
    use pretty_assertions::assert_eq;

    #[test]
    fn paths_come_from_locations_and_diffs_made_absolute() {
        let mut call = ToolCallPart::new(
            "c",
            "edit",
            serde_json::Value::Null,
            hearth_core::ToolCallStatus::Pending,
        );
        call.locations = vec![ToolLocation {
            path: "notes.md".into(),
            line: None,
        }];
        call.content = vec![ToolCallContent::Diff {
            path: "/work/notes.md".into(),
            old_text: None,
            new_text: "x".into(),
        }];
        assert_eq!(
            paths_of(&call, Some(Path::new("/work"))),
            vec![PathBuf::from("/work/notes.md")]
        );
    }
}
