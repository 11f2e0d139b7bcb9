//! `session/rename` through the real router: the title is trimmed, stored, and announced
//! to the root's and the session's subscribers; bad titles and unknown sessions are
//! refused with errors that say why. `session/mark` pins and archives the same way, and
//! the list filters by those marks.

use hearth_core::SessionUri;
use hearth_protocol::{
    self as wire, ErrorKind, SessionList, SessionListParams, SessionMark, SessionMarkParams,
    SessionRename, SessionRenameParams, Subscribe, SubscribeParams,
};
use hearth_server::ServerError;
use pretty_assertions::assert_eq;

use super::support::{TestServer, create_session, next_envelope};

fn rpc_error(error: ServerError) -> wire::RpcError {
    match error {
        ServerError::Rpc(error) => error,
        other => panic!("expected an error response, got {other}"),
    }
}

#[tokio::test]
async fn a_renamed_session_is_stored_and_announced_to_root_and_session() {
    let server = TestServer::start().await;
    let (client, mut notifications) = server.client().await;
    let session = create_session(&client).await.summary.uri;
    for resource in [hearth_protocol::ROOT_RESOURCE.to_owned(), session.clone()] {
        client
            .call::<Subscribe>(&SubscribeParams {
                resource,
                last_seq: None,
                turn_limit: None,
            })
            .await
            .unwrap();
    }

    let renamed = client
        .call::<SessionRename>(&SessionRenameParams {
            session: session.clone(),
            title: "  Garden plans for spring \n".into(),
        })
        .await
        .unwrap();
    assert_eq!(renamed.summary.uri, session);
    assert_eq!(
        renamed.summary.title.as_deref(),
        Some("Garden plans for spring")
    );

    let mut announced = Vec::new();
    for _ in 0..2 {
        let envelope = next_envelope(&mut notifications).await;
        match envelope.action {
            wire::Action::SessionUpdated { summary } => {
                announced.push((envelope.resource, summary.title));
            }
            other => panic!("expected sessionUpdated, got {other:?}"),
        }
    }
    announced.sort();
    let title = Some("Garden plans for spring".to_owned());
    let mut expected = vec![
        (hearth_protocol::ROOT_RESOURCE.to_owned(), title.clone()),
        (session.clone(), title.clone()),
    ];
    expected.sort();
    assert_eq!(announced, expected);

    // Stored when the call returns, and listed under the new title.
    let stored = server
        .host
        .store
        .session(&SessionUri::parse(&session).unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.title, title);
    let listed = client
        .call::<SessionList>(&SessionListParams::default())
        .await
        .unwrap();
    assert_eq!(listed.sessions[0].title, title);
}

#[tokio::test]
async fn bad_titles_and_unknown_sessions_are_refused() {
    let server = TestServer::start().await;
    let (client, _notifications) = server.client().await;
    let session = create_session(&client).await.summary.uri;
    let rename = |title: String| SessionRenameParams {
        session: session.clone(),
        title,
    };

    for blank in ["", "   \t  "] {
        let error = rpc_error(
            client
                .call::<SessionRename>(&rename(blank.into()))
                .await
                .unwrap_err(),
        );
        assert_eq!(error.kind(), ErrorKind::InvalidParams, "{error:?}");
        assert!(error.message.contains("empty"), "{error:?}");
    }
    let long = rpc_error(
        client
            .call::<SessionRename>(&rename("x".repeat(201)))
            .await
            .unwrap_err(),
    );
    assert_eq!(long.kind(), ErrorKind::InvalidParams);
    assert!(long.message.contains("at most 200"), "{long:?}");
    let two_lines = rpc_error(
        client
            .call::<SessionRename>(&rename("one\ntwo".into()))
            .await
            .unwrap_err(),
    );
    assert_eq!(two_lines.kind(), ErrorKind::InvalidParams);
    // Exactly at the limit is fine.
    let longest = client
        .call::<SessionRename>(&rename("y".repeat(200)))
        .await
        .unwrap();
    assert_eq!(longest.summary.title.map(|t| t.len()), Some(200));

    let unknown = rpc_error(
        client
            .call::<SessionRename>(&SessionRenameParams {
                session: "hearth-session:fake/no-such-session".into(),
                title: "Nope".into(),
            })
            .await
            .unwrap_err(),
    );
    assert_eq!(unknown.kind(), ErrorKind::NotFound, "{unknown:?}");
    let malformed = rpc_error(
        client
            .call::<SessionRename>(&SessionRenameParams {
                session: "not a uri".into(),
                title: "Nope".into(),
            })
            .await
            .unwrap_err(),
    );
    assert_eq!(malformed.kind(), ErrorKind::InvalidParams);
    assert!(malformed.message.contains("session"), "{malformed:?}");
}

#[tokio::test]
async fn the_session_list_finds_titles_over_every_page() {
    let server = TestServer::start().await;
    let (client, _notifications) = server.client().await;
    let mut wanted = Vec::new();
    for index in 0..12 {
        let session = create_session(&client).await.summary.uri;
        let title = if index % 4 == 0 {
            format!("Trip to Lisbon, part {index}")
        } else {
            format!("Groceries {index}")
        };
        client
            .call::<SessionRename>(&SessionRenameParams {
                session: session.clone(),
                title: title.clone(),
            })
            .await
            .unwrap();
        if index % 4 == 0 {
            wanted.push(title);
        }
    }
    wanted.reverse();
    let mut found = Vec::new();
    let mut cursor = None;
    loop {
        let page = client
            .call::<SessionList>(&SessionListParams {
                title_contains: Some("lisbon".into()),
                limit: Some(2),
                cursor: cursor.take(),
                ..SessionListParams::default()
            })
            .await
            .unwrap();
        found.extend(page.sessions.into_iter().filter_map(|s| s.title));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(found, wanted);
}

/// The titles a listing returns, in order.
async fn titles(
    client: &hearth_server::Client,
    pinned: Option<bool>,
    archived: Option<bool>,
) -> Vec<String> {
    let page = client
        .call::<SessionList>(&SessionListParams {
            pinned,
            archived,
            ..SessionListParams::default()
        })
        .await
        .unwrap();
    page.sessions.into_iter().filter_map(|s| s.title).collect()
}

#[tokio::test]
async fn pinned_and_archived_sessions_are_stored_announced_and_listed_apart() {
    let server = TestServer::start().await;
    let (client, mut notifications) = server.client().await;
    let mut uris = Vec::new();
    for title in ["Alpha", "Bravo", "Charlie"] {
        let session = create_session(&client).await.summary.uri;
        client
            .call::<SessionRename>(&SessionRenameParams {
                session: session.clone(),
                title: title.into(),
            })
            .await
            .unwrap();
        uris.push(session);
    }
    client
        .call::<Subscribe>(&SubscribeParams {
            resource: hearth_protocol::ROOT_RESOURCE.to_owned(),
            last_seq: None,
            turn_limit: None,
        })
        .await
        .unwrap();
    let pinned = client
        .call::<SessionMark>(&SessionMarkParams {
            session: uris[0].clone(),
            pinned: Some(true),
            archived: None,
        })
        .await
        .unwrap();
    assert!(pinned.summary.pinned && !pinned.summary.archived);
    match next_envelope(&mut notifications).await.action {
        wire::Action::SessionUpdated { summary } => {
            assert_eq!(
                (summary.uri.as_str(), summary.pinned),
                (uris[0].as_str(), true)
            );
        }
        other => panic!("expected sessionUpdated, got {other:?}"),
    }
    client
        .call::<SessionMark>(&SessionMarkParams {
            session: uris[1].clone(),
            pinned: None,
            archived: Some(true),
        })
        .await
        .unwrap();

    assert_eq!(titles(&client, Some(true), None).await, ["Alpha"]);
    assert_eq!(titles(&client, Some(false), Some(false)).await, ["Charlie"]);
    assert_eq!(titles(&client, None, Some(true)).await, ["Bravo"]);
    assert_eq!(
        titles(&client, None, None).await,
        ["Charlie", "Bravo", "Alpha"]
    );
    // Marks keep a session's place among the recent ones.
    let stored = server
        .host
        .store
        .session(&SessionUri::parse(&uris[1]).unwrap())
        .await
        .unwrap()
        .unwrap();
    assert!(stored.archived && !stored.pinned);

    // Undone, it is back with the others; an unknown session is an error that says so.
    client
        .call::<SessionMark>(&SessionMarkParams {
            session: uris[1].clone(),
            pinned: None,
            archived: Some(false),
        })
        .await
        .unwrap();
    assert_eq!(
        titles(&client, None, Some(true)).await,
        Vec::<String>::new()
    );
    let missing = client
        .call::<SessionMark>(&SessionMarkParams {
            session: "hearth-session:fake/00000000-0000-4000-8000-000000000000".into(),
            pinned: Some(true),
            archived: None,
        })
        .await
        .unwrap_err();
    assert_eq!(rpc_error(missing).kind(), ErrorKind::NotFound);
}
