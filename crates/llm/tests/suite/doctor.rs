//! Checking providers the way `hearth doctor` does.

use std::path::Path;

use hearth_config::Config;
use hearth_llm::{
    CancellationToken, CheckMethod, CheckOutcome, DiscoveryOptions, Environment, ProviderCheck,
    ResolvedProvider, check_provider, check_providers, discover_providers,
};
use hearth_test_support::{MockModelServer, MockResponse, OpenAiStream};
use pretty_assertions::assert_eq;
use serde_json::json;

async fn provider(config: &str, env: &[(&str, &str)]) -> ResolvedProvider {
    let config = Config::parse(config, Path::new("config.toml")).unwrap();
    let options = DiscoveryOptions {
        detect_ollama: false,
        ..DiscoveryOptions::default()
    };
    let discovery = discover_providers(
        &config,
        &Environment::from_pairs(env.iter().copied()),
        &options,
    )
    .await;
    discovery.providers.into_iter().next().unwrap()
}

fn config_for(server: &MockModelServer, default_model: &str) -> String {
    format!(
        "[providers.local]\nkind = \"openai\"\nbase_url = \"{}\"\ndefault_model = \"{default_model}\"\n",
        server.url_with("/v1")
    )
}

fn config_without_model(server: &MockModelServer) -> String {
    format!(
        "[providers.local]\nkind = \"openai\"\nbase_url = \"{}\"\n",
        server.url_with("/v1")
    )
}

/// The outcome with its latency zeroed (latencies vary).
fn settled(check: ProviderCheck) -> ProviderCheck {
    let outcome = match check.outcome {
        CheckOutcome::Ok {
            method,
            models,
            notes,
            ..
        } => CheckOutcome::Ok {
            method,
            latency: std::time::Duration::ZERO,
            models,
            notes,
        },
        failed => failed,
    };
    ProviderCheck { outcome, ..check }
}

#[tokio::test]
async fn a_working_provider_lists_its_models_and_its_model_answers() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(MockResponse::json(
        200,
        &json!({"data": [{"id": "a"}, {"id": "b"}]}),
    ));
    server.enqueue(OpenAiStream::text_answer("b", &["p"], 3, 1));
    let provider = provider(&config_for(&server, "b"), &[]).await;
    let check = check_provider(&provider, &CancellationToken::new()).await;

    assert!(check.is_ok(), "{check}");
    assert_eq!(
        settled(check.clone()),
        ProviderCheck {
            provider: "local".into(),
            base_url: server.url_with("/v1"),
            outcome: CheckOutcome::Ok {
                method: CheckMethod::ListedAndAsked { model: "b".into() },
                latency: std::time::Duration::ZERO,
                models: vec!["a".into(), "b".into()],
                notes: vec![],
            },
        }
    );
    assert!(check.to_string().starts_with(&format!(
        "ok      local ({}): listed 2 model(s), b answered a one-token request in ",
        server.url_with("/v1")
    )));
    let requests = server.requests();
    assert_eq!(requests[0].path, "/v1/models");
    assert_eq!(requests[1].path, "/v1/chat/completions");
    assert_eq!(requests[1].json()["max_tokens"], json!(1));
}

#[tokio::test]
async fn a_listing_that_works_does_not_hide_a_chat_endpoint_that_refuses() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(MockResponse::json(200, &json!({"data": [{"id": "a"}]})));
    server.enqueue(MockResponse::openai_error(
        401,
        "Incorrect API key provided.",
        "invalid_request_error",
    ));
    // No default model: the one model listed is the one asked.
    let provider = provider(&config_without_model(&server), &[]).await;
    let check = check_provider(&provider, &CancellationToken::new()).await;
    assert!(!check.is_ok());
    let CheckOutcome::Failed { error, fix } = &check.outcome else {
        panic!("{check}");
    };
    assert!(error.contains("401"), "{error}");
    assert!(fix.starts_with("the API key was rejected"), "{fix}");
    assert_eq!(server.requests()[1].json()["model"], json!("a"));
}

#[tokio::test]
async fn several_models_and_no_default_name_the_models_and_the_fix() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(MockResponse::json(
        200,
        &json!({"data": [{"id": "a"}, {"id": "b"}, {"id": "c"}]}),
    ));
    let provider = provider(&config_without_model(&server), &[]).await;
    let check = check_provider(&provider, &CancellationToken::new()).await;
    assert_eq!(
        check.outcome,
        CheckOutcome::Failed {
            error: "no model is chosen and the provider offers 3: a, b, c".into(),
            fix: "pass --model, or set default_model in [providers.local] in config.toml".into(),
        }
    );
}

#[tokio::test]
async fn without_a_listing_a_one_token_request_is_sent() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(MockResponse::json(404, &json!({"detail": "Not Found"})));
    server.enqueue(OpenAiStream::text_answer("tiny", &["p"], 3, 1));
    let provider = provider(&config_for(&server, "tiny"), &[]).await;
    let check = check_provider(&provider, &CancellationToken::new()).await;

    assert_eq!(
        settled(check).outcome,
        CheckOutcome::Ok {
            method: CheckMethod::OneTokenRequest {
                model: "tiny".into()
            },
            latency: std::time::Duration::ZERO,
            models: vec![],
            notes: vec![],
        }
    );
    let requests = server.requests();
    assert_eq!(requests[1].json()["max_tokens"], json!(1));
    assert_eq!(
        requests[1].json()["messages"],
        json!([{"role": "user", "content": "ping"}])
    );
}

#[tokio::test]
async fn an_unknown_model_is_named_in_the_fix() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(MockResponse::json(404, &json!({"detail": "Not Found"})));
    server.enqueue(MockResponse::openai_error(
        404,
        "model \"big\" not found, try pulling it first",
        "api_error",
    ));
    let provider = provider(&config_for(&server, "big"), &[]).await;
    let check = check_provider(&provider, &CancellationToken::new()).await;

    assert_eq!(
        check.outcome,
        CheckOutcome::Failed {
            error: "local answered HTTP 404 (api_error): model \"big\" not found, try pulling it first".into(),
            fix: "the provider does not offer model `big`: choose one it lists, and set default_model in [providers.local] in config.toml".into(),
        }
    );
}

#[tokio::test]
async fn a_rejected_key_says_exactly_what_failed_and_what_to_fix() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        MockResponse::openai_error(401, "Incorrect API key provided.", "invalid_request_error")
            .with_header("x-request-id", "req_9"),
    );
    let config = format!(
        "[providers.openai]\nkind = \"openai\"\nbase_url = \"{}\"\napi_key_env = \"OPENAI_API_KEY\"\n",
        server.url_with("/v1")
    );
    let provider = provider(&config, &[("OPENAI_API_KEY", "sk-bad")]).await;
    let check = check_provider(&provider, &CancellationToken::new()).await;

    assert_eq!(
        check.outcome,
        CheckOutcome::Failed {
            error: "openai answered HTTP 401 (invalid_request_error): Incorrect API key provided. [request id req_9]".into(),
            fix: "the API key was rejected: check OPENAI_API_KEY (create a new key in the provider's console if needed)".into(),
        }
    );
    assert_eq!(server.requests().len(), 1, "a check never retries");
}

#[tokio::test]
async fn an_unreachable_server_and_a_missing_key_are_explained() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let config = format!(
        "[providers.down]\nkind = \"openai\"\nbase_url = \"http://{address}/v1\"\n\n[providers.nokey]\nkind = \"anthropic\"\n"
    );
    let config = Config::parse(&config, Path::new("config.toml")).unwrap();
    let options = DiscoveryOptions {
        detect_ollama: false,
        ..DiscoveryOptions::default()
    };
    let discovery = discover_providers(
        &config,
        &Environment::from_pairs::<&str, &str>([]),
        &options,
    )
    .await;
    let checks = check_providers(&discovery, &CancellationToken::new()).await;

    let CheckOutcome::Failed { error, fix } = &checks[0].outcome else {
        panic!("{checks:?}");
    };
    assert!(
        error.starts_with(&format!("cannot reach down at http://{address}/v1/models")),
        "{error}"
    );
    assert_eq!(
        fix,
        &format!(
            "nothing answers at http://{address}/v1: start the server, or correct base_url in [providers.down] in config.toml"
        )
    );
    assert_eq!(
        checks[1].outcome,
        CheckOutcome::Failed {
            error: "no API key for nokey: set ANTHROPIC_API_KEY or `api_key_env` in config.toml".into(),
            fix: "export ANTHROPIC_API_KEY=<your key> (or set api_key_env in [providers.nokey] of config.toml)".into(),
        }
    );
}

#[tokio::test]
async fn an_unreachable_base_url_from_the_environment_names_that_variable() {
    let address = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let options = DiscoveryOptions {
        detect_ollama: false,
        ..DiscoveryOptions::default()
    };
    let discovery = discover_providers(
        &Config::default(),
        &Environment::from_pairs([
            ("OPENAI_API_KEY", "sk-test"),
            ("OPENAI_BASE_URL", &format!("http://{address}/v1")),
        ]),
        &options,
    )
    .await;
    let checks = check_providers(&discovery, &CancellationToken::new()).await;
    let CheckOutcome::Failed { fix, .. } = &checks[0].outcome else {
        panic!("{checks:?}");
    };
    assert_eq!(
        fix,
        &format!(
            "nothing answers at http://{address}/v1: start the server, or correct $OPENAI_BASE_URL"
        )
    );
}
