use hearth_core::{self as core, ChatUri, Mirror, Signal, TurnId};
use hearth_protocol::{
    self as wire, ChatAbort, ChatParams, ChatResolve, ErrorKind, SessionList, SessionListParams,
    Subscribe, SubscribeParams, SubscribeResponse, Unsubscribe, UnsubscribeParams,
};
use hearth_server::{Client, ServerError};
use pretty_assertions::assert_eq;

use super::support::{TestServer, create_session, next_envelope, send, until_completed};

fn mirror_of(response: SubscribeResponse) -> Mirror {
    match response {
        SubscribeResponse::Snapshot { snapshot } => Mirror::new(snapshot.try_into().unwrap()),
        other => panic!("expected a snapshot, got {other:?}"),
    }
}

fn apply(mirror: &mut Mirror, envelopes: &[wire::Envelope]) {
    for envelope in envelopes {
        mirror
            .apply(&core::Envelope::try_from(envelope.clone()).unwrap())
            .unwrap();
    }
}

async fn subscribe(client: &Client, resource: &str, last_seq: Option<u64>) -> SubscribeResponse {
    client
        .call::<Subscribe>(&SubscribeParams {
            resource: resource.to_owned(),
            last_seq,
            turn_limit: None,
        })
        .await
        .unwrap()
}

fn rpc_error(error: ServerError) -> wire::RpcError {
    match error {
        ServerError::Rpc(error) => error,
        other => panic!("expected an error response, got {other}"),
    }
}

#[tokio::test]
async fn initialize_comes_first_and_describes_the_harnesses() {
    let server = TestServer::start().await;
    let (client, _notifications) = Client::connect(&server.url, &server.token).await.unwrap();
    let error = client
        .call::<SessionList>(&SessionListParams::default())
        .await
        .unwrap_err();
    assert_eq!(rpc_error(error).kind(), ErrorKind::NotInitialized);
    let info = client.initialize("test").await.unwrap();
    assert_eq!(info.server_info.name, "hearth");
    assert_eq!(info.protocol_version, wire::PROTOCOL_VERSION);
    assert_eq!(info.default_harness.as_deref(), Some("fake"));
    assert_eq!(info.harnesses.len(), 1);
    let capabilities = info.harnesses[0].capabilities;
    assert_eq!(
        capabilities.multiple_chats,
        Some(wire::MultipleChats {
            fork: true,
            side_chat: true
        })
    );
    assert!(!info.features.proposals);
}

#[tokio::test]
async fn a_turn_streams_to_a_subscriber_and_folds_into_the_chat_state() {
    let server = TestServer::start().await;
    let (client, mut notifications) = server.client().await;
    let session = create_session(&client).await;
    let chat = session.chats[0].summary.uri.clone();
    let listed = client
        .call::<SessionList>(&SessionListParams::default())
        .await
        .unwrap();
    assert_eq!(listed.sessions[0].uri, session.summary.uri);

    let mut mirror = mirror_of(subscribe(&client, &chat, None).await);
    let turn_id = send(&client, &chat, "hello").await;
    let chat_uri = ChatUri::parse(&chat).unwrap();
    server.fake.wait_for_send(&chat_uri).await;
    for piece in ["Hel", "lo ", "there"] {
        server
            .fake
            .progress(
                &chat_uri,
                Signal::TextDelta {
                    turn_id: TurnId::parse(&turn_id).unwrap(),
                    text: piece.into(),
                },
            )
            .await;
    }
    server.fake.finish_ok(&chat_uri);
    let envelopes = until_completed(&mut notifications, &turn_id).await;
    assert!(matches!(
        envelopes[0].action,
        wire::Action::TurnStarted { .. }
    ));
    let seqs: Vec<u64> = envelopes.iter().map(|envelope| envelope.seq).collect();
    let first = seqs[0];
    assert_eq!(seqs, (first..first + seqs.len() as u64).collect::<Vec<_>>());
    apply(&mut mirror, &envelopes);

    let resolved = client
        .call::<ChatResolve>(&ChatParams { chat: chat.clone() })
        .await
        .unwrap();
    let core::ResourceState::Chat(state) = &mirror.snapshot.state else {
        panic!("not a chat")
    };
    assert_eq!(state.turns[0].response_text(), "Hello there");
    assert_eq!(*state, core::ChatState::try_from(resolved.chat).unwrap());
}

#[tokio::test]
async fn abort_ends_the_running_turn() {
    let server = TestServer::start().await;
    let (client, mut notifications) = server.client().await;
    let session = create_session(&client).await;
    let chat = session.chats[0].summary.uri.clone();
    subscribe(&client, &chat, None).await;
    let turn_id = send(&client, &chat, "long task").await;
    server
        .fake
        .wait_for_send(&ChatUri::parse(&chat).unwrap())
        .await;
    let aborted = client
        .call::<ChatAbort>(&ChatParams { chat: chat.clone() })
        .await
        .unwrap();
    assert!(aborted.aborted);
    let envelopes = until_completed(&mut notifications, &turn_id).await;
    let Some(wire::Action::TurnCompleted { stop_reason, .. }) =
        envelopes.last().map(|envelope| &envelope.action)
    else {
        panic!("no completion")
    };
    assert_eq!(*stop_reason, wire::StopReason::Aborted);
    let again = client
        .call::<ChatAbort>(&ChatParams { chat })
        .await
        .unwrap();
    assert!(!again.aborted);
}

#[tokio::test]
async fn a_reconnecting_client_gets_what_it_missed_or_a_snapshot() {
    let server = TestServer::start().await;
    let (first, mut first_notifications) = server.client().await;
    let session = create_session(&first).await;
    let chat = session.chats[0].summary.uri.clone();
    let chat_uri = ChatUri::parse(&chat).unwrap();
    let mut mirror = mirror_of(subscribe(&first, &chat, None).await);
    let turn_id = send(&first, &chat, "hi").await;
    server.fake.wait_for_send(&chat_uri).await;
    let started = next_envelope(&mut first_notifications).await;
    apply(&mut mirror, &[started]);
    let last_seq = mirror.snapshot.seq;
    first.close().await;
    drop(first);

    // While the client is away, the turn goes on.
    for piece in ["a", "b", "c"] {
        server
            .fake
            .progress(
                &chat_uri,
                Signal::TextDelta {
                    turn_id: TurnId::parse(&turn_id).unwrap(),
                    text: piece.into(),
                },
            )
            .await;
    }
    server.fake.finish_ok(&chat_uri);
    server.host.host.flush().await;

    let (second, _notifications) = server.client().await;
    let SubscribeResponse::Replay {
        resource,
        envelopes,
    } = subscribe(&second, &chat, Some(last_seq)).await
    else {
        panic!("expected a replay")
    };
    assert_eq!(resource, chat);
    assert_eq!(envelopes[0].seq, last_seq + 1);
    apply(&mut mirror, &envelopes);
    let resolved = second
        .call::<ChatResolve>(&ChatParams { chat: chat.clone() })
        .await
        .unwrap();
    assert_eq!(
        mirror.snapshot.state,
        core::ResourceState::Chat(core::ChatState::try_from(resolved.chat).unwrap())
    );

    // A seq the server never had gets a snapshot.
    let (third, _notifications) = server.client().await;
    let response = subscribe(&third, &chat, Some(last_seq + 10_000)).await;
    assert!(matches!(response, SubscribeResponse::Snapshot { .. }));
}

#[tokio::test]
async fn two_clients_on_one_session_converge() {
    let server = TestServer::start().await;
    let (alice, mut alice_notes) = server.client().await;
    let (bob, mut bob_notes) = server.client().await;
    let session = create_session(&alice).await;
    let chat = session.chats[0].summary.uri.clone();
    let chat_uri = ChatUri::parse(&chat).unwrap();
    let mut alice_mirror = mirror_of(subscribe(&alice, &chat, None).await);
    let mut bob_mirror = mirror_of(subscribe(&bob, &chat, None).await);
    for round in 0..3 {
        let sender = if round % 2 == 0 { &alice } else { &bob };
        let turn_id = send(sender, &chat, &format!("question {round}")).await;
        server.fake.wait_for_send(&chat_uri).await;
        for index in 0..20 {
            server
                .fake
                .progress(
                    &chat_uri,
                    Signal::TextDelta {
                        turn_id: TurnId::parse(&turn_id).unwrap(),
                        text: format!("{index} "),
                    },
                )
                .await;
        }
        server.fake.finish_ok(&chat_uri);
        apply(
            &mut alice_mirror,
            &until_completed(&mut alice_notes, &turn_id).await,
        );
        apply(
            &mut bob_mirror,
            &until_completed(&mut bob_notes, &turn_id).await,
        );
    }
    assert_eq!(alice_mirror, bob_mirror);
    let core::ResourceState::Chat(state) = &alice_mirror.snapshot.state else {
        panic!("not a chat")
    };
    assert_eq!(state.turns.len(), 3);
}

#[tokio::test]
async fn unsubscribing_stops_the_envelopes() {
    let server = TestServer::start().await;
    let (client, mut notifications) = server.client().await;
    let session = create_session(&client).await;
    let chat = session.chats[0].summary.uri.clone();
    let session_uri = session.summary.uri.clone();
    subscribe(&client, &chat, None).await;
    subscribe(&client, &session_uri, None).await;
    let unsubscribed = client
        .call::<Unsubscribe>(&UnsubscribeParams {
            resource: chat.clone(),
        })
        .await
        .unwrap();
    assert!(unsubscribed.unsubscribed);
    send(&client, &chat, "hi").await;
    // Only the session's envelope (the chat started running) arrives.
    let envelope = next_envelope(&mut notifications).await;
    assert_eq!(envelope.resource, session_uri);
    assert!(matches!(
        envelope.action,
        wire::Action::ChatActivity { running: true, .. }
    ));
}

#[tokio::test]
async fn errors_carry_kind_code_and_retryability() {
    let server = TestServer::start().await;
    let (client, _notifications) = server.client().await;
    let session = create_session(&client).await;
    let chat = session.chats[0].summary.uri.clone();

    let missing = client
        .call::<ChatResolve>(&ChatParams {
            chat: "hearth-chat:fake/nope/default".into(),
        })
        .await
        .unwrap_err();
    let missing = rpc_error(missing);
    assert_eq!(missing.kind(), ErrorKind::NotFound);
    assert_eq!(missing.code, -32004);

    let malformed = rpc_error(
        client
            .call::<ChatResolve>(&ChatParams {
                chat: session.summary.uri.clone(),
            })
            .await
            .unwrap_err(),
    );
    assert_eq!(malformed.kind(), ErrorKind::InvalidParams);
    assert!(malformed.message.starts_with("`chat`: "), "{malformed:?}");

    send(&client, &chat, "first").await;
    let busy = rpc_error(
        client
            .call::<hearth_protocol::ChatSend>(&hearth_protocol::ChatSendParams {
                chat: chat.clone(),
                message: hearth_protocol::UserMessage {
                    text: "second".into(),
                    ..Default::default()
                },
            })
            .await
            .unwrap_err(),
    );
    assert_eq!(busy.kind(), ErrorKind::Busy);
    assert!(busy.is_retryable());

    let unavailable = rpc_error(
        client
            .call::<hearth_protocol::ProposalList>(&Default::default())
            .await
            .unwrap_err(),
    );
    assert_eq!(unavailable.kind(), ErrorKind::Unavailable);
}

#[tokio::test]
async fn a_websocket_message_over_the_limit_closes_only_that_connection() {
    let server = TestServer::start().await;
    let (client, _notifications) = server.client().await;
    let session = create_session(&client).await;
    let chat = session.chats[0].summary.uri.clone();
    let huge = "x".repeat(hearth_server::DEFAULT_MAX_REQUEST_BYTES + 1024);
    let sent = tokio::time::timeout(
        super::support::WAIT,
        client.call::<hearth_protocol::ChatSend>(&hearth_protocol::ChatSendParams {
            chat: chat.clone(),
            message: hearth_protocol::UserMessage {
                text: huge,
                ..hearth_protocol::UserMessage::default()
            },
        }),
    )
    .await
    .expect("the oversized message must be answered or the connection closed");
    assert!(sent.is_err(), "an oversized message was accepted");
    assert!(
        server
            .fake
            .calls()
            .iter()
            .all(|call| !matches!(call, hearth_test_support::Call::Send { .. })),
        "nothing reached the harness"
    );
    // The server still serves everyone else.
    let (other, _notes) = server.client().await;
    let listed = other
        .call::<SessionList>(&SessionListParams::default())
        .await
        .unwrap();
    assert_eq!(listed.sessions.len(), 1);
}
