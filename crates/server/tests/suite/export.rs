//! `session/export` through the real router: Markdown with the prompt, and the JSON
//! Lines archive from its header to its end record, each with a file name and media
//! type; an unknown session is `NotFound`.

use hearth_core::ChatUri;
use hearth_protocol::{self as wire, ErrorKind, SessionExport, SessionExportParams};
use hearth_server::ServerError;
use pretty_assertions::assert_eq;

use super::support::{TestServer, create_session, send};

#[tokio::test]
async fn a_session_exports_as_markdown_and_as_an_archive() {
    let server = TestServer::start().await;
    let (client, _notifications) = server.client().await;
    let session = create_session(&client).await;
    let chat = session.chats[0].summary.uri.clone();
    send(&client, &chat, "the export words").await;
    server
        .fake
        .wait_for_send(&ChatUri::parse(&chat).unwrap())
        .await;
    let id = session.summary.uri.rsplit('/').next().unwrap().to_owned();

    let markdown = client
        .call::<SessionExport>(&SessionExportParams {
            session_id: session.summary.uri.clone(),
            format: wire::ExportFormat::Markdown,
        })
        .await
        .unwrap();
    assert_eq!(markdown.media_type, "text/markdown");
    assert!(
        markdown.file_name.ends_with(&format!("-{id}.md")),
        "{}",
        markdown.file_name
    );
    assert!(
        markdown.content.contains("> the export words"),
        "{}",
        markdown.content
    );

    let archive = client
        .call::<SessionExport>(&SessionExportParams {
            session_id: session.summary.uri.clone(),
            format: wire::ExportFormat::Jsonl,
        })
        .await
        .unwrap();
    assert_eq!(archive.media_type, "application/jsonl");
    assert!(archive.file_name.ends_with(&format!("-{id}.jsonl")));
    let types: Vec<String> = archive
        .content
        .lines()
        .map(|line| {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            record["type"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(types, vec!["header", "session", "chat", "turn", "end"]);
}

#[tokio::test]
async fn an_unknown_session_is_not_found() {
    let server = TestServer::start().await;
    let (client, _notifications) = server.client().await;
    let unknown = client
        .call::<SessionExport>(&SessionExportParams {
            session_id: "hearth-session:fake/nope".into(),
            format: wire::ExportFormat::Markdown,
        })
        .await
        .unwrap_err();
    let ServerError::Rpc(unknown) = unknown else {
        panic!("expected an error response, got {unknown}")
    };
    assert_eq!(unknown.kind(), ErrorKind::NotFound);
}
