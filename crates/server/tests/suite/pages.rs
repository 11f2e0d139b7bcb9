//! Pages of long chats through the real router: `chat/turns` reads a page of a chat that
//! is not loaded from the store without restoring it, slices a loaded one in memory, and
//! both give the same pages; bad pages are refused with errors that say why.

use std::time::Duration;

use hearth_core::{ChatUri, StopReason, Turn, TurnId, UserMessage, now};
use hearth_protocol::{
    self as wire, ChatCreate, ChatCreateParams, ChatParams, ChatResolve, ChatSeed, ChatTurns,
    ChatTurnsParams, ErrorKind, Subscribe, SubscribeParams,
};
use hearth_server::{Client, ServerError};
use pretty_assertions::assert_eq;

use super::support::{TestServer, create_session, send, until_completed};

fn rpc_error(error: ServerError) -> wire::RpcError {
    match error {
        ServerError::Rpc(error) => error,
        other => panic!("expected an error response, got {other}"),
    }
}

/// A peer chat with `count` finished turns (`turn-0` oldest) written to the store while
/// its session is not loaded: (session, chat).
async fn stored_chat(server: &TestServer, client: &Client, count: usize) -> (String, ChatUri) {
    let session = create_session(client).await.summary.uri;
    let chat = client
        .call::<ChatCreate>(&ChatCreateParams {
            session: session.clone(),
            seed: ChatSeed::Fresh,
        })
        .await
        .unwrap()
        .chat
        .uri;
    let chat = ChatUri::parse(&chat).unwrap();
    assert_eq!(server.host.host.evict_idle(Duration::ZERO).await, 1);
    for index in 0..count {
        let mut turn = Turn::started(
            TurnId::parse(&format!("turn-{index}")).unwrap(),
            UserMessage::text(format!("question {index}")),
            now(),
        );
        turn.push_text(&format!("answer {index}"));
        turn.end(StopReason::EndTurn);
        server.host.store.insert_turn(&chat, &turn).await.unwrap();
    }
    (session, chat)
}

async fn page(
    client: &Client,
    chat: &ChatUri,
    before: Option<&str>,
    limit: u32,
) -> (Vec<String>, bool) {
    let page = client
        .call::<ChatTurns>(&ChatTurnsParams {
            chat: chat.to_string(),
            before: before.map(str::to_owned),
            limit: Some(limit),
        })
        .await
        .unwrap();
    let texts = page
        .turns
        .iter()
        .map(|turn| format!("{}={}", turn.id, turn.user.text))
        .collect();
    (texts, page.has_more)
}

/// Every page of the chat, newest first, three at a time.
async fn all_pages(client: &Client, chat: &ChatUri) -> Vec<(Vec<String>, bool)> {
    let mut pages = Vec::new();
    let mut before: Option<String> = None;
    loop {
        let (turns, has_more) = page(client, chat, before.as_deref(), 3).await;
        before = turns
            .first()
            .and_then(|first| first.split('=').next().map(str::to_owned));
        pages.push((turns, has_more));
        if !has_more {
            return pages;
        }
    }
}

fn expected_pages() -> Vec<(Vec<String>, bool)> {
    let turns = |range: std::ops::Range<usize>| {
        range
            .map(|index| format!("turn-{index}=question {index}"))
            .collect::<Vec<_>>()
    };
    vec![
        (turns(4..7), true),
        (turns(1..4), true),
        (turns(0..1), false),
    ]
}

#[tokio::test]
async fn pages_of_a_stored_chat_are_read_without_restoring_it() {
    let server = TestServer::start().await;
    let (client, _notifications) = server.client().await;
    let (_session, chat) = stored_chat(&server, &client, 7).await;

    assert_eq!(all_pages(&client, &chat).await, expected_pages());
    assert_eq!(
        server.host.host.peek_chat(&chat),
        None,
        "reading pages restored the chat"
    );
    let latest = client
        .call::<ChatTurns>(&ChatTurnsParams {
            chat: chat.to_string(),
            before: None,
            limit: None,
        })
        .await
        .unwrap();
    assert_eq!(latest.turns.len(), 7, "the default page holds up to 50");
    assert!(!latest.has_more);
    assert_eq!(
        latest.turns[6].parts,
        [wire::ResponsePart::Text {
            text: "answer 6".into()
        }]
    );

    // Loaded, the chat is sliced in memory: the same pages.
    let resolved = client
        .call::<ChatResolve>(&ChatParams {
            chat: chat.to_string(),
        })
        .await
        .unwrap();
    assert_eq!(resolved.chat.turns.len(), 7);
    assert!(server.host.host.peek_chat(&chat).is_some());
    assert_eq!(all_pages(&client, &chat).await, expected_pages());
}

#[tokio::test]
async fn bad_pages_are_refused_whether_the_chat_is_loaded_or_not() {
    let server = TestServer::start().await;
    let (client, _notifications) = server.client().await;
    let (session, chat) = stored_chat(&server, &client, 2).await;
    let ask = |chat: String, before: Option<&str>, limit: Option<u32>| ChatTurnsParams {
        chat,
        before: before.map(str::to_owned),
        limit,
    };

    for loaded in [false, true] {
        if loaded {
            client
                .call::<ChatResolve>(&ChatParams {
                    chat: chat.to_string(),
                })
                .await
                .unwrap();
        }
        let unknown_turn = rpc_error(
            client
                .call::<ChatTurns>(&ask(chat.to_string(), Some("turn-99"), None))
                .await
                .unwrap_err(),
        );
        assert_eq!(
            unknown_turn.kind(),
            ErrorKind::InvalidParams,
            "loaded: {loaded}"
        );
        assert!(
            unknown_turn
                .message
                .contains("turn `turn-99` is not in chat"),
            "loaded: {loaded}: {unknown_turn:?}"
        );
        for limit in [0, 201] {
            let error = rpc_error(
                client
                    .call::<ChatTurns>(&ask(chat.to_string(), None, Some(limit)))
                    .await
                    .unwrap_err(),
            );
            assert_eq!(error.kind(), ErrorKind::InvalidParams);
            assert!(error.message.contains("between 1 and 200"), "{error:?}");
        }
    }
    let unknown_chat = rpc_error(
        client
            .call::<ChatTurns>(&ask(
                format!("{session}/no-such-chat").replace("hearth-session:", "hearth-chat:"),
                None,
                None,
            ))
            .await
            .unwrap_err(),
    );
    assert_eq!(unknown_chat.kind(), ErrorKind::NotFound, "{unknown_chat:?}");
    let malformed = rpc_error(
        client
            .call::<ChatTurns>(&ask("hearth-chat:".into(), None, None))
            .await
            .unwrap_err(),
    );
    assert_eq!(malformed.kind(), ErrorKind::InvalidParams);
    assert!(malformed.message.contains("chat"), "{malformed:?}");
}

async fn subscribe_latest(client: &Client, chat: &ChatUri, limit: u32) -> wire::Snapshot {
    let response = client
        .call::<Subscribe>(&SubscribeParams {
            resource: chat.to_string(),
            last_seq: None,
            turn_limit: Some(limit),
        })
        .await
        .unwrap();
    match response {
        wire::SubscribeResponse::Snapshot { snapshot } => snapshot,
        other => panic!("expected a snapshot, got {other:?}"),
    }
}

fn chat_state(snapshot: &wire::Snapshot) -> &wire::ChatState {
    match &snapshot.state {
        wire::ResourceState::Chat(chat) => chat,
        other => panic!("expected a chat, got {other:?}"),
    }
}

fn turn_ids(chat: &wire::ChatState) -> Vec<&str> {
    chat.turns.iter().map(|turn| turn.id.as_str()).collect()
}

#[tokio::test]
async fn a_subscription_with_a_turn_limit_holds_the_newest_turns_and_then_envelopes() {
    let server = TestServer::start().await;
    let (client, mut notifications) = server.client().await;
    let (_session, chat) = stored_chat(&server, &client, 7).await;

    let snapshot = subscribe_latest(&client, &chat, 3).await;
    let state = chat_state(&snapshot);
    assert_eq!(turn_ids(state), ["turn-4", "turn-5", "turn-6"]);
    assert!(state.older_turns);
    assert_eq!(
        server.host.host.peek_chat(&chat),
        None,
        "the first page restored the chat"
    );

    // Envelopes follow the snapshot as they would a whole one.
    let turn_id = send(&client, &chat.to_string(), "one more").await;
    server.fake.wait_for_send(&chat).await;
    server.fake.finish_ok(&chat);
    let envelopes = until_completed(&mut notifications, &turn_id).await;
    let seqs: Vec<u64> = envelopes.iter().map(|envelope| envelope.seq).collect();
    let expected: Vec<u64> = (snapshot.seq + 1..=snapshot.seq + seqs.len() as u64).collect();
    assert_eq!(seqs, expected);
    assert!(
        matches!(&envelopes[0].action, wire::Action::TurnStarted { turn } if turn.id == turn_id),
        "{envelopes:?}"
    );

    // Loaded now: sliced in memory, the same shape.
    let (other, _others) = server.client().await;
    let loaded = subscribe_latest(&other, &chat, 2).await;
    let state = chat_state(&loaded);
    assert_eq!(turn_ids(state), ["turn-6", turn_id.as_str()]);
    assert!(state.older_turns);
    let everything = subscribe_latest(&other, &chat, 200).await;
    let state = chat_state(&everything);
    assert_eq!(state.turns.len(), 8);
    assert!(!state.older_turns);
    let json = serde_json::to_value(state).unwrap();
    assert!(json.get("olderTurns").is_none(), "{json}");
    let none = subscribe_latest(&other, &chat, 0).await;
    assert!(chat_state(&none).turns.is_empty());
    assert!(chat_state(&none).older_turns);
}

#[tokio::test]
async fn a_restored_sessions_default_chat_is_paged_without_reading_all_its_turns() {
    let server = TestServer::start().await;
    let (client, _notifications) = server.client().await;
    let session = create_session(&client).await.summary.uri;
    let chat =
        ChatUri::parse(&format!("{session}/default").replace("hearth-session:", "hearth-chat:"))
            .unwrap();
    assert_eq!(server.host.host.evict_idle(Duration::ZERO).await, 1);
    for index in 0..5 {
        let mut turn = Turn::started(
            TurnId::parse(&format!("turn-{index}")).unwrap(),
            UserMessage::text(format!("question {index}")),
            now(),
        );
        turn.end(StopReason::EndTurn);
        server.host.store.insert_turn(&chat, &turn).await.unwrap();
    }
    let snapshot = subscribe_latest(&client, &chat, 2).await;
    assert_eq!(turn_ids(chat_state(&snapshot)), ["turn-3", "turn-4"]);
    assert!(chat_state(&snapshot).older_turns);
    assert_eq!(server.host.host.peek_chat(&chat), None);
    // A whole subscription still reads every turn.
    let whole = client
        .call::<Subscribe>(&SubscribeParams {
            resource: chat.to_string(),
            last_seq: None,
            turn_limit: None,
        })
        .await
        .unwrap();
    let wire::SubscribeResponse::Snapshot { snapshot } = whole else {
        panic!("expected a snapshot")
    };
    assert_eq!(chat_state(&snapshot).turns.len(), 5);
    assert!(!chat_state(&snapshot).older_turns);

    let unknown = rpc_error(
        client
            .call::<Subscribe>(&SubscribeParams {
                resource: format!("{session}/nope").replace("hearth-session:", "hearth-chat:"),
                last_seq: None,
                turn_limit: Some(5),
            })
            .await
            .unwrap_err(),
    );
    assert_eq!(unknown.kind(), ErrorKind::NotFound, "{unknown:?}");
}
