//! A team server user's own model providers: added with a pasted key that is checked,
//! sealed before it reaches the database and used for that user's turns only; never
//! shown to, or spent for, another user or the operator; refused at a private address
//! unless the operator opened its network; gone everywhere once removed.

use std::sync::Arc;

use hearth_config::{Config, Paths};
use hearth_protocol as wire;
use hearth_server::{Client, Secret};
use hearth_store::{Role, UserCredentialStore, UserStore};
use hearth_test_support::{MockModelServer, MockResponse, OpenAiStream};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tempfile::TempDir;

use super::support::{NativeProviders, Setup, TestServer, next_envelope, until_completed};
use super::users::{post, token_for};

const KEY: &str = "sk-alices-own-4242";

struct Team {
    _home: TempDir,
    server: TestServer,
    models: MockModelServer,
    alice: String,
    alice_token: Secret,
    bob_token: Secret,
}

/// A team server whose operator opened `networks` to users' providers, with Alice and
/// Bob in team `design`, and a model server answering with the models it has.
async fn team(networks: &str) -> Team {
    let home = TempDir::new().unwrap();
    let paths = Paths::in_dir(home.path());
    let text = format!("[server]\nuser_provider_networks = [{networks}]\n");
    std::fs::write(&paths.config_file, &text).unwrap();
    let server = TestServer::start_with(Setup {
        config: Config::load(&paths.config_file).unwrap(),
        paths: Some(paths),
        provider_harnesses: Some(Arc::new(NativeProviders)),
        users: true,
        ..Setup::default()
    })
    .await;
    let store = server.host.sqlite();
    let alice = store.create_user("alice").await.unwrap();
    let bob = store.create_user("bob").await.unwrap();
    for user in [&alice.id, &bob.id] {
        store.join_team(user, "design", Role::Member).await.unwrap();
    }
    let alice_token = token_for(&server, &alice.id).await;
    let bob_token = token_for(&server, &bob.id).await;
    let models = MockModelServer::start().await.unwrap();
    models.set_fallback(MockResponse::json(
        200,
        &json!({"object": "list", "data": [{"id": "local-model", "object": "model"}]}),
    ));
    Team {
        _home: home,
        server,
        models,
        alice: alice.id,
        alice_token,
        bob_token,
    }
}

fn add_params(models: &MockModelServer, key: Value) -> Value {
    json!({
        "id": "mine",
        "kind": "openai",
        "baseUrl": format!("{}/v1", models.url()),
        "model": "local-model",
        "key": key,
    })
}

fn error_kind(answer: &Value) -> &str {
    answer
        .pointer("/error/data/kind")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("expected an error: {answer}"))
}

/// `initialize` over `POST /rpc` with `token`: the answer.
async fn initialize(server: &TestServer, token: &Secret) -> Value {
    post(
        server,
        token,
        "initialize",
        json!({"clientInfo": {"name": "t"}}),
    )
    .await
}

fn harness_ids(initialized: &Value) -> Vec<String> {
    initialized["result"]["harnesses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|harness| harness["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_users_own_provider_is_sealed_used_for_them_alone_and_removed_everywhere() {
    let team = team("\"127.0.0.0/8\"").await;
    let server = &team.server;
    let theirs = format!("{}_mine", team.alice);
    // The root's followers: the operator and Alice.
    let mut followers = Vec::new();
    for token in [&server.token, &team.alice_token] {
        let (client, notifications) = Client::connect(&server.url, token).await.unwrap();
        client.initialize("follower").await.unwrap();
        client
            .call::<wire::Subscribe>(&wire::SubscribeParams {
                resource: hearth_core::ROOT_URI.to_owned(),
                last_seq: None,
                turn_limit: None,
            })
            .await
            .unwrap();
        followers.push((client, notifications));
    }
    // The check asks for a short completion.
    team.models.enqueue_for(
        "/v1/chat/completions",
        OpenAiStream::text_answer("local-model", &["p"], 1, 1),
    );
    let added = post(
        server,
        &team.alice_token,
        "provider/add",
        add_params(&team.models, json!({"type": "pasted", "key": KEY})),
    )
    .await;
    assert_eq!(added["result"]["type"], "added", "{added}");
    assert_eq!(
        added["result"]["provider"]["id"],
        theirs.as_str(),
        "{added}"
    );
    assert_eq!(added["result"]["usableNow"], true, "{added}");
    assert!(!added.to_string().contains(KEY), "{added}");
    // The check asked the model server with her key.
    let asked = team.models.requests();
    assert_eq!(
        asked[0].header("authorization"),
        Some("Bearer sk-alices-own-4242")
    );

    // The database holds it sealed, bound to her; the config file is untouched.
    let stored = server.host.sqlite().user_providers(None).await.unwrap();
    assert_eq!(stored.len(), 1);
    let sealed = stored[0].sealed_key.as_deref().unwrap();
    assert!(
        sealed.starts_with("v1.") && !sealed.contains(KEY),
        "{sealed}"
    );
    let config = std::fs::read_to_string(team._home.path().join("config.toml")).unwrap();
    assert!(
        !config.contains("mine") && !config.contains(KEY),
        "{config}"
    );

    // The root tells her of her harness; the operator is told the server's alone.
    for ((_, notifications), told) in followers.iter_mut().zip([false, true]) {
        let announced = next_envelope(notifications).await;
        let wire::Action::HarnessesChanged { harnesses } = announced.action else {
            panic!("expected harnessesChanged, got {announced:?}");
        };
        let ids: Vec<&str> = harnesses
            .iter()
            .map(|harness| harness.id.as_str())
            .collect();
        assert_eq!(ids.contains(&theirs.as_str()), told, "{ids:?}");
        assert!(
            !ids.is_empty(),
            "the server's own harnesses are still there"
        );
    }

    // She sees her harness; Bob does not, nor her provider.
    let hers = initialize(server, &team.alice_token).await;
    assert!(harness_ids(&hers).contains(&theirs), "{hers}");
    let operators = initialize(server, &server.token).await;
    assert!(!harness_ids(&operators).contains(&theirs), "{operators}");
    let his = initialize(server, &team.bob_token).await;
    assert!(!harness_ids(&his).contains(&theirs), "{his}");
    assert!(!his.to_string().contains(&team.alice), "{his}");
    let listed = post(server, &team.bob_token, "provider/list", json!({})).await;
    assert!(!listed.to_string().contains("mine"), "{listed}");
    let listed = post(server, &team.alice_token, "provider/list", json!({})).await;
    assert!(listed.to_string().contains(&theirs), "{listed}");

    // Her turn runs on her key.
    team.models.enqueue_for(
        "/v1/chat/completions",
        OpenAiStream::text_answer("local-model", &["on ", "my key"], 1, 1),
    );
    let (alice, mut notifications) = Client::connect(&server.url, &team.alice_token)
        .await
        .unwrap();
    alice.initialize("test").await.unwrap();
    let session = alice
        .call::<wire::SessionCreate>(&wire::SessionCreateParams {
            harness: Some(theirs.clone()),
            ..wire::SessionCreateParams::default()
        })
        .await
        .unwrap()
        .session;
    let chat = session.chats[0].summary.uri.clone();
    alice
        .call::<wire::Subscribe>(&wire::SubscribeParams {
            resource: chat.clone(),
            last_seq: None,
            turn_limit: None,
        })
        .await
        .unwrap();
    let turn = super::support::send(&alice, &chat, "hello").await;
    until_completed(&mut notifications, &turn).await;
    let completion = team
        .models
        .requests()
        .into_iter()
        .filter(|request| request.path.ends_with("/chat/completions"))
        .nth(1)
        .expect("the turn asked the model");
    assert!(
        completion.json().to_string().contains("hello"),
        "{completion:?}"
    );
    assert_eq!(
        completion.header("authorization"),
        Some("Bearer sk-alices-own-4242")
    );

    // Shared with her team, Bob reads the session but never spends her key.
    let shared = post(
        server,
        &team.alice_token,
        "session/share",
        json!({"session": session.summary.uri, "team": "design"}),
    )
    .await;
    assert!(shared.get("error").is_none(), "{shared}");
    let read = post(
        server,
        &team.bob_token,
        "chat/resolve",
        json!({"chat": chat}),
    )
    .await;
    assert!(
        read.get("error").is_none(),
        "Bob reads the shared chat: {read}"
    );
    let asked_before = team.models.requests().len();
    for (method, params) in [
        (
            "chat/send",
            json!({"chat": chat, "message": {"text": "on her key"}}),
        ),
        (
            "chat/queue",
            json!({"chat": chat, "message": {"text": "later"}}),
        ),
        ("chat/compact", json!({"chat": chat})),
        ("chat/create", json!({"session": session.summary.uri})),
        (
            "session/fork",
            json!({"session": session.summary.uri, "turnId": turn}),
        ),
        ("session/create", json!({"harness": theirs})),
    ] {
        let refused = post(server, &team.bob_token, method, params.clone()).await;
        assert_eq!(error_kind(&refused), "forbidden", "{method}: {refused}");
        assert!(
            refused.to_string().contains("own key or sign-in"),
            "{refused}"
        );
        // Nor does the operator.
        let refused = post(server, &server.token, method, params).await;
        assert_eq!(
            error_kind(&refused),
            "forbidden",
            "operator {method}: {refused}"
        );
    }
    assert_eq!(
        team.models.requests().len(),
        asked_before,
        "nothing reached the model"
    );
    // A harness Bob names that this server does not run is refused naming only his.
    let unknown = post(
        server,
        &team.bob_token,
        "session/create",
        json!({"harness": "nope"}),
    )
    .await;
    assert_eq!(error_kind(&unknown), "notFound", "{unknown}");
    assert!(unknown.to_string().contains("fake"), "{unknown}");
    assert!(!unknown.to_string().contains(&team.alice), "{unknown}");
    let removed = post(
        server,
        &team.bob_token,
        "provider/remove",
        json!({"id": theirs}),
    )
    .await;
    assert_eq!(error_kind(&removed), "notFound", "{removed}");

    // Removed, it is gone: not listed, and her chats on it say so.
    let removed = post(
        server,
        &team.alice_token,
        "provider/remove",
        json!({"id": "mine"}),
    )
    .await;
    assert_eq!(removed["result"]["id"], theirs.as_str(), "{removed}");
    let gone = post(
        server,
        &team.alice_token,
        "chat/send",
        json!({"chat": chat, "message": {"text": "again"}}),
    )
    .await;
    assert_eq!(error_kind(&gone), "notFound", "{gone}");
    assert!(gone.to_string().contains("add it again"), "{gone}");
    let hers = initialize(server, &team.alice_token).await;
    assert!(!harness_ids(&hers).contains(&theirs), "{hers}");
    assert!(
        server
            .host
            .sqlite()
            .user_providers(None)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn a_users_provider_must_be_public_and_their_key_pasted() {
    // The operator opened no network: the loopback model server is private.
    let team = team("").await;
    let server = &team.server;
    let refused = post(
        server,
        &team.alice_token,
        "provider/add",
        add_params(&team.models, json!({"type": "pasted", "key": KEY})),
    )
    .await;
    assert_eq!(error_kind(&refused), "invalidParams", "{refused}");
    assert!(
        refused.to_string().contains("user_provider_networks"),
        "{refused}"
    );
    // The server's environment is the operator's.
    let refused = post(
        server,
        &team.alice_token,
        "provider/add",
        json!({"id": "env", "kind": "openai", "key": {"type": "environment", "variable": "OPENAI_API_KEY"}}),
    )
    .await;
    assert_eq!(error_kind(&refused), "invalidParams", "{refused}");
    assert!(
        refused.to_string().contains("paste your own key"),
        "{refused}"
    );
    for url in [
        "ftp://models.example/v1",
        "http://user:pw@models.example/v1",
        "http://169.254.169.254/v1",
    ] {
        let refused = post(
            server,
            &team.alice_token,
            "provider/add",
            json!({"id": "odd", "kind": "openai", "baseUrl": url, "key": {"type": "pasted", "key": KEY}}),
        )
        .await;
        assert_eq!(error_kind(&refused), "invalidParams", "{url}: {refused}");
    }
    assert!(
        team.models.requests().is_empty(),
        "nothing was asked of the model server"
    );
    assert!(
        server
            .host
            .sqlite()
            .user_providers(None)
            .await
            .unwrap()
            .is_empty()
    );
}
