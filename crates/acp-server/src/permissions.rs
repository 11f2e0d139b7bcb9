//! A permission request Hearth's agent raises in a turn (a tool call that must not run
//! unasked, such as a mutating MCP tool), put to the editor's user through
//! `session/request_permission`.
//!
//! The editor's choice is the user's answer, recorded through `acp`. An editor that
//! cannot ask (an error, a cancelled question, an option Hearth did not offer, gone)
//! gets the request refused with its first reject option, as Hearth refuses wherever
//! nobody can answer, so the turn never waits on a question nobody sees.

use std::sync::Arc;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    self as acp, RequestPermissionOutcome, RequestPermissionRequest, SessionId, ToolCallId,
    ToolCallUpdate, ToolCallUpdateFields,
};
use hearth_core::{ChatUri, PermissionOption, PermissionOptionKind};

use crate::agent::HearthAgent;
use crate::error::{AcpServerError, Result};

/// A question the turn raised.
#[derive(Debug, Clone)]
pub(crate) struct Question {
    pub(crate) chat: ChatUri,
    pub(crate) request_id: String,
    pub(crate) title: String,
    pub(crate) options: Vec<PermissionOption>,
    pub(crate) tool_call_id: Option<String>,
}

fn kind(kind: Option<PermissionOptionKind>) -> acp::PermissionOptionKind {
    match kind {
        Some(PermissionOptionKind::AllowOnce) | None => acp::PermissionOptionKind::AllowOnce,
        Some(PermissionOptionKind::AllowAlways) => acp::PermissionOptionKind::AllowAlways,
        Some(PermissionOptionKind::RejectOnce) => acp::PermissionOptionKind::RejectOnce,
        Some(PermissionOptionKind::RejectAlways) => acp::PermissionOptionKind::RejectAlways,
    }
}

/// Asks the editor and answers the host; returns the option chosen (or the refusal).
pub(crate) async fn ask(
    agent: Arc<HearthAgent>,
    connection: ConnectionTo<Client>,
    session: SessionId,
    question: Question,
) -> Result<String> {
    let call_id = question
        .tool_call_id
        .clone()
        .unwrap_or_else(|| question.request_id.clone());
    let options = question
        .options
        .iter()
        .map(|option| {
            acp::PermissionOption::new(option.id.clone(), option.label.clone(), kind(option.kind))
        })
        .collect();
    let request = RequestPermissionRequest::new(
        session,
        ToolCallUpdate::new(
            ToolCallId::new(call_id),
            ToolCallUpdateFields::new().title(question.title.clone()),
        ),
        options,
    );
    let offered = |id: &str| question.options.iter().any(|option| option.id == id);
    let chosen = match connection.send_request(request).block_task().await {
        Ok(response) => match response.outcome {
            RequestPermissionOutcome::Selected(selected) if offered(&selected.option_id.0) => {
                Some(selected.option_id.0.to_string())
            }
            _ => None,
        },
        Err(error) => {
            tracing::debug!(%error, "the editor could not ask; refusing");
            None
        }
    };
    let option_id = match chosen {
        Some(option) => option,
        None => question
            .options
            .iter()
            .find(|option| option.kind.is_some_and(|kind| !kind.allows()))
            .map(|option| option.id.clone())
            .ok_or_else(|| {
                AcpServerError::Invalid(format!(
                    "permission request {} offers no way to refuse and the editor did not answer",
                    question.request_id
                ))
            })?,
    };
    agent
        .hearth
        .respond_permission(&question.chat, &question.request_id, option_id.clone())
        .await?;
    Ok(option_id)
}
