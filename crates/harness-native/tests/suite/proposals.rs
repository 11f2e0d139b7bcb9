//! A mutating tool only stages a proposal: the model reads that it awaits approval, and
//! the host is told with `ProposalStaged`.

use hearth_core::{ProposalId, Signal, StopReason, ToolCallPatch, ToolCallStatus, ToolResult};
use hearth_test_support::{MockModelServer, OpenAiStream};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{MODEL, conversation, default_chat, openai_agent, send, settings};

#[tokio::test]
async fn a_staged_proposal_is_reported_to_the_model_and_to_the_host() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        OpenAiStream::new(MODEL)
            .role()
            .tool_call(0, "call_1", "create_event")
            .tool_arguments(0, r#"{"title": "Dentist", "start": "2026-03-04T09:00"}"#)
            .finish("tool_calls")
            .done(),
    );
    server.enqueue(OpenAiStream::text_answer(
        MODEL,
        &["I staged it; approve it in Hearth."],
        1,
        1,
    ));
    let (agent, recorder, toolbox) = openai_agent(&server, settings());
    let chat = default_chat(&agent).await;
    let (turn_id, outcome) = send(&agent, &chat, "Book the dentist tomorrow at 9").await;
    assert_eq!(outcome.stop_reason, StopReason::EndTurn);
    assert_eq!(toolbox.calls().len(), 1);

    let summary = "Create event 'Dentist' at 2026-03-04T09:00";
    let content = format!(
        "Staged: {summary}. The user must approve it.\n\nProposal proposal-1 is staged and awaits \
         the user's approval in Hearth; nothing has changed yet."
    );
    let signals = recorder.signals(&chat.chat);
    let position = signals
        .iter()
        .position(|signal| matches!(signal, Signal::ToolCallUpdated { .. }))
        .unwrap();
    assert_eq!(
        signals[position..position + 2],
        [
            Signal::ToolCallUpdated {
                turn_id: turn_id.clone(),
                call_id: "call_1".into(),
                status: ToolCallStatus::Completed,
                result: Some(ToolResult {
                    content: content.clone(),
                    is_error: false,
                }),
                patch: ToolCallPatch::default(),
            },
            Signal::ProposalStaged {
                turn_id,
                proposal_id: ProposalId::parse("proposal-1").unwrap(),
                summary: summary.into(),
            },
        ]
    );
    assert_eq!(
        conversation(&server.requests()[1])[2],
        json!({"role": "tool", "tool_call_id": "call_1", "content": content})
    );
}
