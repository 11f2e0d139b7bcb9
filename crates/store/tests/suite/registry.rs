use hearth_core::{
    ChatId, ChatOrigin, ChatUri, ConversationId, HarnessData, HarnessId, ProjectId, Provenance,
    TurnId,
};
use hearth_store::{Registration, ScopeFilter, SessionQuery, Store, StoreError};
use pretty_assertions::assert_eq;
use std::sync::Arc;

use super::fixtures::{at, chat_record, new_session, on_every_backend};

async fn lists_newest_first_with_cursor_pagination(store: Arc<dyn Store>) {
    let mut expected = Vec::new();
    for minute in 0..7 {
        // Two sessions share each timestamp: the cursor must still not skip or repeat.
        for _ in 0..2 {
            let session = new_session("replay", None, at(minute));
            store.create_session(&session).await.unwrap();
            expected.push(session.summary);
        }
    }
    let mut seen = Vec::new();
    let mut query = SessionQuery {
        limit: 3,
        ..SessionQuery::default()
    };
    loop {
        let page = store.list_sessions(&query).await.unwrap();
        assert!(page.sessions.len() <= 3);
        seen.extend(page.sessions);
        match page.next_cursor {
            Some(cursor) => query.cursor = Some(cursor),
            None => break,
        }
    }
    assert_eq!(seen.len(), expected.len());
    let times: Vec<_> = seen.iter().map(|s| s.updated_at).collect();
    let mut sorted = times.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(times, sorted);
    let mut seen_uris: Vec<_> = seen.iter().map(|s| s.uri.clone()).collect();
    seen_uris.sort();
    seen_uris.dedup();
    assert_eq!(seen_uris.len(), expected.len());
}

async fn filters_by_scope_and_provider(store: Arc<dyn Store>) {
    let global = new_session("replay", None, at(0));
    let project = new_session("replay", Some("garden"), at(1));
    let other = new_session("openai", Some("garden"), at(2));
    for session in [&global, &project, &other] {
        store.create_session(session).await.unwrap();
    }
    let list = |scope, provider: Option<&str>| {
        let query = SessionQuery {
            scope,
            provider: provider.map(|p| HarnessId::parse(p).unwrap()),
            ..SessionQuery::default()
        };
        let store = &store;
        async move {
            store
                .list_sessions(&query)
                .await
                .unwrap()
                .sessions
                .into_iter()
                .map(|s| s.uri)
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        list(ScopeFilter::Global, None).await,
        vec![global.summary.uri.clone()]
    );
    let garden = ScopeFilter::Project(ProjectId::parse("garden").unwrap());
    assert_eq!(
        list(garden.clone(), None).await,
        vec![other.summary.uri.clone(), project.summary.uri.clone()]
    );
    assert_eq!(
        list(garden, Some("replay")).await,
        vec![project.summary.uri.clone()]
    );
    assert_eq!(
        list(ScopeFilter::Any, Some("openai")).await,
        vec![other.summary.uri.clone()]
    );
}

async fn a_bad_cursor_is_a_clear_error(store: Arc<dyn Store>) {
    let query = SessionQuery {
        cursor: Some("garbage".into()),
        ..SessionQuery::default()
    };
    let error = store.list_sessions(&query).await.unwrap_err();
    assert!(error.to_string().contains("not a cursor"), "{error}");
}

async fn delete_leaves_a_tombstone_that_discovery_respects(store: Arc<dyn Store>) {
    let session = new_session("replay", None, at(0));
    store.create_session(&session).await.unwrap();
    assert!(store.delete_session(&session.summary.uri).await.unwrap());
    assert!(!store.delete_session(&session.summary.uri).await.unwrap());
    assert_eq!(store.session(&session.summary.uri).await.unwrap(), None);
    assert!(store.is_tombstoned(&session.summary.uri).await.unwrap());
    assert!(store.chats(&session.summary.uri).await.unwrap().is_empty());
    let mut discovered = session.clone();
    discovered.summary.provenance = Provenance::External;
    assert_eq!(
        store.register_discovered(&discovered).await.unwrap(),
        Registration::Tombstoned
    );
    assert_eq!(store.session(&session.summary.uri).await.unwrap(), None);
    assert!(
        store
            .list_sessions(&SessionQuery::default())
            .await
            .unwrap()
            .sessions
            .is_empty()
    );
    // An explicit create of the same URI clears the tombstone.
    store.create_session(&session).await.unwrap();
    assert!(store.session(&session.summary.uri).await.unwrap().is_some());
}

async fn discovery_is_additive_and_never_rewrites(store: Arc<dyn Store>) {
    let session = new_session("replay", None, at(0));
    store.create_session(&session).await.unwrap();
    let mut rediscovered = session.clone();
    rediscovered.summary.provenance = Provenance::External;
    rediscovered.summary.title = Some("renamed by discovery".into());
    assert_eq!(
        store.register_discovered(&rediscovered).await.unwrap(),
        Registration::AlreadyKnown
    );
    assert_eq!(
        store.session(&session.summary.uri).await.unwrap(),
        Some(session.summary.clone())
    );
    let mut fresh = new_session("replay", None, at(1));
    fresh.summary.provenance = Provenance::External;
    assert_eq!(
        store.register_discovered(&fresh).await.unwrap(),
        Registration::Added
    );
    assert_eq!(
        store
            .session(&fresh.summary.uri)
            .await
            .unwrap()
            .unwrap()
            .provenance,
        Provenance::External
    );
    assert!(matches!(
        store.create_session(&session).await,
        Err(StoreError::Conflict(_))
    ));
}

async fn provider_data_is_stored_byte_for_byte(store: Arc<dyn Store>) {
    let session = new_session("replay", None, at(0));
    store.create_session(&session).await.unwrap();
    let uri = &session.summary.uri;
    let blob = HarnessData::from_bytes(vec![0xff, 0x00, b'{', b' ', 0x80, b'}', b'\n']);
    let peer = ChatUri::peer(uri, ChatId::generate());
    let mut record = chat_record(
        peer.clone(),
        ChatOrigin::Fork {
            source_chat: ChatUri::default_for(uri),
            turn_id: TurnId::generate(),
        },
        at(1),
    );
    record.provider_data = Some(blob.clone());
    record.conversation = Some(ConversationId::parse("thread-9").unwrap());
    store.insert_chat(&record).await.unwrap();
    let chats = store.chats(uri).await.unwrap();
    assert_eq!(chats.len(), 2);
    assert!(chats[0].summary.uri.is_default());
    assert_eq!(chats[1], record);
    let replaced = HarnessData::from_bytes(b"  {\"b\":2,\"a\":1}  ".to_vec());
    store.set_provider_data(&peer, &replaced).await.unwrap();
    assert_eq!(
        store.chats(uri).await.unwrap()[1].provider_data,
        Some(replaced)
    );
}

async fn drafts_conversations_and_chat_removal(store: Arc<dyn Store>) {
    let session = new_session("replay", None, at(0));
    store.create_session(&session).await.unwrap();
    let default = ChatUri::default_for(&session.summary.uri);
    store
        .set_draft(&default, Some("half a thought"))
        .await
        .unwrap();
    assert_eq!(
        store.chats(&session.summary.uri).await.unwrap()[0]
            .draft
            .as_deref(),
        Some("half a thought")
    );
    store.set_draft(&default, None).await.unwrap();
    assert_eq!(
        store.chats(&session.summary.uri).await.unwrap()[0].draft,
        None
    );

    let provider = HarnessId::parse("replay").unwrap();
    let conversation = ConversationId::parse("conv-1").unwrap();
    assert!(
        !store
            .is_conversation(&provider, &conversation)
            .await
            .unwrap()
    );
    store
        .mark_conversation(&provider, &conversation, &default)
        .await
        .unwrap();
    assert!(
        store
            .is_conversation(&provider, &conversation)
            .await
            .unwrap()
    );

    let peer = ChatUri::peer(&session.summary.uri, ChatId::generate());
    store
        .insert_chat(&chat_record(peer.clone(), ChatOrigin::User, at(2)))
        .await
        .unwrap();
    store.delete_chat(&peer).await.unwrap();
    assert_eq!(store.chats(&session.summary.uri).await.unwrap().len(), 1);
    let missing = ChatUri::peer(&session.summary.uri, ChatId::generate());
    assert!(matches!(
        store.set_draft(&missing, Some("x")).await,
        Err(StoreError::NotFound { .. })
    ));
}

async fn filters_by_title_text_in_any_case_with_wildcards_taken_literally(store: Arc<dyn Store>) {
    let mut titled = Vec::new();
    for (minute, title) in [
        "Garden plan",
        "kitchen GARDEN notes",
        "100% done",
        "a_b",
        "aXb",
    ]
    .into_iter()
    .enumerate()
    {
        let mut session = new_session("replay", None, at(minute as i64));
        session.summary.title = Some(title.into());
        store.create_session(&session).await.unwrap();
        titled.push(session.summary.uri);
    }
    let mut untitled = new_session("replay", None, at(9));
    untitled.summary.title = None;
    store.create_session(&untitled).await.unwrap();
    let titles = |text: &str| {
        let query = SessionQuery {
            title_contains: Some(text.into()),
            limit: 1,
            ..SessionQuery::default()
        };
        let store = &store;
        async move {
            // Paged one by one: the filter holds across the cursor.
            let mut query = query;
            let mut found = Vec::new();
            loop {
                let page = store.list_sessions(&query).await.unwrap();
                found.extend(page.sessions.into_iter().map(|s| s.title.unwrap()));
                match page.next_cursor {
                    Some(cursor) => query.cursor = Some(cursor),
                    None => return found,
                }
            }
        }
    };
    assert_eq!(
        titles("garden").await,
        vec!["kitchen GARDEN notes", "Garden plan"]
    );
    assert_eq!(titles("%").await, vec!["100% done"]);
    assert_eq!(titles("a_b").await, vec!["a_b"]);
    assert!(titles("nothing like it").await.is_empty());
}

/// Chats and sessions are found by a prefix of their id: literally (`_` is a character
/// of ids), with case, newest first, never a session's default chat.
async fn sessions_and_chats_are_found_by_a_prefix_of_their_id(store: Arc<dyn Store>) {
    let session = new_session("replay", None, at(0));
    store.create_session(&session).await.unwrap();
    let uri = &session.summary.uri;
    for (minute, id) in [(1, "ab_x1"), (2, "abcx2"), (3, "Ab_x3"), (4, "defx4")] {
        let chat = ChatUri::peer(uri, ChatId::parse(id).unwrap());
        store
            .insert_chat(&chat_record(chat, ChatOrigin::User, at(minute)))
            .await
            .unwrap();
    }
    let deleted = new_session("replay", None, at(5));
    store.create_session(&deleted).await.unwrap();
    let gone = ChatUri::peer(&deleted.summary.uri, ChatId::parse("abgone").unwrap());
    store
        .insert_chat(&chat_record(gone, ChatOrigin::User, at(6)))
        .await
        .unwrap();
    store.delete_session(&deleted.summary.uri).await.unwrap();
    let cases: [(&str, u32, &[&str]); 6] = [
        ("ab", 10, &["abcx2", "ab_x1"]),
        ("ab", 1, &["abcx2"]),
        ("ab_", 10, &["ab_x1"]),
        ("Ab", 10, &["Ab_x3"]),
        // `default` starts with `def`, and names no one chat.
        ("def", 10, &["defx4"]),
        ("a%", 10, &[]),
    ];
    for (prefix, max, expected) in cases {
        let found: Vec<String> = store
            .chats_with_id_prefix(prefix, max)
            .await
            .unwrap()
            .into_iter()
            .map(|chat| chat.summary.uri.chat_id().to_string())
            .collect();
        assert_eq!(found, expected, "prefix {prefix}");
    }
    let id = uri.id().to_string();
    let found = store.sessions_with_id_prefix(&id[..8], 10).await.unwrap();
    assert_eq!(found.iter().map(|s| &s.uri).collect::<Vec<_>>(), vec![uri]);
    assert!(
        store
            .sessions_with_id_prefix(&deleted.summary.uri.id().to_string(), 10)
            .await
            .unwrap()
            .is_empty()
    );
}

on_every_backend!(
    sessions_and_chats_are_found_by_a_prefix_of_their_id,
    lists_newest_first_with_cursor_pagination,
    filters_by_scope_and_provider,
    a_bad_cursor_is_a_clear_error,
    delete_leaves_a_tombstone_that_discovery_respects,
    discovery_is_additive_and_never_rewrites,
    provider_data_is_stored_byte_for_byte,
    drafts_conversations_and_chat_removal,
    filters_by_title_text_in_any_case_with_wildcards_taken_literally,
);
