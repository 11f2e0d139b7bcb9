//! OpenID Connect login against a real OpenID provider (oidc-provider from npm, see
//! `hearth_test_support::oidc`): a browser (reqwest keeping cookies, following every
//! redirect by hand) logs in at the provider's login and consent pages, comes back to
//! `/auth/oidc/callback`, and trades the login code it is handed at `/#login=` for a
//! session that carries its user. The tests that need the provider are skipped, saying
//! why, when node or the package is missing, unless `HEARTH_REQUIRE_OIDC=1`.

use std::sync::{Arc, Mutex};

use hearth_core::HarnessId;
use hearth_server::{
    Backend, IdentityResolver, Listener, OidcIdentity, OidcOptions, Secret, ServerOptions,
};
use hearth_store::UserStore;
use hearth_test_support::oidc::{
    CLIENT_ID, CLIENT_SECRET, Provider, browser, free_port, installed, open, start_login,
    through_the_provider, trade,
};
use hearth_test_support::{FakeAgent, TestHost};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::sync::oneshot;

/// A Hearth server with OpenID Connect login, in process.
struct Team {
    url: String,
    token: Secret,
    /// The team server's users.
    users: Arc<hearth_store::SqliteStore>,
    _host: TestHost,
    stop: Option<oneshot::Sender<()>>,
}

impl Drop for Team {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            stop.send(()).ok();
        }
    }
}

impl Team {
    /// A server on a free port whose users log in at `issuer` (as a client with
    /// `client_secret`), named by `resolver`.
    async fn start(issuer: &str, client_secret: &str, resolver: IdentityResolver) -> Self {
        let fake = FakeAgent::new("fake");
        let host = TestHost::start(vec![fake]).await;
        let users = host.sqlite();
        let backend = Backend {
            default_provider: Some(HarnessId::parse("fake").unwrap()),
            accounts: Some(users.clone()),
            ..Backend::new(host.host.clone())
        };
        // The test's resolver names the user; the store keeps them, as `hearth serve` does.
        let store = users.clone();
        let resolver: IdentityResolver = Arc::new(move |identity: OidcIdentity| {
            let named = resolver(identity.clone());
            let store = store.clone();
            Box::pin(async move {
                let name = named.await?;
                store
                    .user_for_identity(&identity.issuer, &identity.subject, &name)
                    .await
                    .map(|user| user.id)
                    .map_err(|error| error.to_string())
            })
        });
        let mut options = ServerOptions::at("127.0.0.1", 0).unwrap();
        options.oidc = Some(OidcOptions {
            issuer_url: issuer.to_owned(),
            client_id: CLIENT_ID.to_owned(),
            client_secret: Some(client_secret.to_owned()),
            resolver,
        });
        let token = Secret::generate().unwrap();
        let listener = Listener::bind(options).await.unwrap();
        let server = listener.into_server(backend, token.clone()).unwrap();
        let url = server.url();
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(server.serve(async move {
            stopped.await.ok();
        }));
        Self {
            url,
            token,
            users,
            _host: host,
            stop: Some(stop),
        }
    }

    fn callback_uri(&self) -> String {
        format!("{}/auth/oidc/callback", self.url)
    }
}

/// A provider and a server that send people to each other (`None`: skipped). The
/// provider's port is picked before the server starts (the server needs its issuer, the
/// provider the server's callback), so when another process takes it meanwhile both are
/// started again.
async fn team_with_provider(resolver: IdentityResolver) -> Option<(Team, Provider)> {
    team_with_secret(CLIENT_SECRET, resolver).await
}

/// [`team_with_provider`], the server using `client_secret` at the provider.
async fn team_with_secret(
    client_secret: &str,
    resolver: IdentityResolver,
) -> Option<(Team, Provider)> {
    installed()?;
    let mut failures = Vec::new();
    for _ in 0..3 {
        let (probe, issuer_port) = free_port();
        let issuer = format!("http://127.0.0.1:{issuer_port}");
        let team = Team::start(&issuer, client_secret, Arc::clone(&resolver)).await;
        drop(probe);
        match Provider::start(issuer_port, &[team.callback_uri()]).await? {
            Ok(provider) => return Some((team, provider)),
            Err(failure) => failures.push(failure),
        }
    }
    panic!("the provider never started: {failures:?}");
}

/// A resolver that names `u-<subject>` and remembers every identity it was shown.
fn naming_resolver(seen: Arc<Mutex<Vec<OidcIdentity>>>) -> IdentityResolver {
    Arc::new(move |identity: OidcIdentity| {
        seen.lock().unwrap().push(identity.clone());
        Box::pin(async move { Ok(format!("u-{}", identity.subject)) })
    })
}

#[tokio::test]
async fn a_person_logs_in_at_the_provider_and_their_session_carries_their_user() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let Some((team, provider)) = team_with_provider(naming_resolver(Arc::clone(&seen))).await
    else {
        return;
    };
    let browser = browser();
    // Agent Home's login page offers the team login.
    let methods: serde_json::Value = browser
        .get(format!("{}/auth/methods", team.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(methods, serde_json::json!({"oidc": true}));
    let authorize = start_login(&team.url, &browser).await;
    let query: Vec<(String, String)> = authorize.query_pairs().into_owned().collect();
    let param = |name: &str| {
        query
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    };
    assert_eq!(param("code_challenge_method"), Some("S256"));
    assert!(
        param("nonce").is_some() && param("state").is_some(),
        "{authorize}"
    );
    assert_eq!(param("redirect_uri"), Some(team.callback_uri().as_str()));

    let callback = through_the_provider(&browser, authorize, "alice").await;
    let (status, location, page) = open(&browser, &callback).await;
    assert_eq!(status, 303, "{page}");
    let location = location.unwrap();
    let code = location
        .strip_prefix("/#login=")
        .unwrap_or_else(|| panic!("{location}"));
    assert_eq!(
        *seen.lock().unwrap(),
        [OidcIdentity {
            issuer: provider.issuer.clone(),
            subject: "alice".to_owned(),
            name: Some("alice".to_owned()),
            email: Some("alice@example.test".to_owned()),
        }]
    );

    // The page trades the code (once) for a session of the user named u-alice.
    let (status, answer) = trade(&team.url, code).await;
    assert_eq!(status, 200, "{answer}");
    let session = answer["session"].as_str().unwrap().to_owned();
    let alice = team
        .users
        .user("u-alice")
        .await
        .unwrap()
        .expect("the login made a user named after the resolver's answer");
    assert_eq!(alice.subject.as_deref(), Some("alice"));
    assert_eq!(session.split('.').nth(2), Some(alice.id.as_str()));
    assert_eq!(trade(&team.url, code).await.0, 401, "a code works once");
    let http = reqwest::Client::new();
    let about: Value = http
        .get(format!("{}/auth/session", team.url))
        .header("x-hearth-session", &session)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(about["user"], alice.id.as_str());
    assert_eq!(about["expiresAt"], answer["expiresAt"]);
    let initialized: Value = http
        .post(format!("{}/rpc", team.url))
        .header("x-hearth-session", &session)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "page"}}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(initialized["result"].is_object(), "{initialized}");

    // The same callback again is a replay: refused (its cookie went with the first use),
    // and nothing is handed out.
    let (status, location, page) = open(&browser, &callback).await;
    assert_eq!((status, location), (400, None), "{page}");
    assert!(page.contains("another browser"), "{page}");
    assert_eq!(
        seen.lock().unwrap().len(),
        1,
        "no identity was resolved again"
    );
}

#[tokio::test]
async fn a_callback_with_a_wrong_state_or_from_another_browser_is_refused() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let Some((team, _provider)) = team_with_provider(naming_resolver(Arc::clone(&seen))).await
    else {
        return;
    };
    let browser = browser();
    let authorize = start_login(&team.url, &browser).await;
    let callback = through_the_provider(&browser, authorize, "alice").await;

    // A state Hearth never issued.
    let mut forged = callback.clone();
    let pairs: Vec<(String, String)> = callback.query_pairs().into_owned().collect();
    forged
        .query_pairs_mut()
        .clear()
        .extend_pairs(pairs.iter().map(|(key, value)| {
            (
                key.as_str(),
                if key == "state" {
                    "forged"
                } else {
                    value.as_str()
                },
            )
        }));
    let (status, location, page) = open(&browser, &forged).await;
    assert_eq!((status, location), (400, None), "{page}");
    assert!(page.contains("unknown"), "{page}");

    // The real callback, opened in a browser that did not start the login (login CSRF):
    // refused, and the state is used up.
    let (status, location, page) = open(&self::browser(), &callback).await;
    assert_eq!((status, location), (400, None), "{page}");
    assert!(page.contains("another browser"), "{page}");
    let (status, location, page) = open(&browser, &callback).await;
    assert_eq!((status, location), (400, None), "{page}");
    assert!(seen.lock().unwrap().is_empty(), "no identity was resolved");
}

#[tokio::test]
async fn a_refusal_of_the_user_directory_is_shown_with_403() {
    let resolver: IdentityResolver = Arc::new(|identity: OidcIdentity| {
        Box::pin(async move {
            Err(format!(
                "{} has no account on this team's Hearth",
                identity.subject
            ))
        })
    });
    let Some((team, _provider)) = team_with_provider(resolver).await else {
        return;
    };
    let browser = browser();
    let authorize = start_login(&team.url, &browser).await;
    let callback = through_the_provider(&browser, authorize, "mallory").await;
    let (status, location, page) = open(&browser, &callback).await;
    assert_eq!((status, location), (403, None), "{page}");
    assert!(
        page.contains("mallory has no account on this team&#39;s Hearth"),
        "{page}"
    );
}

#[tokio::test]
async fn a_code_the_provider_does_not_trade_is_refused_with_its_reason() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let resolver = naming_resolver(Arc::clone(&seen));
    let Some((team, _provider)) = team_with_secret("not the client secret", resolver).await else {
        return;
    };
    let browser = browser();
    let authorize = start_login(&team.url, &browser).await;
    let callback = through_the_provider(&browser, authorize, "alice").await;
    let (status, location, page) = open(&browser, &callback).await;
    assert_eq!((status, location), (400, None), "{page}");
    assert!(
        page.contains("did not accept the login code: invalid_client"),
        "{page}"
    );
    assert!(seen.lock().unwrap().is_empty(), "no identity was resolved");
}

#[tokio::test]
async fn an_unreachable_provider_fails_the_login_only_and_is_asked_again_next_time() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (probe, issuer_port) = free_port();
    drop(probe);
    let team = Team::start(
        &format!("http://127.0.0.1:{issuer_port}"),
        CLIENT_SECRET,
        naming_resolver(seen),
    )
    .await;
    let browser = browser();
    let response = browser
        .get(format!("{}/auth/oidc", team.url))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 502);
    let page = response.text().await.unwrap();
    assert!(
        page.contains("Cannot reach the OpenID provider at http://127.0.0.1:"),
        "{page}"
    );

    // The token API is served all along.
    let initialized: Value = reqwest::Client::new()
        .post(format!("{}/rpc", team.url))
        .bearer_auth(team.token.expose())
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "cli"}}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(initialized["result"].is_object(), "{initialized}");

    // Once the provider is up, the next login finds it.
    let Some(provider) = Provider::start(issuer_port, &[team.callback_uri()]).await else {
        return;
    };
    let _provider = provider.unwrap();
    let authorize = start_login(&team.url, &browser).await;
    assert_eq!(authorize.port(), Some(issuer_port), "{authorize}");
}

#[tokio::test]
async fn a_server_without_oidc_has_no_oidc_login() {
    let server = super::support::TestServer::start().await;
    let response = reqwest::Client::new()
        .get(format!("{}/auth/oidc", server.url))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    assert!(response.text().await.unwrap().contains("hearth login"));
    // Agent Home's login page offers only the one-time link.
    let methods: serde_json::Value = reqwest::Client::new()
        .get(format!("{}/auth/methods", server.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(methods, serde_json::json!({"oidc": false}));
}
