//! What a tool call gave back, ready for the model and the host.

use hearth_core::{StagedProposal, ToolCallOutcome, ToolCallStatus};

/// What a tool call gave back.
pub(crate) struct Outcome {
    pub content: String,
    pub is_error: bool,
    pub status: ToolCallStatus,
    pub proposal: Option<StagedProposal>,
}

impl Outcome {
    pub fn ok(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            is_error: false,
            status: ToolCallStatus::Completed,
            proposal: None,
        }
    }

    pub fn failed(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            is_error: true,
            status: ToolCallStatus::Failed,
            proposal: None,
        }
    }

    pub fn cancelled(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            is_error: true,
            status: ToolCallStatus::Cancelled,
            proposal: None,
        }
    }

    /// A toolbox's answer; a staged proposal is always named to the model.
    pub fn from_toolbox(outcome: ToolCallOutcome) -> Self {
        let mut content = outcome.content;
        if let Some(proposal) = &outcome.proposal
            && !content.contains(proposal.id.as_str())
        {
            content.push_str(&format!(
                "\n\nProposal {} is staged and awaits the user's approval in Hearth; nothing has \
                 changed yet.",
                proposal.id
            ));
        }
        Self {
            status: if outcome.is_error {
                ToolCallStatus::Failed
            } else {
                ToolCallStatus::Completed
            },
            is_error: outcome.is_error,
            proposal: outcome.proposal,
            content,
        }
    }
}
