//! A subagent spawns a chat that is announced before any of its events, runs a turn of
//! its own, and answers its parent's `task` call.

use std::time::Duration;

use hearth_core::{
    ChatOrigin, ChatUri, Harness, HarnessEvent, Signal, StopReason, ToolCallPart, ToolCallPatch,
    ToolCallStatus, ToolResult, TurnId, UserMessage,
};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{context, default_chat, harness, send};

const RESEARCH: &str = r#"
name: research
turns:
  - steps:
      - text: "Let me ask a helper. "
      - subagent: Check the weather
        prompt: What is the weather in Lisbon?
        steps:
          - reasoning: Looking it up.
          - text: Sunny, 24 degrees.
      - text: It is sunny.
"#;

/// Where an event is in the recording.
fn position(events: &[HarnessEvent], what: impl Fn(&HarnessEvent) -> bool) -> usize {
    events.iter().position(what).expect("event not found")
}

#[tokio::test]
async fn a_subagent_spawns_a_chat_before_its_events_and_answers_the_task_call() {
    let (agent, recorder) = harness(RESEARCH, 0.0);
    let parent = default_chat(&agent).await;
    let (parent_turn, outcome) = send(&agent, &parent, "weather?").await;
    assert_eq!(outcome.stop_reason, StopReason::EndTurn);
    let events = recorder.events();

    let spawn = position(&events, |event| {
        matches!(event, HarnessEvent::SpawnChat { .. })
    });
    let HarnessEvent::SpawnChat {
        chat: child,
        origin,
        title,
        created,
    } = events[spawn].clone()
    else {
        unreachable!()
    };
    assert_eq!(child.session(), parent.session);
    assert!(!child.is_default());
    assert_eq!(title.as_deref(), Some("Check the weather"));
    assert_eq!(
        origin,
        ChatOrigin::Tool {
            parent_chat: parent.chat.clone(),
            tool_call_id: "call_1".into()
        }
    );
    assert!(!created.provider_data.as_bytes().is_empty());

    // The spawn comes strictly before every event of the child.
    let first_child_event = position(
        &events,
        |event| matches!(event, HarnessEvent::Progress { chat, .. } if chat == &child),
    );
    assert!(spawn < first_child_event);
    let task_started = position(
        &events,
        |event| matches!(event, HarnessEvent::Progress { signal: Signal::ToolCallStarted { call, .. }, .. } if call.name == "task"),
    );
    let end = position(&events, |event| {
        matches!(event, HarnessEvent::EndChat { .. })
    });
    let task_done = position(&events, |event| {
        matches!(
            event,
            HarnessEvent::Progress {
                signal: Signal::ToolCallUpdated { .. },
                ..
            }
        )
    });
    assert!(task_started < spawn && spawn < end && end < task_done);

    let mut child_signals = recorder.signals(&child);
    assert!(matches!(
        child_signals.pop(),
        Some(Signal::ProviderDataChanged { .. })
    ));
    let Some(Signal::TurnStarted {
        turn_id: child_turn,
        user,
    }) = child_signals.first().cloned()
    else {
        panic!("the child's first signal is not TurnStarted: {child_signals:?}")
    };
    assert_eq!(user, UserMessage::text("What is the weather in Lisbon?"));
    let id = || child_turn.clone();
    assert_eq!(
        child_signals,
        vec![
            Signal::TurnStarted {
                turn_id: id(),
                user
            },
            Signal::ReasoningDelta {
                turn_id: id(),
                text: "Looking it up.".into()
            },
            Signal::TextDelta {
                turn_id: id(),
                text: "Sunny, 24 degrees.".into()
            },
            Signal::TurnCompleted {
                turn_id: id(),
                stop_reason: StopReason::EndTurn,
                usage: None
            },
        ]
    );
    assert_eq!(
        events[end],
        HarnessEvent::EndChat {
            chat: child.clone()
        }
    );

    let parent_signals = recorder.signals(&parent.chat);
    assert!(parent_signals.contains(&Signal::ToolCallStarted {
        turn_id: parent_turn.clone(),
        call: ToolCallPart::new(
            "call_1",
            "task",
            json!({
                "description": "Check the weather",
                "prompt": "What is the weather in Lisbon?"
            }),
            ToolCallStatus::Running
        ),
    }));
    assert!(parent_signals.contains(&Signal::ToolCallUpdated {
        turn_id: parent_turn,
        call_id: "call_1".into(),
        status: ToolCallStatus::Completed,
        result: Some(ToolResult {
            content: "Sunny, 24 degrees.".into(),
            is_error: false
        }),
        patch: ToolCallPatch::default(),
    }));
    assert_eq!(
        recorder.text(&parent.chat),
        "Let me ask a helper. It is sunny."
    );

    // The child is a chat of the harness like any other.
    let child_context = context(
        &child,
        ChatOrigin::Tool {
            parent_chat: parent.chat.clone(),
            tool_call_id: "call_1".into(),
        },
    );
    let history = agent.messages(&child_context).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].id, child_turn);
    assert_eq!(history[0].response_text(), "Sunny, 24 degrees.");
    let metadata = agent.metadata(&child_context).await.unwrap();
    assert_eq!(metadata.title.as_deref(), Some("Check the weather"));
    assert_eq!(metadata.turn_count, 1);
}

#[tokio::test]
async fn a_failing_subagent_fails_the_task_call_and_the_parent_goes_on() {
    let yaml = r#"
name: failing
turns:
  - steps:
      - subagent: Fetch
        prompt: fetch it
        steps:
          - text: "Trying… "
          - fail: upstream timed out
      - text: The helper failed.
"#;
    let (agent, recorder) = harness(yaml, 0.0);
    let parent = default_chat(&agent).await;
    let (_, outcome) = send(&agent, &parent, "go").await;
    assert_eq!(outcome.stop_reason, StopReason::EndTurn);
    let child = spawned(&recorder.events());
    let signals = recorder.signals(&child);
    assert!(signals.iter().any(|signal| matches!(
        signal,
        Signal::Error { message, .. } if message == "upstream timed out"
    )));
    assert!(signals.iter().any(|signal| matches!(
        signal,
        Signal::TurnCompleted {
            stop_reason: StopReason::Error,
            ..
        }
    )));
    assert!(recorder.signals(&parent.chat).iter().any(|signal| matches!(
        signal,
        Signal::ToolCallUpdated { status: ToolCallStatus::Failed, result: Some(result), .. }
            if result.content == "upstream timed out" && result.is_error
    )));
    assert_eq!(recorder.text(&parent.chat), "The helper failed.");
}

fn spawned(events: &[HarnessEvent]) -> ChatUri {
    events
        .iter()
        .find_map(|event| match event {
            HarnessEvent::SpawnChat { chat, .. } => Some(chat.clone()),
            _ => None,
        })
        .expect("no chat was spawned")
}

#[tokio::test(start_paused = true)]
async fn aborting_the_parent_aborts_its_subagent() {
    let yaml = r#"
name: slow-helper
turns:
  - steps:
      - subagent: Slow
        prompt: take your time
        steps:
          - text: "a b c d e f g h"
            stream: words
            delay_ms: 100
      - text: never shown
"#;
    let (agent, recorder) = harness(yaml, 1.0);
    let parent = default_chat(&agent).await;
    let running = {
        let (agent, parent) = (agent.clone(), parent.clone());
        tokio::spawn(async move {
            agent
                .send(&parent, TurnId::generate(), UserMessage::text("go"))
                .await
        })
    };
    recorder
        .wait_until("the subagent's first word", |events| {
            events.iter().any(|event| {
                matches!(
                    event,
                    HarnessEvent::Progress {
                        signal: Signal::TextDelta { .. },
                        ..
                    }
                )
            })
        })
        .await;
    // Time is paused (see `abort_mid_stream_ends_the_turn_at_once_and_keeps_what_streamed`):
    // an abort that waited out the subagent's word delay would show as time gone by.
    let started = tokio::time::Instant::now();
    agent.abort(&parent).await.unwrap();
    let outcome = running.await.unwrap().unwrap();
    assert_eq!(
        started.elapsed(),
        Duration::ZERO,
        "abort waited for the subagent's delay"
    );
    assert_eq!(outcome.stop_reason, StopReason::Aborted);
    let child = spawned(&recorder.events());
    assert!(recorder.signals(&child).iter().any(|signal| matches!(
        signal,
        Signal::TurnCompleted {
            stop_reason: StopReason::Aborted,
            ..
        }
    )));
    assert!(recorder.signals(&parent.chat).iter().any(|signal| matches!(
        signal,
        Signal::ToolCallUpdated {
            status: ToolCallStatus::Cancelled,
            ..
        }
    )));
    assert_eq!(recorder.text(&parent.chat), "");
}
