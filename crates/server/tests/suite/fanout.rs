//! A subscriber that stops reading is resynced with a fresh snapshot; the others get
//! every envelope in order; everyone ends with the same state.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use hearth_core::{self as core, ChatUri, Mirror, Signal, TurnId};
use hearth_protocol::{self as wire, Incoming, Subscribe, SubscribeParams, SubscribeResponse};
use hearth_server::{Notified, Secret};
use pretty_assertions::assert_eq;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use super::support::{Setup, TestServer, WAIT, create_session, next, send};

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A WebSocket client with a tiny receive buffer, so it falls behind quickly.
async fn raw_socket(url: &str, token: &Secret) -> Socket {
    let mut request = hearth_server::rpc_url(url).into_client_request().unwrap();
    request.headers_mut().insert(
        "authorization",
        format!("Bearer {}", token.expose()).parse().unwrap(),
    );
    let address: std::net::SocketAddr = url.trim_start_matches("http://").parse().unwrap();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let stream = socket.connect(address).await.unwrap();
    let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
        .max_message_size(None)
        .max_frame_size(None);
    tokio_tungstenite::client_async_with_config(
        request,
        tokio_tungstenite::MaybeTlsStream::Plain(stream),
        Some(config),
    )
    .await
    .unwrap()
    .0
}

async fn request(socket: &mut Socket, id: i64, method: &str, params: serde_json::Value) {
    let text = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    socket.send(Message::text(text.to_string())).await.unwrap();
}

fn completed(mirror: &Mirror, turn_id: &str) -> bool {
    let core::ResourceState::Chat(chat) = &mirror.snapshot.state else {
        return false;
    };
    chat.turns
        .iter()
        .any(|turn| turn.id.as_str() == turn_id && turn.stop_reason.is_some())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_subscriber_is_resynced_without_stalling_the_others() {
    let server = TestServer::start_with(Setup {
        queue_capacity: 512,
        ..Setup::default()
    })
    .await;
    let (fast, mut fast_notes) = server.client().await;
    let session = create_session(&fast).await;
    let chat = session.chats[0].summary.uri.clone();
    let chat_uri = ChatUri::parse(&chat).unwrap();

    let mut slow = raw_socket(&server.url, &server.token).await;
    request(
        &mut slow,
        1,
        "initialize",
        serde_json::json!({"clientInfo": {"name": "slow"}}),
    )
    .await;
    request(
        &mut slow,
        2,
        "subscribe",
        serde_json::json!({"resource": chat}),
    )
    .await;

    let SubscribeResponse::Snapshot { snapshot } = fast
        .call::<Subscribe>(&SubscribeParams {
            resource: chat.clone(),
            last_seq: None,
            turn_limit: None,
        })
        .await
        .unwrap()
    else {
        panic!("expected a snapshot")
    };
    let mut fast_mirror = Mirror::new(snapshot.try_into().unwrap());
    let turn_id = send(&fast, &chat, "flood").await;
    server.fake.wait_for_send(&chat_uri).await;

    // The slow client reads nothing while 6000 envelopes of 1 KiB go out: more than its
    // socket buffers and its queue hold.
    let piece = "x".repeat(1024);
    let producer = {
        let fake = server.fake.clone();
        let chat_uri = chat_uri.clone();
        let turn_id = TurnId::parse(&turn_id).unwrap();
        tokio::spawn(async move {
            for index in 0..6000_u32 {
                fake.progress(
                    &chat_uri,
                    Signal::TextDelta {
                        turn_id: turn_id.clone(),
                        text: piece.clone(),
                    },
                )
                .await;
                if index.is_multiple_of(10) {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
            fake.finish_ok(&chat_uri);
        })
    };

    // The fast client gets every envelope, in order, and no resync.
    let mut fast_resyncs = 0;
    while !completed(&fast_mirror, &turn_id) {
        match next(&mut fast_notes).await {
            Notified::Envelope(envelope) => fast_mirror
                .apply(&core::Envelope::try_from(envelope).unwrap())
                .unwrap(),
            Notified::Resync(resync) => {
                fast_resyncs += 1;
                fast_mirror = Mirror::new(resync.snapshot.try_into().unwrap());
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    producer.await.unwrap();
    assert_eq!(fast_resyncs, 0);

    // Now the slow client reads: it was resynced, and it ends where the fast one is.
    let mut slow_mirror: Option<Mirror> = None;
    let mut slow_resyncs = 0;
    let deadline = tokio::time::Instant::now() + WAIT;
    while !slow_mirror
        .as_ref()
        .is_some_and(|mirror| completed(mirror, &turn_id))
    {
        let message = tokio::time::timeout_at(deadline, slow.next())
            .await
            .expect("the slow client never caught up")
            .unwrap()
            .unwrap();
        let Message::Text(text) = message else {
            continue;
        };
        match Incoming::parse(text.as_str()).unwrap() {
            Incoming::Response {
                id: wire::RequestId::Number(2),
                result,
            } => {
                let response: SubscribeResponse = serde_json::from_value(result).unwrap();
                let SubscribeResponse::Snapshot { snapshot } = response else {
                    panic!("expected a snapshot")
                };
                slow_mirror = Some(Mirror::new(snapshot.try_into().unwrap()));
            }
            Incoming::Response { .. } => {}
            Incoming::Notification { method, params } => match method.as_str() {
                "subscription/envelope" => {
                    let envelope: wire::Envelope = serde_json::from_value(params).unwrap();
                    slow_mirror
                        .as_mut()
                        .unwrap()
                        .apply(&core::Envelope::try_from(envelope).unwrap())
                        .unwrap();
                }
                "subscription/resync" => {
                    slow_resyncs += 1;
                    let resync: wire::ResyncNotification = serde_json::from_value(params).unwrap();
                    assert_eq!(resync.reason, wire::ResyncReason::Lagged);
                    slow_mirror = Some(Mirror::new(resync.snapshot.try_into().unwrap()));
                }
                other => panic!("unexpected notification {other}"),
            },
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(slow_resyncs >= 1, "the slow client was never resynced");
    assert_eq!(
        slow_mirror.unwrap().snapshot.state,
        fast_mirror.snapshot.state
    );
}
