//! The tool registry: the tools on offer and the one path every call takes — unknown
//! tools and invalid arguments answered with errors the model can act on, read tools
//! run, mutating tools' changes staged as proposals, every call recorded.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use chrono::Duration;
use futures::FutureExt;
use futures::future::BoxFuture;
use hearth_core::{
    ProposalDraft, ProposalId, StagedProposal, Timestamp, ToolCallContext, ToolCallOutcome,
    ToolDescription, ToolError, ToolHandler, ToolOutput, ToolReach, Toolbox,
};
use hearth_store::{ProposalRecord, ProposalStatus, ProposalStore};
use serde_json::{Value, json};

use crate::actor::Actor;
use crate::audit::{AuditEntry, AuditKind, AuditLog, AuditOutcome, Decision};
use crate::canonical::{canonical_json, sha256_hex};
use crate::error::{Result, ToolsError};
use crate::gate::ApprovalGate;
use crate::proposal::Proposal;

/// Days until an unanswered proposal expires, unless configured.
pub const DEFAULT_PROPOSAL_EXPIRY_DAYS: u32 = 7;

/// The most characters of a proposal's diff repeated to the model.
const MAX_DIFF_FOR_MODEL: usize = 4000;

/// Where the registry and the gate read the time (tests substitute their own).
pub type Clock = Arc<dyn Fn() -> Timestamp + Send + Sync>;

/// What the registry and its gate share.
pub(crate) struct Shared {
    pub tools: Vec<Arc<dyn ToolHandler>>,
    pub proposals: Arc<dyn ProposalStore>,
    pub audit: AuditLog,
    pub expiry: Duration,
    pub clock: Clock,
    /// What decides, before a tool runs, whether the calling session may make the call.
    pub admission: std::sync::OnceLock<Arc<dyn CallAdmission>>,
}

/// Decides, before a tool runs, whether the session calling it may make this call: on a
/// team server, a user's agents reach only the calendars granted to that user.
pub trait CallAdmission: Send + Sync {
    /// `Ok` to let the call run; `Err` with what to tell the agent (the call is refused
    /// and audited as denied).
    fn admit<'a>(
        &'a self,
        call: &'a ToolCallContext,
        tool: &'a str,
        arguments: &'a Value,
    ) -> BoxFuture<'a, Result<(), String>>;
}

impl Shared {
    pub fn tool(&self, name: &str) -> Option<&Arc<dyn ToolHandler>> {
        self.tools.iter().find(|tool| tool.name() == name)
    }

    pub fn now(&self) -> Timestamp {
        (self.clock)()
    }

    /// Appends to the audit log; a failure is logged, never returned to the caller.
    pub async fn record(&self, entry: AuditEntry) {
        if let Err(error) = self.audit.append(entry).await {
            tracing::error!("could not write to the audit log: {error}");
        }
    }
}

/// Collects tools and settings for a [`ToolRegistry`].
pub struct RegistryBuilder {
    tools: Vec<Arc<dyn ToolHandler>>,
    proposals: Arc<dyn ProposalStore>,
    audit: AuditLog,
    expiry: Duration,
    clock: Clock,
}

fn valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
}

impl RegistryBuilder {
    /// Adds a tool. Names are unique and models must be able to call them.
    pub fn register(&mut self, tool: Arc<dyn ToolHandler>) -> Result<&mut Self> {
        let name = tool.name();
        if !valid_tool_name(name) {
            return Err(ToolsError::InvalidToolName {
                name: name.to_owned(),
            });
        }
        if self.tools.iter().any(|known| known.name() == name) {
            return Err(ToolsError::DuplicateTool {
                name: name.to_owned(),
            });
        }
        self.tools.push(tool);
        Ok(self)
    }

    /// Adds several tools.
    pub fn register_all(
        &mut self,
        tools: impl IntoIterator<Item = Arc<dyn ToolHandler>>,
    ) -> Result<&mut Self> {
        for tool in tools {
            self.register(tool)?;
        }
        Ok(self)
    }

    /// How long a staged proposal waits for the user (default 7 days).
    pub fn proposal_expiry(&mut self, expiry: Duration) -> &mut Self {
        self.expiry = expiry;
        self
    }

    /// The clock (tests).
    pub fn clock(&mut self, clock: Clock) -> &mut Self {
        self.clock = clock;
        self
    }

    /// The registry.
    pub fn build(self) -> ToolRegistry {
        ToolRegistry {
            shared: Arc::new(Shared {
                tools: self.tools,
                proposals: self.proposals,
                audit: self.audit,
                expiry: self.expiry,
                clock: self.clock,
                admission: std::sync::OnceLock::new(),
            }),
        }
    }
}

/// The tools agents may call, behind the approval gate. Implements [`Toolbox`], which is
/// all an agent ever gets: it lists and calls tools, and nothing it offers approves,
/// applies or changes policy. The user's side is [`ToolRegistry::gate`].
#[derive(Clone)]
pub struct ToolRegistry {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.names())
            .field("expiry", &self.shared.expiry)
            .finish_non_exhaustive()
    }
}

impl ToolRegistry {
    /// Has `admission` decide, from now on, whether each call may run (set once: a
    /// second one is refused, returning `false`).
    pub fn admit_with(&self, admission: Arc<dyn CallAdmission>) -> bool {
        self.shared.admission.set(admission).is_ok()
    }

    /// A registry whose proposals are kept in `proposals` and whose calls are recorded
    /// in `audit`.
    pub fn builder(proposals: Arc<dyn ProposalStore>, audit: AuditLog) -> RegistryBuilder {
        RegistryBuilder {
            tools: Vec::new(),
            proposals,
            audit,
            expiry: Duration::days(i64::from(DEFAULT_PROPOSAL_EXPIRY_DAYS)),
            clock: Arc::new(hearth_core::now),
        }
    }

    /// The user's side: listing, approving, rejecting, applying and expiring proposals.
    /// Hand it only to user-facing code (the CLI, the server's authenticated API).
    pub fn gate(&self) -> ApprovalGate {
        ApprovalGate::new(Arc::clone(&self.shared))
    }

    /// The audit log calls are recorded in.
    pub fn audit(&self) -> &AuditLog {
        &self.shared.audit
    }

    /// The tools' names, in registration order.
    pub fn names(&self) -> Vec<&str> {
        self.shared.tools.iter().map(|tool| tool.name()).collect()
    }

    /// Calls a tool on behalf of `actor` (an agent's chat, or the user trying a tool).
    /// Never fails: problems come back as an error outcome.
    pub async fn call_as(
        &self,
        actor: Actor,
        call: &ToolCallContext,
        name: &str,
        arguments: Value,
    ) -> ToolCallOutcome {
        let arguments = if arguments.is_null() {
            json!({})
        } else {
            arguments
        };
        let (outcome, audited) = self.run_call(call, name, &arguments).await;
        let mut entry = AuditEntry::new(
            actor,
            AuditKind::ToolCall,
            audited.decision,
            audited.outcome,
        )
        .tool(name)
        .arguments(&arguments)
        .detail(json!({
            "session": call.session.to_string(),
            "turn_id": call.turn_id.as_str(),
            "call_id": call.call_id,
            "arguments": arguments,
        }));
        if let Some(proposal) = audited.proposal {
            entry = entry.proposal(proposal);
        }
        self.shared.record(entry).await;
        outcome
    }

    /// Checks and runs a call: the outcome for the agent and what the audit log records
    /// of it.
    async fn run_call(
        &self,
        call: &ToolCallContext,
        name: &str,
        arguments: &Value,
    ) -> (ToolCallOutcome, Audited) {
        let Some(tool) = self.shared.tool(name) else {
            return failed(Decision::Denied, self.unknown_tool(name));
        };
        if let Some(admission) = self.shared.admission.get()
            && let Err(refusal) = admission.admit(call, name, arguments).await
        {
            return failed(Decision::Denied, refusal);
        }
        let violations = hearth_schema::validate(&tool.parameters(), arguments);
        if !violations.is_empty() {
            let listed: Vec<String> = violations.iter().map(ToString::to_string).collect();
            return failed(
                Decision::Denied,
                format!(
                    "invalid arguments for `{name}`: {}. Call `{name}` again with arguments that match its parameters.",
                    listed.join("; ")
                ),
            );
        }
        let result = AssertUnwindSafe(tool.execute(call, arguments.clone()))
            .catch_unwind()
            .await
            .unwrap_or_else(|_| {
                Err(ToolError::Failed(format!(
                    "the tool `{name}` stopped unexpectedly; nothing was changed"
                )))
            });
        match result {
            // The gate's contract: a tool that changes things only ever stages.
            Ok(ToolOutput::Content { .. }) if tool.mutates() => {
                tracing::error!(tool = %name, "a mutating tool did not stage its change");
                failed(
                    Decision::Denied,
                    format!(
                        "the tool `{name}` changes things but answered without staging a proposal; its answer was dropped and nothing awaits approval (a defect in the tool)"
                    ),
                )
            }
            Ok(ToolOutput::Content { text, .. }) => (
                ToolCallOutcome {
                    content: text,
                    is_error: false,
                    proposal: None,
                },
                Audited::ok(Decision::Ran, None),
            ),
            Ok(ToolOutput::Staged(draft)) => match self.stage(call, name, draft).await {
                Ok(proposal) => (
                    ToolCallOutcome {
                        content: staged_message(&proposal),
                        is_error: false,
                        proposal: Some(StagedProposal {
                            id: proposal.id.clone(),
                            summary: proposal.summary,
                        }),
                    },
                    Audited::ok(Decision::Staged, Some(proposal.id)),
                ),
                Err(error) => failed(
                    Decision::Failed,
                    format!(
                        "the change could not be staged for approval ({error}); nothing was changed"
                    ),
                ),
            },
            Err(error) => failed(
                failure_decision(&error, tool.mutates()),
                format!("`{name}`: {error}"),
            ),
        }
    }

    /// Records a staged change as a pending proposal.
    async fn stage(
        &self,
        call: &ToolCallContext,
        tool: &str,
        draft: ProposalDraft,
    ) -> Result<Proposal> {
        let payload = canonical_json(&draft.payload);
        let at = self.shared.now();
        let record = ProposalRecord {
            id: ProposalId::generate(),
            tool: tool.to_owned(),
            session: call.session.clone(),
            chat: call.chat.clone(),
            turn_id: call.turn_id.clone(),
            call_id: call.call_id.clone(),
            summary: draft.summary,
            diff: draft.diff,
            payload_hash: sha256_hex(payload.as_bytes()),
            payload,
            status: ProposalStatus::Pending,
            approved_hash: None,
            decided_by: None,
            decided_at: None,
            reason: None,
            outcome: None,
            error: None,
            created_at: at,
            expires_at: at + self.shared.expiry,
            updated_at: at,
            applied_at: None,
        };
        self.shared.proposals.insert_proposal(&record).await?;
        Ok(record.into())
    }

    fn unknown_tool(&self, name: &str) -> String {
        let names = self.names();
        let mut message = if names.is_empty() {
            format!("no such tool `{name}`; no tools are available")
        } else {
            format!(
                "no such tool `{name}`; the available tools are: {}",
                names.join(", ")
            )
        };
        let lower = name.to_ascii_lowercase();
        if [
            "approv",
            "apply",
            "reject",
            "proposal",
            "permission",
            "policy",
            "gate",
        ]
        .iter()
        .any(|word| lower.contains(word))
        {
            message.push_str(
                ". Approving, rejecting and applying proposals is the user's decision; no tool can do it",
            );
        }
        message
    }
}

/// What the audit log records of a tool call.
struct Audited {
    decision: Decision,
    outcome: AuditOutcome,
    /// The proposal the call staged.
    proposal: Option<ProposalId>,
}

impl Audited {
    fn ok(decision: Decision, proposal: Option<ProposalId>) -> Self {
        Self {
            decision,
            outcome: AuditOutcome::ok(),
            proposal,
        }
    }
}

/// A call that failed with `message`, recorded as `decision`.
fn failed(decision: Decision, message: String) -> (ToolCallOutcome, Audited) {
    let audited = Audited {
        decision,
        outcome: AuditOutcome::error(&message),
        proposal: None,
    };
    (error_outcome(message), audited)
}

fn error_outcome(message: String) -> ToolCallOutcome {
    ToolCallOutcome {
        content: message,
        is_error: true,
        proposal: None,
    }
}

/// How a call the tool answered with an error is audited: one it refused to carry out
/// (bad arguments, policy, no such operation) as denied; one that failed as run, for a
/// read tool, or failed, for a mutating tool, since nothing was staged.
fn failure_decision(error: &ToolError, mutates: bool) -> Decision {
    match error {
        ToolError::InvalidArguments(_) | ToolError::Refused(_) | ToolError::Unsupported(_) => {
            Decision::Denied
        }
        ToolError::Failed(_) | ToolError::Conflict(_) if mutates => Decision::Failed,
        ToolError::Failed(_) | ToolError::Conflict(_) => Decision::Ran,
    }
}

/// What the model is told about a staged proposal.
pub fn staged_message(proposal: &Proposal) -> String {
    let mut diff: String = proposal.diff.chars().take(MAX_DIFF_FOR_MODEL).collect();
    if diff.len() < proposal.diff.len() {
        diff.push_str("\n[…]");
    }
    format!(
        "Staged proposal {id} for the user's approval: {summary}\n\
         Nothing has been changed yet: the change is made only if the user approves this \
         proposal in Hearth, and it expires at {expires} if they do not. Tell the user what \
         awaits their approval; do not stage the same change again.\n\n\
         Proposed change:\n{diff}",
        id = proposal.id,
        summary = proposal.summary,
        expires = proposal.expires_at.format("%Y-%m-%d %H:%M UTC"),
    )
}

impl Toolbox for ToolRegistry {
    fn tools(&self) -> Vec<ToolDescription> {
        self.shared
            .tools
            .iter()
            .map(|tool| ToolDescription::of(tool.as_ref()))
            .collect()
    }

    fn reach(&self, name: &str) -> ToolReach {
        self.shared
            .tools
            .iter()
            .find(|tool| tool.name() == name)
            .map_or(ToolReach::Local, |tool| tool.reach())
    }

    fn call<'a>(
        &'a self,
        call: &'a ToolCallContext,
        name: &'a str,
        arguments: Value,
    ) -> BoxFuture<'a, ToolCallOutcome> {
        Box::pin(self.call_as(Actor::Agent(call.chat.clone()), call, name, arguments))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_tool_error_is_audited_as_what_happened_never_as_staged() {
        let message = || "x".to_owned();
        let table = [
            (
                ToolError::InvalidArguments(message()),
                Decision::Denied,
                Decision::Denied,
            ),
            (
                ToolError::Refused(message()),
                Decision::Denied,
                Decision::Denied,
            ),
            (
                ToolError::Unsupported(message()),
                Decision::Denied,
                Decision::Denied,
            ),
            (
                ToolError::Failed(message()),
                Decision::Ran,
                Decision::Failed,
            ),
            (
                ToolError::Conflict(message()),
                Decision::Ran,
                Decision::Failed,
            ),
        ];
        for (error, read, mutating) in table {
            assert_eq!(
                (
                    failure_decision(&error, false),
                    failure_decision(&error, true)
                ),
                (read, mutating),
                "{error}"
            );
        }
    }
}
