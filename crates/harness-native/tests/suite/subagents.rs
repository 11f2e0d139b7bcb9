//! The `task` tool: a subagent's chat is announced before any of its events, runs a turn
//! of its own, and its final answer is the tool's result; subagents nest only so deep.

use std::sync::Arc;

use hearth_core::{
    ChatOrigin, ChatUri, Harness, HarnessEvent, Signal, StopReason, ToolCallPatch, ToolCallStatus,
    ToolResult, UserMessage,
};
use hearth_test_support::{MockModelServer, OpenAiStream, TestHost};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{
    MODEL, TestToolbox, agent_with, context, conversation, default_chat, openai_agent,
    openai_client, send, settings, system, tool_names, user,
};

fn task_call(id: &str, description: &str, prompt: &str) -> OpenAiStream {
    let arguments = json!({"description": description, "prompt": prompt}).to_string();
    OpenAiStream::new(MODEL)
        .role()
        .tool_call(0, id, "task")
        .tool_arguments(0, &arguments)
        .finish("tool_calls")
        .done()
}

fn position(events: &[HarnessEvent], what: impl Fn(&HarnessEvent) -> bool) -> usize {
    events.iter().position(what).expect("event not found")
}

#[tokio::test]
async fn the_task_tool_spawns_a_chat_before_its_events_and_returns_its_answer() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(task_call(
        "call_t",
        "Check tides",
        "When is high tide in Kiel?",
    ));
    server.enqueue(OpenAiStream::text_answer(
        MODEL,
        &["High tide ", "at 10:00."],
        5,
        3,
    ));
    server.enqueue(OpenAiStream::text_answer(MODEL, &["It is at 10:00."], 9, 4));
    let (agent, recorder, _) = openai_agent(&server, settings());
    let parent = default_chat(&agent).await;
    let (_, outcome) = send(&agent, &parent, "tides?").await;
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
    assert_eq!(
        origin,
        ChatOrigin::Tool {
            parent_chat: parent.chat.clone(),
            tool_call_id: "call_t".into()
        }
    );
    assert_eq!(title.as_deref(), Some("Check tides"));
    assert_eq!(created.model.as_deref(), Some(MODEL));
    let first_child_event = position(
        &events,
        |event| matches!(event, HarnessEvent::Progress { chat, .. } if chat == &child),
    );
    assert!(spawn < first_child_event);
    let child_signals = recorder.signals(&child);
    let Signal::TurnStarted {
        turn_id,
        user: asked,
    } = &child_signals[0]
    else {
        panic!("{child_signals:?}")
    };
    assert_eq!(asked, &UserMessage::text("When is high tide in Kiel?"));
    assert!(matches!(
        &child_signals[child_signals.len() - 2..],
        [
            Signal::TurnCompleted { turn_id: id, stop_reason: StopReason::EndTurn, .. },
            Signal::ProviderDataChanged { .. },
        ] if id == turn_id
    ));
    assert_eq!(recorder.text(&child), "High tide at 10:00.");
    let end = position(
        &events,
        |event| matches!(event, HarnessEvent::EndChat { chat } if chat == &child),
    );
    let task_done = position(
        &events,
        |event| matches!(event, HarnessEvent::Progress { signal: Signal::ToolCallUpdated { call_id, .. }, .. } if call_id == "call_t"),
    );
    assert!(end < task_done);
    assert_eq!(
        recorder
            .signals(&parent.chat)
            .into_iter()
            .find(|signal| matches!(signal, Signal::ToolCallUpdated { .. })),
        Some(Signal::ToolCallUpdated {
            turn_id: match &recorder.signals(&parent.chat)[0] {
                Signal::ToolCallStarted { turn_id, .. } => turn_id.clone(),
                other => panic!("{other:?}"),
            },
            call_id: "call_t".into(),
            status: ToolCallStatus::Completed,
            result: Some(ToolResult {
                content: "High tide at 10:00.".into(),
                is_error: false
            }),
            patch: ToolCallPatch::default(),
        })
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(
        conversation(&requests[1]),
        vec![user("When is high tide in Kiel?")]
    );
    assert!(system(&requests[1]).contains("You are a subagent"));
    assert_eq!(
        tool_names(&requests[1]),
        vec!["lookup", "create_event", "wait", "task"]
    );
    assert_eq!(
        conversation(&requests[2])[2],
        json!({"role": "tool", "tool_call_id": "call_t", "content": "High tide at 10:00."})
    );
    let history = agent
        .messages(&context(&child, origin.clone()))
        .await
        .unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].response_text(), "High tide at 10:00.");
}

#[tokio::test]
async fn subagents_do_not_nest_beyond_the_depth_limit() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(task_call("outer", "Outer", "Do the outer task"));
    // The subagent tries to spawn another one, which it is not offered.
    server.enqueue(task_call("inner", "Inner", "Do the inner task"));
    server.enqueue(OpenAiStream::text_answer(MODEL, &["did it myself"], 1, 1));
    server.enqueue(OpenAiStream::text_answer(MODEL, &["all done"], 1, 1));
    let (agent, recorder, _) = openai_agent(&server, settings().with_max_subagent_depth(1));
    let parent = default_chat(&agent).await;
    send(&agent, &parent, "go").await;
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(
        tool_names(&requests[0]),
        vec!["lookup", "create_event", "wait", "task"]
    );
    assert_eq!(
        tool_names(&requests[1]),
        vec!["lookup", "create_event", "wait"]
    );
    assert_eq!(
        conversation(&requests[2])[2],
        json!({"role": "tool", "tool_call_id": "inner", "content": "The `task` tool is not available here: subagents may nest only 1 deep. Do the task yourself."})
    );
    let spawned = recorder
        .events()
        .iter()
        .filter(|event| matches!(event, HarnessEvent::SpawnChat { .. }))
        .count();
    assert_eq!(spawned, 1);
}

#[tokio::test]
async fn the_host_lists_the_subagent_chat_with_its_turn() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(task_call("call_t", "Check tides", "When is high tide?"));
    server.enqueue(OpenAiStream::text_answer(MODEL, &["At 10:00."], 1, 1));
    server.enqueue(OpenAiStream::text_answer(MODEL, &["10:00 it is."], 1, 1));
    let toolbox = Arc::new(TestToolbox::default());
    let (agent, _) = agent_with("mock", openai_client(&server), toolbox, settings());
    let test = TestHost::start(vec![agent as Arc<dyn Harness>]).await;
    let session = test.session("mock").await;
    let chat = ChatUri::default_for(&session);
    let (_, _, reason) =
        hearth_test_support::conformance::run_turn(&test.host, &chat, UserMessage::text("tides?"))
            .await;
    assert_eq!(reason, StopReason::EndTurn);
    let state = test.host.session(&session).await.unwrap();
    assert_eq!(state.chats.len(), 2);
    let child = state
        .chats
        .iter()
        .find(|listing| !listing.summary.uri.is_default())
        .unwrap();
    assert_eq!(
        child.summary.origin,
        ChatOrigin::Tool {
            parent_chat: chat.clone(),
            tool_call_id: "call_t".into()
        }
    );
    let child_state = test.host.chat(&child.summary.uri).await.unwrap();
    assert_eq!(child_state.turns.len(), 1);
    assert_eq!(child_state.turns[0].response_text(), "At 10:00.");
    assert_eq!(child_state.turns[0].stop_reason, Some(StopReason::EndTurn));
    let parent = test.host.chat(&chat).await.unwrap();
    assert_eq!(parent.turns[0].response_text(), "10:00 it is.");
}
