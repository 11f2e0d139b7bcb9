//! Proxy variables cannot route a guarded fetch around the guard.
//!
//! Environment variables are process-wide, so the check runs in a child process (this
//! same test binary, running the ignored `child_…` test) with every proxy variable
//! pointing at a loopback "proxy" server. In the child, a plain HTTP client is the
//! control: it does go through the proxy, which proves the variables are in force.

use std::process::Command;

use hearth_fetch::StaticResolver;
use hearth_test_support::{BoundedCommand, PROCESS_WAIT};
use pretty_assertions::assert_eq;
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::support::{fetcher, get, loopback_public_policy};

const TARGET_VARIABLE: &str = "HEARTH_FETCH_TEST_PROXY_TARGET";
const CHILD: &str = "suite::proxy::child_fetches_with_proxy_variables_set";

async fn answering(body: &'static str) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::any())
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, "text/plain"))
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn proxy_variables_are_ignored() {
    let target = answering("direct").await;
    let proxy = answering("via proxy").await;
    let proxy_url = proxy.uri();
    let output = Command::new(std::env::current_exe().unwrap())
        .args([CHILD, "--exact", "--ignored", "--nocapture"])
        .env(TARGET_VARIABLE, format!("{}/resource", target.uri()))
        .env("HTTP_PROXY", &proxy_url)
        .env("http_proxy", &proxy_url)
        .env("HTTPS_PROXY", &proxy_url)
        .env("https_proxy", &proxy_url)
        .env("ALL_PROXY", &proxy_url)
        .env("all_proxy", &proxy_url)
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .output_within(PROCESS_WAIT);
    let report = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "child failed:\n{report}");
    assert!(report.contains("1 passed"), "child did not run:\n{report}");
    // One request each: the guarded fetch went direct, the control went via the proxy.
    assert_eq!(target.received_requests().await.unwrap().len(), 1);
    assert_eq!(proxy.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
#[ignore = "run by proxy_variables_are_ignored in a child process"]
async fn child_fetches_with_proxy_variables_set() {
    let target = std::env::var(TARGET_VARIABLE).unwrap();
    let control = reqwest::get(&target).await.unwrap().text().await.unwrap();
    assert_eq!(control, "via proxy", "proxy variables are not in force");
    let fetcher = fetcher(loopback_public_policy(), StaticResolver::new());
    let response = fetcher.fetch(&get(&target)).await.unwrap();
    assert_eq!(response.text(), "direct");
}
