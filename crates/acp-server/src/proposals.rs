//! A staged calendar change, asked about through `session/request_permission`.
//!
//! The editor is shown the proposal's summary and diff and offers two choices. The
//! answer decides exactly the proposal asked about, bound to the payload hash shown (a
//! payload changed since is refused by the gate), and is audited as the user's decision
//! through `acp`. An editor that cannot ask — it answers with an error, cancels, picks
//! an option Hearth did not offer, or is gone — leaves the proposal pending for `hearth
//! proposals` and every other Hearth surface.

use std::sync::Arc;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, PermissionOption, PermissionOptionKind, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SessionId, SessionNotification,
    SessionUpdate, TextContent, ToolCallContent, ToolCallId, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind,
};
use hearth_core::{ChatUri, ProposalId};
use serde_json::json;

use crate::agent::HearthAgent;
use crate::error::Result;
use crate::hearth::{Decided, Staged};

/// The channel decisions made through the editor are audited as.
pub(crate) const VIA: &str = "acp";

/// The option that approves (and applies) the proposal.
const APPROVE: &str = "approve";
/// The option that rejects it.
const REJECT: &str = "reject";

/// What became of a proposal asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Asked {
    /// Approved and applied (or applying elsewhere).
    Applied,
    /// Approved, but applying failed; the proposal says why.
    ApplyFailed(String),
    /// Rejected.
    Rejected,
    /// Nobody decided here; it stays pending.
    LeftPending(String),
    /// It was no longer pending when the editor would have been asked (where it is now).
    AlreadyDecided(String),
}

/// Asks the editor about proposal `id`, staged in `chat`, and carries out its answer.
pub(crate) async fn ask(
    agent: Arc<HearthAgent>,
    connection: ConnectionTo<Client>,
    (session, chat): (SessionId, ChatUri),
    id: ProposalId,
) -> Result<Asked> {
    let proposal = agent.hearth.proposal(&chat, &id).await?;
    if let Some(status) = proposal.decided {
        return Ok(Asked::AlreadyDecided(status));
    }
    let call_id = ToolCallId::new(proposal.call_id.clone());
    let request = question(&proposal, session.clone(), call_id.clone());
    let answer = connection.send_request(request).block_task().await;
    let asked = match chosen(answer) {
        Ok(option) => decide(&agent, &proposal, &option).await?,
        Err(left_pending) => left_pending,
    };
    let shown = ToolCallUpdate::new(call_id, decision_shown(&proposal.summary, &asked));
    if let Err(error) = connection.send_notification(SessionNotification::new(
        session,
        SessionUpdate::ToolCallUpdate(shown),
    )) {
        tracing::debug!(%error, "the editor left before the decision was shown");
    }
    Ok(asked)
}

/// The question about a proposal: its summary, id, payload hash and diff, and the two
/// choices.
fn question(
    proposal: &Staged,
    session: SessionId,
    call_id: ToolCallId,
) -> RequestPermissionRequest {
    let (id, hash) = (&proposal.id, &proposal.payload_hash);
    let shown = format!(
        "{}\n\nProposal {id} (payload sha256 {hash})\n\n```diff\n{}\n```",
        proposal.summary,
        proposal.diff.trim_end()
    );
    let fields = ToolCallUpdateFields::new()
        .title(format!("Approve calendar change: {}", proposal.summary))
        .kind(ToolKind::Edit)
        .status(ToolCallStatus::Pending)
        .content(vec![ToolCallContent::from(ContentBlock::Text(
            TextContent::new(shown),
        ))])
        .raw_input(json!({
            "proposalId": id.to_string(),
            "payloadHash": hash,
            "payload": proposal.payload,
        }));
    let options = vec![
        PermissionOption::new(
            APPROVE,
            "Approve and apply",
            PermissionOptionKind::AllowOnce,
        ),
        PermissionOption::new(REJECT, "Reject", PermissionOptionKind::RejectOnce),
    ];
    RequestPermissionRequest::new(session, ToolCallUpdate::new(call_id, fields), options)
}

/// The option the editor's user chose, or why the proposal stays pending.
fn chosen(
    answer: std::result::Result<RequestPermissionResponse, agent_client_protocol::Error>,
) -> std::result::Result<String, Asked> {
    let response = answer.map_err(|error| {
        Asked::LeftPending(format!("the editor could not ask: {}", error.message))
    })?;
    match response.outcome {
        RequestPermissionOutcome::Selected(selected) => Ok(selected.option_id.0.to_string()),
        RequestPermissionOutcome::Cancelled => Err(Asked::LeftPending(
            "the editor cancelled the question".into(),
        )),
        _ => Err(Asked::LeftPending("the editor's answer is unknown".into())),
    }
}

/// Carries out the chosen option, bound to the payload hash shown.
async fn decide(agent: &HearthAgent, proposal: &Staged, option: &str) -> Result<Asked> {
    let approve = match option {
        APPROVE => true,
        REJECT => false,
        other => {
            return Ok(Asked::LeftPending(format!(
                "the editor chose {other:?}, which was not offered"
            )));
        }
    };
    let decided = agent
        .hearth
        .decide(&proposal.id, &proposal.payload_hash, approve)
        .await?;
    Ok(match decided {
        Decided::Applied => Asked::Applied,
        Decided::ApplyFailed(why) => Asked::ApplyFailed(why),
        Decided::Rejected => Asked::Rejected,
    })
}

/// The call's update that shows what became of the proposal.
fn decision_shown(summary: &str, asked: &Asked) -> ToolCallUpdateFields {
    let (status, outcome) = match asked {
        Asked::Applied => (
            ToolCallStatus::Completed,
            "Approved and applied.".to_owned(),
        ),
        Asked::ApplyFailed(why) => (
            ToolCallStatus::Failed,
            format!("Approved, but applying failed: {why}"),
        ),
        Asked::Rejected => (
            ToolCallStatus::Completed,
            "Rejected; nothing was changed.".to_owned(),
        ),
        Asked::LeftPending(why) => (
            ToolCallStatus::Completed,
            format!("Left pending ({why}); decide it with `hearth proposals`."),
        ),
        Asked::AlreadyDecided(status) => (ToolCallStatus::Completed, format!("Already {status}.")),
    };
    ToolCallUpdateFields::new()
        .status(status)
        .content(vec![ToolCallContent::from(ContentBlock::Text(
            TextContent::new(format!("{summary}\n\n{outcome}")),
        ))])
}
