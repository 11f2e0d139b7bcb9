//! A turn's steps arrive as signals in order, with their delays and a final blob.

use std::time::Duration;

use hearth_core::{
    Harness, PlanEntry, PlanStatus, ResponsePart, Signal, StopReason, ToolCallPart, ToolCallPatch,
    ToolCallStatus, ToolResult, TurnOutcome, Usage,
};
use hearth_harness_replay::ReplayHarness;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{attach, default_chat, harness, send};

const EVERY_KIND: &str = r##"
name: every-kind
turns:
  - steps:
      - reasoning: Thinking it over.
      - text: "Hello {{prompt}} "
      - tool_call: read_file
        arguments: { path: notes.md }
        result: "# Notes"
      - plan:
          - content: Read
            status: completed
          - content: Answer
            status: in_progress
      - plan:
          - content: Read
            status: completed
          - content: Answer
            status: completed
      - error: The cache was cold.
      - usage: { input_tokens: 10, output_tokens: 3 }
      - text: done.
      - usage: { input_tokens: 1, output_tokens: 2, reasoning_tokens: 5 }
"##;

#[tokio::test]
async fn steps_stream_in_order_and_the_turn_is_recorded() {
    let (agent, recorder) = harness(EVERY_KIND, 0.0);
    let context = default_chat(&agent).await;
    let (turn_id, outcome) = send(&agent, &context, "world").await;
    let total = Usage {
        input_tokens: 11,
        output_tokens: 5,
        reasoning_tokens: 5,
        ..Usage::default()
    };
    assert_eq!(
        outcome,
        TurnOutcome {
            stop_reason: StopReason::EndTurn,
            usage: Some(total.clone())
        }
    );
    let plan = |answer| {
        vec![
            PlanEntry {
                content: "Read".into(),
                status: PlanStatus::Completed,
            },
            PlanEntry {
                content: "Answer".into(),
                status: answer,
            },
        ]
    };
    let mut signals = recorder.signals(&context.chat);
    let last = signals.pop();
    assert!(
        matches!(last, Some(Signal::ProviderDataChanged { .. })),
        "the turn must end with the new blob: {last:?}"
    );
    let id = || turn_id.clone();
    assert_eq!(
        signals,
        vec![
            Signal::ReasoningDelta {
                turn_id: id(),
                text: "Thinking it over.".into()
            },
            Signal::TextDelta {
                turn_id: id(),
                text: "Hello world ".into()
            },
            Signal::ToolCallStarted {
                turn_id: id(),
                call: ToolCallPart::new(
                    "call_1",
                    "read_file",
                    json!({"path": "notes.md"}),
                    ToolCallStatus::Running
                ),
            },
            Signal::ToolCallUpdated {
                turn_id: id(),
                call_id: "call_1".into(),
                status: ToolCallStatus::Completed,
                result: Some(ToolResult {
                    content: "# Notes".into(),
                    is_error: false
                }),
                patch: ToolCallPatch::default(),
            },
            Signal::Plan {
                turn_id: id(),
                entries: plan(PlanStatus::InProgress)
            },
            Signal::Plan {
                turn_id: id(),
                entries: plan(PlanStatus::Completed)
            },
            Signal::Error {
                turn_id: id(),
                message: "The cache was cold.".into()
            },
            Signal::Usage {
                turn_id: id(),
                usage: Usage {
                    input_tokens: 10,
                    output_tokens: 3,
                    ..Usage::default()
                }
            },
            Signal::TextDelta {
                turn_id: id(),
                text: "done.".into()
            },
            Signal::Usage {
                turn_id: id(),
                usage: total.clone()
            },
        ]
    );

    let history = agent.messages(&context).await.unwrap();
    assert_eq!(history.len(), 1);
    let turn = &history[0];
    assert_eq!(turn.id, turn_id);
    assert_eq!(turn.user.text, "world");
    assert_eq!(turn.stop_reason, Some(StopReason::EndTurn));
    assert_eq!(turn.usage, Some(total));
    assert!(turn.completed_at.is_some());
    assert_eq!(
        turn.parts,
        vec![
            ResponsePart::Reasoning {
                text: "Thinking it over.".into()
            },
            ResponsePart::Text {
                text: "Hello world ".into()
            },
            ResponsePart::ToolCall(ToolCallPart {
                call_id: "call_1".into(),
                name: "read_file".into(),
                arguments: json!({"path": "notes.md"}),
                status: ToolCallStatus::Completed,
                result: Some(ToolResult {
                    content: "# Notes".into(),
                    is_error: false
                }),
                title: None,
                kind: None,
                locations: Vec::new(),
                content: Vec::new(),
            }),
            ResponsePart::Plan {
                entries: plan(PlanStatus::Completed)
            },
            ResponsePart::Error {
                message: "The cache was cold.".into()
            },
            ResponsePart::Text {
                text: "done.".into()
            },
        ]
    );
}

const WORDS: &str = r#"
name: words
turns:
  - steps:
      - text: "one two  three"
        stream: words
        delay_ms: 20
"#;

#[tokio::test(start_paused = true)]
async fn words_stream_one_by_one_after_their_delay() {
    let (agent, recorder) = harness(WORDS, 1.0);
    let context = default_chat(&agent).await;
    let started = tokio::time::Instant::now();
    send(&agent, &context, "go").await;
    assert_eq!(started.elapsed(), Duration::from_millis(60));
    let deltas: Vec<String> = recorder
        .signals(&context.chat)
        .into_iter()
        .filter_map(|signal| match signal {
            Signal::TextDelta { text, .. } => Some(text),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, vec!["one ", "two  ", "three"]);
}

#[tokio::test(start_paused = true)]
async fn the_delay_scale_stretches_and_removes_delays() {
    for (scale, expected) in [(0.5, 30), (2.0, 120), (0.0, 0)] {
        let (agent, _recorder) = harness(WORDS, scale);
        let context = default_chat(&agent).await;
        let started = tokio::time::Instant::now();
        send(&agent, &context, "go").await;
        assert_eq!(
            started.elapsed(),
            Duration::from_millis(expected),
            "scale {scale}"
        );
    }
}

const TOOLS: &str = r#"
name: tools
turns:
  - steps:
      - tool_call: book_table
        id: booking-7
        arguments: { people: 2 }
        result: No table free.
        status: failed
        delay_ms: 250
      - tool_call: search
"#;

#[tokio::test(start_paused = true)]
async fn tool_calls_run_for_their_delay_and_can_fail() {
    let (agent, recorder) = harness(TOOLS, 1.0);
    let context = default_chat(&agent).await;
    let started = tokio::time::Instant::now();
    let (turn_id, _) = send(&agent, &context, "book").await;
    assert_eq!(started.elapsed(), Duration::from_millis(250));
    let mut signals = recorder.signals(&context.chat);
    signals.pop();
    assert_eq!(
        signals,
        vec![
            Signal::ToolCallStarted {
                turn_id: turn_id.clone(),
                call: ToolCallPart::new(
                    "booking-7",
                    "book_table",
                    json!({"people": 2}),
                    ToolCallStatus::Running
                ),
            },
            Signal::ToolCallUpdated {
                turn_id: turn_id.clone(),
                call_id: "booking-7".into(),
                status: ToolCallStatus::Failed,
                result: Some(ToolResult {
                    content: "No table free.".into(),
                    is_error: true
                }),
                patch: ToolCallPatch::default(),
            },
            Signal::ToolCallStarted {
                turn_id: turn_id.clone(),
                call: ToolCallPart::new("call_2", "search", json!({}), ToolCallStatus::Running),
            },
            Signal::ToolCallUpdated {
                turn_id,
                call_id: "call_2".into(),
                status: ToolCallStatus::Completed,
                result: Some(ToolResult {
                    content: String::new(),
                    is_error: false
                }),
                patch: ToolCallPatch::default(),
            },
        ]
    );
}

const STOPS: &str = r#"
name: stops
turns:
  - when: long
    steps:
      - text: "It goes on and on"
      - stop: max_tokens
  - when: nope
    steps:
      - stop: refusal
  - when: odd
    steps:
      - stop: content_filter
  - steps:
      - text: first
  - steps:
      - text: second
"#;

#[tokio::test]
async fn when_selects_turns_and_stop_sets_the_reason() {
    let (agent, recorder) = harness(STOPS, 0.0);
    let context = default_chat(&agent).await;
    let (_, outcome) = send(&agent, &context, "Write something LONG").await;
    assert_eq!(outcome.stop_reason, StopReason::MaxTokens);
    let (_, outcome) = send(&agent, &context, "nope").await;
    assert_eq!(outcome.stop_reason, StopReason::Refusal);
    let (_, outcome) = send(&agent, &context, "something odd").await;
    assert_eq!(
        outcome.stop_reason,
        StopReason::Other("content_filter".into())
    );
    // Turns without `when` play by the chat's turn count, cycling: 3 → second, 4 → first.
    recorder.clear();
    send(&agent, &context, "hi").await;
    assert_eq!(recorder.text(&context.chat), "second");
    recorder.clear();
    send(&agent, &context, "hi").await;
    assert_eq!(recorder.text(&context.chat), "first");
}

#[tokio::test]
async fn a_prompt_no_turn_answers_gets_a_note() {
    let (agent, recorder) = harness(
        "name: picky\nturns:\n  - when: weather\n    steps:\n      - text: sunny\n",
        0.0,
    );
    let context = default_chat(&agent).await;
    let (_, outcome) = send(&agent, &context, "hello").await;
    assert_eq!(outcome.stop_reason, StopReason::EndTurn);
    assert!(
        recorder
            .text(&context.chat)
            .contains("scenario `picky` has no turn for this prompt"),
        "{}",
        recorder.text(&context.chat)
    );
}

#[tokio::test(start_paused = true)]
async fn the_demo_streams_a_labelled_answer_in_about_two_seconds() {
    let (agent, recorder) = attach(ReplayHarness::demo());
    let descriptor = agent.descriptor();
    assert_eq!(descriptor.id.as_str(), "replay");
    assert!(descriptor.demo);
    assert!(descriptor.name.contains("demo"), "{}", descriptor.name);
    assert!(descriptor.capabilities.supports_fork());
    assert!(descriptor.capabilities.supports_side_chat());

    let context = default_chat(&agent).await;
    let started = tokio::time::Instant::now();
    let (_, outcome) = send(&agent, &context, "hello").await;
    let elapsed = started.elapsed();
    assert_eq!(outcome.stop_reason, StopReason::EndTurn);
    assert!(
        elapsed >= Duration::from_millis(1000) && elapsed <= Duration::from_millis(2200),
        "the demo took {elapsed:?} of scripted time"
    );
    let signals = recorder.signals(&context.chat);
    let deltas = signals
        .iter()
        .filter(|signal| matches!(signal, Signal::TextDelta { .. }))
        .count();
    assert!(
        deltas > 20,
        "the demo should stream word by word ({deltas} deltas)"
    );
    assert!(
        signals
            .iter()
            .any(|signal| matches!(signal, Signal::ReasoningDelta { .. }))
    );
    assert!(
        signals
            .iter()
            .any(|signal| matches!(signal, Signal::ToolCallStarted { .. }))
    );
    let text = recorder.text(&context.chat);
    for needle in [
        "scripted demo",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "Ollama",
        "[providers.<id>]",
        "config.toml",
    ] {
        assert!(
            text.contains(needle),
            "the demo answer lacks {needle:?}:\n{text}"
        );
    }

    recorder.clear();
    send(&agent, &context, "How do I configure a provider?").await;
    assert!(recorder.text(&context.chat).contains("ANTHROPIC_API_KEY"));
}

#[tokio::test]
async fn the_record_keeps_what_the_host_shows_within_the_output_limits() {
    let limits = hearth_core::OutputLimits {
        answer_bytes: 10,
        ..hearth_core::OutputLimits::default()
    };
    let scenario = hearth_harness_replay::Scenario::from_yaml(
        "name: long\nturns:\n  - steps:\n      - text: \"Hello {{prompt}} and a long tail\"\n",
        "long.yaml",
    )
    .unwrap();
    let (agent, recorder) = attach(
        ReplayHarness::new(scenario)
            .with_delay_scale(0.0)
            .with_output_limits(limits),
    );
    let context = default_chat(&agent).await;
    send(&agent, &context, "world").await;
    // The host is sent everything (it cuts what it shows itself) ...
    assert_eq!(recorder.text(&context.chat), "Hello world and a long tail");
    // ... and the record keeps what it shows: the answer cut at 10 bytes, marked, and the
    // closing note with the 17 bytes dropped.
    let history = agent.messages(&context).await.unwrap();
    assert_eq!(
        history[0].response_text(),
        format!(
            "Hello worl{}\n\n[truncated by Hearth: this turn passed its output limits, and Hearth dropped 17 bytes of answer text (`answer_bytes` = 10 under [limits] in config.toml)]\n",
            hearth_core::cut_mark("the answer", &limits)
        )
    );
}
