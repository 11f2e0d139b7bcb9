//! Conversions of the turn model between domain and wire.

use hearth_core as core;

use crate::convert_tool::{details_from_wire, details_to_wire};

use crate::convert::{parse, try_all};
use crate::error::{ProtocolError, Result};
use crate::turn::{
    Attachment, ContextReference, Cost, PermissionOption, PlanEntry, PlanStatus, ResponsePart,
    StopReason, ToolCallPart, ToolCallStatus, ToolResult, Turn, Usage, UserMessage,
};

impl From<core::Attachment> for Attachment {
    fn from(attachment: core::Attachment) -> Self {
        Self {
            name: attachment.name,
            media_type: attachment.media_type,
            uri: attachment.uri,
        }
    }
}

impl From<Attachment> for core::Attachment {
    fn from(attachment: Attachment) -> Self {
        Self {
            name: attachment.name,
            media_type: attachment.media_type,
            uri: attachment.uri,
        }
    }
}

impl From<core::ContextReference> for ContextReference {
    fn from(reference: core::ContextReference) -> Self {
        Self {
            label: reference.label,
            uri: reference.uri,
        }
    }
}

impl From<ContextReference> for core::ContextReference {
    fn from(reference: ContextReference) -> Self {
        Self {
            label: reference.label,
            uri: reference.uri,
        }
    }
}

impl From<core::UserMessage> for UserMessage {
    fn from(message: core::UserMessage) -> Self {
        Self {
            text: message.text,
            attachments: message.attachments.into_iter().map(Into::into).collect(),
            context: message.context.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<UserMessage> for core::UserMessage {
    fn from(message: UserMessage) -> Self {
        Self {
            text: message.text,
            attachments: message.attachments.into_iter().map(Into::into).collect(),
            context: message.context.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<core::StopReason> for StopReason {
    fn from(reason: core::StopReason) -> Self {
        match reason {
            core::StopReason::EndTurn => Self::EndTurn,
            core::StopReason::MaxTokens => Self::MaxTokens,
            core::StopReason::StepLimit => Self::StepLimit,
            core::StopReason::Refusal => Self::Refusal,
            core::StopReason::Aborted => Self::Aborted,
            core::StopReason::Error => Self::Error,
            core::StopReason::Incomplete => Self::Incomplete,
            core::StopReason::Other(other) => Self::Other(other),
        }
    }
}

impl From<StopReason> for core::StopReason {
    fn from(reason: StopReason) -> Self {
        match reason {
            StopReason::EndTurn => Self::EndTurn,
            StopReason::MaxTokens => Self::MaxTokens,
            StopReason::StepLimit => Self::StepLimit,
            StopReason::Refusal => Self::Refusal,
            StopReason::Aborted => Self::Aborted,
            StopReason::Error => Self::Error,
            StopReason::Incomplete => Self::Incomplete,
            StopReason::Other(other) => Self::Other(other),
        }
    }
}

impl From<core::Usage> for Usage {
    fn from(usage: core::Usage) -> Self {
        Self {
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cached_input_tokens: usage.cached_input_tokens,
            reasoning_tokens: usage.reasoning_tokens,
            context_used: usage.context_used,
            context_size: usage.context_size,
            cost: usage.cost.map(|cost| Cost {
                amount: cost.amount,
                currency: cost.currency,
            }),
        }
    }
}

impl From<Usage> for core::Usage {
    fn from(usage: Usage) -> Self {
        Self {
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cached_input_tokens: usage.cached_input_tokens,
            reasoning_tokens: usage.reasoning_tokens,
            context_used: usage.context_used,
            context_size: usage.context_size,
            cost: usage
                .cost
                .and_then(|cost| core::Cost::new(cost.amount, cost.currency)),
        }
    }
}

impl From<core::ToolCallStatus> for ToolCallStatus {
    fn from(status: core::ToolCallStatus) -> Self {
        match status {
            core::ToolCallStatus::Pending => Self::Pending,
            core::ToolCallStatus::Running => Self::Running,
            core::ToolCallStatus::Completed => Self::Completed,
            core::ToolCallStatus::Failed => Self::Failed,
            core::ToolCallStatus::Cancelled => Self::Cancelled,
        }
    }
}

impl From<ToolCallStatus> for core::ToolCallStatus {
    fn from(status: ToolCallStatus) -> Self {
        match status {
            ToolCallStatus::Pending => Self::Pending,
            ToolCallStatus::Running => Self::Running,
            ToolCallStatus::Completed => Self::Completed,
            ToolCallStatus::Failed => Self::Failed,
            ToolCallStatus::Cancelled => Self::Cancelled,
        }
    }
}

impl From<core::ToolResult> for ToolResult {
    fn from(result: core::ToolResult) -> Self {
        Self {
            content: result.content,
            is_error: result.is_error,
        }
    }
}

impl From<ToolResult> for core::ToolResult {
    fn from(result: ToolResult) -> Self {
        Self {
            content: result.content,
            is_error: result.is_error,
        }
    }
}

impl From<core::ToolCallPart> for ToolCallPart {
    fn from(call: core::ToolCallPart) -> Self {
        let (locations, content) = details_to_wire(call.locations, call.content);
        Self {
            call_id: call.call_id,
            name: call.name,
            arguments: call.arguments,
            status: call.status.into(),
            result: call.result.map(Into::into),
            title: call.title,
            kind: call.kind.map(Into::into),
            locations,
            content,
        }
    }
}

impl From<ToolCallPart> for core::ToolCallPart {
    fn from(call: ToolCallPart) -> Self {
        let (locations, content) = details_from_wire(call.locations, call.content);
        Self {
            call_id: call.call_id,
            name: call.name,
            arguments: call.arguments,
            status: call.status.into(),
            result: call.result.map(Into::into),
            title: call.title,
            kind: call.kind.map(Into::into),
            locations,
            content,
        }
    }
}

impl From<core::PlanStatus> for PlanStatus {
    fn from(status: core::PlanStatus) -> Self {
        match status {
            core::PlanStatus::Pending => Self::Pending,
            core::PlanStatus::InProgress => Self::InProgress,
            core::PlanStatus::Completed => Self::Completed,
        }
    }
}

impl From<PlanStatus> for core::PlanStatus {
    fn from(status: PlanStatus) -> Self {
        match status {
            PlanStatus::Pending => Self::Pending,
            PlanStatus::InProgress => Self::InProgress,
            PlanStatus::Completed => Self::Completed,
        }
    }
}

impl From<core::PlanEntry> for PlanEntry {
    fn from(entry: core::PlanEntry) -> Self {
        Self {
            content: entry.content,
            status: entry.status.into(),
        }
    }
}

impl From<PlanEntry> for core::PlanEntry {
    fn from(entry: PlanEntry) -> Self {
        Self {
            content: entry.content,
            status: entry.status.into(),
        }
    }
}

impl From<core::PermissionOption> for PermissionOption {
    fn from(option: core::PermissionOption) -> Self {
        Self {
            id: option.id,
            label: option.label,
            kind: option.kind.map(Into::into),
        }
    }
}

impl From<PermissionOption> for core::PermissionOption {
    fn from(option: PermissionOption) -> Self {
        Self {
            id: option.id,
            label: option.label,
            kind: option.kind.map(Into::into),
        }
    }
}

impl From<core::ResponsePart> for ResponsePart {
    fn from(part: core::ResponsePart) -> Self {
        match part {
            core::ResponsePart::Text { text } => Self::Text { text },
            core::ResponsePart::Reasoning { text } => Self::Reasoning { text },
            core::ResponsePart::ToolCall(call) => Self::ToolCall(call.into()),
            core::ResponsePart::Plan { entries } => Self::Plan {
                entries: entries.into_iter().map(Into::into).collect(),
            },
            core::ResponsePart::Proposal {
                proposal_id,
                summary,
            } => Self::Proposal {
                proposal_id: proposal_id.to_string(),
                summary,
            },
            core::ResponsePart::PermissionRequest {
                request_id,
                title,
                options,
                outcome,
                tool_call_id,
            } => Self::PermissionRequest {
                request_id,
                title,
                options: options.into_iter().map(Into::into).collect(),
                outcome,
                tool_call_id,
            },
            core::ResponsePart::Error { message } => Self::Error { message },
            core::ResponsePart::Notice { message } => Self::Notice { message },
            core::ResponsePart::Compaction { turns, summary } => {
                Self::Compaction { turns, summary }
            }
        }
    }
}

impl TryFrom<ResponsePart> for core::ResponsePart {
    type Error = ProtocolError;
    fn try_from(part: ResponsePart) -> Result<Self> {
        Ok(match part {
            ResponsePart::Text { text } => Self::Text { text },
            ResponsePart::Reasoning { text } => Self::Reasoning { text },
            ResponsePart::ToolCall(call) => Self::ToolCall(call.into()),
            ResponsePart::Plan { entries } => Self::Plan {
                entries: entries.into_iter().map(Into::into).collect(),
            },
            ResponsePart::Proposal {
                proposal_id,
                summary,
            } => Self::Proposal {
                proposal_id: parse("proposalId", &proposal_id, core::ProposalId::parse)?,
                summary,
            },
            ResponsePart::PermissionRequest {
                request_id,
                title,
                options,
                outcome,
                tool_call_id,
            } => Self::PermissionRequest {
                request_id,
                title,
                options: options.into_iter().map(Into::into).collect(),
                outcome,
                tool_call_id,
            },
            ResponsePart::Error { message } => Self::Error { message },
            ResponsePart::Notice { message } => Self::Notice { message },
            ResponsePart::Compaction { turns, summary } => Self::Compaction { turns, summary },
        })
    }
}

impl From<core::Turn> for Turn {
    fn from(turn: core::Turn) -> Self {
        Self {
            id: turn.id.to_string(),
            user: turn.user.into(),
            parts: turn.parts.into_iter().map(Into::into).collect(),
            usage: turn.usage.map(Into::into),
            stop_reason: turn.stop_reason.map(Into::into),
            started_at: turn.started_at,
            completed_at: turn.completed_at,
        }
    }
}

impl TryFrom<Turn> for core::Turn {
    type Error = ProtocolError;
    fn try_from(turn: Turn) -> Result<Self> {
        Ok(Self {
            id: parse("id", &turn.id, core::TurnId::parse)?,
            user: turn.user.into(),
            parts: try_all(turn.parts)?,
            usage: turn.usage.map(Into::into),
            stop_reason: turn.stop_reason.map(Into::into),
            started_at: turn.started_at,
            completed_at: turn.completed_at,
        })
    }
}
