//! Output limits: whatever a harness streams, a turn keeps its answer, reasoning and tool
//! calls within `[limits]`, marks every cut, ends with a note of what it dropped, and
//! completes as it would have; what it shows is what is stored.

use std::sync::Arc;

use hearth_core::{
    Action, ChatUri, Harness, OutputLimits, ResourceUri, ResponsePart, Signal, StopReason,
    TRUNCATED_MARK, ToolCallContent, ToolCallPart, ToolCallPatch, ToolCallStatus, ToolResult, Turn,
    TurnId, UserMessage,
};
use hearth_host::{HostConfig, Subscription};
use hearth_test_support::{FakeAgent, TestHost, WAIT, test_config};
use pretty_assertions::assert_eq;
use tokio::sync::broadcast::error::RecvError;

const MIB: usize = 1024 * 1024;

async fn start(limits: OutputLimits) -> (Arc<FakeAgent>, TestHost, ChatUri) {
    let fake = FakeAgent::new("fake");
    let config = HostConfig {
        output_limits: limits,
        ..test_config()
    };
    let test = TestHost::start_with(vec![fake.clone() as Arc<dyn Harness>], config).await;
    let chat = ChatUri::default_for(&test.session("fake").await);
    (fake, test, chat)
}

async fn send(test: &TestHost, fake: &FakeAgent, chat: &ChatUri) -> (TurnId, Subscription) {
    let (turn_id, subscription) = test
        .host
        .send_streaming(chat, UserMessage::text("go"))
        .await
        .unwrap();
    assert_eq!(fake.wait_for_send(chat).await, turn_id);
    (turn_id, subscription)
}

/// Waits for the turn's completion, whatever the subscriber missed on the way.
async fn completion(subscription: &mut Subscription, turn_id: &TurnId) -> StopReason {
    let wait = async {
        loop {
            match subscription.receiver.recv().await {
                Ok(envelope) => {
                    if let Action::TurnCompleted {
                        turn_id: id,
                        stop_reason,
                        ..
                    } = envelope.action
                        && &id == turn_id
                    {
                        return stop_reason;
                    }
                }
                Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => panic!("the subscription closed"),
            }
        }
    };
    tokio::time::timeout(WAIT, wait)
        .await
        .expect("the turn did not complete")
}

/// The turn as the host shows it, after checking that the store holds the same.
async fn shown_and_stored(test: &TestHost, chat: &ChatUri) -> Turn {
    test.host.flush().await;
    let shown = test.host.chat(chat).await.unwrap().turns.pop().unwrap();
    let stored = test.store.turns(chat).await.unwrap().pop().unwrap();
    assert_eq!(stored, shown);
    shown
}

/// `bytes` of a repeating text, so that what is kept can be compared with what was sent.
fn pattern(bytes: usize) -> String {
    let mut text = "0123456789abcdef".repeat(bytes / 16 + 1);
    text.truncate(bytes);
    text
}

async fn a_200_mb_answer_keeps_its_limit_marks_the_cut_and_completes() {
    let (fake, test, chat) = start(OutputLimits::default()).await;
    let (turn_id, mut subscription) = send(&test, &fake, &chat).await;
    let limit = OutputLimits::default().answer_bytes;
    let delta = pattern(MIB);
    for _ in 0..20 {
        fake.progress(
            &chat,
            Signal::ReasoningDelta {
                turn_id: turn_id.clone(),
                text: delta.clone(),
            },
        )
        .await;
    }
    for _ in 0..200 {
        fake.progress(
            &chat,
            Signal::TextDelta {
                turn_id: turn_id.clone(),
                text: delta.clone(),
            },
        )
        .await;
    }
    // A checkpoint of the running turn already holds the cut answer.
    let deadline = tokio::time::Instant::now() + WAIT;
    while !test
        .store
        .turns(&chat)
        .await
        .unwrap()
        .last()
        .is_some_and(|turn| turn.response_text().contains(TRUNCATED_MARK))
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no checkpoint holds the cut answer"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    fake.finish_ok(&chat);
    assert_eq!(
        completion(&mut subscription, &turn_id).await,
        StopReason::EndTurn
    );

    let turn = shown_and_stored(&test, &chat).await;
    let [
        ResponsePart::Reasoning { text: reasoning },
        ResponsePart::Text { text },
    ] = turn.parts.as_slice()
    else {
        panic!("{} parts", turn.parts.len());
    };
    assert_eq!(reasoning[..limit], pattern(20 * MIB)[..limit]);
    assert_eq!(
        &reasoning[limit..],
        "\n\n[truncated by Hearth: the reasoning reached its limit of 8.0 MB (`answer_bytes` under [limits] in config.toml); the rest is dropped]\n"
    );
    assert_eq!(text[..limit], pattern(200 * MIB)[..limit]);
    assert_eq!(
        &text[limit..],
        "\n\n[truncated by Hearth: the answer reached its limit of 8.0 MB (`answer_bytes` under [limits] in config.toml); the rest is dropped]\n\
         \n\n[truncated by Hearth: this turn passed its output limits, and Hearth dropped 192.0 MB of answer text and 12.0 MB of reasoning (`answer_bytes` = 8388608 under [limits] in config.toml)]\n"
    );
    assert_eq!(turn.stop_reason, Some(StopReason::EndTurn));
    let stored = serde_json::to_vec(&turn).unwrap().len();
    assert!(
        stored < 2 * limit + 4096,
        "the stored turn holds {stored} bytes"
    );
}

async fn two_hundred_thousand_tool_call_updates_end_every_call_within_the_update_limit() {
    let (fake, test, chat) = start(OutputLimits::default()).await;
    let (turn_id, mut subscription) = send(&test, &fake, &chat).await;
    let calls = 10;
    for call in 0..calls {
        fake.progress(
            &chat,
            Signal::ToolCallStarted {
                turn_id: turn_id.clone(),
                call: ToolCallPart::new(
                    format!("call-{call}"),
                    "terminal",
                    serde_json::json!({"command": "make"}),
                    ToolCallStatus::Running,
                ),
            },
        )
        .await;
    }
    for update in 0..200_000 {
        fake.progress(
            &chat,
            Signal::ToolCallUpdated {
                turn_id: turn_id.clone(),
                call_id: format!("call-{}", update % calls),
                status: ToolCallStatus::Running,
                result: None,
                patch: ToolCallPatch {
                    content: Some(vec![ToolCallContent::Text {
                        text: format!("update {update}"),
                    }]),
                    ..ToolCallPatch::default()
                },
            },
        )
        .await;
    }
    for call in 0..calls {
        fake.progress(
            &chat,
            Signal::ToolCallUpdated {
                turn_id: turn_id.clone(),
                call_id: format!("call-{call}"),
                status: ToolCallStatus::Completed,
                result: Some(ToolResult {
                    content: format!("done {call}"),
                    is_error: false,
                }),
                patch: ToolCallPatch::default(),
            },
        )
        .await;
    }
    fake.finish_ok(&chat);
    assert_eq!(
        completion(&mut subscription, &turn_id).await,
        StopReason::EndTurn
    );

    let turn = shown_and_stored(&test, &chat).await;
    let shown: Vec<(ToolCallStatus, String, String)> = turn
        .parts
        .iter()
        .filter_map(|part| match part {
            ResponsePart::ToolCall(call) => Some((
                call.status,
                match call.content.as_slice() {
                    [ToolCallContent::Text { text }] => text.clone(),
                    other => panic!("{other:?}"),
                },
                call.result.clone().unwrap().content,
            )),
            _ => None,
        })
        .collect();
    // The first 100,000 updates apply, the rest are dropped; the end of every call
    // passes.
    let expected: Vec<(ToolCallStatus, String, String)> = (0..calls)
        .map(|call| {
            (
                ToolCallStatus::Completed,
                format!("update {}", 99_990 + call),
                format!("done {call}"),
            )
        })
        .collect();
    assert_eq!(shown, expected);
    assert_eq!(
        turn.response_text(),
        "\n\n[truncated by Hearth: this turn passed its output limits, and Hearth dropped 100,000 tool-call updates (`tool_call_updates` = 100000 under [limits] in config.toml)]\n"
    );
}

async fn calls_past_the_limit_are_dropped_and_large_pieces_cut_with_their_size() {
    let (fake, test, chat) = start(OutputLimits {
        tool_calls: 2,
        tool_result_bytes: 1000,
        ..OutputLimits::default()
    })
    .await;
    let (turn_id, mut subscription) = send(&test, &fake, &chat).await;
    for call in 0..4 {
        let arguments = if call == 1 {
            serde_json::json!({"text": pattern(3000)})
        } else {
            serde_json::json!({"n": call})
        };
        fake.progress(
            &chat,
            Signal::ToolCallStarted {
                turn_id: turn_id.clone(),
                call: ToolCallPart::new(
                    format!("call-{call}"),
                    "read",
                    arguments,
                    ToolCallStatus::Running,
                ),
            },
        )
        .await;
        fake.progress(
            &chat,
            Signal::ToolCallUpdated {
                turn_id: turn_id.clone(),
                call_id: format!("call-{call}"),
                status: ToolCallStatus::Completed,
                result: Some(ToolResult {
                    content: pattern(5000),
                    is_error: false,
                }),
                patch: ToolCallPatch::default(),
            },
        )
        .await;
    }
    fake.finish_ok(&chat);
    assert_eq!(
        completion(&mut subscription, &turn_id).await,
        StopReason::EndTurn
    );

    let turn = shown_and_stored(&test, &chat).await;
    let calls: Vec<&ToolCallPart> = turn
        .parts
        .iter()
        .filter_map(|part| match part {
            ResponsePart::ToolCall(call) => Some(call),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls
            .iter()
            .map(|call| call.call_id.as_str())
            .collect::<Vec<_>>(),
        ["call-0", "call-1"]
    );
    let result = &calls[0].result.as_ref().unwrap().content;
    assert_eq!(
        result,
        &format!(
            "{}\n[truncated by Hearth: 3 KB more dropped; `tool_result_bytes` under [limits] in config.toml allows more]",
            pattern(1000)
        )
    );
    assert_eq!(
        calls[1].arguments,
        serde_json::json!(
            "[truncated by Hearth: the arguments of 2 KB dropped; the limit is 1000 bytes (`tool_result_bytes` under [limits] in config.toml)]"
        )
    );
    assert_eq!(calls[0].arguments, serde_json::json!({"n": 0}));
    // 3011 bytes of arguments, and 4000 of each result.
    assert_eq!(
        turn.response_text(),
        "\n\n[truncated by Hearth: this turn passed its output limits, and Hearth dropped 2 tool calls and 10 KB of tool output (`tool_calls` = 2, `tool_result_bytes` = 1000, `tool_output_bytes` = 67108864 under [limits] in config.toml)]\n"
    );
}

async fn a_turn_within_its_limits_shows_no_mark() {
    let (fake, test, chat) = start(OutputLimits::default()).await;
    let (turn_id, mut subscription) = send(&test, &fake, &chat).await;
    fake.progress(
        &chat,
        Signal::TextDelta {
            turn_id: turn_id.clone(),
            text: "a short answer".into(),
        },
    )
    .await;
    fake.finish_ok(&chat);
    assert_eq!(
        completion(&mut subscription, &turn_id).await,
        StopReason::EndTurn
    );
    let turn = shown_and_stored(&test, &chat).await;
    assert_eq!(turn.response_text(), "a short answer");
    // The resource's state reflects the same.
    let snapshot = test
        .host
        .subscribe(&ResourceUri::Chat(chat.clone()))
        .await
        .unwrap()
        .snapshot;
    assert!(format!("{snapshot:?}").contains("a short answer"));
}

hearth_test_support::on_every_backend!(
    a_200_mb_answer_keeps_its_limit_marks_the_cut_and_completes,
    two_hundred_thousand_tool_call_updates_end_every_call_within_the_update_limit,
    calls_past_the_limit_are_dropped_and_large_pieces_cut_with_their_size,
    a_turn_within_its_limits_shows_no_mark,
);
