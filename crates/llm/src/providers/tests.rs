use std::path::Path;

use super::*;
use pretty_assertions::assert_eq;

fn no_detection() -> DiscoveryOptions {
    DiscoveryOptions {
        detect_ollama: false,
        ..DiscoveryOptions::default()
    }
}

fn config(text: &str) -> Config {
    Config::parse(text, Path::new("config.toml")).unwrap()
}

/// (id, protocol, base url, default model, source, key status) of each provider.
fn table(
    discovery: &Discovery,
) -> Vec<(String, Protocol, String, Option<String>, String, KeyStatus)> {
    discovery
        .providers
        .iter()
        .map(|provider| {
            (
                provider.id.clone(),
                provider.protocol,
                provider.base_url().to_owned(),
                provider.default_model.clone(),
                provider.source.to_string(),
                provider.key.clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn nothing_configured_finds_nothing() {
    let discovery = discover_providers(
        &Config::default(),
        &Environment::from_pairs::<&str, &str>([]),
        &no_detection(),
    )
    .await;
    assert!(discovery.is_empty());
    assert_eq!(discovery.default_provider, None);
    assert!(discovery.select(None).is_err());
}

#[tokio::test]
async fn environment_defines_openai_and_anthropic() {
    let env = Environment::from_pairs([
        ("OPENAI_API_KEY", "sk-openai"),
        ("ANTHROPIC_API_KEY", "sk-ant"),
        ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/"),
    ]);
    let discovery = discover_providers(&Config::default(), &env, &no_detection()).await;
    assert_eq!(
        table(&discovery),
        vec![
            (
                "openai".into(),
                Protocol::OpenAiChat,
                "https://api.openai.com/v1".into(),
                Some("gpt-4.1-mini".into()),
                "environment (OPENAI_API_KEY)".into(),
                KeyStatus::Found {
                    from: "OPENAI_API_KEY".into()
                },
            ),
            (
                "anthropic".into(),
                Protocol::AnthropicMessages,
                "http://127.0.0.1:9/".into(),
                None,
                "environment (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL)".into(),
                KeyStatus::Found {
                    from: "ANTHROPIC_API_KEY".into()
                },
            ),
        ]
    );
    assert_eq!(discovery.default_provider.as_deref(), Some("openai"));
    assert!(!format!("{discovery:?}").contains("sk-openai"));
    assert!(!discovery.render().contains("sk-"));
}

#[tokio::test]
async fn config_providers_come_first_and_win_over_the_environment() {
    let config = config(
        r#"
        [defaults]
        provider = "local"
        model = "llama3.2"

        [providers.openai]
        kind = "openai"
        default_model = "gpt-4o"
        max_retries = 5
        idle_timeout_secs = 7

        [providers.local]
        kind = "openai"
        base_url = "http://127.0.0.1:11434/v1"

        [providers.router]
        kind = "openai"
        base_url = "https://openrouter.example/api/v1"
        api_key_env = "ROUTER_KEY"
        models = ["a/b", "c/d"]

        [providers.agent]
        kind = "acp"
        command = "some-agent"
        "#,
    );
    let env = Environment::from_pairs([("OPENAI_API_KEY", "sk-env")]);
    let discovery = discover_providers(&config, &env, &no_detection()).await;
    assert_eq!(
        table(&discovery),
        vec![
            (
                "local".into(),
                Protocol::OpenAiChat,
                "http://127.0.0.1:11434/v1".into(),
                Some("llama3.2".into()),
                "config.toml".into(),
                KeyStatus::NotNeeded,
            ),
            (
                "openai".into(),
                Protocol::OpenAiChat,
                "https://api.openai.com/v1".into(),
                Some("gpt-4o".into()),
                "config.toml".into(),
                KeyStatus::Found {
                    from: "OPENAI_API_KEY".into()
                },
            ),
            (
                "router".into(),
                Protocol::OpenAiChat,
                "https://openrouter.example/api/v1".into(),
                Some("a/b".into()),
                "config.toml".into(),
                KeyStatus::Missing {
                    expected: "ROUTER_KEY".into()
                },
            ),
        ]
    );
    let openai = discovery.get("openai").unwrap();
    assert_eq!(openai.options.retry.max_retries, 5);
    assert_eq!(openai.options.idle_timeout, Duration::from_secs(7));
    // The local server never receives the OpenAI key.
    assert!(discovery.get("local").unwrap().options.api_key.is_none());
    assert_eq!(discovery.select(None).unwrap().id, "local");
    assert_eq!(
        discovery.select(Some("nope")).unwrap_err().to_string(),
        "there is no model provider `nope`; available: local, openai, router"
    );
    assert!(matches!(
        discovery.get("router").unwrap().client(),
        Err(LlmError::MissingApiKey { .. })
    ));
}

#[tokio::test]
async fn configuration_problems_are_reported_not_fatal() {
    let config = config(
        r#"
        [defaults]
        provider = "missing"

        [providers.nokind]
        base_url = "http://127.0.0.1:1/v1"

        [providers.bad]
        kind = "anthropic"
        base_url = "localhost:8080"
        "#,
    );
    let env = Environment::from_pairs([("ANTHROPIC_API_KEY", "k")]);
    let discovery = discover_providers(&config, &env, &no_detection()).await;
    assert_eq!(
        discovery.problems,
        vec![
            "base URL `localhost:8080` of provider bad is not usable: it must start with http:// or https://; fix [providers.bad] in config.toml".to_owned(),
            "provider `nokind` in config.toml has no `kind`: add kind = \"openai\" or kind = \"anthropic\"".to_owned(),
            "[defaults] provider = \"missing\" is not an available model provider; using anthropic".to_owned(),
        ]
    );
    assert_eq!(discovery.default_provider.as_deref(), Some("anthropic"));
}

/// Sections without `base_url` (`openai`, `anthropic`) and one with it (`pinned`).
fn sections_with_and_without_base_url() -> Config {
    config(
        r#"
        [providers.openai]
        kind = "openai"
        default_model = "local-model"

        [providers.anthropic]
        kind = "anthropic"
        default_model = "claude-local"

        [providers.pinned]
        kind = "openai"
        base_url = "http://127.0.0.1:7/v1"
        "#,
    )
}

/// A provider's base URL, where it came from, its key and its default model.
fn row(discovery: &Discovery, id: &str) -> (String, String, KeyStatus, Option<String>) {
    let provider = discovery.get(id).unwrap();
    (
        provider.base_url().to_owned(),
        provider.base_url_source.to_string(),
        provider.key.clone(),
        provider.default_model.clone(),
    )
}

/// A section without `base_url` takes the standard variable when it is set; `base_url` in
/// the section always wins. (A user who adds a default model to their config must not
/// see their traffic move to another host.)
#[tokio::test]
async fn a_section_without_base_url_takes_the_standard_variable() {
    // Both variables set: each section goes where its variable points, with the key the
    // environment pairs with it.
    let env = Environment::from_pairs([
        ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
        ("OPENAI_API_KEY", "sk-local"),
        ("ANTHROPIC_BASE_URL", "http://127.0.0.1:8"),
    ]);
    let discovery =
        discover_providers(&sections_with_and_without_base_url(), &env, &no_detection()).await;
    assert_eq!(
        row(&discovery, "openai"),
        (
            "http://127.0.0.1:9/v1".into(),
            "from OPENAI_BASE_URL".into(),
            KeyStatus::Found {
                from: "OPENAI_API_KEY".into()
            },
            Some("local-model".into()),
        )
    );
    assert_eq!(
        row(&discovery, "anthropic"),
        (
            "http://127.0.0.1:8/".into(),
            "from ANTHROPIC_BASE_URL".into(),
            // A local server may need no key: none is demanded.
            KeyStatus::NotNeeded,
            Some("claude-local".into()),
        )
    );
    assert_eq!(
        row(&discovery, "pinned"),
        (
            "http://127.0.0.1:7/v1".into(),
            "base_url in config.toml".into(),
            KeyStatus::NotNeeded,
            None,
        )
    );
    // The key paired with the standard base URL never goes to a base_url the
    // configuration names for another server.
    assert!(discovery.get("pinned").unwrap().options.api_key.is_none());
    assert!(
        discovery
            .render()
            .contains("http://127.0.0.1:9/v1 (from OPENAI_BASE_URL)")
    );
}

/// Without the standard variables, a section without `base_url` goes to the official
/// endpoint, and its key is needed.
#[tokio::test]
async fn a_section_without_base_url_or_variable_takes_the_official_endpoint() {
    let env = Environment::from_pairs::<&str, &str>([]);
    let discovery =
        discover_providers(&sections_with_and_without_base_url(), &env, &no_detection()).await;
    assert_eq!(
        row(&discovery, "openai"),
        (
            "https://api.openai.com/v1".into(),
            "official endpoint: no base_url and OPENAI_BASE_URL not set".into(),
            KeyStatus::Missing {
                expected: "OPENAI_API_KEY".into()
            },
            Some("local-model".into()),
        )
    );
    assert_eq!(
        row(&discovery, "anthropic").0,
        "https://api.anthropic.com/".to_owned()
    );
}

/// A standard variable that is not a URL is named in the problem, with the section.
#[tokio::test]
async fn a_standard_variable_that_is_not_a_url_is_named_with_its_section() {
    let env = Environment::from_pairs([("OPENAI_BASE_URL", "localhost:1234")]);
    let discovery =
        discover_providers(&sections_with_and_without_base_url(), &env, &no_detection()).await;
    assert!(discovery.get("openai").is_none());
    assert!(
        discovery
            .problems
            .iter()
            .any(|problem| problem.contains("fix OPENAI_BASE_URL")
                && problem.contains("provider `openai`")),
        "{:?}",
        discovery.problems
    );
}

#[tokio::test]
async fn a_key_file_gives_the_key_and_an_unreadable_one_is_a_problem() {
    let directory = tempfile::tempdir().unwrap();
    let key_file = directory.path().join("lab.key");
    std::fs::write(&key_file, "sk-from-file\n").unwrap();
    let missing = directory.path().join("gone.key");
    let discovery = discover_providers(
        &config(&format!(
            "[providers.lab]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key_file = \"{}\"\n\n[providers.gone]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key_file = \"{}\"\n",
            key_file.display(),
            missing.display()
        )),
        &Environment::from_pairs::<&str, &str>([]),
        &no_detection(),
    )
    .await;
    let lab = discovery.get("lab").unwrap();
    assert_eq!(
        lab.key,
        KeyStatus::Found {
            from: format!("key file {}", key_file.display())
        }
    );
    assert_eq!(
        lab.options.api_key.as_ref().unwrap().expose(),
        "sk-from-file"
    );
    assert!(discovery.get("gone").is_none());
    assert_eq!(discovery.problems.len(), 1, "{:?}", discovery.problems);
    assert!(
        discovery.problems[0].starts_with(&format!(
            "cannot read the key file {} of provider `gone`",
            missing.display()
        )),
        "{:?}",
        discovery.problems
    );
}
