//! Catalog operations: delete order and tombstones, capability gating, listing, drafts,
//! models and titles.

use std::sync::Arc;

use hearth_core::{
    Capabilities, ChatSeed, ChatUri, DiscoveredChat, Harness, HarnessData, HarnessEvent, HarnessId,
    ProjectId, Scope, TurnId, now,
};
use hearth_host::{HostError, NewSessionRequest};
use hearth_store::{ScopeFilter, SessionQuery};
use hearth_test_support::{Call, FakeAgent, TestHost};
use pretty_assertions::assert_eq;

fn agents(fake: &Arc<FakeAgent>) -> Vec<Arc<dyn Harness>> {
    vec![fake.clone() as Arc<dyn Harness>]
}

async fn deleting_disposes_peers_first_and_the_default_last() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("fake").await;
    let first = test.peer(&session).await;
    let second = test.peer(&session).await;
    test.host.delete_session(&session).await.unwrap();
    let disposed: Vec<ChatUri> = fake
        .calls()
        .into_iter()
        .filter_map(|call| match call {
            Call::Dispose(chat) => Some(chat),
            _ => None,
        })
        .collect();
    assert_eq!(
        disposed,
        vec![second, first, ChatUri::default_for(&session)]
    );
    assert!(test.store.is_tombstoned(&session).await.unwrap());
}

async fn a_deleted_session_is_never_rediscovered() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let provider = HarnessId::parse("fake").unwrap();
    let discovered = DiscoveredChat {
        conversation: hearth_core::ConversationId::parse("native-1").unwrap(),
        title: None,
        started_at: now(),
        updated_at: now(),
        provider_data: HarnessData::default(),
        working_directory: None,
    };
    fake.emit(HarnessEvent::DiscoverChats {
        provider: provider.clone(),
        chats: vec![discovered.clone()],
        peers: Vec::new(),
    })
    .await;
    test.host.flush().await;
    let listed = test
        .host
        .list_sessions(&SessionQuery::default())
        .await
        .unwrap()
        .sessions;
    assert_eq!(listed.len(), 1);
    test.host.delete_session(&listed[0].uri).await.unwrap();
    fake.emit(HarnessEvent::DiscoverChats {
        provider,
        chats: vec![discovered],
        peers: Vec::new(),
    })
    .await;
    test.host.flush().await;
    assert!(
        test.host
            .list_sessions(&SessionQuery::default())
            .await
            .unwrap()
            .sessions
            .is_empty()
    );
}

async fn a_conversation_two_harnesses_read_from_one_catalog_is_listed_once() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let first = HarnessId::parse("fake").unwrap();
    let twin = HarnessId::parse("fake-twin").unwrap();
    let discovered = |id: &str| DiscoveredChat {
        conversation: hearth_core::ConversationId::parse(id).unwrap(),
        title: Some(id.to_owned()),
        started_at: now(),
        updated_at: now(),
        provider_data: HarnessData::default(),
        working_directory: None,
    };
    let listed = || async {
        let mut listed: Vec<String> = test
            .host
            .list_sessions(&SessionQuery::default())
            .await
            .unwrap()
            .sessions
            .iter()
            .map(|session| session.uri.to_string())
            .collect();
        listed.sort();
        listed
    };
    fake.emit(HarnessEvent::DiscoverChats {
        provider: first.clone(),
        chats: vec![discovered("native-1")],
        peers: vec![twin.clone()],
    })
    .await;
    // The twin reads the same catalog: what the first has is not listed again, what
    // only the twin found is.
    fake.emit(HarnessEvent::DiscoverChats {
        provider: twin.clone(),
        chats: vec![discovered("native-1"), discovered("native-2")],
        peers: vec![first.clone()],
    })
    .await;
    test.host.flush().await;
    assert_eq!(
        listed().await,
        vec![
            "hearth-session:fake-twin/native-2".to_owned(),
            "hearth-session:fake/native-1".to_owned(),
        ]
    );
    // Without the peers named, the same conversation would be a second session.
    fake.emit(HarnessEvent::DiscoverChats {
        provider: twin,
        chats: vec![discovered("native-1")],
        peers: Vec::new(),
    })
    .await;
    test.host.flush().await;
    assert_eq!(listed().await.len(), 3);
}

async fn a_session_whose_harness_is_gone_can_still_be_deleted() {
    let gone = FakeAgent::new("gone");
    let test = TestHost::start(agents(&gone)).await;
    let orphan = test.session("gone").await;
    let broken = FakeAgent::new("broken");
    let stays = FakeAgent::new("stays");
    let test = test
        .restart(vec![broken.clone() as Arc<dyn Harness>, stays.clone()])
        .await;
    let unattachable = test.session("broken").await;
    let kept = test.session("stays").await;
    let test = test
        .restart(vec![broken.clone() as Arc<dyn Harness>, stays.clone()])
        .await;
    broken.fail_materialize(usize::MAX);
    assert!(
        test.host.session(&orphan).await.is_err(),
        "no harness for it"
    );
    assert!(
        test.host.session(&unattachable).await.is_err(),
        "cannot attach"
    );
    test.host.delete_session(&orphan).await.unwrap();
    test.host.delete_session(&unattachable).await.unwrap();
    let listed: Vec<_> = test
        .host
        .list_sessions(&SessionQuery::default())
        .await
        .unwrap()
        .sessions
        .into_iter()
        .map(|summary| summary.uri)
        .collect();
    assert_eq!(listed, [kept]);
    let again = test.host.delete_session(&orphan).await.unwrap_err();
    assert!(again.to_string().contains("was deleted"), "{again}");
}

async fn capabilities_gate_peer_chats_forks_and_side_chats() {
    let fake = FakeAgent::with_capabilities("single", Capabilities::default());
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("single").await;
    let error = test
        .host
        .create_chat(&session, ChatSeed::Fresh)
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            HostError::Unsupported {
                what: "peer chats",
                ..
            }
        ),
        "{error}"
    );
    let turn = TurnId::generate();
    let seed = ChatSeed::Fork {
        source_chat: ChatUri::default_for(&session),
        turn_id: turn,
    };
    assert!(matches!(
        test.host.create_chat(&session, seed).await,
        Err(HostError::Unsupported { .. })
    ));
    assert!(fake.calls().iter().all(|call| !matches!(
        call,
        Call::CreateChat {
            seed: ChatSeed::Fork { .. },
            ..
        }
    )));
}

async fn forks_need_a_turn_of_the_same_session() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("fake").await;
    let other = test.session("fake").await;
    let seed = ChatSeed::Fork {
        source_chat: ChatUri::default_for(&other),
        turn_id: TurnId::generate(),
    };
    let error = test.host.create_chat(&session, seed).await.unwrap_err();
    assert!(error.to_string().contains("is not in session"), "{error}");
    let seed = ChatSeed::Fork {
        source_chat: ChatUri::default_for(&session),
        turn_id: TurnId::generate(),
    };
    let error = test.host.create_chat(&session, seed).await.unwrap_err();
    assert!(error.to_string().contains("is not in chat"), "{error}");
}

async fn listing_filters_by_scope_and_provider() {
    let alpha = FakeAgent::new("alpha");
    let beta = FakeAgent::new("beta");
    let test = TestHost::start(vec![alpha as Arc<dyn Harness>, beta]).await;
    let global = test.session("alpha").await;
    let in_project = test
        .host
        .create_session(NewSessionRequest {
            provider: HarnessId::parse("beta").unwrap(),
            scope: Scope::Project {
                project_id: ProjectId::parse("p1").unwrap(),
            },
            title: Some("scoped".into()),
            model: None,
            working_directories: Vec::new(),
            owner: None,
        })
        .await
        .unwrap();
    let list = |query: SessionQuery| {
        let host = test.host.clone();
        async move {
            host.list_sessions(&query)
                .await
                .unwrap()
                .sessions
                .into_iter()
                .map(|s| s.uri)
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        list(SessionQuery::default()).await,
        vec![in_project.clone(), global.clone()]
    );
    assert_eq!(
        list(SessionQuery {
            scope: ScopeFilter::Global,
            ..SessionQuery::default()
        })
        .await,
        vec![global.clone()]
    );
    let project = ScopeFilter::Project(ProjectId::parse("p1").unwrap());
    assert_eq!(
        list(SessionQuery {
            scope: project,
            ..SessionQuery::default()
        })
        .await,
        vec![in_project]
    );
    let alpha_only = SessionQuery {
        provider: Some(HarnessId::parse("alpha").unwrap()),
        ..SessionQuery::default()
    };
    assert_eq!(list(alpha_only).await, vec![global]);
}

async fn unknown_things_give_clear_errors() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let missing = hearth_core::SessionUri::parse("hearth-session:fake/nope").unwrap();
    let error = test.host.session(&missing).await.unwrap_err();
    assert!(error.to_string().contains("does not exist"), "{error}");
    let error = test
        .host
        .create_session(NewSessionRequest {
            provider: HarnessId::parse("ghost").unwrap(),
            scope: Scope::Global,
            title: None,
            model: None,
            working_directories: Vec::new(),
            owner: None,
        })
        .await
        .unwrap_err();
    assert!(error.to_string().contains("available: fake"), "{error}");
    let session = test.session("fake").await;
    let error = test
        .host
        .dispose_chat(&ChatUri::default_for(&session))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("delete the session instead"),
        "{error}"
    );
}

async fn drafts_and_models_are_kept() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("fake").await;
    let chat = ChatUri::default_for(&session);
    test.host
        .set_draft(&chat, Some("unsent".into()))
        .await
        .unwrap();
    assert_eq!(
        test.store.chats(&session).await.unwrap()[0]
            .draft
            .as_deref(),
        Some("unsent")
    );
    test.host.set_draft(&chat, None).await.unwrap();
    assert_eq!(test.host.chat(&chat).await.unwrap().draft, None);
    test.host
        .set_model(&chat, "big-model".into())
        .await
        .unwrap();
    assert!(
        fake.calls()
            .contains(&Call::SetModel(chat.clone(), "big-model".into()))
    );
    assert_eq!(
        test.host
            .chat(&chat)
            .await
            .unwrap()
            .summary
            .model
            .as_deref(),
        Some("big-model")
    );
    test.host.flush().await;
    assert_eq!(
        test.store.chats(&session).await.unwrap()[0]
            .summary
            .model
            .as_deref(),
        Some("big-model")
    );
}

async fn queued_messages_wait_for_the_turn_and_go_one_per_turn_in_order() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("fake").await;
    let chat = ChatUri::default_for(&session);
    let text = |text: &str| hearth_core::UserMessage::text(text.to_owned());

    // Idle: the message is sent at once.
    let first = test.host.queue_message(&chat, text("one")).await.unwrap();
    let running = fake.wait_for_send(&chat).await;
    assert_eq!(first.as_ref(), Some(&running));
    // Busy: the next two wait, kept with the chat.
    assert_eq!(
        test.host.queue_message(&chat, text("two")).await.unwrap(),
        None
    );
    assert_eq!(
        test.host.queue_message(&chat, text("three")).await.unwrap(),
        None
    );
    assert_eq!(
        test.host.chat(&chat).await.unwrap().queued,
        [text("two"), text("three")]
    );
    assert_eq!(
        test.store.chats(&session).await.unwrap()[0].queued,
        [text("two"), text("three")]
    );

    // The turn ends by itself: the first queued message goes.
    fake.finish_ok(&chat);
    let second = fake.wait_for_send(&chat).await;
    assert_ne!(second, running);
    let state = test.host.chat(&chat).await.unwrap();
    assert_eq!(state.queued, [text("three")]);
    assert_eq!(state.turns.last().unwrap().user.text, "two");

    // Stopped: the queue waits for the user, and can be changed.
    test.host.abort(&chat).await.unwrap();
    // The host decides whether the queue goes when it ends the turn: once the stopped
    // turn shows as ended, that decision is made.
    let deadline = tokio::time::Instant::now() + hearth_test_support::WAIT;
    let state = loop {
        let state = test.host.chat(&chat).await.unwrap();
        if state
            .turns
            .last()
            .is_some_and(|turn| turn.stop_reason.is_some())
        {
            break state;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the stopped turn never ended"
        );
        tokio::task::yield_now().await;
    };
    assert_eq!(state.queued, [text("three")]);
    assert_eq!(state.turns.len(), 2, "nothing was sent after the stop");
    test.host
        .set_queue(&chat, vec![text("three, reworded")])
        .await
        .unwrap();
    test.host.flush().await;
    assert_eq!(
        test.store.chats(&session).await.unwrap()[0].queued,
        [text("three, reworded")]
    );
    // A message queued into an idle chat with a waiting queue sends the queue's first.
    assert_eq!(
        test.host.queue_message(&chat, text("four")).await.unwrap(),
        None
    );
    fake.wait_for_send(&chat).await;
    let state = test.host.chat(&chat).await.unwrap();
    assert_eq!(state.turns.last().unwrap().user.text, "three, reworded");
    assert_eq!(state.queued, [text("four")]);
}

/// A session created with a title (as the calendar's Ask bar creates "Calendar") gives
/// it to its default chat: one title, from one place.
async fn a_session_created_with_a_title_gives_it_to_its_default_chat() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let session = test
        .host
        .create_session(NewSessionRequest {
            provider: HarnessId::parse("fake").unwrap(),
            scope: Scope::Global,
            title: Some("Calendar".into()),
            model: None,
            working_directories: Vec::new(),
            owner: None,
        })
        .await
        .unwrap();
    let state = test.host.session(&session).await.unwrap();
    let titles: Vec<Option<&str>> = std::iter::once(state.summary.title.as_deref())
        .chain(state.chats.iter().map(|chat| chat.summary.title.as_deref()))
        .collect();
    assert_eq!(titles, [Some("Calendar"), Some("Calendar")]);
}

hearth_test_support::on_every_backend!(
    deleting_disposes_peers_first_and_the_default_last,
    a_deleted_session_is_never_rediscovered,
    a_conversation_two_harnesses_read_from_one_catalog_is_listed_once,
    a_session_whose_harness_is_gone_can_still_be_deleted,
    capabilities_gate_peer_chats_forks_and_side_chats,
    forks_need_a_turn_of_the_same_session,
    listing_filters_by_scope_and_provider,
    unknown_things_give_clear_errors,
    drafts_and_models_are_kept,
    queued_messages_wait_for_the_turn_and_go_one_per_turn_in_order,
    a_session_created_with_a_title_gives_it_to_its_default_chat,
);
