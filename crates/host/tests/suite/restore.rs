//! Restart, external sessions, forks of sessions, idle eviction, resuming subscriptions.

use std::sync::Arc;
use std::time::Duration;

use hearth_core::{
    Action, ChatSeed, ChatUri, DiscoveredChat, Harness, HarnessData, HarnessEvent, HarnessId,
    Mirror, Provenance, ResourceState, ResourceUri, Signal, StopReason, Turn, TurnId, UserMessage,
    now,
};
use hearth_host::Resumed;
use hearth_store::SessionQuery;
use hearth_test_support::{Call, FakeAgent, TestHost, next_envelope, until_turn_completes};
use pretty_assertions::assert_eq;

fn agents(fake: &Arc<FakeAgent>) -> Vec<Arc<dyn Harness>> {
    vec![fake.clone() as Arc<dyn Harness>]
}

async fn answered_turn(
    test: &TestHost,
    fake: &FakeAgent,
    chat: &ChatUri,
    prompt: &str,
    answer: &str,
) -> TurnId {
    let mut sub = test
        .host
        .subscribe(&ResourceUri::Chat(chat.clone()))
        .await
        .unwrap();
    let turn = test
        .host
        .send(chat, UserMessage::text(prompt))
        .await
        .unwrap();
    fake.wait_for_send(chat).await;
    fake.progress(
        chat,
        Signal::TextDelta {
            turn_id: turn.clone(),
            text: answer.into(),
        },
    )
    .await;
    fake.finish_ok(chat);
    until_turn_completes(&mut sub.receiver, &turn).await;
    turn
}

async fn sessions_chats_and_turns_survive_a_restart() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("fake").await;
    let chat = ChatUri::default_for(&session);
    answered_turn(
        &test,
        &fake,
        &chat,
        "plan my garden",
        "Start with tomatoes.",
    )
    .await;
    test.host
        .set_draft(&chat, Some("and then".into()))
        .await
        .unwrap();
    let before = test.host.chat(&chat).await.unwrap();
    let fresh = FakeAgent::new("fake");
    let test = test.restart(agents(&fresh)).await;
    let listed = test
        .host
        .list_sessions(&SessionQuery::default())
        .await
        .unwrap()
        .sessions;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].title.as_deref(), Some("plan my garden"));
    let after = test.host.chat(&chat).await.unwrap();
    assert_eq!(after.turns, before.turns);
    assert_eq!(after.draft.as_deref(), Some("and then"));
    assert_eq!(after.summary.title.as_deref(), Some("plan my garden"));
}

async fn external_sessions_show_the_harness_history() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let mut root = test.host.subscribe(&ResourceUri::Root).await.unwrap();
    fake.emit(HarnessEvent::DiscoverChats {
        provider: HarnessId::parse("fake").unwrap(),
        chats: vec![DiscoveredChat {
            conversation: hearth_core::ConversationId::parse("native-7").unwrap(),
            title: Some("from the terminal".into()),
            started_at: now(),
            updated_at: now(),
            provider_data: HarnessData::from_bytes(b"native-7".to_vec()),
            working_directory: None,
        }],
        peers: Vec::new(),
    })
    .await;
    let Action::SessionAdded { summary } = next_envelope(&mut root.receiver).await.action else {
        panic!()
    };
    assert_eq!(summary.provenance, Provenance::External);
    let chat = ChatUri::default_for(&summary.uri);
    let mut turn = Turn::started(TurnId::generate(), UserMessage::text("old question"), now());
    turn.push_text("old answer");
    turn.stop_reason = Some(StopReason::EndTurn);
    fake.set_messages(&chat, vec![turn.clone()]);
    let state = test.host.chat(&chat).await.unwrap();
    assert_eq!(state.turns, vec![turn]);
    assert!(fake.calls().contains(&Call::Materialize {
        chat,
        provider_data: Some(HarnessData::from_bytes(b"native-7".to_vec()))
    }));
}

async fn forking_a_session_copies_its_history_through_the_turn() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("fake").await;
    let chat = ChatUri::default_for(&session);
    let first = answered_turn(&test, &fake, &chat, "one", "1").await;
    answered_turn(&test, &fake, &chat, "two", "2").await;
    let forked = test.host.fork_session(&session, &first).await.unwrap();
    let copy = test
        .host
        .chat(&ChatUri::default_for(&forked))
        .await
        .unwrap();
    assert_eq!(copy.turns.len(), 1);
    assert_eq!(copy.turns[0].response_text(), "1");
    let stored = test
        .store
        .turns(&ChatUri::default_for(&forked))
        .await
        .unwrap();
    assert_eq!(stored, copy.turns);
    let unknown = test
        .host
        .fork_session(&session, &TurnId::generate())
        .await
        .unwrap_err();
    assert!(unknown.to_string().contains("is not in chat"), "{unknown}");
}

async fn idle_sessions_are_released_never_destroyed() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("fake").await;
    let peer = test.peer(&session).await;
    let chat = ChatUri::default_for(&session);
    answered_turn(&test, &fake, &chat, "q", "a").await;
    // A subscriber keeps it loaded.
    let held = test
        .host
        .subscribe(&ResourceUri::Session(session.clone()))
        .await
        .unwrap();
    assert_eq!(test.host.evict_idle(Duration::ZERO).await, 0);
    drop(held);
    assert_eq!(test.host.evict_idle(Duration::ZERO).await, 1);
    let calls = fake.calls();
    assert!(calls.contains(&Call::Release(chat.clone())));
    assert!(calls.contains(&Call::Release(peer.clone())));
    assert!(!calls.iter().any(|call| matches!(call, Call::Dispose(_))));
    assert!(test.host.peek_chat(&chat).is_none());
    // It comes back on use.
    assert_eq!(
        test.host.chat(&chat).await.unwrap().turns[0].response_text(),
        "a"
    );
}

async fn resuming_replays_missed_envelopes_or_sends_a_snapshot() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("fake").await;
    let chat = ChatUri::default_for(&session);
    let resource = ResourceUri::Chat(chat.clone());
    let client = test.host.subscribe(&resource).await.unwrap();
    let mut mirror = Mirror::new(client.snapshot.clone());
    drop(client);
    answered_turn(&test, &fake, &chat, "q", "missed while away").await;
    match test
        .host
        .resume(&resource, mirror.snapshot.seq)
        .await
        .unwrap()
    {
        Resumed::Replay { missed, .. } => {
            assert!(!missed.is_empty());
            for envelope in &missed {
                mirror.apply(envelope).unwrap();
            }
        }
        Resumed::Snapshot(_) => panic!("the missed envelopes were still buffered"),
    }
    assert_eq!(
        mirror.snapshot.state,
        ResourceState::Chat(test.host.chat(&chat).await.unwrap())
    );
    // A seq from the future (another host) gets a fresh snapshot.
    assert!(matches!(
        test.host.resume(&resource, 10_000).await.unwrap(),
        Resumed::Snapshot(_)
    ));
}

async fn two_clients_converge_on_the_same_state() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("fake").await;
    let chat = ChatUri::default_for(&session);
    let session_resource = ResourceUri::Session(session.clone());
    let chat_resource = ResourceUri::Chat(chat.clone());
    let mut a = test.host.subscribe(&chat_resource).await.unwrap();
    answered_turn(&test, &fake, &chat, "first", "one").await;
    let mut b = test.host.subscribe(&chat_resource).await.unwrap();
    let mut catalog = test.host.subscribe(&session_resource).await.unwrap();
    let mut catalog_mirror = Mirror::new(catalog.snapshot.clone());
    let mut mirror_a = Mirror::new(a.snapshot.clone());
    let mut mirror_b = Mirror::new(b.snapshot.clone());
    answered_turn(&test, &fake, &chat, "second", "two").await;
    test.host
        .create_chat(&session, ChatSeed::Fresh)
        .await
        .unwrap();
    test.host.flush().await;
    while let Ok(envelope) = a.receiver.try_recv() {
        mirror_a.apply(&envelope).unwrap();
    }
    while let Ok(envelope) = b.receiver.try_recv() {
        mirror_b.apply(&envelope).unwrap();
    }
    while let Ok(envelope) = catalog.receiver.try_recv() {
        catalog_mirror.apply(&envelope).unwrap();
    }
    assert_eq!(mirror_a.snapshot, mirror_b.snapshot);
    assert_eq!(
        mirror_a.snapshot.state,
        ResourceState::Chat(test.host.chat(&chat).await.unwrap())
    );
    assert_eq!(
        catalog_mirror.snapshot.state,
        ResourceState::Session(test.host.session(&session).await.unwrap())
    );
}

hearth_test_support::on_every_backend!(
    sessions_chats_and_turns_survive_a_restart,
    external_sessions_show_the_harness_history,
    forking_a_session_copies_its_history_through_the_turn,
    idle_sessions_are_released_never_destroyed,
    resuming_replays_missed_envelopes_or_sends_a_snapshot,
    two_clients_converge_on_the_same_state,
);
