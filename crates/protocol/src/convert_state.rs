//! Conversions of actions, envelopes and snapshots between domain and wire.

use hearth_core as core;

use crate::convert::parse;
use crate::error::{ProtocolError, Result};
use crate::state::{Action, Envelope, ResourceState, Snapshot};

fn turn_id(text: &str) -> Result<core::TurnId> {
    parse("turnId", text, core::TurnId::parse)
}

impl From<core::Action> for Action {
    // Long by nature: one exhaustive match giving every domain action its wire twin, so a
    // new variant fails to compile here until it is mapped; splitting it would only scatter
    // the arms.
    fn from(action: core::Action) -> Self {
        use core::Action as A;
        match action {
            A::SessionAdded { summary } => Self::SessionAdded {
                summary: summary.into(),
            },
            A::SessionUpdated { summary } => Self::SessionUpdated {
                summary: summary.into(),
            },
            A::SessionRemoved { session } => Self::SessionRemoved {
                session: session.to_string(),
            },
            A::ChatAdded { chat } => Self::ChatAdded { chat: chat.into() },
            A::ChatUpdated { chat } => Self::ChatUpdated { chat: chat.into() },
            A::ChatRemoved { chat } => Self::ChatRemoved {
                chat: chat.to_string(),
            },
            A::ChatActivity { chat, running } => Self::ChatActivity {
                chat: chat.to_string(),
                running,
            },
            A::TurnStarted { turn } => Self::TurnStarted { turn: turn.into() },
            A::TextDelta { turn_id, text } => Self::TextDelta {
                turn_id: turn_id.to_string(),
                text,
            },
            A::ReasoningDelta { turn_id, text } => Self::ReasoningDelta {
                turn_id: turn_id.to_string(),
                text,
            },
            A::ToolCallStarted { turn_id, call } => Self::ToolCallStarted {
                turn_id: turn_id.to_string(),
                call: call.into(),
            },
            A::ToolCallUpdated {
                turn_id,
                call_id,
                status,
                result,
                patch,
            } => Self::ToolCallUpdated {
                turn_id: turn_id.to_string(),
                call_id,
                status: status.into(),
                result: result.map(Into::into),
                patch: patch.into(),
            },
            A::PlanUpdated { turn_id, entries } => Self::PlanUpdated {
                turn_id: turn_id.to_string(),
                entries: entries.into_iter().map(Into::into).collect(),
            },
            A::PartAdded { turn_id, part } => Self::PartAdded {
                turn_id: turn_id.to_string(),
                part: part.into(),
            },
            A::PermissionResolved {
                turn_id,
                request_id,
                outcome,
            } => Self::PermissionResolved {
                turn_id: turn_id.to_string(),
                request_id,
                outcome,
            },
            A::UsageUpdated { turn_id, usage } => Self::UsageUpdated {
                turn_id: turn_id.to_string(),
                usage: usage.into(),
            },
            A::TurnCompleted {
                turn_id,
                stop_reason,
                usage,
                completed_at,
            } => Self::TurnCompleted {
                turn_id: turn_id.to_string(),
                stop_reason: stop_reason.into(),
                usage: usage.map(Into::into),
                completed_at,
            },
            A::AgentStateChanged { state } => Self::AgentStateChanged {
                state: state.into(),
            },
            A::DraftChanged { draft } => Self::DraftChanged { draft },
            A::QueueChanged { queued } => Self::QueueChanged {
                queued: queued.into_iter().map(Into::into).collect(),
            },
            A::ProposalChanged { proposal_id } => Self::ProposalChanged { proposal_id },
            A::HarnessesChanged { harnesses } => Self::HarnessesChanged {
                harnesses: harnesses.into_iter().map(Into::into).collect(),
            },
        }
    }
}

impl TryFrom<Action> for core::Action {
    type Error = ProtocolError;
    // Long by nature: one exhaustive match giving every wire action its domain twin (the
    // inverse of the `From` above), so a new variant fails to compile here until it is
    // mapped; splitting it would only scatter the arms.
    fn try_from(action: Action) -> Result<Self> {
        use Action as A;
        Ok(match action {
            A::SessionAdded { summary } => Self::SessionAdded {
                summary: summary.try_into()?,
            },
            A::SessionUpdated { summary } => Self::SessionUpdated {
                summary: summary.try_into()?,
            },
            A::SessionRemoved { session } => Self::SessionRemoved {
                session: parse("session", &session, core::SessionUri::parse)?,
            },
            A::ChatAdded { chat } => Self::ChatAdded {
                chat: chat.try_into()?,
            },
            A::ChatUpdated { chat } => Self::ChatUpdated {
                chat: chat.try_into()?,
            },
            A::ChatRemoved { chat } => Self::ChatRemoved {
                chat: parse("chat", &chat, core::ChatUri::parse)?,
            },
            A::ChatActivity { chat, running } => Self::ChatActivity {
                chat: parse("chat", &chat, core::ChatUri::parse)?,
                running,
            },
            A::TurnStarted { turn } => Self::TurnStarted {
                turn: turn.try_into()?,
            },
            A::TextDelta { turn_id: id, text } => Self::TextDelta {
                turn_id: turn_id(&id)?,
                text,
            },
            A::ReasoningDelta { turn_id: id, text } => Self::ReasoningDelta {
                turn_id: turn_id(&id)?,
                text,
            },
            A::ToolCallStarted { turn_id: id, call } => Self::ToolCallStarted {
                turn_id: turn_id(&id)?,
                call: call.into(),
            },
            A::ToolCallUpdated {
                turn_id: id,
                call_id,
                status,
                result,
                patch,
            } => Self::ToolCallUpdated {
                turn_id: turn_id(&id)?,
                call_id,
                status: status.into(),
                result: result.map(Into::into),
                patch: patch.into(),
            },
            A::PlanUpdated {
                turn_id: id,
                entries,
            } => Self::PlanUpdated {
                turn_id: turn_id(&id)?,
                entries: entries.into_iter().map(Into::into).collect(),
            },
            A::PartAdded { turn_id: id, part } => Self::PartAdded {
                turn_id: turn_id(&id)?,
                part: part.try_into()?,
            },
            A::PermissionResolved {
                turn_id: id,
                request_id,
                outcome,
            } => Self::PermissionResolved {
                turn_id: turn_id(&id)?,
                request_id,
                outcome,
            },
            A::UsageUpdated { turn_id: id, usage } => Self::UsageUpdated {
                turn_id: turn_id(&id)?,
                usage: usage.into(),
            },
            A::TurnCompleted {
                turn_id: id,
                stop_reason,
                usage,
                completed_at,
            } => Self::TurnCompleted {
                turn_id: turn_id(&id)?,
                stop_reason: stop_reason.into(),
                usage: usage.map(Into::into),
                completed_at,
            },
            A::AgentStateChanged { state } => Self::AgentStateChanged {
                state: state.into(),
            },
            A::DraftChanged { draft } => Self::DraftChanged { draft },
            A::QueueChanged { queued } => Self::QueueChanged {
                queued: queued.into_iter().map(Into::into).collect(),
            },
            A::ProposalChanged { proposal_id } => Self::ProposalChanged { proposal_id },
            A::HarnessesChanged { harnesses } => Self::HarnessesChanged {
                harnesses: harnesses
                    .into_iter()
                    .map(TryInto::try_into)
                    .collect::<Result<_>>()?,
            },
        })
    }
}

impl From<core::Envelope> for Envelope {
    fn from(envelope: core::Envelope) -> Self {
        Self {
            seq: envelope.seq,
            resource: envelope.resource.to_string(),
            action: envelope.action.into(),
        }
    }
}

impl TryFrom<Envelope> for core::Envelope {
    type Error = ProtocolError;
    fn try_from(envelope: Envelope) -> Result<Self> {
        Ok(Self {
            seq: envelope.seq,
            resource: parse("resource", &envelope.resource, core::ResourceUri::parse)?,
            action: envelope.action.try_into()?,
        })
    }
}

impl From<core::ResourceState> for ResourceState {
    fn from(state: core::ResourceState) -> Self {
        match state {
            core::ResourceState::Root => Self::Root,
            core::ResourceState::Session(session) => Self::Session(session.into()),
            core::ResourceState::Chat(chat) => Self::Chat(chat.into()),
        }
    }
}

impl TryFrom<ResourceState> for core::ResourceState {
    type Error = ProtocolError;
    fn try_from(state: ResourceState) -> Result<Self> {
        Ok(match state {
            ResourceState::Root => Self::Root,
            ResourceState::Session(session) => Self::Session(session.try_into()?),
            ResourceState::Chat(chat) => Self::Chat(chat.try_into()?),
        })
    }
}

impl From<core::Snapshot> for Snapshot {
    fn from(snapshot: core::Snapshot) -> Self {
        Self {
            resource: snapshot.resource.to_string(),
            seq: snapshot.seq,
            state: snapshot.state.into(),
        }
    }
}

impl TryFrom<Snapshot> for core::Snapshot {
    type Error = ProtocolError;
    fn try_from(snapshot: Snapshot) -> Result<Self> {
        Ok(Self {
            resource: parse("resource", &snapshot.resource, core::ResourceUri::parse)?,
            seq: snapshot.seq,
            state: snapshot.state.try_into()?,
        })
    }
}
