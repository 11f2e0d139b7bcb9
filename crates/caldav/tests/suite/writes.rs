//! Conditional writes: a `PUT` or `DELETE` on the ETag last synced is refused (412) once
//! another client changed the resource, and a create is refused when the resource
//! exists — the server's copy is kept either way.

use hearth_caldav::{DavClient, Precondition, new_resource_href, resolve};
use pretty_assertions::assert_eq;

use super::server::{COLLECTION, FakeDav, SyncSupport};
use super::sync::{account, event};

fn url(name: &str) -> String {
    format!("{COLLECTION}{name}")
}

#[tokio::test]
async fn a_write_on_a_stale_etag_is_refused_and_the_servers_copy_kept() {
    let fake = FakeDav::new(SyncSupport::Supported);
    fake.put("a.ics", &event("a", "Alpha"));
    let (synced, _) = fake.member("a.ics").unwrap();
    fake.put("a.ics", &event("a", "Alpha, by another client"));
    let account = account();
    let client = DavClient::new(&*fake, &account, 1 << 20).await.unwrap();

    let stale = Precondition::Matches(synced.clone());
    let put = client
        .put(&url("a.ics"), event("a", "Alpha, by Hearth"), &stale)
        .await
        .unwrap();
    assert_eq!(put.status, 412);
    let deleted = client.delete(&url("a.ics"), &stale).await.unwrap();
    assert_eq!(deleted.status, 412);
    let (current, text) = fake.member("a.ics").unwrap();
    assert!(text.contains("by another client"), "{text}");

    let fresh = Precondition::Matches(current.clone());
    let put = client
        .put(&url("a.ics"), event("a", "Alpha, by Hearth"), &fresh)
        .await
        .unwrap();
    assert!((200..300).contains(&put.status), "{}", put.status);
    assert_eq!(put.etag, fake.member("a.ics").map(|(etag, _)| etag));
    let seen = fake.take_seen();
    let if_match: Vec<Option<&str>> = seen.iter().map(|s| s.header("If-Match")).collect();
    assert_eq!(
        if_match,
        [
            Some(synced.as_str()),
            Some(synced.as_str()),
            Some(current.as_str())
        ]
    );
}

#[tokio::test]
async fn a_create_is_refused_where_the_resource_exists() {
    let fake = FakeDav::new(SyncSupport::Supported);
    let account = account();
    let client = DavClient::new(&*fake, &account, 1 << 20).await.unwrap();
    let href = new_resource_href(COLLECTION, "new event@x.test").unwrap();
    assert_eq!(href, "/cal/alice/work/new-event@x.test.ics");
    let target = resolve(COLLECTION, &href).unwrap();
    let created = client
        .put(
            &target,
            event("new event@x.test", "New"),
            &Precondition::Absent,
        )
        .await
        .unwrap();
    assert!((200..300).contains(&created.status), "{}", created.status);
    let again = client
        .put(
            &target,
            event("new event@x.test", "Other"),
            &Precondition::Absent,
        )
        .await
        .unwrap();
    assert_eq!(again.status, 412);
    assert!(
        fake.member("new-event@x.test.ics")
            .unwrap()
            .1
            .contains("SUMMARY:New")
    );
    let seen = fake.take_seen();
    assert_eq!(seen[0].header("If-None-Match"), Some("*"));
    assert_eq!(
        seen[0].header("Content-Type"),
        Some("text/calendar; charset=utf-8")
    );
}
