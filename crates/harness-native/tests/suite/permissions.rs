//! A tool call that needs the user's answer (an MCP tool that is not read-only): the
//! turn raises a host-held permission request and waits; only the answer delivered
//! through `respond_permission` lets the call run.

use std::sync::Arc;

use futures::future::BoxFuture;
use hearth_core::{
    Harness, HarnessEvent, PermissionAnswer, Signal, StopReason, ToolCallContext, ToolCallOutcome,
    ToolDescription, Toolbox, TurnId, UserMessage,
};
use hearth_test_support::{MockModelServer, OpenAiStream};
use hearth_tools::{PermissionQuestion, permission_asker, tool_call_options};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{MODEL, WAIT, conversation, default_chat, openai_client, settings};

/// A toolbox whose one tool asks the user before it "runs".
struct AskingToolbox;

impl Toolbox for AskingToolbox {
    fn tools(&self) -> Vec<ToolDescription> {
        vec![ToolDescription {
            name: "notes__write".into(),
            description: "Writes a note.".into(),
            parameters: json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            mutates: true,
        }]
    }

    fn call<'a>(
        &'a self,
        call: &'a ToolCallContext,
        _name: &'a str,
        arguments: Value,
    ) -> BoxFuture<'a, ToolCallOutcome> {
        Box::pin(async move {
            let content = match permission_asker() {
                None => "nobody can answer".to_owned(),
                Some(asker) => {
                    let question = PermissionQuestion {
                        title: format!("Write {arguments}?"),
                        options: tool_call_options(),
                    };
                    match asker.ask(call, question).await {
                        Some(reply) if reply.allows() => format!("ran, allowed via {}", reply.via),
                        Some(reply) => format!("refused with {}", reply.option_id),
                        None => "unanswered".to_owned(),
                    }
                }
            };
            ToolCallOutcome {
                content,
                is_error: false,
                proposal: None,
            }
        })
    }
}

fn requested(events: &[HarnessEvent]) -> Option<String> {
    events.iter().find_map(|event| match event {
        HarnessEvent::Progress {
            signal: Signal::PermissionRequested { request_id, .. },
            ..
        } => Some(request_id.clone()),
        _ => None,
    })
}

#[tokio::test]
async fn the_turn_waits_for_the_users_answer_and_only_it_lets_the_call_run() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        OpenAiStream::new(MODEL)
            .role()
            .tool_call(0, "call_1", "notes__write")
            .tool_arguments(0, r#"{"text": "hi"}"#)
            .finish("tool_calls")
            .done(),
    );
    server.enqueue(OpenAiStream::text_answer(MODEL, &["Written."], 1, 1));
    let (agent, recorder) = {
        let agent = Arc::new(hearth_harness_native::NativeHarness::new(
            hearth_core::HarnessId::parse("mock").unwrap(),
            openai_client(&server),
            Some(MODEL.into()),
            Arc::new(AskingToolbox),
            settings(),
        ));
        let recorder = super::support::Recorder::default();
        agent.attach(recorder.sink());
        (agent, recorder)
    };
    let chat = default_chat(&agent).await;
    let turn = {
        let agent = Arc::clone(&agent);
        let chat = chat.clone();
        tokio::spawn(async move {
            agent
                .send(&chat, TurnId::generate(), UserMessage::text("write hi"))
                .await
        })
    };
    recorder
        .wait_until("a permission request", |events| requested(events).is_some())
        .await;
    let request_id = requested(&recorder.events()).unwrap();
    let signal = recorder
        .signals(&chat.chat)
        .into_iter()
        .find(|signal| matches!(signal, Signal::PermissionRequested { .. }))
        .unwrap();
    let Signal::PermissionRequested {
        title,
        tool_call_id,
        ..
    } = signal
    else {
        unreachable!()
    };
    assert_eq!(
        (title.as_str(), tool_call_id.as_deref()),
        (r#"Write {"text":"hi"}?"#, Some("call_1"))
    );
    // An option it did not offer is not an answer.
    let unknown = PermissionAnswer {
        option_id: "allow-always".into(),
        via: "cli".into(),
    };
    assert!(
        agent
            .respond_permission(&chat, &request_id, &unknown)
            .await
            .is_err()
    );
    let allow = PermissionAnswer {
        option_id: "allow-once".into(),
        via: "cli".into(),
    };
    agent
        .respond_permission(&chat, &request_id, &allow)
        .await
        .unwrap();
    let outcome = tokio::time::timeout(WAIT, turn)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(outcome.stop_reason, StopReason::EndTurn);
    assert_eq!(
        conversation(&server.requests()[1])[2],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "ran, allowed via cli"})
    );
    // Answered once: a second answer finds nothing pending.
    assert!(
        agent
            .respond_permission(&chat, &request_id, &allow)
            .await
            .is_err()
    );
}

#[tokio::test]
async fn stopping_the_turn_closes_the_unanswered_request() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        OpenAiStream::new(MODEL)
            .role()
            .tool_call(0, "call_1", "notes__write")
            .tool_arguments(0, r#"{"text": "hi"}"#)
            .finish("tool_calls")
            .done(),
    );
    let agent = Arc::new(hearth_harness_native::NativeHarness::new(
        hearth_core::HarnessId::parse("mock").unwrap(),
        openai_client(&server),
        Some(MODEL.into()),
        Arc::new(AskingToolbox),
        settings(),
    ));
    let recorder = super::support::Recorder::default();
    agent.attach(recorder.sink());
    let chat = default_chat(&agent).await;
    let turn = {
        let agent = Arc::clone(&agent);
        let chat = chat.clone();
        tokio::spawn(async move {
            agent
                .send(&chat, TurnId::generate(), UserMessage::text("write hi"))
                .await
        })
    };
    recorder
        .wait_until("a permission request", |events| requested(events).is_some())
        .await;
    let request_id = requested(&recorder.events()).unwrap();
    agent.abort(&chat).await.unwrap();
    let outcome = tokio::time::timeout(WAIT, turn)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Aborted);
    let allow = PermissionAnswer {
        option_id: "allow-once".into(),
        via: "cli".into(),
    };
    assert!(
        agent
            .respond_permission(&chat, &request_id, &allow)
            .await
            .is_err(),
        "the request went away with the turn"
    );
}
