//! Turns: streaming, concurrency within a session, abort, errors, checkpoints.

use std::sync::Arc;
use std::time::Duration;

use hearth_core::{
    Action, ChatUri, Harness, HarnessError, ResourceUri, ResponsePart, Signal, StopReason, TurnId,
    UserMessage,
};
use hearth_host::HostError;
use hearth_test_support::{FakeAgent, TestHost, eventually, until_turn_completes};
use pretty_assertions::assert_eq;

fn agents(fake: &Arc<FakeAgent>) -> Vec<Arc<dyn Harness>> {
    vec![fake.clone() as Arc<dyn Harness>]
}

async fn start_turn(test: &TestHost, fake: &FakeAgent, chat: &ChatUri, text: &str) -> TurnId {
    let turn_id = test.host.send(chat, UserMessage::text(text)).await.unwrap();
    assert_eq!(fake.wait_for_send(chat).await, turn_id);
    turn_id
}

async fn several_chats_of_one_session_run_at_once() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("fake").await;
    let first = ChatUri::default_for(&session);
    let second = test.peer(&session).await;
    let mut one = test
        .host
        .subscribe(&ResourceUri::Chat(first.clone()))
        .await
        .unwrap();
    let mut two = test
        .host
        .subscribe(&ResourceUri::Chat(second.clone()))
        .await
        .unwrap();
    let turn_one = start_turn(&test, &fake, &first, "a").await;
    let turn_two = start_turn(&test, &fake, &second, "b").await;
    let mut active = test.host.active_chats(&session);
    active.sort();
    let mut expected = vec![first.clone(), second.clone()];
    expected.sort();
    assert_eq!(active, expected);
    let state = test.host.session(&session).await.unwrap();
    assert!(state.chats.iter().all(|chat| chat.running));

    fake.progress(
        &second,
        Signal::TextDelta {
            turn_id: turn_two.clone(),
            text: "two".into(),
        },
    )
    .await;
    fake.finish_ok(&second);
    until_turn_completes(&mut two.receiver, &turn_two).await;
    assert_eq!(test.host.active_chats(&session), vec![first.clone()]);

    fake.progress(
        &first,
        Signal::TextDelta {
            turn_id: turn_one.clone(),
            text: "one".into(),
        },
    )
    .await;
    fake.finish_ok(&first);
    until_turn_completes(&mut one.receiver, &turn_one).await;
    assert!(test.host.active_chats(&session).is_empty());
    assert_eq!(
        test.host.chat(&first).await.unwrap().turns[0].response_text(),
        "one"
    );
    assert_eq!(
        test.host.chat(&second).await.unwrap().turns[0].response_text(),
        "two"
    );
}

async fn a_second_send_to_a_busy_chat_is_refused() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("fake").await;
    let chat = ChatUri::default_for(&session);
    start_turn(&test, &fake, &chat, "first").await;
    let error = test
        .host
        .send(&chat, UserMessage::text("second"))
        .await
        .unwrap_err();
    assert!(matches!(error, HostError::Busy(_)), "{error}");
    assert!(error.is_retryable());
    assert_eq!(test.store.turns(&chat).await.unwrap().len(), 1);
}

async fn abort_keeps_what_streamed() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("fake").await;
    let chat = ChatUri::default_for(&session);
    let mut sub = test
        .host
        .subscribe(&ResourceUri::Chat(chat.clone()))
        .await
        .unwrap();
    let turn = start_turn(&test, &fake, &chat, "write a poem").await;
    fake.progress(
        &chat,
        Signal::TextDelta {
            turn_id: turn.clone(),
            text: "Roses are".into(),
        },
    )
    .await;
    assert!(test.host.abort(&chat).await.unwrap());
    let (_, reason) = until_turn_completes(&mut sub.receiver, &turn).await;
    assert_eq!(reason, StopReason::Aborted);
    test.host.flush().await;
    let stored = test.store.turns(&chat).await.unwrap();
    assert_eq!(stored[0].response_text(), "Roses are");
    assert_eq!(stored[0].stop_reason, Some(StopReason::Aborted));
    assert!(
        !test.host.abort(&chat).await.unwrap(),
        "nothing left to abort"
    );
}

async fn a_harness_that_ignores_abort_is_stopped_after_the_grace_period() {
    let fake = FakeAgent::new("fake");
    fake.ignore_aborts();
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("fake").await;
    let chat = ChatUri::default_for(&session);
    let mut sub = test
        .host
        .subscribe(&ResourceUri::Chat(chat.clone()))
        .await
        .unwrap();
    let turn = start_turn(&test, &fake, &chat, "hang").await;
    test.host.abort(&chat).await.unwrap();
    let (_, reason) = until_turn_completes(&mut sub.receiver, &turn).await;
    assert_eq!(reason, StopReason::Aborted);
    // A late event of the ended turn changes nothing.
    fake.progress(
        &chat,
        Signal::TextDelta {
            turn_id: turn,
            text: "late".into(),
        },
    )
    .await;
    test.host.flush().await;
    assert_eq!(
        test.host.chat(&chat).await.unwrap().turns[0].response_text(),
        ""
    );
}

async fn a_failed_turn_ends_with_the_error_shown() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("fake").await;
    let chat = ChatUri::default_for(&session);
    let mut sub = test
        .host
        .subscribe(&ResourceUri::Chat(chat.clone()))
        .await
        .unwrap();
    let turn = start_turn(&test, &fake, &chat, "hi").await;
    fake.finish(
        &chat,
        Err(HarnessError::new(
            hearth_core::HarnessErrorKind::Provider,
            "401 invalid API key",
        )),
    );
    let (envelopes, reason) = until_turn_completes(&mut sub.receiver, &turn).await;
    assert_eq!(reason, StopReason::Error);
    assert!(envelopes.iter().any(|e| matches!(&e.action, Action::PartAdded { part: ResponsePart::Error { message }, .. } if message.contains("401 invalid API key"))));
    test.host.flush().await;
    let stored = test.store.turns(&chat).await.unwrap();
    assert_eq!(stored[0].stop_reason, Some(StopReason::Error));
}

async fn streaming_text_is_checkpointed_and_survives_a_crash_as_incomplete() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("fake").await;
    let chat = ChatUri::default_for(&session);
    let turn = start_turn(&test, &fake, &chat, "tell me a long story").await;
    for word in ["Once ", "upon ", "a ", "time"] {
        fake.progress(
            &chat,
            Signal::TextDelta {
                turn_id: turn.clone(),
                text: word.into(),
            },
        )
        .await;
    }
    // No completion: the checkpoint interval alone must save the partial answer.
    let store = test.store.clone();
    let probe = chat.clone();
    let deadline = tokio::time::Instant::now() + hearth_test_support::WAIT;
    loop {
        let stored = store.turns(&probe).await.unwrap();
        if stored[0].response_text() == "Once upon a time" {
            assert_eq!(stored[0].stop_reason, None);
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the partial answer was never checkpointed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let fresh = FakeAgent::new("fake");
    let test = test.crash_and_restart(agents(&fresh)).await;
    let state = test.host.chat(&chat).await.unwrap();
    assert_eq!(state.turns[0].user.text, "tell me a long story");
    assert_eq!(state.turns[0].response_text(), "Once upon a time");
    assert_eq!(state.turns[0].stop_reason, Some(StopReason::Incomplete));
    // The chat is usable again.
    let host = test.host.clone();
    let next = chat.clone();
    tokio::spawn(async move { host.send(&next, UserMessage::text("go on")).await });
    fresh.wait_for_send(&chat).await;
    let host = test.host.clone();
    eventually("the second turn", move || {
        host.peek_chat(&chat).is_some_and(|c| c.turns.len() == 2)
    })
    .await;
}

async fn large_answers_are_checkpointed_before_the_interval() {
    let fake = FakeAgent::new("fake");
    let config = hearth_host::HostConfig {
        checkpoint_interval: Duration::from_secs(3600),
        ..hearth_test_support::test_config()
    };
    let test = TestHost::start_with(agents(&fake), config).await;
    let session = test.session("fake").await;
    let chat = ChatUri::default_for(&session);
    let turn = start_turn(&test, &fake, &chat, "dump").await;
    fake.progress(
        &chat,
        Signal::TextDelta {
            turn_id: turn.clone(),
            text: "small".into(),
        },
    )
    .await;
    test.host.flush().await;
    assert_eq!(
        test.store.turns(&chat).await.unwrap()[0].response_text(),
        "",
        "saved too early"
    );
    let chunk = "x".repeat(4096);
    fake.progress(
        &chat,
        Signal::TextDelta {
            turn_id: turn.clone(),
            text: chunk.clone(),
        },
    )
    .await;
    test.host.flush().await;
    assert_eq!(
        test.store.turns(&chat).await.unwrap()[0].response_text(),
        format!("small{chunk}")
    );
}

fn answer(option: &str) -> hearth_core::PermissionAnswer {
    hearth_core::PermissionAnswer {
        option_id: option.into(),
        via: "test".into(),
    }
}

async fn permission_requests_are_answered_through_the_host() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("fake").await;
    let chat = ChatUri::default_for(&session);
    let turn = start_turn(&test, &fake, &chat, "delete the temp files").await;
    let options = vec![
        hearth_core::PermissionOption {
            id: "allow".into(),
            label: "Allow".into(),
            kind: Some(hearth_core::PermissionOptionKind::AllowOnce),
        },
        hearth_core::PermissionOption {
            id: "deny".into(),
            label: "Deny".into(),
            kind: Some(hearth_core::PermissionOptionKind::RejectOnce),
        },
    ];
    fake.progress(
        &chat,
        Signal::PermissionRequested {
            turn_id: turn.clone(),
            request_id: "r1".into(),
            title: "run rm -rf ./tmp?".into(),
            options,
            tool_call_id: None,
        },
    )
    .await;
    test.host.flush().await;
    let pending = test.host.pending_permissions();
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert_eq!(pending[0].request_id, "r1");
    assert_eq!(pending[0].turn_id, turn);
    let error = test
        .host
        .respond_permission(&chat, "r1", &answer("maybe"))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("options: allow, deny"),
        "{error}"
    );
    let error = test
        .host
        .respond_permission(&chat, "r9", &answer("allow"))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("does not exist"), "{error}");
    test.host
        .respond_permission(&chat, "r1", &answer("deny"))
        .await
        .unwrap();
    assert!(
        fake.calls()
            .contains(&hearth_test_support::Call::RespondPermission(
                chat.clone(),
                "r1".into(),
                "deny".into()
            ))
    );
    let state = test.host.chat(&chat).await.unwrap();
    assert!(
        matches!(&state.turns[0].parts[0], ResponsePart::PermissionRequest { outcome: Some(answer), .. } if answer == "deny")
    );
    let again = test
        .host
        .respond_permission(&chat, "r1", &answer("allow"))
        .await
        .unwrap_err();
    assert!(
        again.to_string().contains("does not exist"),
        "answered twice: {again}"
    );
}

async fn an_abort_is_repeated_while_its_turn_still_runs() {
    let fake = FakeAgent::new("fake");
    fake.ignore_aborts();
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("fake").await;
    let chat = ChatUri::default_for(&session);
    start_turn(&test, &fake, &chat, "long").await;
    assert!(test.host.abort(&chat).await.unwrap());
    // The harness ignores it, so the host asks again once it has had time to start.
    hearth_test_support::eventually("the repeated abort", || {
        fake.calls()
            .iter()
            .filter(|call| matches!(call, hearth_test_support::Call::Abort(aborted) if aborted == &chat))
            .count()
            >= 2
    })
    .await;
}

async fn a_harness_can_settle_a_permission_request_itself() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("fake").await;
    let chat = ChatUri::default_for(&session);
    let turn = start_turn(&test, &fake, &chat, "write it").await;
    fake.progress(
        &chat,
        Signal::PermissionRequested {
            turn_id: turn.clone(),
            request_id: "r1".into(),
            title: "Write a.txt?".into(),
            options: Vec::new(),
            tool_call_id: None,
        },
    )
    .await;
    fake.progress(
        &chat,
        Signal::PermissionResolved {
            turn_id: turn.clone(),
            request_id: "r1".into(),
            outcome: "reject-once".into(),
        },
    )
    .await;
    test.host.flush().await;
    assert!(test.host.pending_permissions().is_empty());
    let state = test.host.chat(&chat).await.unwrap();
    assert!(matches!(
        &state.turns[0].parts[0],
        ResponsePart::PermissionRequest { outcome: Some(outcome), .. } if outcome == "reject-once"
    ));
}

hearth_test_support::on_every_backend!(
    several_chats_of_one_session_run_at_once,
    a_second_send_to_a_busy_chat_is_refused,
    abort_keeps_what_streamed,
    a_harness_that_ignores_abort_is_stopped_after_the_grace_period,
    a_failed_turn_ends_with_the_error_shown,
    streaming_text_is_checkpointed_and_survives_a_crash_as_incomplete,
    large_answers_are_checkpointed_before_the_interval,
    permission_requests_are_answered_through_the_host,
    an_abort_is_repeated_while_its_turn_still_runs,
    a_harness_can_settle_a_permission_request_itself,
);
