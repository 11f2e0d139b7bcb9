//! Syncing a collection: everything the first time, then only what changed — by
//! `sync-collection` where the server has it, else by comparing ETags, skipped when the
//! ctag is unchanged — and members of another origin never fetched.

use std::collections::BTreeMap;

use hearth_caldav::{
    CalDavAccount, PasswordSource, SyncCache, SyncMethod, SyncReport, sync as sync_from,
};
use pretty_assertions::assert_eq;

use super::server::{COLLECTION, FakeDav, PASSWORD, Seen, SyncSupport, USER};

/// A one-event calendar text.
pub(crate) fn event(uid: &str, summary: &str) -> String {
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:{uid}\r\nDTSTART:20300304T090000Z\r\nSUMMARY:{summary}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
}

/// alice's account on the fake, the password printed by a command.
pub(crate) fn account() -> CalDavAccount {
    CalDavAccount {
        label: "work".to_owned(),
        url: COLLECTION.to_owned(),
        username: Some(USER.to_owned()),
        password: PasswordSource::Command(vec![
            "printf".to_owned(),
            "%s".to_owned(),
            PASSWORD.to_owned(),
        ]),
        allow_private_network: false,
    }
}

async fn sync(fake: &FakeDav, previous: &SyncCache) -> (SyncCache, SyncReport) {
    sync_from(fake, &account(), 1 << 20, previous)
        .await
        .unwrap()
}

/// The summary line of each synced resource, by member name.
fn summaries(cache: &SyncCache) -> BTreeMap<String, String> {
    cache
        .resources
        .iter()
        .map(|(href, resource)| {
            let name = href.rsplit('/').next().unwrap_or_default().to_owned();
            let summary = resource
                .text
                .lines()
                .find_map(|line| line.strip_prefix("SUMMARY:"))
                .unwrap_or_default()
                .to_owned();
            (name, summary)
        })
        .collect()
}

fn kinds(seen: &[Seen]) -> Vec<String> {
    seen.iter()
        .map(|s| format!("{} {}", s.kind, s.status))
        .collect()
}

fn counts(report: &SyncReport) -> (SyncMethod, usize, usize, usize, usize) {
    (
        report.method,
        report.added,
        report.changed,
        report.removed,
        report.resources,
    )
}

#[tokio::test]
async fn sync_collection_fetches_everything_once_then_only_the_changes() {
    let fake = FakeDav::new(SyncSupport::Supported);
    fake.put("a.ics", &event("a", "Alpha"));
    fake.put("b.ics", &event("b", "Beta"));
    let (first, report) = sync(&fake, &SyncCache::empty(&account())).await;
    assert_eq!(counts(&report), (SyncMethod::SyncCollection, 2, 0, 0, 2));
    assert!(first.sync_token.is_some() && first.synced_at.is_some());
    assert_eq!(
        kinds(&fake.take_seen()),
        ["REPORT sync-collection 207", "REPORT calendar-multiget 207"]
    );

    fake.put("a.ics", &event("a", "Alpha moved"));
    fake.remove("b.ics");
    fake.put("c.ics", &event("c", "Gamma"));
    let (second, report) = sync(&fake, &first).await;
    assert_eq!(counts(&report), (SyncMethod::SyncCollection, 1, 1, 1, 2));
    assert_eq!(
        summaries(&second),
        BTreeMap::from([
            ("a.ics".to_owned(), "Alpha moved".to_owned()),
            ("c.ics".to_owned(), "Gamma".to_owned()),
        ])
    );
    let seen = fake.take_seen();
    // Only the changed members are fetched again.
    let fetched = &seen[1].body;
    assert!(
        fetched.contains("a.ics") && fetched.contains("c.ics") && !fetched.contains("b.ics"),
        "{fetched}"
    );
    assert_ne!(second.sync_token, first.sync_token);
}

#[tokio::test]
async fn without_sync_collection_etags_are_compared_and_an_unchanged_ctag_ends_the_sync() {
    let fake = FakeDav::new(SyncSupport::Forbidden);
    fake.put("a.ics", &event("a", "Alpha"));
    fake.put("b.ics", &event("b", "Beta"));
    let (first, report) = sync(&fake, &SyncCache::empty(&account())).await;
    assert_eq!(counts(&report), (SyncMethod::EtagComparison, 2, 0, 0, 2));
    assert_eq!(
        kinds(&fake.take_seen()),
        [
            "REPORT sync-collection 403",
            "PROPFIND Depth 0 207",
            "PROPFIND Depth 1 207",
            "REPORT calendar-multiget 207"
        ]
    );

    let (same, report) = sync(&fake, &first).await;
    assert_eq!(counts(&report), (SyncMethod::Unchanged, 0, 0, 0, 2));
    assert_eq!(same.resources, first.resources);
    assert_eq!(
        kinds(&fake.take_seen()),
        ["REPORT sync-collection 403", "PROPFIND Depth 0 207"]
    );

    fake.put("b.ics", &event("b", "Beta moved"));
    let (changed, report) = sync(&fake, &same).await;
    assert_eq!(counts(&report), (SyncMethod::EtagComparison, 0, 1, 0, 2));
    assert_eq!(summaries(&changed)["b.ics"], "Beta moved");
    let seen = fake.take_seen();
    let fetched = &seen.last().unwrap().body;
    assert!(
        fetched.contains("b.ics") && !fetched.contains("a.ics"),
        "{fetched}"
    );
}

#[test]
fn a_state_of_another_account_is_not_its_own() {
    let mine = SyncCache::empty(&account());
    assert!(mine.belongs_to(&account()));
    let other = CalDavAccount {
        username: Some("bob".to_owned()),
        ..account()
    };
    assert!(!mine.belongs_to(&other));
    let elsewhere = CalDavAccount {
        url: "http://dav.test/cal/alice/home/".to_owned(),
        ..account()
    };
    assert!(!mine.belongs_to(&elsewhere));
}

#[tokio::test]
async fn a_refused_password_fails_the_sync_and_names_where_it_came_from() {
    let fake = FakeDav::new(SyncSupport::Supported);
    let wrong = CalDavAccount {
        password: PasswordSource::Command(vec![
            "printf".to_owned(),
            "%s".to_owned(),
            "not-it".to_owned(),
        ]),
        ..account()
    };
    let error = sync_from(&*fake, &wrong, 1 << 20, &SyncCache::empty(&wrong))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("HTTP 401") && error.contains("`password_command` prints"),
        "{error}"
    );
    assert!(!error.contains("not-it"), "{error}");
}
