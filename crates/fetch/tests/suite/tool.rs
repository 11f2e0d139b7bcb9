//! The `web_fetch` tool against a loopback server.

use std::sync::{Arc, Mutex};

use hearth_core::{ToolCallContext, ToolError, ToolHandler, ToolOutput};
use hearth_fetch::{
    FetchOutcome, FetchPolicy, FetchRecord, Fetcher, MAX_OUTPUT_CHARACTERS, PrivateNetworks,
    StaticResolver, WEB_FETCH_TOOL, WebFetchTool,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::support::{served_fetcher, tool_call};

type Records = Arc<Mutex<Vec<(String, FetchRecord)>>>;

fn tool() -> (WebFetchTool, Records) {
    let records: Records = Arc::default();
    let sink = Arc::clone(&records);
    let observer = move |call: &ToolCallContext, record: &FetchRecord| {
        sink.lock()
            .unwrap()
            .push((call.call_id.clone(), record.clone()));
    };
    let tool = WebFetchTool::new(Arc::new(served_fetcher()))
        .unwrap()
        .with_observer(Arc::new(observer));
    (tool, records)
}

async fn serve(route: &str, body: impl Into<Vec<u8>>, content_type: &str) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(path(route))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body.into(), content_type))
        .mount(&server)
        .await;
    server
}

async fn call(tool: &WebFetchTool, arguments: Value) -> Result<(String, Value), ToolError> {
    match tool.execute(&tool_call(), arguments).await? {
        ToolOutput::Content { text, data } => Ok((text, data.unwrap_or_default())),
        ToolOutput::Staged(draft) => panic!("a read tool staged a change: {draft:?}"),
    }
}

const ARTICLE: &str = r#"<!doctype html>
<html><head><title>Night trains of Europe</title>
<style>.hero { display: none }</style>
<script>window.tracking = "TRACKER-SCRIPT";</script></head>
<body>
<nav><a href="/">Home</a><a href="/shop">Shop</a></nav>
<main><article>
<h1>Night trains of Europe</h1>
<p>Night trains are back. Sleeper services now link many European capitals, and more
routes open every year as operators order new rolling stock for long journeys.</p>
<p>Booking opens ninety days ahead on most routes. Couchettes are the cheapest berths,
while private compartments include a washbasin and breakfast served at the bed.</p>
<p>Travellers should check the <a href="/timetable">timetable</a> before each season,
because timings change when engineering works close lines at night.</p>
<!-- TODO remove before launch: HIDDEN-COMMENT -->
<svg viewBox="0 0 10 10"><text>SVG-LABEL</text></svg>
</article></main>
<footer>Contact us</footer>
</body></html>"#;

#[tokio::test]
async fn html_becomes_readable_markdown_with_title_and_final_url() {
    let server = serve("/trains", ARTICLE, "text/html; charset=utf-8").await;
    let (tool, records) = tool();
    let url = format!("{}/trains", server.uri());
    let (text, data) = call(&tool, json!({ "url": url })).await.unwrap();
    assert!(
        text.starts_with(&format!(
            "Title: Night trains of Europe\nURL: {url}\nContent-Type: text/html\n\n"
        )),
        "{text}"
    );
    assert!(text.contains("Night trains are back."), "{text}");
    assert!(
        text.contains(&format!("[timetable]({}/timetable)", server.uri())),
        "{text}"
    );
    for leaked in [
        "TRACKER-SCRIPT",
        "display: none",
        "HIDDEN-COMMENT",
        "SVG-LABEL",
        "Shop",
    ] {
        assert!(!text.contains(leaked), "{leaked} leaked: {text}");
    }
    assert_eq!(data["final_url"], json!(url));
    assert_eq!(data["title"], json!("Night trains of Europe"));
    assert_eq!(data["truncated"], json!(false));
    let records = records.lock().unwrap();
    assert_eq!(records.len(), 1);
    let (call_id, record) = &records[0];
    assert_eq!(call_id, "call-1");
    assert_eq!(record.outcome, FetchOutcome::Fetched);
    assert_eq!(record.status, Some(200));
    assert_eq!(record.bytes, ARTICLE.len() as u64);
    assert_eq!(record.final_url.as_deref(), Some(url.as_str()));
}

#[tokio::test]
async fn long_content_is_cut_at_100000_characters_with_a_marker() {
    let body = "é".repeat(150_000);
    let server = serve("/long.txt", body, "text/plain; charset=utf-8").await;
    let (tool, _) = tool();
    let (text, data) = call(
        &tool,
        json!({ "url": format!("{}/long.txt", server.uri()) }),
    )
    .await
    .unwrap();
    let (_, content) = text.split_once("\n\n").unwrap();
    let marker = "\n\n[Content truncated: showing the first 100000 of 150000 characters.]";
    assert!(
        content.ends_with(marker),
        "{}",
        &content[content.len() - 100..]
    );
    assert_eq!(
        content.strip_suffix(marker).unwrap().chars().count(),
        MAX_OUTPUT_CHARACTERS
    );
    assert_eq!(data["truncated"], json!(true));
    assert_eq!(data["characters"], json!(150_000));

    let (text, _) = call(
        &tool,
        json!({ "url": format!("{}/long.txt", server.uri()), "max_characters": 10 }),
    )
    .await
    .unwrap();
    assert!(
        text.ends_with(
            "éééééééééé\n\n[Content truncated: showing the first 10 of 150000 characters.]"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn calendars_are_summarized_as_events() {
    let calendar = "BEGIN:VCALENDAR\r\nX-WR-CALNAME:Courses\r\nBEGIN:VEVENT\r\n\
        SUMMARY:Rust workshop\r\nDTSTART:20261203T090000Z\r\nDTEND:20261203T120000Z\r\n\
        LOCATION:Room 4\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";
    let server = serve("/courses.ics", calendar, "text/calendar; charset=utf-8").await;
    let (tool, _) = tool();
    let url = format!("{}/courses.ics", server.uri());
    let (text, _) = call(&tool, json!({ "url": url })).await.unwrap();
    assert_eq!(
        text,
        format!(
            "URL: {url}\nContent-Type: text/calendar\n\nCalendar \"Courses\": 1 event.\n\n\
             - 2026-12-03 09:00 UTC → 2026-12-03 12:00 UTC: Rust workshop @ Room 4"
        )
    );
}

/// A one-page PDF showing `text` in Helvetica, with a correct cross-reference table.
fn pdf(text: &str) -> Vec<u8> {
    let stream = format!("BT /F1 24 Tf 72 720 Td ({text}) Tj ET");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R \
         /Resources << /Font << /F1 5 0 R >> >> >>"
            .to_owned(),
        format!(
            "<< /Length {} >>\nstream\n{stream}\nendstream",
            stream.len()
        ),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_owned(),
    ];
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (index, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{object}\nendobj\n", index + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

#[tokio::test]
async fn pdfs_are_read_as_text_and_broken_ones_fail_cleanly() {
    let server = serve("/doc.pdf", pdf("Timetable for winter"), "application/pdf").await;
    Mock::given(path("/broken.pdf"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(b"%PDF-1.7\n1 0 obj <<".to_vec(), "application/pdf"),
        )
        .mount(&server)
        .await;
    let (tool, _) = tool();
    let (text, _) = call(&tool, json!({ "url": format!("{}/doc.pdf", server.uri()) }))
        .await
        .unwrap();
    assert!(text.contains("Timetable for winter"), "{text}");
    let error = call(
        &tool,
        json!({ "url": format!("{}/broken.pdf", server.uri()) }),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&error, ToolError::Failed(message) if message.starts_with("could not read the PDF")),
        "{error}"
    );
}

#[tokio::test]
async fn unsupported_content_types_are_named() {
    let server = serve("/logo.png", vec![0x89, b'P', b'N', b'G'], "image/png").await;
    let (tool, records) = tool();
    let error = call(
        &tool,
        json!({ "url": format!("{}/logo.png", server.uri()) }),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&error, ToolError::Failed(message) if message.starts_with("unsupported content type `image/png`")),
        "{error}"
    );
    let records = records.lock().unwrap();
    assert!(
        matches!(&records[0].1.outcome, FetchOutcome::Failed { message } if message.contains("image/png")),
        "{records:?}"
    );
}

#[tokio::test]
async fn refusals_reach_the_model_and_the_observer_with_their_rule() {
    let (tool, records) = tool();
    let error = call(
        &tool,
        json!({ "url": "http://169.254.169.254/latest/meta-data/" }),
    )
    .await
    .unwrap_err();
    assert_eq!(
        error,
        ToolError::Refused(
            "refused to fetch http://169.254.169.254/latest/meta-data/: 169.254.169.254 is a \
             cloud metadata address, denied under every policy"
                .into()
        )
    );
    let error = call(&tool, json!({ "url": "not a url" }))
        .await
        .unwrap_err();
    assert!(matches!(error, ToolError::InvalidArguments(_)), "{error}");
    let records = records.lock().unwrap();
    let outcomes: Vec<&FetchOutcome> = records.iter().map(|(_, record)| &record.outcome).collect();
    assert!(
        matches!(outcomes[0], FetchOutcome::Refused { rule, .. } if rule == "metadata_address"),
        "{outcomes:?}"
    );
    assert!(
        matches!(outcomes[1], FetchOutcome::Failed { .. }),
        "{outcomes:?}"
    );
    assert_eq!(records.len(), 2);
}

#[tokio::test]
async fn the_tool_is_read_only_and_validates_its_arguments() {
    let (tool, _) = tool();
    assert_eq!(tool.name(), WEB_FETCH_TOOL);
    assert!(!tool.mutates());
    let schema = tool.parameters();
    assert_eq!(schema["required"], json!(["url"]));
    assert_eq!(schema["additionalProperties"], json!(false));
    let limit = &schema["properties"]["max_characters"];
    assert_eq!(
        (&limit["minimum"], &limit["maximum"]),
        (&json!(1), &json!(MAX_OUTPUT_CHARACTERS))
    );
    assert!(
        schema["properties"]["url"]["description"]
            .as_str()
            .is_some_and(|text| text.contains("http or https")),
        "{schema}"
    );
    for arguments in [
        json!({}),
        json!({ "url": 7 }),
        json!({ "url": "x", "extra": true }),
    ] {
        let error = call(&tool, arguments.clone()).await.unwrap_err();
        assert!(
            matches!(error, ToolError::InvalidArguments(_)),
            "{arguments}: {error}"
        );
    }
    let error = tool.apply(&json!({})).await.unwrap_err();
    assert!(matches!(error, ToolError::Unsupported(_)), "{error}");
}

#[tokio::test]
async fn a_policy_open_to_private_networks_is_refused_for_model_urls() {
    let open = FetchPolicy::default().with_private_networks(PrivateNetworks::Allow);
    let fetcher = Fetcher::with_resolver(open, Arc::new(StaticResolver::new())).unwrap();
    let error = WebFetchTool::new(Arc::new(fetcher)).unwrap_err();
    assert!(
        error.to_string().contains("must deny private networks"),
        "{error}"
    );
}
