//! Figures of CalDAV sync against a real Radicale (from the Python venv that
//! `.ci/install-python-packages` fills) on 127.0.0.1, with a 10,000-event calendar (one
//! event in ten a weekly series):
//!
//! 1. the first sync (`hearth calendar sync`, a fresh process on an empty cache), three
//!    times from an empty cache;
//! 2. an incremental sync after another client changed 10 events, five times;
//! 3. reading the synced calendar from its cache (the server unreachable) and the
//!    one-week query on that index through the service (target ≤ 2 ms, as for files).
//!
//! `cargo bench -p hearth-cli --bench caldav`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use chrono::{DateTime, Duration as Span, TimeZone, Utc};

const EVENTS: usize = 10_000;
const USER: &str = "alice";
const PASSWORD: &str = "bench-password";

fn python() -> Option<PathBuf> {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let venv = std::env::var_os("HEARTH_PYTHON_VENV")
        .map_or_else(|| repo.join("target/python-venv"), PathBuf::from);
    let python = venv.join("bin/python");
    Command::new(&python)
        .args(["-c", "import radicale"])
        .output()
        .is_ok_and(|output| output.status.success())
        .then_some(python)
}

fn resource(i: usize) -> String {
    let day = i % 365;
    let start = Utc.with_ymd_and_hms(2027, 1, 1, 8, 0, 0).unwrap()
        + Span::days(day as i64)
        + Span::minutes((i % 20) as i64 * 30);
    let rule = if i.is_multiple_of(10) {
        "RRULE:FREQ=WEEKLY;COUNT=52\r\n"
    } else {
        ""
    };
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Bench//EN\r\nBEGIN:VEVENT\r\nUID:bench-{i}@other\r\nDTSTAMP:20270101T000000Z\r\nDTSTART:{}\r\nDURATION:PT30M\r\n{rule}SUMMARY:Event {i}\r\nLOCATION:Room {}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
        start.format("%Y%m%dT%H%M%SZ"),
        i % 40
    )
}

struct Radicale {
    child: Child,
    port: u16,
}

impl Drop for Radicale {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_radicale(python: &Path, dir: &Path) -> Radicale {
    let port = TcpListener::bind(("127.0.0.1", 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    std::fs::write(dir.join("users"), format!("{USER}:{PASSWORD}\n")).unwrap();
    let config = dir.join("config");
    std::fs::write(
        &config,
        format!(
            "[server]\nhosts = 127.0.0.1:{port}\n[auth]\ntype = htpasswd\nhtpasswd_filename = {}\nhtpasswd_encryption = plain\ndelay = 0\n[rights]\ntype = owner_only\n[storage]\nfilesystem_folder = {}\n[web]\ntype = none\n[hook]\ntype = none\n[sharing]\ntype = none\n[logging]\nlevel = warning\n",
            dir.join("users").display(),
            dir.join("collections").display()
        ),
    )
    .unwrap();
    let child = Command::new(python)
        .args(["-m", "radicale", "--config"])
        .arg(&config)
        .env("HOME", dir)
        .env_remove("RADICALE_CONFIG")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "Radicale did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Radicale { child, port }
}

/// One HTTP/1.1 request as another client; returns the status.
fn http(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> u16 {
    exchange(port, method, path, headers, body).0
}

/// One HTTP/1.1 request; returns the status and the whole answer.
fn exchange(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let auth = base64::engine::general_purpose::STANDARD.encode(format!("{USER}:{PASSWORD}"));
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Basic {auth}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap();
    (status, answer)
}

/// The time Radicale alone takes for the requests of a first sync: the sync-collection
/// listing, then every item's data in multigets of 250 (as Hearth asks).
fn server_share(port: u16) -> Duration {
    let headers = [("Depth", "1"), ("Content-Type", "application/xml")];
    let started = Instant::now();
    let (status, listing) = exchange(
        port,
        "REPORT",
        &format!("/{USER}/work/"),
        &headers,
        r#"<?xml version="1.0"?><d:sync-collection xmlns:d="DAV:"><d:sync-token/><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>"#,
    );
    assert_eq!(status, 207);
    assert!(listing.matches("href>").count() / 2 >= EVENTS, "{status}");
    for batch in (0..EVENTS).collect::<Vec<_>>().chunks(250) {
        let hrefs: String = batch
            .iter()
            .map(|i| format!("<d:href>/{USER}/work/bench-{i}.ics</d:href>"))
            .collect();
        let (status, _) = exchange(
            port,
            "REPORT",
            &format!("/{USER}/work/"),
            &headers,
            &format!(
                r#"<?xml version="1.0"?><c:calendar-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/><c:calendar-data/></d:prop>{hrefs}</c:calendar-multiget>"#
            ),
        );
        assert_eq!(status, 207);
    }
    started.elapsed()
}

fn figures(mut samples: Vec<Duration>) -> String {
    samples.sort_unstable();
    let median = samples[samples.len() / 2];
    let max = samples[samples.len() - 1];
    format!(
        "median {median:.2?}, max {max:.2?} ({} runs)",
        samples.len()
    )
}

fn hearth(home: &Path, args: &[&str]) -> (String, Duration) {
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_hearth"))
        .arg("--home")
        .arg(home)
        .args(args)
        .env("HEARTH_BENCH_CALDAV_PASSWORD", PASSWORD)
        .env_remove("HEARTH_HOME")
        .env_remove("HEARTH_CONFIG")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    assert!(
        output.status.success(),
        "hearth {args:?}: {}{}",
        String::from_utf8_lossy(&output.stderr),
        String::from_utf8_lossy(&output.stdout)
    );
    (String::from_utf8(output.stdout).unwrap(), elapsed)
}

fn sync_report(home: &Path) -> (serde_json::Value, Duration) {
    let (out, elapsed) = hearth(home, &["calendar", "sync", "--json"]);
    (serde_json::from_str(out.trim()).unwrap(), elapsed)
}

fn main() {
    let Some(python) = python() else {
        println!(
            "caldav bench skipped: no python with `radicale` in target/python-venv; run .ci/install-python-packages"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // The calendar's items written straight into Radicale's storage (its own format:
    // one .ics file per item), as 10,000 PUTs would leave them.
    let collection = dir
        .path()
        .join("collections/collection-root")
        .join(USER)
        .join("work");
    std::fs::create_dir_all(&collection).unwrap();
    std::fs::write(
        collection.join(".Radicale.props"),
        r#"{"D:displayname": "Work", "tag": "VCALENDAR"}"#,
    )
    .unwrap();
    let mut bytes = 0;
    for i in 0..EVENTS {
        let text = resource(i);
        bytes += text.len();
        std::fs::write(collection.join(format!("bench-{i}.ics")), text).unwrap();
    }
    let radicale = start_radicale(&python, dir.path());
    let url = format!("http://127.0.0.1:{}/{USER}/work/", radicale.port);
    println!(
        "CalDAV sync against Radicale on 127.0.0.1: {EVENTS} events (1 in 10 a weekly series), {:.1} MB of iCalendar",
        bytes as f64 / 1e6
    );

    let home = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        home.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let config = format!(
        "[defaults]\ntime_zone = \"UTC\"\n\n[calendars.work]\nkind = \"caldav\"\nurl = \"{url}\"\nusername = \"{USER}\"\npassword_env = \"HEARTH_BENCH_CALDAV_PASSWORD\"\nallow_private_network = true\n"
    );
    std::fs::write(home.path().join("config.toml"), &config).unwrap();
    std::fs::set_permissions(
        home.path().join("config.toml"),
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let cache = home.path().join("calendars/caldav/work.json");

    // Radicale indexes a collection on its first listing (parsing every item, about a
    // minute here): the server's cost, paid once before timing, as a long-running server
    // has.
    let started = Instant::now();
    let status = http(
        radicale.port,
        "PROPFIND",
        &format!("/{USER}/work/"),
        &[("Depth", "1"), ("Content-Type", "application/xml")],
        "<?xml version=\"1.0\"?><d:propfind xmlns:d=\"DAV:\"><d:prop><d:getetag/></d:prop></d:propfind>",
    );
    assert_eq!(status, 207);
    println!(
        "Radicale's own first listing (it indexes the collection): {:.2?}",
        started.elapsed()
    );
    sync_report(home.path());
    let mut first = Vec::new();
    for _ in 0..3 {
        std::fs::remove_file(&cache).unwrap();
        let (report, elapsed) = sync_report(home.path());
        assert_eq!(report["resources"], EVENTS, "{report}");
        first.push(elapsed);
    }
    println!(
        "first sync of {EVENTS} events (hearth calendar sync, a fresh process, empty cache): {}",
        figures(first)
    );
    let server: Vec<Duration> = (0..3).map(|_| server_share(radicale.port)).collect();
    println!(
        "  of which Radicale alone answers the same requests (listing + 40 multigets of 250) in: {}",
        figures(server)
    );

    let mut incremental = Vec::new();
    for round in 0..5 {
        for i in 0..10 {
            let n = round * 10 + i;
            let text = resource(n).replace(
                &format!("SUMMARY:Event {n}"),
                &format!("SUMMARY:Changed {n} ({round})"),
            );
            let status = http(
                radicale.port,
                "PUT",
                &format!("/{USER}/work/bench-{n}.ics"),
                &[("Content-Type", "text/calendar; charset=utf-8")],
                &text,
            );
            assert!(matches!(status, 200..=299), "PUT answered {status}");
        }
        let (report, elapsed) = sync_report(home.path());
        assert_eq!(report["changed"], 10, "{report}");
        assert_eq!(report["method"], "sync_collection", "{report}");
        incremental.push(elapsed);
    }
    println!(
        "incremental sync after 10 changes (a fresh process, sync-collection): {}",
        figures(incremental)
    );
    drop(radicale);

    // The synced index, read from the cache while the server is unreachable.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let parsed = hearth_config::Config::parse(&config, Path::new("config.toml")).unwrap();
    let calendars = hearth_calendar::Calendars::from_config(
        &parsed.calendars,
        hearth_calendar::CalendarOptions::new(home.path().join("calendars"), chrono_tz::UTC),
    );
    let started = Instant::now();
    let loaded = runtime.block_on(calendars.load("work")).unwrap();
    println!(
        "read the synced calendar from its cache (server unreachable): {:.2?}, {} events",
        started.elapsed(),
        loaded.index.events().len()
    );
    let from: DateTime<Utc> = Utc.with_ymd_and_hms(2027, 1, 4, 0, 0, 0).unwrap();
    let (mut wall, mut found) = (Vec::new(), 0);
    for week in 0..50 {
        let start = from + Span::weeks(week);
        let query = hearth_calendar::EventQuery {
            from: start,
            to: start + Span::days(7),
            text: None,
            category: None,
            calendar: Some("work".to_owned()),
            limit: 200,
        };
        let started = Instant::now();
        let listing = runtime.block_on(calendars.events(&query)).unwrap();
        wall.push(started.elapsed());
        found += listing.total;
    }
    println!(
        "one-week query on the synced index, through the service ({} occurrences a week on average): {}",
        found / 50,
        figures(wall)
    );
    println!("target: one-week query ≤ 2 ms");
}
