//! A hostile agent's output: a 200 MB answer, 200,000 tool-call updates, a result far
//! past its limit. The turn completes as the agent ended it; what the host shows and
//! stores, and the harness's own record of the turn, stay within `[limits]`, every cut
//! marked.

use hearth_core::{
    Action, ChatUri, OutputLimits, ResponsePart, StopReason, ToolCallContent, ToolCallStatus, Turn,
    TurnId,
};
use hearth_host::Subscription;
use hearth_test_support::TestHost;
use pretty_assertions::assert_eq;
use tokio::sync::broadcast::error::RecvError;

use super::support::{Setup, send, session};

const MIB: usize = 1024 * 1024;

/// The text `/big-answer` and `/big-result` repeat.
const LINE: &str = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ+\n";

fn text_of(bytes: usize) -> String {
    let mut text = LINE.repeat(bytes / LINE.len() + 1);
    text.truncate(bytes);
    text
}

/// The longest a turn of hundreds of megabytes may take (debug builds of Hearth and of
/// the agent, on a busy machine).
const LONG_WAIT: std::time::Duration = std::time::Duration::from_secs(600);

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
    tokio::time::timeout(LONG_WAIT, wait)
        .await
        .expect("the turn did not complete")
}

/// Runs `prompt` to its end; returns the turn as shown (after checking the store holds
/// the same) and the size of the harness's own record of the chat.
async fn run(prompt: &str) -> (Turn, usize) {
    let setup = Setup::new();
    let test = TestHost::start(setup.agents()).await;
    let session = session(&test.host, &setup.work()).await;
    let chat = ChatUri::default_for(&session);
    let (turn_id, mut subscription) = send(&test.host, &chat, prompt).await;
    assert_eq!(
        completion(&mut subscription, &turn_id).await,
        StopReason::EndTurn
    );
    test.host.flush().await;
    let shown = test.host.chat(&chat).await.unwrap().turns.pop().unwrap();
    let stored = test.store.turns(&chat).await.unwrap().pop().unwrap();
    assert_eq!(stored, shown);
    let record = test
        .store
        .chats(&session)
        .await
        .unwrap()
        .into_iter()
        .find(|record| record.summary.uri == chat)
        .and_then(|record| record.provider_data)
        .map_or(0, |data| data.as_bytes().len());
    (shown, record)
}

#[tokio::test]
async fn a_200_mb_answer_is_kept_to_its_limit_and_the_turn_completes() {
    let limit = OutputLimits::default().answer_bytes;
    let (turn, record) = run(&format!("/big-answer {}", 200 * MIB)).await;
    let [ResponsePart::Text { text }] = turn.parts.as_slice() else {
        panic!("{} parts", turn.parts.len());
    };
    assert_eq!(text[..limit], text_of(limit));
    assert_eq!(
        &text[limit..],
        "\n\n[truncated by Hearth: the answer reached its limit of 8.0 MB (`answer_bytes` under [limits] in config.toml); the rest is dropped]\n\
         \n\n[truncated by Hearth: this turn passed its output limits, and Hearth dropped 192.0 MB of answer text (`answer_bytes` = 8388608 under [limits] in config.toml)]\n"
    );
    // The harness's record of the turn (what forks and side chats get) is cut too.
    // (As JSON: each line's newline takes two bytes.)
    assert!(
        record > limit && record < limit + limit / 16,
        "the harness's record holds {record} bytes"
    );
}

#[tokio::test]
async fn two_hundred_thousand_tool_call_updates_end_every_call() {
    let (turn, record) = run("/tool-updates 200000 10").await;
    let calls: Vec<(ToolCallStatus, Vec<ToolCallContent>)> = turn
        .parts
        .iter()
        .filter_map(|part| match part {
            ResponsePart::ToolCall(call) => Some((call.status, call.content.clone())),
            _ => None,
        })
        .collect();
    // The first 100,000 updates apply, then only each call's end.
    let expected: Vec<(ToolCallStatus, Vec<ToolCallContent>)> = (0..10)
        .map(|call| {
            (
                ToolCallStatus::Completed,
                vec![ToolCallContent::Text {
                    text: format!("done {call}"),
                }],
            )
        })
        .collect();
    assert_eq!(calls, expected);
    assert_eq!(
        turn.response_text(),
        "tool updates done\n\n[truncated by Hearth: this turn passed its output limits, and Hearth dropped 100,000 tool-call updates (`tool_call_updates` = 100000 under [limits] in config.toml)]\n"
    );
    assert!(
        record < 64 * 1024,
        "the harness's record holds {record} bytes"
    );
}

#[tokio::test]
async fn a_result_past_its_limit_is_cut_and_says_by_how_much() {
    let limit = OutputLimits::default().tool_result_bytes;
    let (turn, _) = run("/big-result 5000000").await;
    let call = turn
        .parts
        .iter()
        .find_map(|part| match part {
            ResponsePart::ToolCall(call) => Some(call),
            _ => None,
        })
        .expect("a tool call");
    assert_eq!(call.status, ToolCallStatus::Completed);
    let mark = "\n[truncated by Hearth: 3.8 MB more dropped; `tool_result_bytes` under [limits] in config.toml allows more]";
    let result = &call.result.as_ref().unwrap().content;
    assert_eq!(result, &format!("{}{mark}", text_of(limit)));
    assert_eq!(
        call.content,
        vec![ToolCallContent::Text {
            text: format!("{}{mark}", text_of(limit))
        }]
    );
    assert!(
        turn.response_text()
            .starts_with("big result sent\n\n[truncated by Hearth: this turn passed its output limits, and Hearth dropped 7.5 MB of tool output"),
        "{}",
        turn.response_text()
    );
}
