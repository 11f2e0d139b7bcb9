//! Providers from config, environment and a local Ollama, end to end against the mock.

use std::path::Path;
use std::time::Duration;

use hearth_config::Config;
use hearth_llm::{
    CancellationToken, Discovery, DiscoveryOptions, Environment, KeyStatus, LlmError, Protocol,
    ProviderSource, discover_providers,
};
use hearth_test_support::{MockModelServer, MockResponse, OpenAiStream};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{KEY, WAIT, drain, hello};

fn closed_port() -> std::net::SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    address
}

fn ollama_tags() -> MockResponse {
    MockResponse::json(
        200,
        &json!({"models": [{"name": "llama3.2:latest", "model": "llama3.2:latest", "size": 1}, {"name": "qwen3:8b"}]}),
    )
}

async fn discover(config: &Config, env: &Environment, ollama: std::net::SocketAddr) -> Discovery {
    let options = DiscoveryOptions {
        ollama_address: ollama,
        ..DiscoveryOptions::default()
    };
    discover_providers(config, env, &options).await
}

#[tokio::test]
async fn a_local_ollama_is_detected_and_used() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(ollama_tags());
    server.enqueue(OpenAiStream::text_answer("llama3.2:latest", &["hi"], 1, 1));
    let discovery = discover(
        &Config::default(),
        &Environment::from_pairs::<&str, &str>([]),
        server.address(),
    )
    .await;

    assert_eq!(discovery.default_provider.as_deref(), Some("ollama"));
    let ollama = discovery.get("ollama").unwrap();
    assert_eq!(
        (
            ollama.protocol,
            ollama.base_url().to_owned(),
            ollama.default_model.clone(),
            ollama.models.clone()
        ),
        (
            Protocol::OpenAiChat,
            server.url_with("/v1"),
            Some("llama3.2:latest".to_owned()),
            vec!["llama3.2:latest".to_owned(), "qwen3:8b".to_owned()],
        )
    );
    assert_eq!(
        ollama.source,
        ProviderSource::DetectedOllama {
            address: server.address().to_string()
        }
    );
    assert_eq!(ollama.key, KeyStatus::NotNeeded);

    let (_, error) = drain(
        ollama
            .client()
            .unwrap()
            .stream(hello("llama3.2:latest"), CancellationToken::new()),
    )
    .await;
    assert_eq!(error, None);
    let paths: Vec<_> = server
        .requests()
        .iter()
        .map(|request| format!("{} {}", request.method, request.path))
        .collect();
    assert_eq!(paths, vec!["GET /api/tags", "POST /v1/chat/completions"]);
}

#[tokio::test]
async fn no_ollama_is_found_quickly_when_nothing_listens() {
    // The refused connection says so at once: with a probe timeout far beyond the
    // test's bound, discovery ends only if it does not wait the timeout out.
    let options = DiscoveryOptions {
        ollama_address: closed_port(),
        probe_timeout: Duration::from_secs(3600),
        ..DiscoveryOptions::default()
    };
    let discovery = tokio::time::timeout(
        WAIT,
        discover_providers(
            &Config::default(),
            &Environment::from_pairs::<&str, &str>([]),
            &options,
        ),
    )
    .await
    .expect("discovery waited for the probe timeout although nothing listens");
    assert!(discovery.is_empty());
}

#[tokio::test]
async fn ollama_host_names_the_server_even_when_it_is_down() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(ollama_tags());
    let env = Environment::from_pairs([("OLLAMA_HOST", server.address().to_string())]);
    let discovery = discover(&Config::default(), &env, closed_port()).await;
    let ollama = discovery.get("ollama").unwrap();
    assert_eq!(
        ollama.source,
        ProviderSource::Environment {
            variables: vec!["OLLAMA_HOST".into()]
        }
    );
    assert_eq!(ollama.models.len(), 2);

    let down = closed_port();
    let env = Environment::from_pairs([("OLLAMA_HOST", format!("http://{down}"))]);
    let discovery = discover(&Config::default(), &env, closed_port()).await;
    let ollama = discovery.get("ollama").unwrap();
    assert_eq!(
        (ollama.base_url().to_owned(), ollama.models.clone()),
        (format!("http://{down}/v1"), vec![])
    );
}

#[tokio::test]
async fn a_configured_provider_sends_its_headers_and_key() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(OpenAiStream::text_answer("router-model", &["ok"], 1, 1));
    let config = Config::parse(
        &format!(
            r#"
            [providers.router]
            kind = "openai"
            base_url = "{}"
            api_key_env = "ROUTER_KEY"
            default_model = "router-model"
            headers = {{ "x-title" = "Hearth" }}
            max_tokens = 77
            "#,
            server.url_with("/api/v1")
        ),
        Path::new("config.toml"),
    )
    .unwrap();
    let env = Environment::from_pairs([("ROUTER_KEY", KEY)]);
    let discovery = discover(&config, &env, closed_port()).await;
    let router = discovery.select(Some("router")).unwrap();
    assert_eq!(
        router.key,
        KeyStatus::Found {
            from: "ROUTER_KEY".into()
        }
    );

    let model = router.default_model.clone().unwrap();
    let (_, error) = drain(
        router
            .client()
            .unwrap()
            .stream(hello(&model), CancellationToken::new()),
    )
    .await;
    assert_eq!(error, None);
    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/api/v1/chat/completions");
    assert_eq!(sent.header("x-title"), Some("Hearth"));
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(sent.json()["max_tokens"], json!(77));
}

#[tokio::test]
async fn keys_never_appear_in_errors_or_debug_output() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(MockResponse::openai_error(
        401,
        &format!("Incorrect API key provided: {KEY}."),
        "invalid_request_error",
    ));
    let env = Environment::from_pairs([
        ("OPENAI_API_KEY", KEY),
        ("OPENAI_BASE_URL", &server.url_with("/v1")),
    ]);
    let discovery = discover(&Config::default(), &env, closed_port()).await;
    let openai = discovery.get("openai").unwrap();
    let client = openai.client().unwrap();
    let (_, error) = drain(client.stream(hello("m"), CancellationToken::new())).await;

    let error = error.unwrap();
    assert_eq!(
        error.api_error().unwrap().message,
        "Incorrect API key provided: <redacted>."
    );
    let openai_client = hearth_llm::OpenAiClient::new(openai.options.clone()).unwrap();
    let anthropic_client = hearth_llm::AnthropicClient::new(openai.options.clone()).unwrap();
    for text in [
        error.to_string(),
        format!("{error:?}"),
        format!("{discovery:?}"),
        format!("{openai:?}"),
        format!("{openai_client:?}"),
        format!("{anthropic_client:?}"),
        discovery.render(),
    ] {
        assert!(!text.contains(KEY), "{text}");
    }
    assert!(matches!(error, LlmError::Api(_)));
}

#[tokio::test]
async fn keys_echoed_in_errors_inside_a_stream_are_redacted() {
    use hearth_llm::ModelClient as _;
    let server = MockModelServer::start().await.unwrap();
    let echoed = format!("request with key {KEY} failed");
    server.enqueue(MockResponse::from(
        hearth_test_support::AnthropicStream::new("claude-test")
            .message_start(5)
            .text_block(&["Partial"])
            .error("api_error", &echoed),
    ));
    server.enqueue(MockResponse::from(
        OpenAiStream::new("gpt-test")
            .text("Partial")
            .chunk(&json!({"error": {"message": echoed, "type": "server_error"}})),
    ));
    let (_, from_anthropic) = drain(
        super::support::anthropic(&server).stream(hello("claude-test"), CancellationToken::new()),
    )
    .await;
    let (_, from_openai) = drain(
        hearth_llm::OpenAiClient::new(super::support::options("openai", &server.url()))
            .unwrap()
            .stream(hello("gpt-test"), CancellationToken::new()),
    )
    .await;
    for error in [from_anthropic.unwrap(), from_openai.unwrap()] {
        let message = &error.api_error().unwrap().message;
        assert_eq!(message, "request with key <redacted> failed", "{error:?}");
        assert!(!error.to_string().contains(KEY), "{error}");
        assert!(!format!("{error:?}").contains(KEY), "{error:?}");
    }
}

#[tokio::test]
async fn max_retries_from_the_configuration_bounds_the_attempts() {
    let server = MockModelServer::start().await.unwrap();
    let config = |retries: u32| {
        Config::parse(
            &format!(
                "[providers.lab]\nkind = \"openai\"\nbase_url = \"{}\"\napi_key = \"{KEY}\"\nmax_retries = {retries}\n",
                server.url_with("/v1")
            ),
            Path::new("config.toml"),
        )
        .unwrap()
    };
    let env = Environment::from_pairs(Vec::<(String, String)>::new());
    for retries in [0_u32, 1] {
        let before = server.requests().len();
        for _ in 0..=retries {
            server.enqueue(
                MockResponse::openai_error(503, "overloaded", "server_error")
                    .with_header("retry-after-ms", "1"),
            );
        }
        let discovery = discover(&config(retries), &env, closed_port()).await;
        let client = discovery.get("lab").unwrap().client().unwrap();
        let (_, error) = drain(client.stream(hello("m"), CancellationToken::new())).await;
        assert!(error.is_some(), "every attempt failed");
        assert_eq!(
            server.requests().len() - before,
            retries as usize + 1,
            "max_retries = {retries}"
        );
    }
}
