//! A real OpenID provider for the login tests (oidc-provider from npm, installed by
//! `.ci/install-oidc-provider`, run by `oidc/provider.mjs` beside this crate), and a
//! browser that logs in through it: reqwest keeping cookies and following every redirect
//! by hand, through the provider's login and consent pages, back to Hearth's
//! `/auth/oidc/callback`, then trading the login code it is handed at `/#login=` for a
//! browser session. Tests that need the provider are skipped, saying why, when node or
//! the package is missing, unless `HEARTH_REQUIRE_OIDC=1`.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

use crate::WAIT;

/// The client id the provider registers (and Hearth logs in as).
pub const CLIENT_ID: &str = "hearth-test";
/// The client's secret at the provider.
pub const CLIENT_SECRET: &str = "hearth test client secret";
/// The variable that turns a missing provider into a failure.
pub const REQUIRE_VARIABLE: &str = "HEARTH_REQUIRE_OIDC";
/// The variable naming where the provider package is installed (default:
/// `<workspace>/target/oidc-provider`, where `.ci/install-oidc-provider` puts it).
pub const DIR_VARIABLE: &str = "HEARTH_OIDC_PROVIDER_DIR";
/// Where the provider sends a browser back to Hearth (`hearth_server::OIDC_CALLBACK_PATH`).
const CALLBACK_PATH: &str = "/auth/oidc/callback";

/// The installed provider package and the script that runs it.
#[derive(Clone, Debug)]
pub struct Installed {
    /// The directory holding `node_modules/oidc-provider`.
    pub modules: PathBuf,
    /// `provider.mjs`.
    pub script: PathBuf,
}

/// The installed provider, or `None` (after saying why) when node or the package is
/// missing, unless [`REQUIRE_VARIABLE`] is `1` (then the test fails saying why).
#[allow(clippy::print_stderr, reason = "a skipped test says why on stderr")]
pub fn installed() -> Option<Installed> {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let modules = match std::env::var_os(DIR_VARIABLE) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => crate_dir.join("../../target/oidc-provider"),
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
        return Some(Installed {
            modules,
            script: crate_dir.join("oidc/provider.mjs"),
        });
    };
    assert!(
        std::env::var(REQUIRE_VARIABLE).as_deref() != Ok("1"),
        "{REQUIRE_VARIABLE}=1 but {reason}"
    );
    eprintln!("skipping: the OpenID provider cannot run: {reason}");
    None
}

/// A free loopback port, held until the probe is dropped (the provider binds it then).
pub fn free_port() -> (std::net::TcpListener, u16) {
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = probe.local_addr().unwrap().port();
    (probe, port)
}

/// The OpenID provider's process, killed when dropped.
pub struct Provider {
    _child: tokio::process::Child,
    /// Its issuer URL, `http://127.0.0.1:PORT`.
    pub issuer: String,
}

impl Provider {
    /// Starts the provider on `port` with one client ([`CLIENT_ID`], [`CLIENT_SECRET`])
    /// that may be sent back to any of `redirect_uris`: `None` when it cannot run here
    /// (skipped, see [`installed`]), an error when it stopped before listening (the port
    /// was taken meanwhile: pick another and start again).
    pub async fn start(port: u16, redirect_uris: &[String]) -> Option<Result<Self, String>> {
        let Installed { modules, script } = installed()?;
        let mut command = tokio::process::Command::new("node");
        command
            .arg(&script)
            .arg("--modules")
            .arg(&modules)
            .args(["--port", &port.to_string()])
            .args(["--client-id", CLIENT_ID, "--client-secret", CLIENT_SECRET]);
        for uri in redirect_uris {
            command.args(["--redirect-uri", uri]);
        }
        let mut child = command
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

/// A browser: keeps cookies, follows no redirect by itself.
pub fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .timeout(WAIT)
        .build()
        .unwrap()
}

/// Where a redirect sends the browser, resolved against the URL that answered.
pub fn location(response: &reqwest::Response, base: &reqwest::Url) -> reqwest::Url {
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
pub async fn through_the_provider(
    browser: &reqwest::Client,
    start: reqwest::Url,
    login: &str,
) -> reqwest::Url {
    let mut url = start;
    for _ in 0..20 {
        if url.path() == CALLBACK_PATH {
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

/// Starts a login at the Hearth server at `base_url`; the provider's authorization URL
/// it redirects to.
pub async fn start_login(base_url: &str, browser: &reqwest::Client) -> reqwest::Url {
    let start: reqwest::Url = format!("{base_url}/auth/oidc").parse().unwrap();
    let response = browser.get(start.clone()).send().await.unwrap();
    assert_eq!(response.status(), 303, "{response:?}");
    location(&response, &start)
}

/// Opens a URL (the callback): its status, `Location` and page.
pub async fn open(browser: &reqwest::Client, url: &reqwest::Url) -> (u16, Option<String>, String) {
    let response = browser.get(url.clone()).send().await.unwrap();
    let status = response.status().as_u16();
    let location = response
        .headers()
        .get("location")
        .map(|value| value.to_str().unwrap().to_owned());
    (status, location, response.text().await.unwrap())
}

/// Trades a login code for a session at the server at `base_url`, as the page does; the
/// answer (JSON, or the text when it is not).
pub async fn trade(base_url: &str, code: &str) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(format!("{base_url}/auth/session"))
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

/// A whole login at the server at `base_url` as `login` at the provider, in a new
/// browser: the browser session's credential (sent as `x-hearth-session`).
pub async fn log_in(base_url: &str, login: &str) -> String {
    log_in_across([base_url, base_url, base_url], login).await
}

/// A whole login as `login`, each step at another node of a team, as a load balancer
/// without sticky sessions would send it: started at `nodes[0]`, the provider's callback
/// opened at `nodes[1]`, the login code traded at `nodes[2]`. The browser session's
/// credential.
pub async fn log_in_across(nodes: [&str; 3], login: &str) -> String {
    let browser = browser();
    let authorize = start_login(nodes[0], &browser).await;
    let mut callback = through_the_provider(&browser, authorize, login).await;
    let second: reqwest::Url = nodes[1].parse().unwrap();
    callback.set_port(second.port()).unwrap();
    let (status, location, page) = open(&browser, &callback).await;
    assert_eq!(status, 303, "the callback logged {login} in: {page}");
    let location = location.unwrap_or_default();
    let code = location
        .strip_prefix("/#login=")
        .unwrap_or_else(|| panic!("the callback sent the browser to {location:?}"));
    let (status, answer) = trade(nodes[2], code).await;
    assert_eq!(status, 200, "the login code was traded: {answer}");
    answer["session"]
        .as_str()
        .unwrap_or_else(|| panic!("no session in {answer}"))
        .to_owned()
}
