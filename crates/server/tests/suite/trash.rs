//! `trash/*` and `session/dispose` through the real router: a session with a turn goes to
//! the trash — gone from `session/list`, listed by `trash/list` with when it is erased —
//! and `trash/restore` brings it back; a session never used is erased at once;
//! `trash/empty` erases and is audited; restoring what is not in the trash is `NotFound`.

use hearth_core::ChatUri;
use hearth_protocol::{
    self as wire, ErrorKind, SessionDispose, SessionDisposeParams, SessionList, SessionListParams,
    TrashEmpty, TrashEmptyParams, TrashList, TrashListParams, TrashRestore, TrashRestoreParams,
};
use hearth_server::{Client, ServerError};
use hearth_store::AuditQuery;
use pretty_assertions::assert_eq;

use super::support::{Setup, TestServer, create_session, send};

async fn listed(client: &Client) -> Vec<String> {
    client
        .call::<SessionList>(&SessionListParams::default())
        .await
        .unwrap()
        .sessions
        .into_iter()
        .map(|session| session.uri)
        .collect()
}

async fn dispose(client: &Client, session: &str) -> bool {
    client
        .call::<SessionDispose>(&SessionDisposeParams {
            session: session.to_owned(),
        })
        .await
        .unwrap()
        .trashed
}

/// A session with a turn.
async fn used_session(server: &TestServer, client: &Client) -> wire::SessionState {
    let used = create_session(client).await;
    let chat = ChatUri::parse(&used.chats[0].summary.uri).unwrap();
    send(client, &used.chats[0].summary.uri, "keep this").await;
    server.fake.wait_for_send(&chat).await;
    server.fake.finish_ok(&chat);
    used
}

#[tokio::test]
async fn a_deleted_session_waits_in_the_trash_until_restored_or_erased() {
    let server = TestServer::start_with(Setup {
        approvals: true,
        ..Setup::default()
    })
    .await;
    let (client, _notifications) = server.client().await;
    let used = used_session(&server, &client).await;
    let unused = create_session(&client).await;

    assert!(!dispose(&client, &unused.summary.uri).await);
    assert!(dispose(&client, &used.summary.uri).await);
    assert_eq!(listed(&client).await, Vec::<String>::new());
    let trash = client.call::<TrashList>(&TrashListParams {}).await.unwrap();
    assert_eq!(trash.items.len(), 1, "{trash:?}");
    let item = &trash.items[0];
    assert_eq!(
        (item.kind, item.id.as_str()),
        (wire::TrashKind::Session, used.summary.uri.as_str())
    );
    let deleted = chrono::DateTime::parse_from_rfc3339(&item.deleted_at).unwrap();
    let purge = chrono::DateTime::parse_from_rfc3339(item.purge_at.as_deref().unwrap()).unwrap();
    assert_eq!(purge - deleted, chrono::Duration::days(30));

    let restore = TrashRestoreParams {
        kind: wire::TrashKind::Session,
        id: used.summary.uri.clone(),
    };
    client.call::<TrashRestore>(&restore).await.unwrap();
    assert_eq!(listed(&client).await, vec![used.summary.uri.clone()]);
    let missing = client.call::<TrashRestore>(&restore).await.unwrap_err();
    let ServerError::Rpc(missing) = missing else {
        panic!("expected an error response, got {missing}")
    };
    assert_eq!(missing.kind(), ErrorKind::NotFound, "{missing:?}");

    assert!(dispose(&client, &used.summary.uri).await);
    let emptied = client
        .call::<TrashEmpty>(&TrashEmptyParams {})
        .await
        .unwrap();
    assert_eq!(emptied.erased, 1);
    let trash = client.call::<TrashList>(&TrashListParams {}).await.unwrap();
    assert!(trash.items.is_empty());
    let rows = hearth_tools::AuditLog::new(server.host.sqlite())
        .list(&AuditQuery::default())
        .await
        .unwrap();
    let row = rows
        .iter()
        .find(|row| row.entry.kind == "trash")
        .expect("an audit row");
    assert_eq!(
        (row.entry.decision.as_str(), row.entry.outcome.as_str()),
        ("erased", "ok: 1 erased")
    );
}
