//! One test per invariant of the domain model; each fails if its invariant breaks.

use std::sync::Arc;

use hearth_core::{
    Action, ChatId, ChatOrigin, ChatSeed, ChatUri, CreatedChat, DiscoveredChat, Harness,
    HarnessData, HarnessEvent, HarnessId, ProjectId, Provenance, ResourceUri, Scope, Signal,
    StopReason, TurnId, UserMessage, now,
};
use hearth_host::NewSessionRequest;
use hearth_store::SessionQuery;
use hearth_test_support::{Call, FakeAgent, TestHost, WAIT, eventually, next_envelope};
use pretty_assertions::assert_eq;

fn agents(fake: &Arc<FakeAgent>) -> Vec<Arc<dyn Harness>> {
    vec![fake.clone() as Arc<dyn Harness>]
}

/// I1: provider data is stored and handed back byte for byte, never parsed.
async fn provider_data_is_returned_verbatim_on_restore() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("fake").await;
    let chat = ChatUri::default_for(&session);
    let Call::CreateChat { .. } = &fake.calls()[0] else {
        panic!("no create")
    };
    let blob = HarnessData::from_bytes(vec![0xff, 0xfe, b' ', b'{', 0x00, b'}', b'\t']);
    fake.progress(
        &chat,
        Signal::ProviderDataChanged {
            provider_data: blob.clone(),
        },
    )
    .await;
    test.host.flush().await;
    let fresh = FakeAgent::new("fake");
    let test = test.restart(agents(&fresh)).await;
    test.host.session(&session).await.unwrap();
    assert_eq!(
        fresh.calls(),
        vec![Call::Materialize {
            chat,
            provider_data: Some(blob)
        }]
    );
}

/// I2: a chat URI is never taken for a session URI (types; parsing refuses it too).
async fn session_and_chat_uris_are_distinct() {
    let session = hearth_core::SessionUri::parse("hearth-session:fake/s1").unwrap();
    let chat = ChatUri::default_for(&session);
    assert!(hearth_core::SessionUri::parse(&chat.to_string()).is_err());
    assert!(ChatUri::parse(&session.to_string()).is_err());
    assert_eq!(chat.session(), session);
}

/// I3: the default chat comes back only through `materialize_chat` (never recreated).
async fn default_chat_restores_through_materialize_only() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("fake").await;
    let fresh = FakeAgent::new("fake");
    let test = test.restart(agents(&fresh)).await;
    test.host
        .chat(&ChatUri::default_for(&session))
        .await
        .unwrap();
    let calls = fresh.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert!(
        matches!(&calls[0], Call::Materialize { chat, provider_data: Some(_) } if chat.is_default())
    );
}

/// I4: a harness-spawned chat enters the catalog through the one path before any of its
/// events are applied.
async fn spawned_chat_is_in_the_catalog_before_its_events() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("fake").await;
    let parent = ChatUri::default_for(&session);
    let mut catalog = test
        .host
        .subscribe(&ResourceUri::Session(session.clone()))
        .await
        .unwrap();
    let child = ChatUri::peer(&session, ChatId::generate());
    let turn_id = TurnId::generate();
    // Everything at once: the host must not apply the child's progress before the spawn.
    fake.emit(HarnessEvent::SpawnChat {
        chat: child.clone(),
        origin: ChatOrigin::Tool {
            parent_chat: parent.clone(),
            tool_call_id: "call-1".into(),
        },
        title: Some("researcher".into()),
        created: CreatedChat::default(),
    })
    .await;
    fake.progress(
        &child,
        Signal::TurnStarted {
            turn_id: turn_id.clone(),
            user: UserMessage::text("dig"),
        },
    )
    .await;
    fake.progress(
        &child,
        Signal::TextDelta {
            turn_id: turn_id.clone(),
            text: "found ".into(),
        },
    )
    .await;
    fake.progress(
        &child,
        Signal::TextDelta {
            turn_id: turn_id.clone(),
            text: "it".into(),
        },
    )
    .await;
    fake.progress(
        &child,
        Signal::TurnCompleted {
            turn_id,
            stop_reason: StopReason::EndTurn,
            usage: None,
        },
    )
    .await;
    let added = next_envelope(&mut catalog.receiver).await;
    assert!(matches!(&added.action, Action::ChatAdded { chat } if chat.uri == child));
    let host = test.host.clone();
    let probe = child.clone();
    eventually("the child's turn", move || {
        host.peek_chat(&probe)
            .is_some_and(|chat| chat.turns.first().is_some_and(|t| !t.is_running()))
    })
    .await;
    let state = test.host.chat(&child).await.unwrap();
    assert_eq!(state.turns[0].response_text(), "found it");
    assert_eq!(
        state.summary.origin,
        ChatOrigin::Tool {
            parent_chat: parent,
            tool_call_id: "call-1".into()
        }
    );
    test.host.flush().await;
    let stored = test.store.chats(&session).await.unwrap();
    assert!(stored.iter().any(|record| record.summary.uri == child));
    assert_eq!(
        test.store.turns(&child).await.unwrap()[0].response_text(),
        "found it"
    );
}

/// I5: peers restore lazily from the persisted catalog: listed at once, resolved on first
/// subscribe, concurrent resolves coalesced, failures retryable.
async fn peers_restore_lazily_coalesced_and_retryable() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("fake").await;
    let peer = test.peer(&session).await;
    let fresh = FakeAgent::new("fake");
    let test = test.restart(agents(&fresh)).await;
    let state = test.host.session(&session).await.unwrap();
    assert_eq!(
        state
            .chats
            .iter()
            .map(|c| c.summary.uri.clone())
            .collect::<Vec<_>>(),
        vec![ChatUri::default_for(&session), peer.clone()]
    );
    assert!(test.host.peek_chat(&peer).is_none());
    let materialized_peer = |calls: Vec<Call>| {
        calls
            .iter()
            .filter(|call| matches!(call, Call::Materialize { chat, .. } if *chat == peer))
            .count()
    };
    assert_eq!(
        materialized_peer(fresh.calls()),
        0,
        "peer materialized before first use"
    );

    fresh.fail_materialize(1);
    let resource = ResourceUri::Chat(peer.clone());
    assert!(test.host.subscribe(&resource).await.is_err());
    assert!(test.host.peek_chat(&peer).is_none());

    fresh.delay_materialize(std::time::Duration::from_millis(100));
    let resolves = (0..5).map(|_| {
        let host = test.host.clone();
        let peer = peer.clone();
        tokio::spawn(async move { host.resolve_chat(&peer).await })
    });
    for result in futures::future::join_all(resolves).await {
        result.unwrap().unwrap();
    }
    // One failed attempt, then exactly one more for five concurrent callers.
    assert_eq!(materialized_peer(fresh.calls()), 2);
    assert!(test.host.peek_chat(&peer).is_some());
}

/// A restarted session with one peer, and a resolve of that peer in flight: its
/// `materialize_chat` is held until the test releases it. (host, fresh harness, session,
/// peer, resolve).
async fn restored_with_a_held_peer_resolve() -> (
    TestHost,
    Arc<FakeAgent>,
    hearth_core::SessionUri,
    ChatUri,
    tokio::task::JoinHandle<hearth_host::HostResult<()>>,
) {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("fake").await;
    let peer = test.peer(&session).await;
    let fresh = FakeAgent::new("fake");
    let test = test.restart(agents(&fresh)).await;
    test.host.session(&session).await.unwrap();
    fresh.hold_materialize();
    let host = test.host.clone();
    let pending_peer = peer.clone();
    let resolve = tokio::spawn(async move { host.resolve_chat(&pending_peer).await });
    fresh.wait_for_materialize(&peer).await;
    (test, fresh, session, peer, resolve)
}

/// I5: a resolve that finishes after its session was deleted publishes nothing.
async fn stale_resolves_are_dropped_after_delete() {
    let (test, fresh, session, peer, resolve) = restored_with_a_held_peer_resolve().await;
    tokio::time::timeout(WAIT, test.host.delete_session(&session))
        .await
        .expect("the delete waited for the resolve it overtakes")
        .unwrap();
    fresh.release_materialize();
    assert!(resolve.await.unwrap().is_err());
    assert!(test.host.peek_chat(&peer).is_none());
    assert!(test.host.session(&session).await.is_err());
    // The harness attached the peer after the delete; the host let it go again.
    let calls = fresh.calls();
    let attached = calls
        .iter()
        .position(|call| matches!(call, Call::Materialize { chat, .. } if chat == &peer))
        .expect("the peer was materialized");
    assert!(
        calls[attached..].contains(&Call::Release(peer.clone())),
        "{calls:?}"
    );
}

/// I5: eviction leaves a chat that is being resolved alone, and takes it once resolved.
async fn eviction_waits_for_a_resolve_in_flight() {
    let (test, fresh, _session, peer, resolve) = restored_with_a_held_peer_resolve().await;
    assert_eq!(test.host.evict_idle(std::time::Duration::ZERO).await, 0);
    fresh.release_materialize();
    resolve.await.unwrap().unwrap();
    assert!(test.host.peek_chat(&peer).is_some(), "resolved and kept");
    assert_eq!(test.host.evict_idle(std::time::Duration::ZERO).await, 1);
    assert!(fresh.calls().contains(&Call::Release(peer.clone())));
    assert!(test.host.peek_chat(&peer).is_none());
}

/// I6: a restored session goes to the harness named by its URI.
async fn restored_sessions_route_by_uri_provider() {
    let alpha = FakeAgent::new("alpha");
    let beta = FakeAgent::new("beta");
    let test = TestHost::start(vec![alpha.clone() as Arc<dyn Harness>, beta.clone()]).await;
    let session = test.session("beta").await;
    let (alpha, beta) = (FakeAgent::new("alpha"), FakeAgent::new("beta"));
    let test = test
        .restart(vec![alpha.clone() as Arc<dyn Harness>, beta.clone()])
        .await;
    let chat = ChatUri::default_for(&session);
    let host = test.host.clone();
    let send_chat = chat.clone();
    let send = tokio::spawn(async move { host.send(&send_chat, UserMessage::text("hi")).await });
    beta.wait_for_send(&chat).await;
    send.await.unwrap().unwrap();
    assert!(alpha.calls().is_empty());
    assert!(
        beta.calls()
            .iter()
            .any(|call| matches!(call, Call::Materialize { .. }))
    );
}

/// I7: a conversation that backs a chat never shows up as a session of its own.
async fn chat_conversations_never_become_sessions() {
    let fake = FakeAgent::new("fake");
    fake.give_conversations();
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("fake").await;
    test.host
        .create_chat(&session, ChatSeed::Fresh)
        .await
        .unwrap();
    let found = |id: &str| DiscoveredChat {
        conversation: hearth_core::ConversationId::parse(id).unwrap(),
        title: Some(format!("conversation {id}")),
        started_at: now(),
        updated_at: now(),
        provider_data: HarnessData::from_bytes(id.as_bytes().to_vec()),
        working_directory: None,
    };
    let mut root = test.host.subscribe(&ResourceUri::Root).await.unwrap();
    fake.emit(HarnessEvent::DiscoverChats {
        provider: HarnessId::parse("fake").unwrap(),
        chats: vec![found("conv-1"), found("conv-2"), found("conv-99")],
        peers: Vec::new(),
    })
    .await;
    let added = next_envelope(&mut root.receiver).await;
    let Action::SessionAdded { summary } = added.action else {
        panic!("{added:?}")
    };
    assert_eq!(summary.uri.id().as_str(), "conv-99");
    assert_eq!(summary.provenance, Provenance::External);
    test.host.flush().await;
    let listed = test
        .host
        .list_sessions(&SessionQuery::default())
        .await
        .unwrap()
        .sessions;
    let ids: Vec<_> = listed
        .iter()
        .map(|s| s.uri.id().as_str().to_owned())
        .collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert!(ids.contains(&"conv-99".to_owned()));
    assert!(ids.contains(&session.id().as_str().to_owned()));
}

/// I7, under a race: a harness that lists a new conversation in its catalog while
/// `create_chat` is still running must not see it registered as an external session.
async fn a_conversation_discovered_while_its_chat_is_created_never_becomes_a_session() {
    let fake = FakeAgent::new("fake");
    fake.give_conversations();
    fake.discover_on_create(std::time::Duration::from_millis(100));
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("fake").await;
    let mut root = test.host.subscribe(&ResourceUri::Root).await.unwrap();
    let peer = test.peer(&session).await;
    // Anything deferred is registered (or refused) once the creations are done. A
    // conversation nobody created, discovered afterwards, is the marker: it is
    // registered, and nothing before it.
    fake.emit(HarnessEvent::DiscoverChats {
        provider: HarnessId::parse("fake").unwrap(),
        chats: vec![DiscoveredChat {
            conversation: hearth_core::ConversationId::parse("conv-elsewhere").unwrap(),
            title: None,
            started_at: now(),
            updated_at: now(),
            provider_data: HarnessData::from_bytes(b"x".to_vec()),
            working_directory: None,
        }],
        peers: Vec::new(),
    })
    .await;
    let added = loop {
        let envelope = next_envelope(&mut root.receiver).await;
        if let Action::SessionAdded { summary } = envelope.action {
            break summary;
        }
    };
    assert_eq!(
        added.uri.id().as_str(),
        "conv-elsewhere",
        "the conversation discovered while its chat was created became a session"
    );
    test.host.flush().await;
    let listed = test
        .host
        .list_sessions(&SessionQuery::default())
        .await
        .unwrap()
        .sessions;
    let mut ids: Vec<&str> = listed
        .iter()
        .map(|summary| summary.uri.id().as_str())
        .collect();
    ids.sort_unstable();
    let mut expected = vec![session.id().as_str(), "conv-elsewhere"];
    expected.sort_unstable();
    assert_eq!(ids, expected, "only the session and the marker: {listed:?}");
    assert!(test.host.chat(&peer).await.is_ok());
}

/// I8: harnesses get host facts (origin, scope, working directories) in the context.
async fn harnesses_receive_host_facts_in_the_context() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let project = ProjectId::parse("garden").unwrap();
    let session = test
        .host
        .create_session(NewSessionRequest {
            provider: HarnessId::parse("fake").unwrap(),
            scope: Scope::Project {
                project_id: project.clone(),
            },
            title: None,
            model: Some("m1".into()),
            working_directories: Vec::new(),
            owner: None,
        })
        .await
        .unwrap();
    let default = ChatUri::default_for(&session);
    let host = test.host.clone();
    let send_chat = default.clone();
    tokio::spawn(async move { host.send(&send_chat, UserMessage::text("one")).await });
    let turn_id = fake.wait_for_send(&default).await;
    fake.finish_ok(&default);
    let mut chat = test
        .host
        .subscribe(&ResourceUri::Chat(default.clone()))
        .await
        .unwrap();
    if test.host.peek_chat(&default).unwrap().turns[0].is_running() {
        hearth_test_support::until_turn_completes(&mut chat.receiver, &turn_id).await;
    }
    let side = test
        .host
        .create_chat(
            &session,
            ChatSeed::SideChat {
                source_chat: default.clone(),
                turn_id: turn_id.clone(),
            },
        )
        .await
        .unwrap();
    let contexts: Vec<_> = fake
        .calls()
        .into_iter()
        .filter_map(|call| match call {
            Call::CreateChat { context, .. } => Some(context),
            _ => None,
        })
        .collect();
    assert_eq!(contexts.len(), 2);
    assert_eq!(contexts[0].origin, ChatOrigin::User);
    assert_eq!(contexts[1].chat, side);
    assert_eq!(
        contexts[1].origin,
        ChatOrigin::SideChat {
            source_chat: default,
            turn_id
        }
    );
    for context in &contexts {
        assert_eq!(
            context.scope,
            Scope::Project {
                project_id: project.clone()
            }
        );
        assert_eq!(context.session, session);
        assert_eq!(context.model.as_deref(), Some("m1"));
        assert_eq!(
            context.working_directories,
            hearth_test_support::test_config().working_directories
        );
    }
}

hearth_test_support::on_every_backend!(
    provider_data_is_returned_verbatim_on_restore,
    session_and_chat_uris_are_distinct,
    default_chat_restores_through_materialize_only,
    spawned_chat_is_in_the_catalog_before_its_events,
    peers_restore_lazily_coalesced_and_retryable,
    stale_resolves_are_dropped_after_delete,
    eviction_waits_for_a_resolve_in_flight,
    restored_sessions_route_by_uri_provider,
    chat_conversations_never_become_sessions,
    a_conversation_discovered_while_its_chat_is_created_never_becomes_a_session,
    harnesses_receive_host_facts_in_the_context,
);
