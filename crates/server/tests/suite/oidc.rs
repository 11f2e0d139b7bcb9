//! OpenID Connect login against a real OpenID provider (oidc-provider from npm, installed
//! by `.ci/install-oidc-provider`, run by `tests/oidc/provider.mjs`): a browser (reqwest
//! keeping cookies, following every redirect by hand) logs in at the provider's login
//! and consent pages, comes back to `/auth/oidc/callback`, and trades the login code it
//! is handed at `/#login=` for a session that carries its user. The tests that need the
//! provider are skipped, saying why, when node or the package is missing, unless
//! `HEARTH_REQUIRE_OIDC=1`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use hearth_core::HarnessId;
use hearth_server::{
    Backend, IdentityResolver, Listener, OidcIdentity, OidcOptions, Secret, ServerOptions,
};
use hearth_store::UserStore;
use hearth_test_support::{FakeAgent, TestHost};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;
use tokio::sync::oneshot;

use super::support::WAIT;

const CLIENT_ID: &str = "hearth-test";
const CLIENT_SECRET: &str = "hearth test client secret";
const REQUIRE_VARIABLE: &str = "HEARTH_REQUIRE_OIDC";

/// Where the provider package is installed, and the script that runs it; `None` (after
/// saying why) when either is missing, unless [`REQUIRE_VARIABLE`] is `1`.
#[allow(clippy::print_stderr, reason = "a skipped test says why on stderr")]
fn provider_or_skip() -> Option<(PathBuf, PathBuf)> {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let modules = match std::env::var_os("HEARTH_OIDC_PROVIDER_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => tests.join("../../../target/oidc-provider"),
    };
    let package = modules.join("node_modules/oidc-provider/package.json");
    let node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    let reason = if !node {
        "node is not installed".to_owned()
    } else if !package.is_file() {
        format!(
            "{} is missing: run .ci/install-oidc-provider",
            package.display()
        )
    } else {
        return Some((modules, tests.join("oidc/provider.mjs")));
    };
    assert!(
        std::env::var(REQUIRE_VARIABLE).as_deref() != Ok("1"),
        "{REQUIRE_VARIABLE}=1 but {reason}"
    );
    eprintln!("skipping: the OpenID provider cannot run: {reason}");
    None
}

/// A free loopback port, held until the probe is dropped (the provider binds it then).
fn free_port() -> (std::net::TcpListener, u16) {
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = probe.local_addr().unwrap().port();
    (probe, port)
}

/// The OpenID provider's process, killed when dropped.
struct Provider {
    _child: tokio::process::Child,
    issuer: String,
}

impl Provider {
    /// Starts the provider on `port` with one client sent back to `redirect_uri`: `None`
    /// when it cannot run here (skipped), an error when it stopped before listening (the
    /// port was taken meanwhile).
    async fn start(port: u16, redirect_uri: &str) -> Option<Result<Self, String>> {
        let (modules, script) = provider_or_skip()?;
        let mut child = tokio::process::Command::new("node")
            .arg(&script)
            .arg("--modules")
            .arg(&modules)
            .args(["--port", &port.to_string()])
            .args(["--client-id", CLIENT_ID, "--client-secret", CLIENT_SECRET])
            .args(["--redirect-uri", redirect_uri])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|error| panic!("start {}: {error}", script.display()));
        let stdout = child.stdout.take().unwrap();
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        let line = tokio::time::timeout(WAIT, lines.next_line())
            .await
            .expect("the provider printed its issuer in time")
            .unwrap();
        let Some(issuer) = line else {
            return Some(Err(format!(
                "the provider on port {port} stopped before listening (its errors are above)"
            )));
        };
        assert_eq!(issuer, format!("http://127.0.0.1:{port}"));
        Some(Ok(Self {
            _child: child,
            issuer,
        }))
    }
}

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
    provider_or_skip()?;
    let mut failures = Vec::new();
    for _ in 0..3 {
        let (probe, issuer_port) = free_port();
        let issuer = format!("http://127.0.0.1:{issuer_port}");
        let team = Team::start(&issuer, client_secret, Arc::clone(&resolver)).await;
        drop(probe);
        match Provider::start(issuer_port, &team.callback_uri()).await? {
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

/// A browser: keeps cookies, follows no redirect by itself.
fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .timeout(WAIT)
        .build()
        .unwrap()
}

fn location(response: &reqwest::Response, base: &reqwest::Url) -> reqwest::Url {
    let location = response
        .headers()
        .get("location")
        .unwrap_or_else(|| panic!("a redirect without Location: {response:?}"))
        .to_str()
        .unwrap();
    base.join(location).unwrap()
}

/// The `action` and the `name`/`value` of the hidden inputs of the page's first form.
fn first_form(page: &str) -> (String, Vec<(String, String)>) {
    let attribute = |tag: &str, name: &str| -> Option<String> {
        let start = tag.find(&format!("{name}=\""))? + name.len() + 2;
        let end = tag[start..].find('"')? + start;
        Some(tag[start..end].replace("&amp;", "&").replace("&#x2F;", "/"))
    };
    let form_start = page
        .find("<form")
        .unwrap_or_else(|| panic!("no form in {page}"));
    let form = &page[form_start..page[form_start..].find("</form>").unwrap() + form_start];
    let action = attribute(&form[..form.find('>').unwrap()], "action").unwrap();
    let hidden = form
        .split("<input")
        .skip(1)
        .filter(|tag| tag.contains("type=\"hidden\""))
        .filter_map(|tag| Some((attribute(tag, "name")?, attribute(tag, "value")?)))
        .collect();
    (action, hidden)
}

/// Goes through the provider as a person would, logging in as `login` and consenting,
/// until the browser is sent back to Hearth's callback; returns the callback URL (not
/// opened yet).
async fn through_the_provider(
    browser: &reqwest::Client,
    start: reqwest::Url,
    login: &str,
) -> reqwest::Url {
    let mut url = start;
    for _ in 0..20 {
        if url.path() == hearth_server::OIDC_CALLBACK_PATH {
            return url;
        }
        let response = browser.get(url.clone()).send().await.unwrap();
        if response.status().is_redirection() {
            url = location(&response, &url);
            continue;
        }
        let status = response.status();
        let page = response.text().await.unwrap();
        assert_eq!(status, 200, "{url}: {page}");
        let (action, mut fields) = first_form(&page);
        if fields
            .iter()
            .any(|(name, value)| name == "prompt" && value == "login")
        {
            fields.push(("login".to_owned(), login.to_owned()));
            fields.push(("password".to_owned(), "any".to_owned()));
        }
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(&fields)
            .finish();
        let target = url.join(&action).unwrap();
        let response = browser
            .post(target.clone())
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .unwrap();
        assert!(response.status().is_redirection(), "{target}: {response:?}");
        url = location(&response, &target);
    }
    panic!("the provider never sent the browser back: last at {url}");
}

/// Starts a login at Hearth; the provider's authorization URL it redirects to.
async fn start_login(team: &Team, browser: &reqwest::Client) -> reqwest::Url {
    let start: reqwest::Url = format!("{}/auth/oidc", team.url).parse().unwrap();
    let response = browser.get(start.clone()).send().await.unwrap();
    assert_eq!(response.status(), 303, "{response:?}");
    location(&response, &start)
}

/// Opens the callback URL: its status, `Location` and page.
async fn open(browser: &reqwest::Client, url: &reqwest::Url) -> (u16, Option<String>, String) {
    let response = browser.get(url.clone()).send().await.unwrap();
    let status = response.status().as_u16();
    let location = response
        .headers()
        .get("location")
        .map(|value| value.to_str().unwrap().to_owned());
    (status, location, response.text().await.unwrap())
}

/// Trades a login code for a session as the page does; the answer.
async fn trade(team: &Team, code: &str) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(format!("{}/auth/session", team.url))
        .json(&json!({ "code": code }))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
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
    let authorize = start_login(&team, &browser).await;
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
    let (status, answer) = trade(&team, code).await;
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
    assert_eq!(trade(&team, code).await.0, 401, "a code works once");
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

    // The same callback again is a replay: refused, and nothing is handed out.
    let (status, location, page) = open(&browser, &callback).await;
    assert_eq!((status, location), (400, None), "{page}");
    assert!(page.contains("already used"), "{page}");
}

#[tokio::test]
async fn a_callback_with_a_wrong_state_or_from_another_browser_is_refused() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let Some((team, _provider)) = team_with_provider(naming_resolver(Arc::clone(&seen))).await
    else {
        return;
    };
    let browser = browser();
    let authorize = start_login(&team, &browser).await;
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
    let authorize = start_login(&team, &browser).await;
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
    let authorize = start_login(&team, &browser).await;
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
    let Some(provider) = Provider::start(issuer_port, &team.callback_uri()).await else {
        return;
    };
    let _provider = provider.unwrap();
    let authorize = start_login(&team, &browser).await;
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
