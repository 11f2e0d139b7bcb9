//! CalDAV calendars against an in-memory server that speaks the wire format — `207
//! Multi-Status` in the `DAV:` and CalDAV namespaces, ETags, preconditions, status codes
//! — for the paths the real server of the end-to-end tests (Radicale, which supports
//! `sync-collection`) does not take: a server without `sync-collection` (ETags compared,
//! the ctag short-cut), an expired sync token, a busy or failing server, the headers a
//! staged change is sent with and a batch undone after a 412, and answers that are not
//! WebDAV at all. A failed sync always leaves the last one in place.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use hearth_calendar::{
    CalendarError, CalendarOptions, Calendars, ChangeRequest, DavTransport, EventId, EventInput,
    EventPatch, SyncMethod, SyncReport,
};
use hearth_config::Config;
use pretty_assertions::assert_eq;

use super::caldav_server::*;
use super::support::{occurrences, utc};

// ---------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------

/// A resource with one event, as another client writes it.
fn event(uid: &str, summary: &str, start: &str) -> String {
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Other client//EN\r\nBEGIN:VEVENT\r\nUID:{uid}\r\nDTSTAMP:20300101T000000Z\r\nDTSTART:{start}\r\nDURATION:PT1H\r\nSUMMARY:{summary}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
}

/// Calendar `work` on the fake, with the password from `password_command`, its cache
/// under `data`.
fn calendars_over(fake: &Arc<FakeDav>, data: &Path, password: &str) -> Calendars {
    let toml = format!(
        "[calendars.work]\nkind = \"caldav\"\nurl = \"{COLLECTION}\"\nusername = \"{USER}\"\npassword_command = [\"printf\", \"%s\", \"{password}\"]\ntime_zone = \"UTC\"\n"
    );
    let config = Config::parse(&toml, Path::new("config.toml")).unwrap();
    let transport: Arc<dyn DavTransport> = fake.clone();
    let calendars = Calendars::from_config(
        &config.calendars,
        CalendarOptions::new(data.join("calendars"), chrono_tz::UTC).with_dav_transport(transport),
    );
    assert_eq!(calendars.problems(), []);
    calendars
}

struct Setup {
    _dir: tempfile::TempDir,
    data: PathBuf,
    fake: Arc<FakeDav>,
    calendars: Calendars,
}

impl Setup {
    /// The fake with Alpha, Beta and Gamma, and Hearth configured for it.
    fn new(sync: SyncSupport) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().to_path_buf();
        let fake = FakeDav::new(sync);
        fake.put("a.ics", &event("a@other", "Alpha", "20300304T090000Z"));
        fake.put("b.ics", &event("b@other", "Beta", "20300305T090000Z"));
        fake.put("c.ics", &event("c@other", "Gamma", "20300306T090000Z"));
        let calendars = calendars_over(&fake, &data, PASSWORD);
        Self {
            _dir: dir,
            data,
            fake,
            calendars,
        }
    }

    /// Hearth started again over the same data folder: nothing in memory.
    fn restarted(&self) -> Calendars {
        calendars_over(&self.fake, &self.data, PASSWORD)
    }

    fn cache_file(&self) -> PathBuf {
        self.data.join("calendars/caldav/work.json")
    }

    /// The occurrences in March 2030.
    async fn listed(&self) -> Vec<(String, DateTime<Utc>)> {
        listed(&self.calendars).await
    }
}

async fn listed(calendars: &Calendars) -> Vec<(String, DateTime<Utc>)> {
    occurrences(calendars, "2030-03-01T00:00:00Z", "2030-04-01T00:00:00Z").await
}

fn at(title: &str, start: &str) -> (String, DateTime<Utc>) {
    (title.to_owned(), utc(start))
}

fn alpha_beta_gamma() -> Vec<(String, DateTime<Utc>)> {
    vec![
        at("Alpha", "2030-03-04T09:00:00Z"),
        at("Beta", "2030-03-05T09:00:00Z"),
        at("Gamma", "2030-03-06T09:00:00Z"),
    ]
}

/// The report expected of a sync of `work` (its time taken from `actual`).
fn report(
    actual: &SyncReport,
    method: SyncMethod,
    [added, changed, removed]: [usize; 3],
    resources: usize,
) -> SyncReport {
    SyncReport {
        calendar: "work".to_owned(),
        method,
        added,
        changed,
        removed,
        resources,
        synced_at: actual.synced_at,
    }
}

/// Each request as `<kind> <status>`.
fn kinds(seen: &[Seen]) -> Vec<String> {
    seen.iter()
        .map(|s| format!("{} {}", s.kind, s.status))
        .collect()
}

fn multiget_hrefs(seen: &[Seen]) -> Vec<String> {
    seen.iter()
        .filter(|s| s.kind == "REPORT calendar-multiget")
        .flat_map(|s| element_texts(&s.body, "d:href"))
        .collect()
}

fn input(title: &str, start: &str) -> EventInput {
    EventInput {
        title: title.into(),
        start: start.into(),
        ..EventInput::default()
    }
}

// ---------------------------------------------------------------------------------
// Syncing
// ---------------------------------------------------------------------------------

async fn a_server_without_sync_collection_is_synced_by_etags(sync: SyncSupport, refused: &str) {
    let setup = Setup::new(sync);
    let first = setup.calendars.sync("work").await.unwrap();
    assert_eq!(
        first,
        report(&first, SyncMethod::EtagComparison, [3, 0, 0], 3)
    );
    assert_eq!(
        kinds(&setup.fake.take_seen()),
        [
            refused,
            "PROPFIND Depth 0 207",
            "PROPFIND Depth 1 207",
            "REPORT calendar-multiget 207"
        ]
    );
    assert_eq!(setup.listed().await, alpha_beta_gamma());

    // Nothing changed: the ctag says so, and nothing is fetched.
    let second = setup.calendars.sync("work").await.unwrap();
    assert_eq!(second, report(&second, SyncMethod::Unchanged, [0, 0, 0], 3));
    assert_eq!(
        kinds(&setup.fake.take_seen()),
        [refused, "PROPFIND Depth 0 207"]
    );

    // Another client moves Beta, adds Delta (with characters XML escapes) and removes
    // Gamma: only Beta and Delta are fetched.
    setup
        .fake
        .put("b.ics", &event("b@other", "Beta moved", "20300305T150000Z"));
    setup.fake.put(
        "d.ics",
        &event("d@other", "Delta & <friends>", "20300307T090000Z"),
    );
    setup.fake.remove("c.ics");
    let third = setup.calendars.sync("work").await.unwrap();
    assert_eq!(
        third,
        report(&third, SyncMethod::EtagComparison, [1, 1, 1], 3)
    );
    let seen = setup.fake.take_seen();
    assert_eq!(
        kinds(&seen),
        [
            refused,
            "PROPFIND Depth 0 207",
            "PROPFIND Depth 1 207",
            "REPORT calendar-multiget 207"
        ]
    );
    assert_eq!(
        multiget_hrefs(&seen),
        ["/cal/alice/work/b.ics", "/cal/alice/work/d.ics"]
    );
    assert_eq!(
        setup.listed().await,
        [
            at("Alpha", "2030-03-04T09:00:00Z"),
            at("Beta moved", "2030-03-05T15:00:00Z"),
            at("Delta & <friends>", "2030-03-07T09:00:00Z"),
        ]
    );
}

#[tokio::test]
async fn a_server_refusing_sync_collection_with_403_is_synced_by_comparing_etags() {
    a_server_without_sync_collection_is_synced_by_etags(
        SyncSupport::Forbidden,
        "REPORT sync-collection 403",
    )
    .await;
}

#[tokio::test]
async fn a_server_answering_501_to_sync_collection_is_synced_by_comparing_etags() {
    a_server_without_sync_collection_is_synced_by_etags(
        SyncSupport::NotImplemented,
        "REPORT sync-collection 501",
    )
    .await;
}

#[tokio::test]
async fn an_expired_sync_token_is_followed_by_a_full_sync_collection() {
    let setup = Setup::new(SyncSupport::Supported);
    let first = setup.calendars.sync("work").await.unwrap();
    assert_eq!(
        first,
        report(&first, SyncMethod::SyncCollection, [3, 0, 0], 3)
    );
    let seen = setup.fake.take_seen();
    assert_eq!(
        kinds(&seen),
        ["REPORT sync-collection 207", "REPORT calendar-multiget 207"]
    );
    assert_eq!(element_texts(&seen[0].body, "d:sync-token"), [""]);

    // Control: a token the server accepts brings the changes only.
    setup.fake.put(
        "a.ics",
        &event("a@other", "Alpha moved", "20300304T110000Z"),
    );
    setup
        .fake
        .put("d.ics", &event("d@other", "Delta", "20300307T090000Z"));
    setup.fake.remove("c.ics");
    let second = setup.calendars.sync("work").await.unwrap();
    assert_eq!(
        second,
        report(&second, SyncMethod::SyncCollection, [1, 1, 1], 3)
    );
    let seen = setup.fake.take_seen();
    assert_eq!(
        kinds(&seen),
        ["REPORT sync-collection 207", "REPORT calendar-multiget 207"]
    );
    assert_eq!(
        element_texts(&seen[0].body, "d:sync-token"),
        [format!("{TOKEN_PREFIX}3")]
    );
    assert_eq!(
        multiget_hrefs(&seen),
        ["/cal/alice/work/a.ics", "/cal/alice/work/d.ics"]
    );

    // The token expires while Beta moves: everything is listed again without a token,
    // and only Beta is fetched.
    setup.fake.expire_tokens();
    setup
        .fake
        .put("b.ics", &event("b@other", "Beta moved", "20300305T150000Z"));
    let third = setup.calendars.sync("work").await.unwrap();
    assert_eq!(
        third,
        report(&third, SyncMethod::SyncCollection, [0, 1, 0], 3)
    );
    let seen = setup.fake.take_seen();
    assert_eq!(
        kinds(&seen),
        [
            "REPORT sync-collection 403",
            "REPORT sync-collection 207",
            "REPORT calendar-multiget 207"
        ]
    );
    assert_eq!(
        element_texts(&seen[0].body, "d:sync-token"),
        [format!("{TOKEN_PREFIX}6")]
    );
    assert_eq!(element_texts(&seen[1].body, "d:sync-token"), [""]);
    assert_eq!(multiget_hrefs(&seen), ["/cal/alice/work/b.ics"]);
    assert_eq!(
        setup.listed().await,
        [
            at("Alpha moved", "2030-03-04T11:00:00Z"),
            at("Beta moved", "2030-03-05T15:00:00Z"),
            at("Delta", "2030-03-07T09:00:00Z"),
        ]
    );
}

#[tokio::test]
async fn a_busy_server_is_asked_again_and_a_failing_one_leaves_the_last_sync() {
    let setup = Setup::new(SyncSupport::Supported);
    setup.fake.queue([Answer::Status(503), Answer::Status(429)]);
    let first = setup.calendars.sync("work").await.unwrap();
    assert_eq!(
        first,
        report(&first, SyncMethod::SyncCollection, [3, 0, 0], 3)
    );
    assert_eq!(
        kinds(&setup.fake.take_seen()),
        [
            "REPORT sync-collection 503",
            "REPORT sync-collection 429",
            "REPORT sync-collection 207",
            "REPORT calendar-multiget 207"
        ]
    );
    let cached = std::fs::read(setup.cache_file()).unwrap();

    // Failing on every attempt: the sync fails naming the status, the cache stays.
    setup.fake.put(
        "a.ics",
        &event("a@other", "Alpha moved", "20300304T110000Z"),
    );
    setup.fake.always(Answer::Status(503));
    let error = setup.calendars.sync("work").await.unwrap_err().to_string();
    assert!(
        error.contains("REPORT http://dav.test/cal/alice/work/ answered HTTP 503 (tried 3 times)"),
        "{error}"
    );
    assert_eq!(
        kinds(&setup.fake.take_seen()),
        [
            "REPORT sync-collection 503",
            "REPORT sync-collection 503",
            "REPORT sync-collection 503"
        ]
    );
    assert_eq!(std::fs::read(setup.cache_file()).unwrap(), cached);

    // Started again while the server still fails: the last sync is read, saying when
    // it was made.
    let restarted = setup.restarted();
    let loaded = restarted.load("work").await.unwrap();
    assert_eq!(loaded.synced_at, Some(first.synced_at));
    let messages: Vec<&str> = loaded.warnings.iter().map(|w| w.message.as_str()).collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].contains("HTTP 503") && messages[0].contains("showing the copy synced at"),
        "{messages:?}"
    );
    assert_eq!(listed(&restarted).await, alpha_beta_gamma());
    assert_eq!(std::fs::read(setup.cache_file()).unwrap(), cached);
}

#[tokio::test]
async fn a_wrong_password_is_refused_at_once_and_named() {
    let setup = Setup::new(SyncSupport::Supported);
    let calendars = calendars_over(&setup.fake, &setup.data, "not-the-password");
    let error = calendars.sync("work").await.unwrap_err().to_string();
    assert!(
        error.contains("HTTP 401") && error.contains("password_command"),
        "{error}"
    );
    assert!(!error.contains("not-the-password"), "{error}");
    assert_eq!(
        kinds(&setup.fake.take_seen()),
        ["REPORT sync-collection 401"]
    );
}

const LOGIN_PAGE: &str = "<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body><form method=\"post\"><input name=\"user\"><br></form></body></html>\n";

#[tokio::test]
async fn an_answer_that_is_not_webdav_fails_the_sync_and_keeps_the_last_one() {
    let cases = [
        (
            Answer::Body(207, "Service temporarily unavailable"),
            "REPORT sync-collection http://dav.test/cal/alice/work/: the server's answer is not a WebDAV multistatus",
        ),
        (
            Answer::Body(
                207,
                "<d:multistatus xmlns:d=\"DAV:\"><d:response><d:href>/cal/alice/work/a.ics</d:href>",
            ),
            "the server's XML ends before its elements are closed",
        ),
        (
            Answer::Body(207, LOGIN_PAGE),
            "the server's XML is malformed",
        ),
        (
            Answer::Body(200, LOGIN_PAGE),
            "PROPFIND http://dav.test/cal/alice/work/ answered HTTP 200",
        ),
    ];
    for (answer, expected) in cases {
        let setup = Setup::new(SyncSupport::Supported);
        setup.calendars.sync("work").await.unwrap();
        let cached = std::fs::read(setup.cache_file()).unwrap();
        setup.fake.always(answer.clone());
        let error = setup.calendars.sync("work").await.unwrap_err().to_string();
        assert!(
            error.starts_with("CalDAV calendar `work` (http://dav.test/cal/alice/work/): ")
                && error.contains(expected),
            "{answer:?}: {error}"
        );
        assert_eq!(std::fs::read(setup.cache_file()).unwrap(), cached);
        let restarted = setup.restarted();
        let loaded = restarted.load("work").await.unwrap();
        assert!(
            loaded.warnings.len() == 1
                && loaded.warnings[0]
                    .message
                    .contains("showing the copy synced at"),
            "{answer:?}: {:?}",
            loaded.warnings
        );
        assert_eq!(listed(&restarted).await, alpha_beta_gamma(), "{answer:?}");
    }
}

// ---------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------

#[tokio::test]
async fn creating_an_event_puts_it_with_if_none_match() {
    let setup = Setup::new(SyncSupport::Supported);
    let staged = setup
        .calendars
        .stage(ChangeRequest::Create {
            calendar: Some("work".into()),
            events: vec![input("Dentist", "2030-03-05T10:00")],
        })
        .await
        .unwrap();
    setup.fake.take_seen();
    assert_eq!(setup.fake.names(), ["a.ics", "b.ics", "c.ics"]);

    let applied = setup.calendars.apply(&staged.payload).await.unwrap();
    let [id] = applied.events.as_slice() else {
        panic!("{applied:?}");
    };
    let uid = id.strip_prefix("work/").unwrap();
    let seen = setup.fake.take_seen();
    assert_eq!(
        kinds(&seen),
        [
            "PUT 201",
            "REPORT sync-collection 207",
            "REPORT calendar-multiget 207"
        ]
    );
    let put = &seen[0];
    assert_eq!(put.url, format!("{COLLECTION}{uid}.ics"));
    assert_eq!(put.header("If-None-Match"), Some("*"));
    assert_eq!(put.header("If-Match"), None);
    let (etag, text) = setup.fake.member(&format!("{uid}.ics")).unwrap();
    assert_eq!(put.etag.as_deref(), Some(etag.as_str()));
    assert_eq!(put.body, text);
    assert!(text.contains("SUMMARY:Dentist\r\n"), "{text}");
    assert_eq!(
        setup.listed().await,
        [
            at("Alpha", "2030-03-04T09:00:00Z"),
            at("Beta", "2030-03-05T09:00:00Z"),
            at("Dentist", "2030-03-05T10:00:00Z"),
            at("Gamma", "2030-03-06T09:00:00Z"),
        ]
    );
}

#[tokio::test]
async fn updating_and_deleting_send_if_match_with_the_synced_etag() {
    let setup = Setup::new(SyncSupport::Supported);
    let (alpha_etag, _) = setup.fake.member("a.ics").unwrap();
    let staged = setup
        .calendars
        .stage(ChangeRequest::Update {
            event: EventId::new("work", "a@other"),
            occurrence: None,
            patch: EventPatch {
                title: Some("Alpha renamed".into()),
                ..EventPatch::default()
            },
        })
        .await
        .unwrap();
    setup.fake.take_seen();
    setup.calendars.apply(&staged.payload).await.unwrap();
    let seen = setup.fake.take_seen();
    assert_eq!(kinds(&seen)[0], "PUT 204");
    assert_eq!(seen[0].url, format!("{COLLECTION}a.ics"));
    assert_eq!(seen[0].header("If-Match"), Some(alpha_etag.as_str()));
    assert_eq!(seen[0].header("If-None-Match"), None);
    let (_, text) = setup.fake.member("a.ics").unwrap();
    assert!(text.contains("SUMMARY:Alpha renamed"), "{text}");

    let (beta_etag, _) = setup.fake.member("b.ics").unwrap();
    let staged = setup
        .calendars
        .stage(ChangeRequest::Delete {
            event: EventId::new("work", "b@other"),
            occurrence: None,
        })
        .await
        .unwrap();
    setup.fake.take_seen();
    setup.calendars.apply(&staged.payload).await.unwrap();
    let seen = setup.fake.take_seen();
    assert_eq!(kinds(&seen)[0], "DELETE 204");
    assert_eq!(seen[0].url, format!("{COLLECTION}b.ics"));
    assert_eq!(seen[0].header("If-Match"), Some(beta_etag.as_str()));
    assert_eq!(setup.fake.names(), ["a.ics", "c.ics"]);
    assert_eq!(
        setup.listed().await,
        [
            at("Alpha renamed", "2030-03-04T09:00:00Z"),
            at("Gamma", "2030-03-06T09:00:00Z"),
        ]
    );
}

#[tokio::test]
async fn an_update_is_sent_with_the_crlf_line_endings_icalendar_requires() {
    let setup = Setup::new(SyncSupport::Supported);
    let staged = setup
        .calendars
        .stage(ChangeRequest::Update {
            event: EventId::new("work", "a@other"),
            occurrence: None,
            patch: EventPatch {
                title: Some("Alpha renamed".into()),
                ..EventPatch::default()
            },
        })
        .await
        .unwrap();
    setup.fake.take_seen();
    setup.calendars.apply(&staged.payload).await.unwrap();
    let seen = setup.fake.take_seen();
    assert_eq!(kinds(&seen)[0], "PUT 204");
    let body = &seen[0].body;
    assert!(body.contains("SUMMARY:Alpha renamed\r\n"), "{body:?}");
    assert!(!body.replace("\r\n", "").contains('\n'), "{body:?}");
}

#[tokio::test]
async fn a_change_made_on_the_server_after_staging_is_a_conflict_and_kept() {
    let setup = Setup::new(SyncSupport::Supported);
    let staged = setup
        .calendars
        .stage(ChangeRequest::Update {
            event: EventId::new("work", "a@other"),
            occurrence: None,
            patch: EventPatch {
                title: Some("Alpha renamed".into()),
                ..EventPatch::default()
            },
        })
        .await
        .unwrap();
    setup.fake.put(
        "a.ics",
        &event("a@other", "Alpha (other client)", "20300304T090000Z"),
    );
    let theirs = setup.fake.member("a.ics");
    setup.fake.take_seen();

    let error = setup.calendars.apply(&staged.payload).await.unwrap_err();
    match &error {
        CalendarError::ServerConflict {
            title,
            event,
            written,
        } => assert_eq!(
            (title.as_str(), event.as_str(), written.as_str()),
            ("Alpha", "work/a@other", "")
        ),
        other => panic!("not a server conflict: {other}"),
    }
    assert_eq!(kinds(&setup.fake.take_seen()), ["PUT 412"]);
    assert_eq!(setup.fake.member("a.ics"), theirs);
}

#[tokio::test]
async fn a_batch_refused_part_way_removes_the_events_it_created() {
    let setup = Setup::new(SyncSupport::Supported);
    let staged = setup
        .calendars
        .stage(ChangeRequest::Create {
            calendar: Some("work".into()),
            events: vec![
                input("One", "2030-03-10T09:00"),
                input("Two", "2030-03-11T09:00"),
                input("Three", "2030-03-12T09:00"),
            ],
        })
        .await
        .unwrap();
    setup.fake.take_seen();
    setup
        .fake
        .queue([Answer::Serve, Answer::Serve, Answer::Status(412)]);

    let error = setup.calendars.apply(&staged.payload).await.unwrap_err();
    match &error {
        CalendarError::ServerConflict { title, written, .. } => {
            assert_eq!((title.as_str(), written.as_str()), ("Three", ""));
        }
        other => panic!("not a server conflict: {other}"),
    }
    let seen = setup.fake.take_seen();
    assert_eq!(
        kinds(&seen),
        ["PUT 201", "PUT 201", "PUT 412", "DELETE 204", "DELETE 204"]
    );
    for (put, delete) in seen[..2].iter().zip(&seen[3..]) {
        assert_eq!(delete.url, put.url);
        assert_eq!(delete.header("If-Match"), put.etag.as_deref());
    }
    assert_eq!(setup.fake.names(), ["a.ics", "b.ics", "c.ics"]);
}
