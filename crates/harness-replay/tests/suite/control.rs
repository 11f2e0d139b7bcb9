//! Abort, busy and failing turns.

use std::time::Duration;

use hearth_core::{
    Harness, HarnessErrorKind, HarnessEvent, ResponsePart, Signal, StopReason, ToolCallPatch,
    ToolCallStatus, TurnId, UserMessage,
};
use pretty_assertions::assert_eq;

use super::support::{default_chat, harness, send};

const SLOW: &str = r#"
name: slow
turns:
  - when: tool
    steps:
      - text: "Looking… "
      - tool_call: slow_search
        delay_ms: 5000
      - text: never
  - when: fail
    steps:
      - text: "Let me try. "
      - fail: the model provider returned 503; try again later
  - steps:
      - text: "one two three four five six seven eight nine ten"
        stream: words
        delay_ms: 100
"#;

fn spawn_send(
    agent: &std::sync::Arc<hearth_harness_replay::ReplayHarness>,
    context: &hearth_core::ChatContext,
    turn_id: &TurnId,
    prompt: &str,
) -> tokio::task::JoinHandle<hearth_core::HarnessResult<hearth_core::TurnOutcome>> {
    let (agent, context, turn_id) = (agent.clone(), context.clone(), turn_id.clone());
    let message = UserMessage::text(prompt);
    tokio::spawn(async move { agent.send(&context, turn_id, message).await })
}

fn text_deltas(events: &[HarnessEvent]) -> usize {
    events
        .iter()
        .filter(|event| {
            matches!(
                event,
                HarnessEvent::Progress {
                    signal: Signal::TextDelta { .. },
                    ..
                }
            )
        })
        .count()
}

#[tokio::test(start_paused = true)]
async fn abort_mid_stream_ends_the_turn_at_once_and_keeps_what_streamed() {
    let (agent, recorder) = harness(SLOW, 1.0);
    let context = default_chat(&agent).await;
    let turn_id = TurnId::generate();
    let running = spawn_send(&agent, &context, &turn_id, "talk");
    recorder
        .wait_until("three words", |events| text_deltas(events) >= 3)
        .await;

    // A second turn while one runs is refused.
    let error = agent
        .send(&context, TurnId::generate(), UserMessage::text("again"))
        .await
        .unwrap_err();
    assert_eq!(error.kind, HarnessErrorKind::Busy);
    assert!(error.message.contains(turn_id.as_str()), "{error}");

    // Time is paused and moves only when every task waits on a timer: an abort that
    // waited out the word's delay would show here as scripted time gone by.
    let started = tokio::time::Instant::now();
    agent.abort(&context).await.unwrap();
    let outcome = running.await.unwrap().unwrap();
    assert_eq!(
        started.elapsed(),
        Duration::ZERO,
        "abort waited for a delay"
    );
    assert_eq!(outcome.stop_reason, StopReason::Aborted);

    let streamed = recorder.text(&context.chat);
    assert!(streamed.starts_with("one two three"), "{streamed}");
    assert!(!streamed.contains("ten"), "{streamed}");
    let history = agent.messages(&context).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].id, turn_id);
    assert_eq!(history[0].stop_reason, Some(StopReason::Aborted));
    assert_eq!(history[0].response_text(), streamed);
    assert!(matches!(
        recorder.signals(&context.chat).last(),
        Some(Signal::ProviderDataChanged { .. })
    ));

    // Aborting again is harmless, and the chat takes the next turn.
    agent.abort(&context).await.unwrap();
    let (_, outcome) = send(&agent, &context, "talk again").await;
    assert_eq!(outcome.stop_reason, StopReason::EndTurn);
}

#[tokio::test(start_paused = true)]
async fn abort_during_a_tool_call_cancels_the_call() {
    let (agent, recorder) = harness(SLOW, 1.0);
    let context = default_chat(&agent).await;
    let turn_id = TurnId::generate();
    let running = spawn_send(&agent, &context, &turn_id, "use a tool");
    recorder
        .wait_until("the tool call", |events| {
            events.iter().any(|event| {
                matches!(
                    event,
                    HarnessEvent::Progress {
                        signal: Signal::ToolCallStarted { .. },
                        ..
                    }
                )
            })
        })
        .await;
    agent.abort(&context).await.unwrap();
    let outcome = running.await.unwrap().unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Aborted);
    assert!(
        recorder
            .signals(&context.chat)
            .contains(&Signal::ToolCallUpdated {
                turn_id: turn_id.clone(),
                call_id: "call_1".into(),
                status: ToolCallStatus::Cancelled,
                result: None,
                patch: ToolCallPatch::default(),
            })
    );
    let history = agent.messages(&context).await.unwrap();
    assert!(matches!(
        &history[0].parts[1],
        ResponsePart::ToolCall(call) if call.status == ToolCallStatus::Cancelled
    ));
    assert_eq!(history[0].response_text(), "Looking… ");
}

#[tokio::test]
async fn a_fail_step_fails_the_send_with_a_provider_error() {
    let (agent, recorder) = harness(SLOW, 0.0);
    let context = default_chat(&agent).await;
    let turn_id = TurnId::generate();
    let error = agent
        .send(&context, turn_id.clone(), UserMessage::text("please fail"))
        .await
        .unwrap_err();
    assert_eq!(error.kind, HarnessErrorKind::Provider);
    assert_eq!(
        error.message,
        "the model provider returned 503; try again later"
    );
    assert_eq!(recorder.text(&context.chat), "Let me try. ");
    // The failed turn is part of the history (so it can be forked at), and the host got
    // the blob before the send returned.
    let history = agent.messages(&context).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].id, turn_id);
    assert_eq!(history[0].stop_reason, Some(StopReason::Error));
    assert!(matches!(
        recorder.signals(&context.chat).last(),
        Some(Signal::ProviderDataChanged { .. })
    ));
    // The chat is not left busy.
    let (_, outcome) = send(&agent, &context, "fine").await;
    assert_eq!(outcome.stop_reason, StopReason::EndTurn);
}
