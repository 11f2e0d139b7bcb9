//! Scripted DNS answers against a loopback server: one lookup per connection, every
//! address checked, the connection pinned to what was checked.

use std::sync::atomic::Ordering;

use hearth_fetch::{AddressClass as Class, Embedding};
use pretty_assertions::assert_eq;
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::support::{
    ScriptedResolver, fetcher, get, ip, loopback_public_policy, non_public_from, refused_rule,
};

async fn ok_server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::any())
        .respond_with(ResponseTemplate::new(200).set_body_raw("served", "text/plain"))
        .mount(&server)
        .await;
    server
}

async fn requests(server: &MockServer) -> usize {
    server.received_requests().await.unwrap_or_default().len()
}

#[tokio::test]
async fn rebinding_after_the_check_cannot_reach_loopback() {
    let first = ok_server().await;
    let second = ok_server().await;
    // Public (under the test policy) on the first lookup, loopback on every later one.
    let (resolver, lookups) =
        ScriptedResolver::new(vec![vec![ip("127.0.0.1")], vec![ip("127.0.0.2")]]);
    let fetcher = fetcher(loopback_public_policy(), resolver);

    let url = format!("http://rebind.test:{}/", first.address().port());
    let response = fetcher.fetch(&get(&url)).await.unwrap();
    assert_eq!(response.text(), "served");
    // Checked and connected on the same, single answer: no second lookup to race.
    assert_eq!(lookups.load(Ordering::SeqCst), 1);
    assert_eq!(requests(&first).await, 1);

    // A new connection resolves again, and the rebound answer is refused.
    let url = format!("http://rebind.test:{}/", second.address().port());
    let rule = refused_rule(fetcher.fetch(&get(&url)).await);
    assert_eq!(
        rule,
        non_public_from(
            "rebind.test",
            "127.0.0.2",
            Class::Loopback,
            "127.0.0.0/8",
            None
        )
    );
    assert_eq!(lookups.load(Ordering::SeqCst), 2);
    assert_eq!(requests(&second).await, 0);
}

#[tokio::test]
async fn one_private_answer_among_public_ones_refuses_the_name() {
    let server = ok_server().await;
    let (resolver, lookups) = ScriptedResolver::new(vec![vec![ip("127.0.0.1"), ip("10.0.0.1")]]);
    let fetcher = fetcher(loopback_public_policy(), resolver);
    let url = format!("http://mixed.test:{}/", server.address().port());
    let rule = refused_rule(fetcher.fetch(&get(&url)).await);
    assert_eq!(
        rule,
        non_public_from("mixed.test", "10.0.0.1", Class::Private, "10.0.0.0/8", None)
    );
    assert_eq!(lookups.load(Ordering::SeqCst), 1);
    assert_eq!(requests(&server).await, 0);
}

#[tokio::test]
async fn aaaa_answers_mapping_private_ipv4_are_refused() {
    let server = ok_server().await;
    let (resolver, _) =
        ScriptedResolver::new(vec![vec![ip("127.0.0.1"), ip("::ffff:192.168.10.1")]]);
    let fetcher = fetcher(loopback_public_policy(), resolver);
    let url = format!("http://dual.test:{}/", server.address().port());
    let rule = refused_rule(fetcher.fetch(&get(&url)).await);
    assert_eq!(
        rule,
        non_public_from(
            "dual.test",
            "::ffff:192.168.10.1",
            Class::Private,
            "192.168.0.0/16",
            Some(Embedding::Ipv4Mapped)
        )
    );
    assert_eq!(requests(&server).await, 0);
}

#[tokio::test]
async fn a_redirect_to_a_rebinding_name_is_refused_on_its_own_lookup() {
    let server = MockServer::start().await;
    let port = server.address().port();
    Mock::given(wiremock::matchers::path("/start"))
        .respond_with(
            ResponseTemplate::new(302)
                .insert_header("Location", format!("http://evil.test:{port}/loot").as_str()),
        )
        .mount(&server)
        .await;
    // site.test is looked up first (public under the test policy); evil.test next.
    let (resolver, lookups) =
        ScriptedResolver::new(vec![vec![ip("127.0.0.1")], vec![ip("10.9.8.7")]]);
    let fetcher = fetcher(loopback_public_policy(), resolver);
    let rule = refused_rule(
        fetcher
            .fetch(&get(&format!("http://site.test:{port}/start")))
            .await,
    );
    assert_eq!(
        rule,
        non_public_from("evil.test", "10.9.8.7", Class::Private, "10.0.0.0/8", None)
    );
    assert_eq!(lookups.load(Ordering::SeqCst), 2);
    assert_eq!(requests(&server).await, 1);
}
