//! Chats: fork and side chat send the right history, a restored chat continues, the model
//! switches per chat, a title comes after the first turn.

use hearth_core::{
    ChatId, ChatOrigin, ChatSeed, ChatUri, Harness, HarnessData, HarnessErrorKind, Signal,
    StopReason,
};
use hearth_test_support::{MockModelServer, MockResponse, OpenAiStream};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{
    Logs, MODEL, assistant, context, conversation, create, default_chat, openai_agent, send,
    session, settings, system, tool_names, user,
};

async fn two_turns(
    server: &MockModelServer,
    agent: &hearth_harness_native::NativeHarness,
    chat: &hearth_core::ChatContext,
) -> (hearth_core::TurnId, hearth_core::TurnId) {
    server.enqueue(OpenAiStream::text_answer(MODEL, &["answer ", "one"], 1, 1));
    server.enqueue(OpenAiStream::text_answer(MODEL, &["answer ", "two"], 1, 1));
    let (first, _) = send(agent, chat, "one").await;
    let (second, _) = send(agent, chat, "two").await;
    (first, second)
}

#[tokio::test]
async fn a_fork_continues_from_the_copied_turns() {
    let server = MockModelServer::start().await.unwrap();
    let (agent, _, _) = openai_agent(&server, settings());
    let source = default_chat(&agent).await;
    let (first, _) = two_turns(&server, &agent, &source).await;
    let fork = context(
        &ChatUri::peer(&source.session, ChatId::generate()),
        ChatOrigin::Fork {
            source_chat: source.chat.clone(),
            turn_id: first.clone(),
        },
    );
    create(
        &agent,
        &fork,
        ChatSeed::Fork {
            source_chat: source.chat.clone(),
            turn_id: first.clone(),
        },
    )
    .await;
    let copied = agent.messages(&fork).await.unwrap();
    assert_eq!(copied, agent.messages(&source).await.unwrap()[..1].to_vec());
    server.enqueue(OpenAiStream::text_answer(MODEL, &["three"], 1, 1));
    send(&agent, &fork, "three").await;
    assert_eq!(
        conversation(server.requests().last().unwrap()),
        vec![user("one"), assistant("answer one"), user("three")]
    );
    assert_eq!(agent.messages(&fork).await.unwrap().len(), 2);
    assert_eq!(agent.messages(&source).await.unwrap().len(), 2);

    // A turn that is not finished in the source cannot be forked.
    let error = agent
        .create_chat(
            &fork,
            hearth_core::CreateChatRequest {
                seed: ChatSeed::Fork {
                    source_chat: source.chat.clone(),
                    turn_id: hearth_core::TurnId::generate(),
                },
                title: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind, HarnessErrorKind::InvalidInput);
    assert!(error.message.contains("is not a finished turn"), "{error}");
}

#[tokio::test]
async fn a_side_chat_sees_the_source_as_hidden_context_only() {
    let server = MockModelServer::start().await.unwrap();
    let (agent, _, _) = openai_agent(&server, settings());
    let source = default_chat(&agent).await;
    let (first, _) = two_turns(&server, &agent, &source).await;
    let side = context(
        &ChatUri::peer(&source.session, ChatId::generate()),
        ChatOrigin::SideChat {
            source_chat: source.chat.clone(),
            turn_id: first.clone(),
        },
    );
    create(
        &agent,
        &side,
        ChatSeed::SideChat {
            source_chat: source.chat.clone(),
            turn_id: first,
        },
    )
    .await;
    assert!(agent.messages(&side).await.unwrap().is_empty());
    server.enqueue(OpenAiStream::text_answer(MODEL, &["aside answer"], 1, 1));
    send(&agent, &side, "by the way?").await;
    let request = server.requests().last().unwrap().clone();
    assert_eq!(
        conversation(&request),
        vec![user("one"), assistant("answer one"), user("by the way?")]
    );
    assert!(system(&request).contains("This is a side conversation."));
    let history = agent.messages(&side).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].user.text, "by the way?");
}

#[tokio::test]
async fn a_restored_chat_continues_with_its_full_history() {
    let server = MockModelServer::start().await.unwrap();
    let (agent, recorder, _) = openai_agent(&server, settings());
    let chat = default_chat(&agent).await;
    two_turns(&server, &agent, &chat).await;
    let blob = recorder.last_blob(&chat.chat);
    drop(agent);

    let (restarted, _, _) = openai_agent(&server, settings());
    assert!(restarted.messages(&chat).await.is_err());
    assert_eq!(
        restarted.materialize_chat(&chat, Some(blob)).await.unwrap(),
        None
    );
    assert_eq!(restarted.messages(&chat).await.unwrap().len(), 2);
    server.enqueue(OpenAiStream::text_answer(MODEL, &["three"], 1, 1));
    send(&restarted, &chat, "three").await;
    assert_eq!(
        conversation(server.requests().last().unwrap()),
        vec![
            user("one"),
            assistant("answer one"),
            user("two"),
            assistant("answer two"),
            user("three")
        ]
    );
}

#[tokio::test]
async fn unreadable_provider_data_is_refused_with_what_to_do() {
    let server = MockModelServer::start().await.unwrap();
    let (agent, _, _) = openai_agent(&server, settings());
    let chat = context(
        &ChatUri::default_for(&super::support::session("mock")),
        ChatOrigin::User,
    );
    let error = agent
        .materialize_chat(&chat, Some(HarnessData::from_bytes(b"garbage".to_vec())))
        .await
        .unwrap_err();
    assert_eq!(error.kind, HarnessErrorKind::InvalidInput);
    assert!(
        error.message.contains("not a Hearth agent conversation"),
        "{error}"
    );
    let error = agent.materialize_chat(&chat, None).await.unwrap_err();
    assert!(error.message.contains("no stored provider data"), "{error}");
}

#[tokio::test]
async fn the_model_switches_per_chat() {
    let server = MockModelServer::start().await.unwrap();
    server.set_fallback(OpenAiStream::text_answer(MODEL, &["ok"], 1, 1));
    let (agent, recorder, _) = openai_agent(&server, settings());
    let chat = default_chat(&agent).await;
    let other = default_chat(&agent).await;
    agent.set_model(&chat, "bigger-model".into()).await.unwrap();
    assert!(matches!(
        recorder.signals(&chat.chat).last(),
        Some(Signal::ProviderDataChanged { .. })
    ));
    send(&agent, &chat, "hi").await;
    send(&agent, &other, "hi").await;
    let requests = server.requests();
    assert_eq!(requests[0].json()["model"], "bigger-model");
    assert_eq!(requests[1].json()["model"], MODEL);
    assert_eq!(
        agent.metadata(&chat).await.unwrap().model.as_deref(),
        Some("bigger-model")
    );
    let error = agent.set_model(&chat, "  ".into()).await.unwrap_err();
    assert_eq!(error.kind, HarnessErrorKind::InvalidInput);
}

#[tokio::test]
async fn a_title_is_generated_after_the_first_turn() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(OpenAiStream::text_answer(
        MODEL,
        &["High tide is at 10:00."],
        1,
        1,
    ));
    server.enqueue(OpenAiStream::text_answer(
        MODEL,
        &["\"Kiel tide ", "times.\""],
        1,
        1,
    ));
    server.enqueue(OpenAiStream::text_answer(MODEL, &["again"], 1, 1));
    let (agent, recorder, _) = openai_agent(&server, settings().with_titles(true));
    let chat = default_chat(&agent).await;
    let (_, outcome) = send(&agent, &chat, "When is high tide in Kiel?").await;
    assert_eq!(outcome.stop_reason, StopReason::EndTurn);
    let target = chat.chat.clone();
    recorder
        .wait_until("the title", move |events| {
            events.iter().any(|event| matches!(event, hearth_core::HarnessEvent::Progress { chat, signal: Signal::TitleChanged { .. } } if chat == &target))
        })
        .await;
    let signals = recorder.signals(&chat.chat);
    assert!(signals.contains(&Signal::TitleChanged {
        title: "Kiel tide times".into()
    }));
    assert_eq!(
        agent.metadata(&chat).await.unwrap().title.as_deref(),
        Some("Kiel tide times")
    );
    let title_request = server.requests()[1].json();
    assert_eq!(title_request["max_tokens"], 40);
    assert!(title_request.get("tools").is_none());
    assert_eq!(
        title_request["messages"][1],
        json!({"role": "user", "content": "User: When is high tide in Kiel?\n\nAssistant: High tide is at 10:00."})
    );
    // The title is in the stored blob, and later turns ask for none.
    let blob = recorder.last_blob(&chat.chat);
    assert!(String::from_utf8_lossy(blob.as_bytes()).contains("\"title\":\"Kiel tide times\""));
    send(&agent, &chat, "and tomorrow?").await;
    // A third turn is the marker: a title asked for after the second turn would have
    // gone out before it, and taken its answer.
    server.enqueue(OpenAiStream::text_answer(MODEL, &["still here"], 1, 1));
    let (_, outcome) = send(&agent, &chat, "and after that?").await;
    assert_eq!(outcome.stop_reason, StopReason::EndTurn);
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    for request in &requests[2..] {
        assert!(
            tool_names(request).contains(&"lookup".to_owned()),
            "a turn's request, not a title's: {}",
            request.json()
        );
    }
}

/// A chat that starts with a title (the default chat of a session created with one,
/// as the calendar's Ask bar creates "Calendar") keeps it and costs no title request:
/// after two turns the model was asked exactly twice.
#[tokio::test]
async fn a_chat_created_with_a_title_asks_for_no_other() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(OpenAiStream::text_answer(MODEL, &["Moved."], 1, 1));
    server.enqueue(OpenAiStream::text_answer(MODEL, &["Done."], 1, 1));
    let (agent, recorder, _) = openai_agent(&server, settings().with_titles(true));
    let chat = ChatUri::default_for(&session(agent.provider().as_str()));
    let context = context(&chat, ChatOrigin::User);
    agent
        .create_chat(
            &context,
            hearth_core::CreateChatRequest {
                seed: ChatSeed::Fresh,
                title: Some("Calendar".into()),
            },
        )
        .await
        .unwrap();
    let (_, outcome) = send(&agent, &context, "move Friday's review to 3pm").await;
    assert_eq!(outcome.stop_reason, StopReason::EndTurn);
    // The second turn is the marker: a title asked for after the first would have gone
    // out before it, and taken its answer.
    let (_, outcome) = send(&agent, &context, "and the one after").await;
    assert_eq!(outcome.stop_reason, StopReason::EndTurn);
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "two turns, no title request");
    for request in &requests {
        assert!(
            tool_names(request).contains(&"lookup".to_owned()),
            "a turn's request, not a title's: {}",
            request.json()
        );
    }
    assert_eq!(
        agent.metadata(&context).await.unwrap().title.as_deref(),
        Some("Calendar")
    );
    assert!(
        !recorder
            .signals(&chat)
            .iter()
            .any(|signal| matches!(signal, Signal::TitleChanged { .. }))
    );
}

#[tokio::test]
async fn a_failed_title_is_only_logged() {
    let logs = Logs::capture();
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(OpenAiStream::text_answer(MODEL, &["fine"], 1, 1));
    server.enqueue(MockResponse::openai_error(
        400,
        "no",
        "invalid_request_error",
    ));
    let (agent, recorder, _) = openai_agent(&server, settings().with_titles(true));
    let chat = default_chat(&agent).await;
    let (_, outcome) = send(&agent, &chat, "hello").await;
    assert_eq!(outcome.stop_reason, StopReason::EndTurn);
    // The title's task is over once it logged the failure.
    logs.wait_for("could not generate a title for the chat")
        .await;
    assert_eq!(server.requests().len(), 2, "one title request");
    assert!(
        !recorder
            .signals(&chat.chat)
            .iter()
            .any(|signal| matches!(signal, Signal::TitleChanged { .. }))
    );
    assert_eq!(agent.metadata(&chat).await.unwrap().title, None);
}

#[tokio::test]
async fn a_chat_not_held_is_refused_in_the_agent_words() {
    let server = MockModelServer::start().await.unwrap();
    let (agent, _, _) = openai_agent(&server, settings());
    let chat = default_chat(&agent).await;
    agent.dispose_chat(&chat).await.unwrap();
    let refusals = [
        agent.messages(&chat).await.map(drop),
        agent.metadata(&chat).await.map(drop),
        agent.set_model(&chat, "x".into()).await,
        agent.abort(&chat).await,
        agent
            .send(
                &chat,
                hearth_core::TurnId::generate(),
                hearth_core::UserMessage::text("b"),
            )
            .await
            .map(drop),
    ];
    for refusal in refusals {
        let error = refusal.unwrap_err();
        assert_eq!(error.kind, HarnessErrorKind::NotFound);
        assert_eq!(
            error.message,
            format!(
                "chat `{}` is not open in Hearth's agent (it was disposed or released, or never \
                 created here); materialize it from its stored provider data first",
                chat.chat
            )
        );
    }
}

#[tokio::test]
async fn the_stored_blob_leads_with_its_layout_version() {
    let server = MockModelServer::start().await.unwrap();
    let (agent, _, _) = openai_agent(&server, settings());
    let chat = default_chat(&agent).await;
    let blob = agent.materialize_chat(&chat, None).await.unwrap().unwrap();
    let text = String::from_utf8(blob.into_bytes()).unwrap();
    assert!(text.starts_with(r#"{"format":1,"provider":"#), "{text}");
    assert_eq!(text.matches("\"format\"").count(), 1, "{text}");
}
