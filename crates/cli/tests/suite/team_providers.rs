//! A team server user's own model provider across nodes: added on one node, it answers
//! their turns on another that shares `provider-keys.key`, with their key; a node with
//! another key file says what to do instead of using anyone else's key.

use hearth_protocol::{
    self as wire, ChatSend, ChatSendParams, SessionCreate, SessionCreateParams, Subscribe,
    SubscribeParams, UserMessage,
};
use hearth_server::{Notifications, Notified, PROVIDER_KEYS_FILE, ServerError};
use hearth_test_support::postgres::fresh_database;
use hearth_test_support::{MockModelServer, MockResponse, OpenAiStream};
use serde_json::json;

use super::serve_support::{Served, next};
use super::support::Hearth;
use super::team_users::{connect_as, token_in, users_on};

const KEY: &str = "sk-alice-on-every-node";

/// A node of the team at `url` whose users may reach loopback model servers, sealing
/// users' keys under `keys` (64 hex digits).
fn node(url: &str, name: &str, keys: &str) -> Served {
    let hearth = Hearth::new();
    hearth.write(
        "config.toml",
        "[server]\nuser_provider_networks = [\"127.0.0.0/8\"]\n",
    );
    hearth.write(PROVIDER_KEYS_FILE, &format!("{keys}\n"));
    Served::start(
        hearth,
        &["--store", url, "--users"],
        &[("HEARTH_NODE", name)],
    )
}

async fn until_turn_ends(notifications: &mut Notifications, turn: &str) {
    loop {
        if let Notified::Envelope(envelope) = next(notifications).await
            && let wire::Action::TurnCompleted { turn_id, .. } = &envelope.action
            && turn_id == turn
        {
            return;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_users_provider_added_on_one_node_answers_on_another_with_their_key_only() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let alice = token_in(&users_on(&url, &["add", "alice"]));
    let shared_keys = "ab".repeat(32);
    let nodes = [
        node(&url, "n1", &shared_keys),
        node(&url, "n2", &shared_keys),
        node(&url, "n3", &"cd".repeat(32)),
    ];
    let models = MockModelServer::start().await.unwrap();
    models.set_fallback(MockResponse::json(
        200,
        &json!({"object": "list", "data": [{"id": "local-model", "object": "model"}]}),
    ));
    for text in ["p", "from her key"] {
        models.enqueue_for(
            "/v1/chat/completions",
            OpenAiStream::text_answer("local-model", &[text], 1, 1),
        );
    }
    let (on_1, _) = connect_as(&nodes[0], &alice).await;
    let added = on_1
        .call::<wire::ProviderAdd>(&wire::ProviderAddParams {
            id: "mine".into(),
            kind: wire::ProviderKindParam::Openai,
            base_url: Some(format!("{}/v1", models.url())),
            model: Some("local-model".into()),
            key: wire::ProviderKeyParam::Pasted { key: KEY.into() },
        })
        .await
        .unwrap();
    let wire::ProviderAddResponse::Added { provider, .. } = added else {
        panic!("expected the provider to be added, got {added:?}");
    };
    let harness = provider.id.clone();

    // Node 2 never saw the request: it makes her harness from the database.
    let (on_2, mut notifications) = connect_as(&nodes[1], &alice).await;
    let session = on_2
        .call::<SessionCreate>(&SessionCreateParams {
            harness: Some(harness.clone()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap()
        .session;
    let chat = session.chats[0].summary.uri.clone();
    on_2.call::<Subscribe>(&SubscribeParams {
        resource: chat.clone(),
        last_seq: None,
        turn_limit: None,
    })
    .await
    .unwrap();
    let sent = on_2
        .call::<ChatSend>(&ChatSendParams {
            chat: chat.clone(),
            message: UserMessage {
                text: "hello from node 2".into(),
                ..UserMessage::default()
            },
        })
        .await
        .unwrap();
    until_turn_ends(&mut notifications, &sent.turn_id).await;
    let completions: Vec<_> = models
        .requests()
        .into_iter()
        .filter(|request| request.path.ends_with("/chat/completions"))
        .collect();
    // The check, the turn (and a title, perhaps): every one with her key.
    assert!(
        completions
            .iter()
            .any(|request| request.json().to_string().contains("hello from node 2")),
        "{completions:?}"
    );
    for request in &completions {
        assert_eq!(
            request.header("authorization"),
            Some("Bearer sk-alice-on-every-node")
        );
    }

    // Node 3 seals under another key file: it cannot open hers, and says which file.
    let (on_3, _) = connect_as(&nodes[2], &alice).await;
    let refused = on_3
        .call::<ChatSend>(&ChatSendParams {
            chat,
            message: UserMessage {
                text: "from node 3".into(),
                ..UserMessage::default()
            },
        })
        .await
        .unwrap_err();
    let ServerError::Rpc(error) = refused else {
        panic!("expected an error response, got {refused}");
    };
    assert!(error.message.contains(PROVIDER_KEYS_FILE), "{error:?}");
    assert!(
        !models
            .requests()
            .iter()
            .any(|request| request.json().to_string().contains("from node 3")),
        "nothing of node 3's turn reached the model"
    );
}
