//! Requests other than a plain GET, as WebDAV and CalDAV need them: the method, body and
//! headers reach the server; a credential header reaches the requested origin only, never
//! another origin a redirect leads to; an answer such as `412` or `207` is returned when
//! the request takes any status; the `ETag` comes back.

use hearth_fetch::{ContentTypes, FetchError, FetchRequest, StaticResolver};
use pretty_assertions::assert_eq;
use wiremock::matchers::{body_string, header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::support::{fetcher, ip, loopback_public_policy, served_fetcher};

fn propfind(url: &str) -> FetchRequest {
    FetchRequest::new(url, ContentTypes::any())
        .with_method("PROPFIND", "<propfind/>")
        .with_header("Depth", "1")
        .with_credential("Authorization", "Basic YWxpY2U6c2VjcmV0")
}

#[tokio::test]
async fn a_propfind_carries_its_method_body_headers_and_credential() {
    let server = MockServer::start().await;
    Mock::given(method("PROPFIND"))
        .and(path("/dav/"))
        .and(header("depth", "1"))
        .and(header("authorization", "Basic YWxpY2U6c2VjcmV0"))
        .and(body_string("<propfind/>"))
        .respond_with(
            ResponseTemplate::new(207)
                .insert_header("ETag", "\"v1\"")
                .set_body_raw("<multistatus/>", "application/xml"),
        )
        .mount(&server)
        .await;
    let url = format!("{}/dav/", server.uri());
    let response = served_fetcher()
        .fetch(&propfind(&url).with_any_status())
        .await
        .unwrap();
    assert_eq!(response.status, 207);
    assert_eq!(response.etag.as_deref(), Some("\"v1\""));
    assert_eq!(response.text(), "<multistatus/>");
}

#[tokio::test]
async fn a_failing_status_is_an_answer_only_when_the_request_takes_any_status() {
    let server = MockServer::start().await;
    Mock::given(method("PUT"))
        .respond_with(ResponseTemplate::new(412).set_body_raw("changed", "text/plain"))
        .mount(&server)
        .await;
    let url = format!("{}/event.ics", server.uri());
    let put = FetchRequest::new(&url, ContentTypes::any())
        .with_method("PUT", "BEGIN:VCALENDAR")
        .with_header("If-Match", "\"old\"");
    let fetcher = served_fetcher();
    let error = fetcher.fetch(&put).await.unwrap_err();
    assert!(
        matches!(error, FetchError::Status { status: 412, .. }),
        "{error}"
    );
    let answer = fetcher.fetch(&put.with_any_status()).await.unwrap();
    assert_eq!((answer.status, answer.text()), (412, "changed".to_owned()));
}

#[tokio::test]
async fn a_credential_is_not_sent_to_another_origin_a_redirect_leads_to() {
    let elsewhere = MockServer::start().await;
    Mock::given(method("PROPFIND"))
        .respond_with(ResponseTemplate::new(207).set_body_raw("<multistatus/>", "application/xml"))
        .mount(&elsewhere)
        .await;
    let origin = MockServer::start().await;
    Mock::given(method("PROPFIND"))
        .and(path("/.well-known/caldav"))
        .respond_with(ResponseTemplate::new(301).insert_header(
            "Location",
            format!("http://other.test:{}/dav/", elsewhere.address().port()),
        ))
        .mount(&origin)
        .await;
    Mock::given(method("PROPFIND"))
        .and(path("/moved"))
        .respond_with(ResponseTemplate::new(308).insert_header("Location", "/dav/"))
        .mount(&origin)
        .await;
    Mock::given(method("PROPFIND"))
        .and(path("/dav/"))
        .respond_with(ResponseTemplate::new(207).set_body_raw("<multistatus/>", "application/xml"))
        .mount(&origin)
        .await;
    let fetcher = fetcher(
        loopback_public_policy(),
        StaticResolver::new()
            .with("site.test", [ip("127.0.0.1")])
            .with("other.test", [ip("127.0.0.1")]),
    );
    let port = origin.address().port();

    let response = fetcher
        .fetch(&propfind(&format!("http://site.test:{port}/.well-known/caldav")).with_any_status())
        .await
        .unwrap();
    assert_eq!(response.status, 207);
    let sent = elsewhere.received_requests().await.unwrap();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].method.as_str(), "PROPFIND", "the method is kept");
    assert_eq!(sent[0].headers.get("depth").unwrap(), "1");
    assert!(
        sent[0].headers.get("authorization").is_none(),
        "the credential stayed with its origin"
    );

    // A redirect within the origin keeps it.
    fetcher
        .fetch(&propfind(&format!("http://site.test:{port}/moved")).with_any_status())
        .await
        .unwrap();
    let sent = origin.received_requests().await.unwrap();
    let last = sent.last().unwrap();
    assert_eq!(last.url.path(), "/dav/");
    assert_eq!(
        last.headers.get("authorization").unwrap(),
        "Basic YWxpY2U6c2VjcmV0"
    );
}

#[tokio::test]
async fn a_credential_never_appears_in_an_error() {
    let server = MockServer::start().await;
    Mock::given(method("PROPFIND"))
        .respond_with(ResponseTemplate::new(500))
        .mount(&server)
        .await;
    let error = served_fetcher()
        .fetch(&propfind(&format!("{}/dav/", server.uri())))
        .await
        .unwrap_err();
    let shown = format!("{error} {error:?}");
    assert!(!shown.contains("YWxpY2U6c2VjcmV0"), "{shown}");
    assert_eq!(error.status(), Some(500));
}

#[test]
fn a_request_shows_its_credential_redacted() {
    let shown = format!("{:?}", propfind("http://site.test/dav/"));
    assert!(shown.contains("Authorization"), "{shown}");
    assert!(!shown.contains("YWxpY2U6c2VjcmV0"), "{shown}");
}
