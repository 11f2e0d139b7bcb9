//! Abort cancels the model request at once and keeps what streamed; a running tool is
//! abandoned; the chat goes on afterwards.

use std::time::Duration;

use hearth_core::{Harness, HarnessEvent, Signal, StopReason, ToolCallStatus, TurnId, UserMessage};
use hearth_test_support::model_server::Outcome;
use hearth_test_support::{MockModelServer, OpenAiStream};
use pretty_assertions::assert_eq;

use super::support::{
    MODEL, WAIT, assistant, conversation, default_chat, openai_agent, send, settings, user,
};

#[tokio::test]
async fn abort_mid_stream_cancels_the_request_and_keeps_what_streamed() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        OpenAiStream::new(MODEL)
            .role()
            .text("The first ")
            .text("words")
            .pause(Duration::from_secs(30))
            .text(" never arrive")
            .finish("stop")
            .done(),
    );
    let (agent, recorder, _) = openai_agent(&server, settings());
    let chat = default_chat(&agent).await;
    let turn = {
        let (agent, chat) = (agent.clone(), chat.clone());
        tokio::spawn(async move {
            agent
                .send(&chat, TurnId::generate(), UserMessage::text("talk slowly"))
                .await
        })
    };
    let target = chat.chat.clone();
    recorder
        .wait_until("streamed text", move |events| {
            events.iter().filter(|event| matches!(event, HarnessEvent::Progress { chat, signal: Signal::TextDelta { .. } } if chat == &target)).count() == 2
        })
        .await;
    agent.abort(&chat).await.unwrap();
    let outcome = tokio::time::timeout(WAIT, turn)
        .await
        .expect("the aborted turn did not end")
        .unwrap()
        .unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Aborted);
    assert_eq!(
        server.wait_for_outcome(0, WAIT).await,
        Some(Outcome::ClientGone)
    );
    let history = agent.messages(&chat).await.unwrap();
    assert_eq!(history[0].response_text(), "The first words");
    assert_eq!(history[0].stop_reason, Some(StopReason::Aborted));

    server.enqueue(OpenAiStream::text_answer(MODEL, &["Sorry."], 1, 1));
    let (_, outcome) = send(&agent, &chat, "go on").await;
    assert_eq!(outcome.stop_reason, StopReason::EndTurn);
    assert_eq!(
        conversation(&server.requests()[1]),
        vec![
            user("talk slowly"),
            assistant("The first words"),
            user("go on")
        ]
    );
    // Abort is idempotent when nothing runs.
    agent.abort(&chat).await.unwrap();
}

#[tokio::test]
async fn abort_while_a_tool_runs_cancels_it() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        OpenAiStream::new(MODEL)
            .role()
            .tool_call(0, "call_w", "wait")
            .tool_call(1, "call_l", "lookup")
            .tool_arguments(1, "{\"query\": \"x\"}")
            .finish("tool_calls")
            .done(),
    );
    let (agent, recorder, toolbox) = openai_agent(&server, settings());
    let chat = default_chat(&agent).await;
    let turn = {
        let (agent, chat) = (agent.clone(), chat.clone());
        tokio::spawn(async move {
            agent
                .send(&chat, TurnId::generate(), UserMessage::text("wait"))
                .await
        })
    };
    let deadline = tokio::time::Instant::now() + WAIT;
    while toolbox.calls().is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "the tool never ran");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    agent.abort(&chat).await.unwrap();
    let outcome = tokio::time::timeout(WAIT, turn)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Aborted);
    assert_eq!(toolbox.calls().len(), 1, "the second call must not run");
    let statuses: Vec<_> = recorder
        .signals(&chat.chat)
        .into_iter()
        .filter_map(|signal| match signal {
            Signal::ToolCallUpdated {
                call_id, status, ..
            } => Some((call_id, status)),
            _ => None,
        })
        .collect();
    assert_eq!(
        statuses,
        vec![
            ("call_w".to_owned(), ToolCallStatus::Cancelled),
            ("call_l".to_owned(), ToolCallStatus::Cancelled),
        ]
    );
    assert_eq!(server.requests().len(), 1);
}
