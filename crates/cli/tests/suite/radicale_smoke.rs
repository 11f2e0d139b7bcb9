//! The Radicale harness itself: a calendar is created, an event is written, read back,
//! guarded by its ETag, refused to a wrong password, deleted, and the server can be taken
//! down and brought back with its storage.

use std::net::TcpStream;

use pretty_assertions::assert_eq;

use super::radicale_support::Radicale;

const EVENT: &str = "BEGIN:VCALENDAR\r\n\
VERSION:2.0\r\n\
PRODID:-//Hearth tests//EN\r\n\
BEGIN:VEVENT\r\n\
UID:standup@hearth.test\r\n\
DTSTAMP:20260105T080000Z\r\n\
DTSTART:20260105T093000Z\r\n\
DTEND:20260105T094500Z\r\n\
SUMMARY:Team standup\r\n\
END:VEVENT\r\n\
END:VCALENDAR\r\n";

#[test]
fn radicale_serves_a_calendar_that_a_second_client_changes() {
    let Some(mut radicale) = Radicale::start(&[("alice", "secret")]) else {
        return;
    };
    let calendar = radicale.mkcalendar("alice", "secret", "work", "Work", "#3366CCFF");
    assert_eq!(calendar, format!("{}alice/work/", radicale.base_url()));

    let event = format!("{calendar}standup.ics");
    let (status, etag) = radicale.put("alice", "secret", &event, EVENT, None);
    assert_eq!(status, 201);
    let etag = etag.expect("a created event has an ETag");
    let (status, read_etag, body) = radicale.get("alice", "secret", &event);
    assert_eq!((status, read_etag.as_deref()), (200, Some(etag.as_str())));
    assert!(body.contains("SUMMARY:Team standup"), "{body}");

    // A change made against a stale ETag is refused and leaves the event as it was.
    let moved = EVENT.replace("Team standup", "Moved standup");
    let (status, _) = radicale.put("alice", "secret", &event, &moved, Some("\"stale\""));
    assert_eq!(status, 412);
    let (_, unchanged_etag, body) = radicale.get("alice", "secret", &event);
    assert_eq!(unchanged_etag.as_deref(), Some(etag.as_str()));
    assert!(body.contains("SUMMARY:Team standup"), "{body}");
    // Against the current one it lands, with a new ETag.
    let (status, moved_etag) = radicale.put("alice", "secret", &event, &moved, Some(&etag));
    assert_eq!(status, 204);
    let moved_etag = moved_etag.expect("a replaced event has an ETag");
    assert_ne!(moved_etag, etag);
    let (_, read_etag, body) = radicale.get("alice", "secret", &event);
    assert_eq!(read_etag.as_deref(), Some(moved_etag.as_str()));
    assert!(body.contains("SUMMARY:Moved standup"), "{body}");

    let (status, _, _) = radicale.get("alice", "wrong", &event);
    assert_eq!(status, 401);

    let status = radicale.delete("alice", "secret", &event);
    assert!(matches!(status, 200 | 204), "DELETE answered {status}");
    let (status, _, _) = radicale.get("alice", "secret", &event);
    assert_eq!(status, 404);

    let address = radicale
        .base_url()
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    radicale.stop();
    assert!(
        TcpStream::connect(&address).is_err(),
        "a stopped Radicale still accepts connections on {address}"
    );

    radicale.restart();
    let (status, _) = radicale.put("alice", "secret", &event, EVENT, None);
    assert_eq!(status, 201, "the calendar survives a restart");
    let (status, _, body) = radicale.get("alice", "secret", &calendar);
    assert_eq!(status, 200);
    assert!(body.contains("SUMMARY:Team standup"), "{body}");
}
