//! Hearth's turn actions and parts as ACP session updates, and ACP prompts as Hearth
//! messages. Pure conversions: no I/O.

use agent_client_protocol::v1::schema::{
    self as acp, ContentBlock, ContentChunk, EmbeddedResourceResource, Plan, PlanEntryPriority,
    PlanEntryStatus, SessionUpdate, TextContent, ToolCallId, ToolCallLocation,
    ToolCallUpdateFields,
};
use hearth_core::{
    Action, PlanEntry, PlanStatus, ResponsePart, StopReason, ToolCallContent, ToolCallPart,
    ToolCallPatch, ToolCallStatus, ToolKind, Turn, TurnId,
};

/// A text content chunk.
pub(crate) fn text_chunk(text: impl Into<String>) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(TextContent::new(text.into())))
}

/// The session update a turn action streams, if it streams one. Actions of other turns
/// and actions that carry no update (turn start, permission answers) give `None`;
/// proposals and the turn's end are handled by the caller.
pub(crate) fn update_for(action: &Action, turn: &TurnId) -> Option<SessionUpdate> {
    match action {
        Action::TextDelta { turn_id, text } if turn_id == turn => {
            Some(SessionUpdate::AgentMessageChunk(text_chunk(text.clone())))
        }
        Action::ReasoningDelta { turn_id, text } if turn_id == turn => {
            Some(SessionUpdate::AgentThoughtChunk(text_chunk(text.clone())))
        }
        Action::ToolCallStarted { turn_id, call } if turn_id == turn => {
            Some(SessionUpdate::ToolCall(tool_call(call)))
        }
        Action::ToolCallUpdated {
            turn_id,
            call_id,
            status,
            result,
            patch,
        } if turn_id == turn => {
            let mut fields = ToolCallUpdateFields::new().status(tool_status(*status));
            fields = patched(fields, patch);
            if let Some(result) = result {
                let mut content = patch.content.as_deref().map(contents).unwrap_or_default();
                content.push(acp::ToolCallContent::from(ContentBlock::Text(
                    TextContent::new(result.content.clone()),
                )));
                fields = fields.content(content).raw_output(serde_json::json!({
                    "content": result.content,
                    "isError": result.is_error,
                }));
            }
            Some(SessionUpdate::ToolCallUpdate(acp::ToolCallUpdate::new(
                ToolCallId::new(call_id.clone()),
                fields,
            )))
        }
        Action::PlanUpdated { turn_id, entries } if turn_id == turn => {
            Some(SessionUpdate::Plan(plan(entries)))
        }
        Action::PartAdded {
            turn_id,
            part: ResponsePart::Error { message },
        } if turn_id == turn => Some(SessionUpdate::AgentMessageChunk(text_chunk(format!(
            "\n\nError: {message}\n"
        )))),
        _ => None,
    }
}

/// The updates that replay a stored turn (for `session/load`): the user's message, then
/// each part of the response in order.
pub(crate) fn replay(turn: &Turn) -> Vec<SessionUpdate> {
    let mut updates = Vec::new();
    if !turn.user.text.is_empty() {
        updates.push(SessionUpdate::UserMessageChunk(text_chunk(
            turn.user.text.clone(),
        )));
    }
    for part in &turn.parts {
        match part {
            ResponsePart::Text { text } if !text.is_empty() => {
                updates.push(SessionUpdate::AgentMessageChunk(text_chunk(text.clone())));
            }
            ResponsePart::Reasoning { text } if !text.is_empty() => {
                updates.push(SessionUpdate::AgentThoughtChunk(text_chunk(text.clone())));
            }
            ResponsePart::ToolCall(call) => {
                let mut acp_call = tool_call(call);
                if let Some(result) = &call.result {
                    acp_call
                        .content
                        .push(acp::ToolCallContent::from(ContentBlock::Text(
                            TextContent::new(result.content.clone()),
                        )));
                }
                updates.push(SessionUpdate::ToolCall(acp_call));
            }
            ResponsePart::Plan { entries } => updates.push(SessionUpdate::Plan(plan(entries))),
            ResponsePart::Proposal { summary, .. } => {
                updates.push(SessionUpdate::AgentMessageChunk(text_chunk(format!(
                    "\n\nStaged for approval: {summary}\n"
                ))));
            }
            ResponsePart::Error { message } => {
                updates.push(SessionUpdate::AgentMessageChunk(text_chunk(format!(
                    "\n\nError: {message}\n"
                ))));
            }
            // Hearth's own notes about the chat are not the agent's words.
            ResponsePart::Text { .. }
            | ResponsePart::Reasoning { .. }
            | ResponsePart::PermissionRequest { .. }
            | ResponsePart::Notice { .. }
            | ResponsePart::Compaction { .. } => {}
        }
    }
    updates
}

/// A Hearth tool call as an ACP tool call.
pub(crate) fn tool_call(call: &ToolCallPart) -> acp::ToolCall {
    let title = call.title.clone().unwrap_or_else(|| call.name.clone());
    let mut acp_call = acp::ToolCall::new(ToolCallId::new(call.call_id.clone()), title)
        .status(tool_status(call.status))
        .raw_input(call.arguments.clone())
        .content(contents(&call.content))
        .locations(
            call.locations
                .iter()
                .map(|location| ToolCallLocation::new(location.path.clone()).line(location.line))
                .collect(),
        );
    if let Some(kind) = call.kind {
        acp_call = acp_call.kind(tool_kind(kind));
    }
    acp_call
}

fn patched(mut fields: ToolCallUpdateFields, patch: &ToolCallPatch) -> ToolCallUpdateFields {
    if let Some(title) = &patch.title {
        fields = fields.title(title.clone());
    }
    if let Some(kind) = patch.kind {
        fields = fields.kind(tool_kind(kind));
    }
    if let Some(locations) = &patch.locations {
        fields = fields.locations(
            locations
                .iter()
                .map(|location| ToolCallLocation::new(location.path.clone()).line(location.line))
                .collect::<Vec<_>>(),
        );
    }
    if let Some(content) = &patch.content {
        fields = fields.content(contents(content));
    }
    fields
}

fn contents(content: &[ToolCallContent]) -> Vec<acp::ToolCallContent> {
    content
        .iter()
        .map(|item| match item {
            ToolCallContent::Text { text } => {
                acp::ToolCallContent::from(ContentBlock::Text(TextContent::new(text.clone())))
            }
            ToolCallContent::Diff {
                path,
                old_text,
                new_text,
            } => acp::ToolCallContent::Diff(
                acp::Diff::new(path.clone(), new_text.clone()).old_text(old_text.clone()),
            ),
            ToolCallContent::Terminal { terminal_id } => {
                acp::ToolCallContent::Terminal(acp::Terminal::new(terminal_id.clone()))
            }
        })
        .collect()
}

/// Hearth's tool call status in ACP's words. ACP has no "cancelled": a call that did not
/// run failed.
pub(crate) fn tool_status(status: ToolCallStatus) -> acp::ToolCallStatus {
    match status {
        ToolCallStatus::Pending => acp::ToolCallStatus::Pending,
        ToolCallStatus::Running => acp::ToolCallStatus::InProgress,
        ToolCallStatus::Completed => acp::ToolCallStatus::Completed,
        ToolCallStatus::Failed | ToolCallStatus::Cancelled => acp::ToolCallStatus::Failed,
    }
}

fn tool_kind(kind: ToolKind) -> acp::ToolKind {
    match kind {
        ToolKind::Read => acp::ToolKind::Read,
        ToolKind::Edit => acp::ToolKind::Edit,
        ToolKind::Delete => acp::ToolKind::Delete,
        ToolKind::Move => acp::ToolKind::Move,
        ToolKind::Search => acp::ToolKind::Search,
        ToolKind::Execute => acp::ToolKind::Execute,
        ToolKind::Think => acp::ToolKind::Think,
        ToolKind::Fetch => acp::ToolKind::Fetch,
        ToolKind::SwitchMode => acp::ToolKind::SwitchMode,
        ToolKind::Other => acp::ToolKind::Other,
    }
}

fn plan(entries: &[PlanEntry]) -> Plan {
    Plan::new(
        entries
            .iter()
            .map(|entry| {
                acp::PlanEntry::new(
                    entry.content.clone(),
                    PlanEntryPriority::Medium,
                    match entry.status {
                        PlanStatus::Pending => PlanEntryStatus::Pending,
                        PlanStatus::InProgress => PlanEntryStatus::InProgress,
                        PlanStatus::Completed => PlanEntryStatus::Completed,
                    },
                )
            })
            .collect(),
    )
}

/// How a Hearth turn's end reads in ACP. `None` for a failed turn: it is answered with
/// an error instead.
pub(crate) fn stop_reason(reason: &StopReason) -> Option<acp::StopReason> {
    match reason {
        StopReason::EndTurn | StopReason::Other(_) => Some(acp::StopReason::EndTurn),
        StopReason::MaxTokens => Some(acp::StopReason::MaxTokens),
        StopReason::StepLimit => Some(acp::StopReason::MaxTurnRequests),
        StopReason::Refusal => Some(acp::StopReason::Refusal),
        StopReason::Aborted => Some(acp::StopReason::Cancelled),
        StopReason::Error | StopReason::Incomplete => None,
    }
}

/// The text of an ACP prompt: text blocks as they are, embedded text resources fenced
/// with their URI, links to resources named. Images and audio are not advertised, so a
/// client does not send them; one that does has them noted, not silently dropped.
pub(crate) fn prompt_text(blocks: &[ContentBlock]) -> String {
    let mut text = String::new();
    for block in blocks {
        if !text.is_empty() {
            text.push('\n');
        }
        match block {
            ContentBlock::Text(content) => text.push_str(&content.text),
            ContentBlock::ResourceLink(link) => {
                text.push_str(&format!("[{}]({})", link.name, link.uri));
            }
            ContentBlock::Resource(resource) => match &resource.resource {
                EmbeddedResourceResource::TextResourceContents(contents) => {
                    text.push_str(&format!(
                        "<resource uri=\"{}\">\n{}\n</resource>",
                        contents.uri, contents.text
                    ));
                }
                EmbeddedResourceResource::BlobResourceContents(contents) => {
                    text.push_str(&format!("[binary resource {} not read]", contents.uri));
                }
                _ => text.push_str("[a resource Hearth cannot read]"),
            },
            ContentBlock::Image(_) => text.push_str("[an image Hearth cannot read here]"),
            ContentBlock::Audio(_) => text.push_str("[audio Hearth cannot read here]"),
            _ => text.push_str("[content Hearth cannot read]"),
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn only_the_turns_own_actions_stream() {
        let ours = TurnId::generate();
        let other = TurnId::generate();
        let delta = |turn_id: &TurnId| Action::TextDelta {
            turn_id: turn_id.clone(),
            text: "hi".into(),
        };
        assert_eq!(
            update_for(&delta(&ours), &ours),
            Some(SessionUpdate::AgentMessageChunk(text_chunk("hi")))
        );
        assert_eq!(update_for(&delta(&other), &ours), None);
    }

    #[test]
    fn a_cancelled_call_reads_as_failed_and_a_failed_turn_is_an_error() {
        assert_eq!(
            tool_status(ToolCallStatus::Cancelled),
            acp::ToolCallStatus::Failed
        );
        assert_eq!(stop_reason(&StopReason::Error), None);
        assert_eq!(
            stop_reason(&StopReason::Aborted),
            Some(acp::StopReason::Cancelled)
        );
    }
}
