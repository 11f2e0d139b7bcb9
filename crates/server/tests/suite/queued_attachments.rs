//! A message queued behind a running turn keeps its attachments: kept with the chat's
//! queue in the store, and sent with them when the turn ends, as the model's request
//! shows (Hearth's own agent over an OpenAI-compatible server streaming real SSE).

use std::sync::Arc;

use base64::Engine as _;
use hearth_config::{Config, Paths};
use hearth_core::{ChatUri, SessionUri};
use hearth_protocol::{
    self as wire, ChatQueue, ChatQueueParams, ProviderAdd, ProviderAddParams, ProviderAddResponse,
    ProviderKeyParam, ProviderKindParam, SessionCreate, SessionCreateParams, Subscribe,
    SubscribeParams, UserMessage,
};
use hearth_test_support::{Gate, MockModelServer, MockResponse, OpenAiStream};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{NativeProviders, Setup, TestServer, WAIT, next_envelope, send};

/// Eight bytes that open every PNG, then a few more: what the model must receive.
const IMAGE: &[u8] = b"\x89PNG\r\n\x1a\nqueued-image-bytes";

#[tokio::test]
async fn a_message_queued_behind_a_running_turn_is_sent_with_its_attachments() {
    let home = tempfile::tempdir().unwrap();
    let paths = Paths::in_dir(home.path());
    std::fs::write(&paths.config_file, "").unwrap();
    let server = TestServer::start_with(Setup {
        config: Config::load(&paths.config_file).unwrap(),
        paths: Some(paths),
        provider_harnesses: Some(Arc::new(NativeProviders)),
        ..Setup::default()
    })
    .await;
    let (client, mut notifications) = server.client().await;
    let models = MockModelServer::start().await.unwrap();
    models.set_fallback(MockResponse::json(
        200,
        &json!({"object": "list", "data": [{"id": "local-model", "object": "model"}]}),
    ));
    // The check's answer, then a first turn that streams until the test opens the gate,
    // then the queued message's turn.
    let gate = Gate::new();
    models
        .enqueue_for(
            "/v1/chat/completions",
            OpenAiStream::text_answer("local-model", &["p"], 1, 1),
        )
        .enqueue_for(
            "/v1/chat/completions",
            OpenAiStream::new("local-model")
                .role()
                .text("Working")
                .hold(&gate)
                .text(" on it.")
                .finish("stop")
                .usage(3, 2)
                .done(),
        )
        .enqueue_for(
            "/v1/chat/completions",
            OpenAiStream::text_answer("local-model", &["I see both."], 5, 3),
        );
    let added = client
        .call::<ProviderAdd>(&ProviderAddParams {
            id: "lab".to_owned(),
            kind: ProviderKindParam::Openai,
            base_url: Some(format!("{}/v1", models.url())),
            model: Some("local-model".to_owned()),
            key: ProviderKeyParam::Pasted {
                key: "sk-lab".to_owned(),
            },
        })
        .await
        .unwrap();
    assert!(
        matches!(
            added,
            ProviderAddResponse::Added {
                usable_now: true,
                ..
            }
        ),
        "{added:?}"
    );

    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            harness: Some("lab".to_owned()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap()
        .session;
    let chat = session.chats[0].summary.uri.clone();
    client
        .call::<Subscribe>(&SubscribeParams {
            resource: chat.clone(),
            last_seq: None,
            turn_limit: None,
        })
        .await
        .unwrap();
    send(&client, &chat, "First question").await;
    models
        .wait_for_request(WAIT, |request| {
            request.json()["messages"]
                .to_string()
                .contains("First question")
        })
        .await
        .expect("the first turn asked the model");

    // While it streams, a message with a text file and an image is queued.
    let files = tempfile::tempdir().unwrap();
    let notes = files.path().join("notes.txt");
    std::fs::write(&notes, "The launch is on the ninth.\n").unwrap();
    let image = files.path().join("chart.png");
    std::fs::write(&image, IMAGE).unwrap();
    let attachments = vec![
        wire::Attachment {
            name: "notes.txt".to_owned(),
            media_type: "text/plain".to_owned(),
            uri: notes.display().to_string(),
        },
        wire::Attachment {
            name: "chart.png".to_owned(),
            media_type: "image/png".to_owned(),
            uri: image.display().to_string(),
        },
    ];
    let message = UserMessage {
        text: "Compare these".to_owned(),
        attachments: attachments.clone(),
        ..UserMessage::default()
    };
    let queued = client
        .call::<ChatQueue>(&ChatQueueParams {
            chat: chat.clone(),
            message: message.clone(),
        })
        .await
        .unwrap();
    assert_eq!(queued.turn_id, None, "queued behind the running turn");
    let announced = loop {
        let envelope = next_envelope(&mut notifications).await;
        if let wire::Action::QueueChanged { queued } = envelope.action {
            break queued;
        }
    };
    assert_eq!(announced, [message]);
    // Kept with the chat's queue in the store, attachments and all.
    server.host.host.flush().await;
    let session_uri = SessionUri::parse(&session.summary.uri).unwrap();
    let stored = server.host.store.chats(&session_uri).await.unwrap();
    let chat_uri = ChatUri::parse(&chat).unwrap();
    let record = stored
        .iter()
        .find(|record| record.summary.uri == chat_uri)
        .unwrap();
    assert_eq!(record.queued.len(), 1);
    assert_eq!(record.queued[0].text, "Compare these");
    let stored_names: Vec<&str> = record.queued[0]
        .attachments
        .iter()
        .map(|attachment| attachment.name.as_str())
        .collect();
    assert_eq!(stored_names, ["notes.txt", "chart.png"]);

    // The first turn ends: the queued message goes, with both files.
    gate.open();
    let asked = models
        .wait_for_request(WAIT, |request| {
            request.json()["messages"]
                .to_string()
                .contains("Compare these")
        })
        .await
        .expect("the queued message was sent when the turn ended");
    let sent = asked.json()["messages"].to_string();
    assert!(
        sent.contains("The launch is on the ninth."),
        "the text file's content reached the model: {sent}"
    );
    let encoded = base64::engine::general_purpose::STANDARD.encode(IMAGE);
    assert!(
        sent.contains(&format!("data:image/png;base64,{encoded}")),
        "the image reached the model: {sent}"
    );
    // The turn that carried it shows its attachments in the transcript.
    let turn = loop {
        let envelope = next_envelope(&mut notifications).await;
        if let wire::Action::TurnStarted { turn } = envelope.action
            && turn.user.text == "Compare these"
        {
            break turn;
        }
    };
    assert_eq!(turn.user.attachments, attachments);
}
