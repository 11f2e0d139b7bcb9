//! `provider/add` and `provider/remove`, one test per rule of `provider_setup.rs`: a
//! provider that fails its check saves nothing; one that passes is written to
//! `config.toml` (comments kept) with its pasted key in a 0600 file, listed at once,
//! announced to the root's subscribers and answering chats without a restart; a taken
//! name is refused; removing it takes its key file along.

use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;

use hearth_config::{Config, Paths};
use hearth_protocol::{
    self as wire, ErrorKind, ProviderAdd, ProviderAddParams, ProviderAddResponse, ProviderKeyParam,
    ProviderKindParam, ProviderList, ProviderListParams, ProviderRemove, ProviderRemoveParams,
    ProviderTestOutcome, SessionCreate, SessionCreateParams, Subscribe, SubscribeParams,
};
use hearth_server::ServerError;
use hearth_test_support::{MockModelServer, MockResponse, OpenAiStream};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{
    NativeProviders, Setup, TestServer, WAIT, next_envelope, send, until_completed,
};

const CONFIG: &str = "# My Hearth\n[defaults]\ntime_zone = \"Europe/Berlin\" # where I live\n\n# The calendar at home\n[calendars.home]\nkind = \"ics\"\npath = \"/tmp/home.ics\"\n";

const KEY: &str = "sk-pasted-secret-7788";

fn rpc_error(error: ServerError) -> wire::RpcError {
    match error {
        ServerError::Rpc(error) => error,
        other => panic!("expected an error response, got {other}"),
    }
}

/// A server whose data directory and `config.toml` (holding [`CONFIG`]) are in `home`.
async fn server_in(home: &std::path::Path) -> TestServer {
    let paths = Paths::in_dir(home);
    std::fs::write(&paths.config_file, CONFIG).unwrap();
    TestServer::start_with(Setup {
        config: Config::load(&paths.config_file).unwrap(),
        paths: Some(paths),
        provider_harnesses: Some(Arc::new(NativeProviders)),
        ..Setup::default()
    })
    .await
}

fn add(id: &str, url: &str, key: ProviderKeyParam) -> ProviderAddParams {
    ProviderAddParams {
        id: id.to_owned(),
        kind: ProviderKindParam::Openai,
        base_url: Some(format!("{url}/v1")),
        model: Some("local-model".to_owned()),
        key,
    }
}

#[tokio::test]
async fn a_provider_that_fails_its_check_saves_nothing() {
    let home = tempfile::tempdir().unwrap();
    let server = server_in(home.path()).await;
    let (client, _notifications) = server.client().await;
    let models = MockModelServer::start().await.unwrap();
    models.set_fallback(MockResponse::openai_error(
        401,
        "Incorrect API key provided",
        "invalid_request_error",
    ));

    let answer = client
        .call::<ProviderAdd>(&add(
            "lab",
            &models.url(),
            ProviderKeyParam::Pasted {
                key: "sk-wrong".to_owned(),
            },
        ))
        .await
        .unwrap();
    let ProviderAddResponse::Failed { test } = answer else {
        panic!("expected the check to fail, got {answer:?}");
    };
    let ProviderTestOutcome::Failed { error, .. } = &test.outcome else {
        panic!("expected a failed outcome, got {test:?}");
    };
    assert!(error.contains("401"), "{error}");
    assert!(error.contains("Incorrect API key provided"), "{error}");
    // The check really asked the server, with the key given.
    let asked = models.requests();
    assert_eq!(
        asked[0].header("authorization"),
        Some("Bearer sk-wrong"),
        "{asked:?}"
    );
    assert_eq!(
        std::fs::read_to_string(home.path().join("config.toml")).unwrap(),
        CONFIG
    );
    assert!(!home.path().join("keys").exists());
    let listed = client
        .call::<ProviderList>(&ProviderListParams {})
        .await
        .unwrap();
    assert!(
        listed.providers.iter().all(|provider| provider.id != "lab"),
        "{listed:?}"
    );
}

#[tokio::test]
async fn a_provider_that_answers_is_saved_with_its_key_in_a_private_file_listed_and_usable_at_once()
{
    let home = tempfile::tempdir().unwrap();
    let server = server_in(home.path()).await;
    let (client, mut notifications) = server.client().await;
    client
        .call::<Subscribe>(&SubscribeParams {
            resource: wire::ROOT_RESOURCE.to_owned(),
            last_seq: None,
            turn_limit: None,
        })
        .await
        .unwrap();
    let models = MockModelServer::start().await.unwrap();
    models.set_fallback(MockResponse::json(
        200,
        &json!({"object": "list", "data": [{"id": "local-model", "object": "model"}]}),
    ));
    models.enqueue_for(
        "/v1/chat/completions",
        OpenAiStream::text_answer("local-model", &["p"], 1, 1),
    );

    let answer = client
        .call::<ProviderAdd>(&add(
            "lab",
            &models.url(),
            ProviderKeyParam::Pasted {
                key: KEY.to_owned(),
            },
        ))
        .await
        .unwrap();
    let ProviderAddResponse::Added {
        test,
        provider,
        usable_now,
    } = answer
    else {
        panic!("expected the provider to be added, got {answer:?}");
    };
    assert!(
        matches!(test.outcome, ProviderTestOutcome::Ok { .. }),
        "{test:?}"
    );
    assert!(usable_now, "the provider's agent runs in this server now");
    let key_file = home.path().join("keys").join("lab.key");
    assert_eq!(
        provider.key,
        wire::KeyState::Found {
            from: format!("key file {}", key_file.display())
        }
    );
    assert_eq!(
        std::fs::read_to_string(&key_file).unwrap(),
        format!("{KEY}\n")
    );
    let mode = std::fs::metadata(&key_file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}");
    let folder_mode = std::fs::metadata(home.path().join("keys"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(folder_mode, 0o700, "{folder_mode:o}");
    let text = std::fs::read_to_string(home.path().join("config.toml")).unwrap();
    assert_eq!(
        text,
        format!(
            "{CONFIG}\n[providers.lab]\nkind = \"openai\"\nbase_url = \"{}/v1\"\ndefault_model = \"local-model\"\napi_key_file = \"{}\"\n",
            models.url(),
            key_file.display()
        )
    );
    assert!(!text.contains(KEY), "the key is never in config.toml");

    // Listed now, by the running server; its key is used from the file.
    let listed = client
        .call::<ProviderList>(&ProviderListParams {})
        .await
        .unwrap();
    let lab = listed
        .providers
        .iter()
        .find(|provider| provider.id == "lab")
        .unwrap_or_else(|| panic!("lab missing from {listed:?}"));
    assert_eq!(lab.default_model.as_deref(), Some("local-model"));
    assert!(!format!("{listed:?}").contains(KEY));
    let checked = models
        .requests()
        .into_iter()
        .find(|request| request.path.ends_with("/models"))
        .expect("the check listed the models");
    assert_eq!(
        checked.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );

    // The root's subscribers are told the new list of harnesses.
    let announced = next_envelope(&mut notifications).await;
    let wire::Action::HarnessesChanged { harnesses } = announced.action else {
        panic!("expected harnessesChanged, got {announced:?}");
    };
    let ids: Vec<&str> = harnesses
        .iter()
        .map(|harness| harness.id.as_str())
        .collect();
    assert_eq!(ids, ["fake", "lab"]);
    let initialized = client.initialize("again").await.unwrap();
    assert_eq!(initialized.harnesses, harnesses);

    // A chat on it runs now, against the provider, with the key from its file.
    models.enqueue_for(
        "/v1/chat/completions",
        OpenAiStream::text_answer("local-model", &["Hello ", "from the lab."], 9, 4),
    );
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            harness: Some("lab".to_owned()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap()
        .session;
    assert_eq!(session.summary.harness, "lab");
    let chat = session.chats[0].summary.uri.clone();
    client
        .call::<Subscribe>(&SubscribeParams {
            resource: chat.clone(),
            last_seq: None,
            turn_limit: None,
        })
        .await
        .unwrap();
    let turn_id = send(&client, &chat, "Say hello").await;
    let streamed: String = until_completed(&mut notifications, &turn_id)
        .await
        .into_iter()
        .filter_map(|envelope| match envelope.action {
            wire::Action::TextDelta { text, .. } => Some(text),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, "Hello from the lab.");
    let asked = models
        .wait_for_request(WAIT, |request| {
            request.path.ends_with("/chat/completions")
                && request.json()["messages"].to_string().contains("Say hello")
        })
        .await
        .expect("the chat's turn asked the provider");
    assert_eq!(
        asked.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(asked.json()["model"], "local-model");

    // The same name again is refused before anything is asked or written.
    let asked = models.requests().len();
    let again = client
        .call::<ProviderAdd>(&add("lab", &models.url(), ProviderKeyParam::None))
        .await
        .unwrap_err();
    assert_eq!(rpc_error(again).kind(), ErrorKind::Conflict);
    assert_eq!(models.requests().len(), asked);

    // Removing it takes its key file along and leaves the rest of the file as it was.
    let removed = client
        .call::<ProviderRemove>(&ProviderRemoveParams { id: "lab".into() })
        .await
        .unwrap();
    assert!(removed.key_file_removed);
    assert!(!key_file.exists());
    assert_eq!(
        std::fs::read_to_string(home.path().join("config.toml")).unwrap(),
        CONFIG
    );
    let unknown = client
        .call::<ProviderRemove>(&ProviderRemoveParams { id: "lab".into() })
        .await
        .unwrap_err();
    assert_eq!(rpc_error(unknown).kind(), ErrorKind::NotFound);
}

#[tokio::test]
async fn an_environment_variable_is_named_not_copied_and_bad_names_are_refused() {
    let home = tempfile::tempdir().unwrap();
    let server = server_in(home.path()).await;
    let (client, _notifications) = server.client().await;
    let models = MockModelServer::start().await.unwrap();

    // A variable the server's environment lacks: the check fails, nothing is saved.
    let answer = client
        .call::<ProviderAdd>(&add(
            "lab",
            &models.url(),
            ProviderKeyParam::Environment {
                variable: "HEARTH_TEST_PROVIDER_SETUP_UNSET".to_owned(),
            },
        ))
        .await
        .unwrap();
    let ProviderAddResponse::Failed { test } = answer else {
        panic!("expected the check to fail, got {answer:?}");
    };
    let ProviderTestOutcome::Failed { error, .. } = &test.outcome else {
        panic!("{test:?}");
    };
    assert!(
        error.contains("HEARTH_TEST_PROVIDER_SETUP_UNSET"),
        "{error}"
    );
    assert_eq!(
        std::fs::read_to_string(home.path().join("config.toml")).unwrap(),
        CONFIG
    );

    for (id, key) in [
        ("has space", ProviderKeyParam::None),
        ("", ProviderKeyParam::None),
        (
            "ok",
            ProviderKeyParam::Environment {
                variable: "NOT A NAME".to_owned(),
            },
        ),
        (
            "ok",
            ProviderKeyParam::Pasted {
                key: " ".to_owned(),
            },
        ),
    ] {
        let refused = client
            .call::<ProviderAdd>(&add(id, &models.url(), key))
            .await
            .unwrap_err();
        assert_eq!(rpc_error(refused).kind(), ErrorKind::InvalidParams, "{id}");
    }
    assert!(models.requests().is_empty(), "nothing was asked");
}
