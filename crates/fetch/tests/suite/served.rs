//! Fetches served by a loopback server, under the test policy that treats 127.0.0.1
//! (and nothing else) as public: what is allowed works, and every redirect is
//! re-checked in full.

use std::time::Duration;

use hearth_fetch::{
    AddressClass as Class, ContentTypes, FetchError, FetchRequest, Rule, StaticResolver,
};
use pretty_assertions::assert_eq;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::support::{
    fetcher, get, ip, loopback, loopback_public_policy, metadata, non_public, non_public_from,
    refused_rule, served_fetcher,
};

async fn serve(route: &str, response: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(route))
        .respond_with(response)
        .mount(&server)
        .await;
    server
}

fn redirect(status: u16, location: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).insert_header("Location", location)
}

async fn requests(server: &MockServer) -> usize {
    server.received_requests().await.unwrap_or_default().len()
}

#[tokio::test]
async fn a_public_page_is_fetched_by_address_and_by_name() {
    let server = serve(
        "/page",
        ResponseTemplate::new(200).set_body_raw("hello", "text/plain; charset=utf-8"),
    )
    .await;
    let port = server.address().port();
    let fetcher = served_fetcher();
    for url in [
        format!("http://127.0.0.1:{port}/page"),
        format!("http://site.test:{port}/page"),
    ] {
        let response = fetcher.fetch(&get(&url)).await.unwrap();
        assert_eq!(response.status, 200);
        assert_eq!(response.final_url.as_str(), url);
        assert_eq!(response.requested_url, response.final_url);
        assert_eq!(response.redirects, Vec::<url::Url>::new());
        assert_eq!(response.media_type.essence, "text/plain");
        assert_eq!(response.text(), "hello");
    }
    let sent = server.received_requests().await.unwrap();
    assert_eq!(sent.len(), 2);
    let user_agent = sent[0].headers.get("user-agent").unwrap().to_str().unwrap();
    assert!(user_agent.starts_with("Hearth/"), "{user_agent}");
}

#[tokio::test]
async fn five_redirects_are_followed_and_relative_locations_resolved() {
    let server = MockServer::start().await;
    for hop in 0..5 {
        Mock::given(path(format!("/r/{hop}")))
            .respond_with(redirect(302, &format!("/r/{}", hop + 1)))
            .mount(&server)
            .await;
    }
    Mock::given(path("/r/5"))
        .respond_with(ResponseTemplate::new(200).set_body_raw("end", "text/plain"))
        .mount(&server)
        .await;
    let start = format!("{}/r/0", server.uri());
    let response = served_fetcher().fetch(&get(&start)).await.unwrap();
    assert_eq!(response.text(), "end");
    assert_eq!(response.final_url.path(), "/r/5");
    assert_eq!(
        response
            .redirects
            .iter()
            .map(|url| url.path().to_owned())
            .collect::<Vec<_>>(),
        ["/r/0", "/r/1", "/r/2", "/r/3", "/r/4"]
    );
}

#[tokio::test]
async fn a_sixth_redirect_is_refused() {
    let server = MockServer::start().await;
    for hop in 0..7 {
        Mock::given(path(format!("/r/{hop}")))
            .respond_with(redirect(301, &format!("/r/{}", hop + 1)))
            .mount(&server)
            .await;
    }
    let start = format!("{}/r/0", server.uri());
    let rule = refused_rule(served_fetcher().fetch(&get(&start)).await);
    assert_eq!(rule, Rule::TooManyRedirects { limit: 5 });
    // The start and five followed hops were requested; the sixth target never was.
    assert_eq!(requests(&server).await, 6);
}

#[tokio::test]
async fn every_redirect_hop_is_checked_in_full() {
    let own_port = 4242;
    let resolver = StaticResolver::new()
        .with("site.test", [ip("127.0.0.1")])
        .with("intranet.test", [ip("10.0.0.9")]);
    let fetcher = fetcher(loopback_public_policy().deny_own_port(own_port), resolver);
    let cases = [
        (
            "http://10.0.0.1/admin",
            non_public("10.0.0.1", Class::Private, "10.0.0.0/8", None),
        ),
        ("http://127.0.0.2/", loopback("127.0.0.2")),
        (
            "http://[::1]/",
            non_public("::1", Class::Loopback, "::1/128", None),
        ),
        (
            "http://localhost/",
            Rule::LocalName {
                host: "localhost".into(),
            },
        ),
        (
            "http://169.254.169.254/latest/meta-data/",
            metadata("169.254.169.254"),
        ),
        ("http://2130706434/", loopback("127.0.0.2")),
        (
            "file:///etc/passwd",
            Rule::Scheme {
                scheme: "file".into(),
            },
        ),
        (
            "gopher://site.test/",
            Rule::Scheme {
                scheme: "gopher".into(),
            },
        ),
        ("http://user:pw@site.test/", Rule::UserInfo),
        ("http://site.test:4242/", Rule::OwnPort { port: own_port }),
        (
            "http://intranet.test/",
            non_public_from(
                "intranet.test",
                "10.0.0.9",
                Class::Private,
                "10.0.0.0/8",
                None,
            ),
        ),
    ];
    for (status, (location, expected)) in [301, 302, 303, 307, 308].iter().cycle().zip(cases) {
        let server = serve("/start", redirect(*status, location)).await;
        let start = format!("{}/start", server.uri());
        let error = fetcher.fetch(&get(&start)).await.unwrap_err();
        assert_eq!(
            error.rule(),
            Some(&expected),
            "redirect {status} to {location}"
        );
        assert!(
            !error.to_string().contains("pw@"),
            "credentials echoed: {error}"
        );
        assert_eq!(requests(&server).await, 1);
    }
}

#[tokio::test]
async fn hearths_own_port_is_refused_even_on_a_public_host() {
    let server = serve("/", ResponseTemplate::new(200)).await;
    let port = server.address().port();
    let fetcher = fetcher(
        loopback_public_policy().deny_own_port(port),
        StaticResolver::new().with("site.test", [ip("127.0.0.1")]),
    );
    for url in [
        format!("http://127.0.0.1:{port}/"),
        format!("http://site.test:{port}/"),
    ] {
        let rule = refused_rule(fetcher.fetch(&get(&url)).await);
        assert_eq!(rule, Rule::OwnPort { port });
    }
    assert_eq!(requests(&server).await, 0);
}

#[tokio::test]
async fn error_statuses_fail_without_echoing_the_body() {
    let secret = "SECRET-BODY-TEXT";
    let server = serve(
        "/missing",
        ResponseTemplate::new(404).set_body_string(secret),
    )
    .await;
    let error = served_fetcher()
        .fetch(&get(&format!("{}/missing", server.uri())))
        .await
        .unwrap_err();
    assert_eq!(error.status(), Some(404));
    assert!(!format!("{error} {error:?}").contains(secret), "{error:?}");
}

#[tokio::test]
async fn a_redirect_without_location_fails() {
    let server = serve("/", ResponseTemplate::new(302)).await;
    let error = served_fetcher()
        .fetch(&get(&server.uri()))
        .await
        .unwrap_err();
    assert!(matches!(error, FetchError::BadRedirect { .. }), "{error}");
}

#[tokio::test]
async fn bodies_over_the_cap_fail() {
    let body = "x".repeat(4096);
    let server = serve(
        "/big",
        ResponseTemplate::new(200).set_body_raw(body, "text/plain"),
    )
    .await;
    let url = format!("{}/big", server.uri());
    let served = served_fetcher();
    let error = served
        .fetch(&get(&url).with_max_bytes(1000))
        .await
        .unwrap_err();
    assert!(
        matches!(error, FetchError::TooLarge { limit: 1000, .. }),
        "{error}"
    );
    let capped = fetcher(
        loopback_public_policy().with_max_response_bytes(4095),
        StaticResolver::new(),
    );
    let error = capped.fetch(&get(&url)).await.unwrap_err();
    assert!(
        matches!(error, FetchError::TooLarge { limit: 4095, .. }),
        "{error}"
    );
    assert_eq!(served.fetch(&get(&url)).await.unwrap().body.len(), 4096);
}

/// A server that answers with a chunked body (no Content-Length) that never ends, and
/// counts the bytes it managed to send.
async fn endless_chunked_server() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/stream", listener.local_addr().unwrap());
    let sent = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&sent);
    tokio::spawn(async move {
        let Ok((mut socket, _)) = listener.accept().await else {
            return;
        };
        let mut request = [0_u8; 4096];
        if socket.read(&mut request).await.is_err() {
            return;
        }
        let head =
            "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\n\r\n";
        if socket.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        let chunk = format!("{:x}\r\n{}\r\n", 1024, "y".repeat(1024));
        while socket.write_all(chunk.as_bytes()).await.is_ok() {
            counter.fetch_add(1024, Ordering::SeqCst);
            if counter.load(Ordering::SeqCst) > 64 * 1024 * 1024 {
                return;
            }
        }
    });
    (url, sent)
}

#[tokio::test]
async fn a_chunked_body_without_length_stops_at_the_cap() {
    let (url, sent) = endless_chunked_server().await;
    let error = tokio::time::timeout(
        Duration::from_secs(10),
        served_fetcher().fetch(&get(&url).with_max_bytes(10_000)),
    )
    .await
    .expect("the fetch must stop at the cap, not read forever")
    .unwrap_err();
    assert!(
        matches!(error, FetchError::TooLarge { limit: 10_000, .. }),
        "{error}"
    );
    // Reading stopped near the cap (socket buffers allow some slack).
    let sent = sent.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        sent < 16 * 1024 * 1024,
        "read {sent} bytes past a 10 kB cap"
    );
}

#[tokio::test]
async fn content_types_outside_the_callers_allowlist_fail() {
    let server = serve(
        "/image",
        ResponseTemplate::new(200).set_body_raw(vec![0x89, b'P', b'N', b'G'], "image/png"),
    )
    .await;
    let request = FetchRequest::new(
        format!("{}/image", server.uri()),
        ContentTypes::only(["text/html", "text/*"]),
    );
    let error = served_fetcher().fetch(&request).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "unsupported content type `image/png` from {}/image; accepted here: text/html, text/*",
            server.uri()
        )
    );
    let sent = server.received_requests().await.unwrap();
    assert_eq!(
        sent[0].headers.get("accept").unwrap().to_str().unwrap(),
        "text/html, text/*"
    );
}

#[tokio::test]
async fn slow_servers_hit_the_total_timeout() {
    let server = serve(
        "/slow",
        ResponseTemplate::new(200).set_delay(Duration::from_secs(5)),
    )
    .await;
    let impatient = fetcher(
        loopback_public_policy().with_total_timeout(Duration::from_millis(300)),
        StaticResolver::new(),
    );
    let error = impatient
        .fetch(&get(&format!("{}/slow", server.uri())))
        .await
        .unwrap_err();
    assert!(matches!(error, FetchError::Timeout { .. }), "{error}");
    assert!(error.is_retryable());
}
