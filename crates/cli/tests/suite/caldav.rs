//! CalDAV calendars end to end, against a real Radicale on 127.0.0.1: discovery from the
//! server root, the first sync and incremental syncs after another client changed, added
//! and deleted events, a recurring series with an override, create/update/delete through
//! approved proposals (with `If-Match`), a conflicting change between staging and apply
//! (412: the server's copy is kept), a wrong password, and the server down (reads from
//! the last sync, writes refused with the reason). The password never reaches the cache,
//! the database or the audit log.

use std::process::Output;

use hearth_test_support::{BoundedCommand, PROCESS_WAIT};
use pretty_assertions::assert_eq;
use serde_json::Value;

use super::radicale_support::Radicale;
use super::support::Hearth;
use super::tool_support::proposal;

const USER: &str = "alice";
const PASSWORD: &str = "hunter2-caldav-pw";
const PASSWORD_VAR: &str = "HEARTH_TEST_CALDAV_PASSWORD";

/// A calendar file with one event and whatever `extra` lines go into its VEVENT.
fn event(uid: &str, summary: &str, start: &str, extra: &str) -> String {
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Other client//EN\r\nBEGIN:VEVENT\r\nUID:{uid}\r\nDTSTAMP:20300101T000000Z\r\nDTSTART:{start}\r\nDURATION:PT1H\r\nSUMMARY:{summary}\r\n{extra}END:VEVENT\r\nEND:VCALENDAR\r\n"
    )
}

/// A weekly series with its second occurrence moved an hour later, in one resource.
const SERIES: &str = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Other client//EN\r\n\
BEGIN:VEVENT\r\nUID:weekly@other\r\nDTSTAMP:20300101T000000Z\r\nDTSTART:20300304T090000Z\r\n\
DURATION:PT30M\r\nRRULE:FREQ=WEEKLY;COUNT=3\r\nSUMMARY:Weekly review\r\nEND:VEVENT\r\n\
BEGIN:VEVENT\r\nUID:weekly@other\r\nDTSTAMP:20300101T000000Z\r\nRECURRENCE-ID:20300311T090000Z\r\n\
DTSTART:20300311T100000Z\r\nDURATION:PT30M\r\nSUMMARY:Weekly review (moved)\r\nEND:VEVENT\r\n\
END:VCALENDAR\r\n";

struct Setup {
    radicale: Radicale,
    hearth: Hearth,
    /// The `work` calendar's URL.
    calendar: String,
}

impl Setup {
    /// Radicale with alice's `work` calendar, and Hearth configured for it through
    /// `hearth calendar add --caldav <server root> --save`.
    fn new() -> Option<Self> {
        let radicale = Radicale::start(&[(USER, PASSWORD)])?;
        let calendar = radicale.mkcalendar(USER, PASSWORD, "work", "Work", "#3366CCFF");
        let hearth = Hearth::new();
        hearth.write("config.toml", "[defaults]\ntime_zone = \"UTC\"\n");
        let setup = Self {
            radicale,
            hearth,
            calendar,
        };
        setup.ok(&[
            "calendar",
            "add",
            "--caldav",
            &setup.radicale.base_url(),
            "--username",
            USER,
            "--password-env",
            PASSWORD_VAR,
            "--allow-private-network",
            "--save",
        ]);
        Some(setup)
    }

    fn run_with(&self, password: &str, args: &[&str]) -> Output {
        self.hearth
            .command()
            .env(PASSWORD_VAR, password)
            .args(args)
            .output_within(PROCESS_WAIT)
    }

    fn ok(&self, args: &[&str]) -> String {
        let output = self.run_with(PASSWORD, args);
        assert!(
            output.status.success(),
            "hearth {args:?} failed: {}\n{}",
            String::from_utf8_lossy(&output.stderr),
            String::from_utf8_lossy(&output.stdout)
        );
        String::from_utf8(output.stdout).unwrap()
    }

    fn fails(&self, args: &[&str]) -> String {
        let output = self.run_with(PASSWORD, args);
        assert!(!output.status.success(), "hearth {args:?} succeeded");
        String::from_utf8(output.stderr).unwrap()
    }

    fn put(&self, name: &str, text: &str) -> String {
        let (status, etag) = self.radicale.put(
            USER,
            PASSWORD,
            &format!("{}{name}", self.calendar),
            text,
            None,
        );
        assert!(matches!(status, 201 | 204), "PUT {name}: {status}");
        etag.unwrap()
    }

    fn server_copy(&self, name: &str) -> (u16, String) {
        let (status, _, body) =
            self.radicale
                .get(USER, PASSWORD, &format!("{}{name}", self.calendar));
        (status, body)
    }

    /// The titles `calendar events` lists in March 2030, in order.
    fn titles(&self) -> Vec<String> {
        self.ok(&[
            "calendar",
            "events",
            "--from",
            "2030-03-01",
            "--to",
            "2030-04-01",
            "--json",
        ])
        .lines()
        .map(|line| {
            let value: Value = serde_json::from_str(line).unwrap();
            format!(
                "{} {}",
                value["start"].as_str().unwrap(),
                value["title"].as_str().unwrap()
            )
        })
        .collect()
    }

    fn sync(&self) -> Value {
        serde_json::from_str(self.ok(&["calendar", "sync", "--json"]).trim()).unwrap()
    }

    /// Stages a tool call as an agent would; returns the proposal id.
    fn stage(&self, tool: &str, arguments: Value) -> String {
        let output = self.ok(&["tools", "call", tool, &arguments.to_string(), "--json"]);
        let outcome: Value = serde_json::from_str(output.trim()).unwrap();
        assert_eq!(outcome["isError"], false, "{output}");
        outcome["proposal"]["id"].as_str().unwrap().to_owned()
    }

    /// Another client's event "Review" (review.ics), synced, and a rename of it staged as
    /// an agent would; returns the proposal id.
    fn rename_synced_review(&self, title: &str) -> String {
        self.put(
            "review.ics",
            &event("review@other", "Review", "20300305T140000Z", ""),
        );
        self.sync();
        self.stage(
            "event_update",
            serde_json::json!({"id": "work/review@other", "title": title}),
        )
    }

    fn config(&self) -> String {
        std::fs::read_to_string(self.hearth.home.path().join("config.toml")).unwrap()
    }
}

#[test]
fn discovery_from_the_server_root_finds_each_calendar_with_its_name_and_colour() {
    let Some(setup) = Setup::new() else {
        return;
    };
    let config = setup.config();
    assert!(config.contains("[calendars.work]"), "{config}");
    assert!(config.contains("kind = \"caldav\""), "{config}");
    assert!(
        config.contains(&format!("url = \"{}\"", setup.calendar)),
        "{config}"
    );
    assert!(config.contains("color = \"#3366CCFF\""), "{config}");
    assert!(
        config.contains(&format!("password_env = \"{PASSWORD_VAR}\"")),
        "{config}"
    );
    assert!(!config.contains(PASSWORD), "the password is never written");

    // A second calendar appears; discovery lists both, and a calendar's own URL lists it.
    setup
        .radicale
        .mkcalendar(USER, PASSWORD, "home", "Home & family", "#00AA00FF");
    let listed = setup.ok(&[
        "calendar",
        "add",
        "--caldav",
        &setup.radicale.base_url(),
        "--username",
        USER,
        "--password-env",
        PASSWORD_VAR,
        "--allow-private-network",
        "--json",
    ]);
    let found: Vec<Value> = listed
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let names: Vec<&str> = found.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 2, "{listed}");
    assert!(
        names.contains(&"Home & family") && names.contains(&"Work"),
        "{listed}"
    );
    let home = found.iter().find(|c| c["name"] == "Home & family").unwrap();
    assert_eq!(home["id"], "home-family", "{listed}");
    assert_eq!(home["color"], "#00AA00FF");
    let direct = setup.ok(&[
        "calendar",
        "add",
        "--caldav",
        &setup.calendar,
        "--username",
        USER,
        "--password-env",
        PASSWORD_VAR,
        "--allow-private-network",
    ]);
    assert!(direct.starts_with("Found 1 calendars"), "{direct}");

    let described = setup.ok(&["tools", "call", "calendar_list", "{}", "--json"]);
    assert!(
        described.contains("synced with its server at"),
        "{described}"
    );
    let list = setup.ok(&["calendar", "list"]);
    assert!(list.contains("work *  Work (caldav,"), "{list}");
    assert!(list.contains("synced with the server at"), "{list}");
}

#[test]
fn syncs_follow_another_clients_changes_additions_and_deletions() {
    let Some(setup) = Setup::new() else {
        return;
    };
    setup.put("weekly.ics", SERIES);
    setup.put(
        "lunch.ics",
        &event("lunch@other", "Lunch", "20300305T120000Z", ""),
    );
    setup.put(
        "gym.ics",
        &event("gym@other", "Gym", "20300306T180000Z", ""),
    );
    let first = setup.sync();
    assert_eq!(first["method"], "sync_collection", "{first}");
    assert_eq!(
        (first["added"].as_u64(), first["resources"].as_u64()),
        (Some(3), Some(3))
    );
    assert_eq!(
        setup.titles(),
        [
            "2030-03-04T09:00 Weekly review",
            "2030-03-05T12:00 Lunch",
            "2030-03-06T18:00 Gym",
            "2030-03-11T10:00 Weekly review (moved)",
            "2030-03-18T09:00 Weekly review",
        ]
    );

    // Another client renames lunch, adds a dentist visit and deletes the gym.
    setup.put(
        "lunch.ics",
        &event("lunch@other", "Team lunch", "20300305T123000Z", ""),
    );
    setup.put(
        "dentist.ics",
        &event("dentist@other", "Dentist", "20300307T080000Z", ""),
    );
    let status = setup
        .radicale
        .delete(USER, PASSWORD, &format!("{}gym.ics", setup.calendar));
    assert!(matches!(status, 200 | 204));
    let second = setup.sync();
    assert_eq!(
        (
            &second["method"],
            second["added"].as_u64(),
            second["changed"].as_u64(),
            second["removed"].as_u64(),
            second["resources"].as_u64()
        ),
        (
            &Value::from("sync_collection"),
            Some(1),
            Some(1),
            Some(1),
            Some(3)
        ),
        "{second}"
    );
    assert_eq!(
        setup.titles(),
        [
            "2030-03-04T09:00 Weekly review",
            "2030-03-05T12:30 Team lunch",
            "2030-03-07T08:00 Dentist",
            "2030-03-11T10:00 Weekly review (moved)",
            "2030-03-18T09:00 Weekly review",
        ]
    );
    // Nothing changed: nothing fetched.
    let third = setup.sync();
    assert_eq!(
        (
            third["added"].as_u64(),
            third["changed"].as_u64(),
            third["removed"].as_u64()
        ),
        (Some(0), Some(0), Some(0))
    );
}

#[test]
fn approved_proposals_create_change_and_delete_events_on_the_server() {
    let Some(setup) = Setup::new() else {
        return;
    };
    // The other client's event carries an alarm and a property Hearth does not know.
    setup.put(
        "review.ics",
        &event(
            "review@other",
            "Review",
            "20300305T140000Z",
            "X-OTHER-CLIENT:keep me\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:Soon\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\n",
        ),
    );
    setup.put("weekly.ics", SERIES);

    // Create.
    let create = setup.stage(
        "event_create",
        serde_json::json!({"title": "Dentist", "start": "2030-03-06T09:00", "end": "2030-03-06T10:00"}),
    );
    let shown = setup.ok(&["proposals", "show", &create]);
    assert!(shown.contains("+ title: Dentist"), "{shown}");
    assert_eq!(setup.titles().len(), 4, "staging writes nothing");
    setup.ok(&["proposals", "approve", &create, "--yes"]);
    assert_eq!(proposal(&setup.hearth, &create)["status"], "applied");
    let created: Vec<String> = setup
        .titles()
        .into_iter()
        .filter(|t| t.ends_with("Dentist"))
        .collect();
    assert_eq!(created, ["2030-03-06T09:00 Dentist"]);

    // Update: the title changes on the server; the alarm and unknown property stay.
    let update = setup.stage(
        "event_update",
        serde_json::json!({"id": "work/review@other", "title": "Quarterly review"}),
    );
    setup.ok(&["proposals", "approve", &update, "--yes"]);
    let (status, body) = setup.server_copy("review.ics");
    assert_eq!(status, 200);
    assert!(body.contains("SUMMARY:Quarterly review"), "{body}");
    assert!(body.contains("X-OTHER-CLIENT:keep me"), "{body}");
    assert!(
        body.contains("BEGIN:VALARM") && body.contains("TRIGGER:-PT15M"),
        "{body}"
    );

    // One occurrence of the series is deleted (an EXDATE in its resource).
    let skip = setup.stage(
        "event_delete",
        serde_json::json!({"id": "work/weekly@other", "occurrence": "2030-03-18T09:00"}),
    );
    setup.ok(&["proposals", "approve", &skip, "--yes"]);
    let (_, body) = setup.server_copy("weekly.ics");
    assert!(body.contains("EXDATE"), "{body}");

    // Delete the whole event.
    let delete = setup.stage(
        "event_delete",
        serde_json::json!({"id": "work/review@other"}),
    );
    setup.ok(&["proposals", "approve", &delete, "--yes"]);
    assert_eq!(setup.server_copy("review.ics").0, 404);
    assert_eq!(
        setup.titles(),
        [
            "2030-03-04T09:00 Weekly review",
            "2030-03-06T09:00 Dentist",
            "2030-03-11T10:00 Weekly review (moved)",
        ]
    );

    // The user's own `calendar add` writes at once, to the server too.
    setup.ok(&["calendar", "add", "Call mum", "--start", "2030-03-08T18:00"]);
    let listing = setup.titles();
    assert!(
        listing.contains(&"2030-03-08T18:00 Call mum".to_owned()),
        "{listing:?}"
    );

    // Neither the cache, the database nor the audit log holds the password.
    let cache = setup.hearth.home.path().join("calendars/caldav/work.json");
    let cached = std::fs::read_to_string(&cache).unwrap();
    assert!(cached.contains("Quarterly review") || cached.contains("Dentist"));
    assert!(!cached.contains(PASSWORD));
    for file in ["hearth.db", "hearth.db-wal"] {
        let path = setup.hearth.home.path().join(file);
        if let Ok(bytes) = std::fs::read(&path) {
            assert!(
                !String::from_utf8_lossy(&bytes).contains(PASSWORD),
                "{file} holds the password"
            );
        }
    }
    let audit = setup.ok(&["audit", "export"]);
    assert!(!audit.contains(PASSWORD));
}

#[test]
fn a_change_made_on_the_server_after_staging_is_a_conflict_that_keeps_the_servers_copy() {
    let Some(setup) = Setup::new() else {
        return;
    };
    let rename = setup.rename_synced_review("Renamed by the agent");
    // Another client edits the event before the user approves.
    let theirs = event(
        "review@other",
        "Moved by a colleague",
        "20300305T160000Z",
        "",
    );
    setup.put("review.ics", &theirs);

    let error = setup.fails(&["proposals", "approve", &rename, "--yes"]);
    assert!(error.contains("changed on the server"), "{error}");
    assert!(error.contains("412"), "{error}");
    assert_eq!(proposal(&setup.hearth, &rename)["status"], "failed");
    let (_, body) = setup.server_copy("review.ics");
    assert!(body.contains("SUMMARY:Moved by a colleague"), "{body}");
    assert!(!body.contains("Renamed by the agent"), "{body}");
    assert_eq!(setup.titles(), ["2030-03-05T16:00 Moved by a colleague"]);
}

#[test]
fn a_wrong_password_is_named_and_nothing_is_cached() {
    let Some(setup) = Setup::new() else {
        return;
    };
    let cache = setup.hearth.home.path().join("calendars/caldav/work.json");
    let _ = std::fs::remove_file(&cache);
    let output = setup.run_with("not-the-password", &["calendar", "sync"]);
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains("refused the user name and password (HTTP 401"),
        "{error}"
    );
    assert!(error.contains(PASSWORD_VAR), "{error}");
    assert!(!error.contains("not-the-password"), "{error}");
    assert!(!cache.exists(), "nothing is cached from a refused sync");
    let output = setup.run_with(
        "not-the-password",
        &[
            "calendar",
            "events",
            "--from",
            "2030-03-01",
            "--to",
            "2030-04-01",
        ],
    );
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(error.contains("HTTP 401"), "{error}");

    // `hearth doctor` syncs it to test it, and names the failure.
    let output = setup.run_with("not-the-password", &["doctor"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(!output.status.success(), "{stdout}");
    assert!(stdout.contains("FAIL    work (caldav,"), "{stdout}");
    assert!(stdout.contains("HTTP 401"), "{stdout}");
    let doctor = setup.run_with(PASSWORD, &["doctor"]);
    let stdout = String::from_utf8_lossy(&doctor.stdout);
    assert!(stdout.contains("ok      work (caldav,"), "{stdout}");
    assert!(stdout.contains("synced, 0 resources"), "{stdout}");

    // Without the variable at all, the message says to set it.
    let output = setup
        .hearth
        .command()
        .env_remove(PASSWORD_VAR)
        .args(["calendar", "sync"])
        .output_within(PROCESS_WAIT);
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        error.contains(&format!(
            "the password variable `{PASSWORD_VAR}` is not set"
        )),
        "{error}"
    );
}

#[test]
fn with_the_server_down_reads_come_from_the_last_sync_and_writes_are_refused() {
    let Some(mut setup) = Setup::new() else {
        return;
    };
    let rename = setup.rename_synced_review("Renamed");
    setup.radicale.stop();

    assert_eq!(setup.titles(), ["2030-03-05T14:00 Review"]);
    let list = setup.ok(&["calendar", "list"]);
    assert!(list.contains("cannot sync"), "{list}");
    assert!(list.contains("showing the copy synced at"), "{list}");
    let error = setup.fails(&["calendar", "sync"]);
    assert!(error.contains("the last sync is kept"), "{error}");
    // The agent is told too: its listing is as of the last sync.
    let arguments = serde_json::json!({"from": "2030-03-01", "to": "2030-04-01"}).to_string();
    let listed = setup.ok(&["tools", "call", "events_list", &arguments, "--json"]);
    let outcome: Value = serde_json::from_str(listed.trim()).unwrap();
    let content = outcome["content"].as_str().unwrap();
    assert!(content.contains("Review"), "{content}");
    assert!(
        content.contains("Calendar `work` could not sync with its server"),
        "{content}"
    );

    let error = setup.fails(&["proposals", "approve", &rename, "--yes"]);
    assert!(error.contains("PUT"), "{error}");
    assert!(error.contains("failed"), "{error}");
    assert_eq!(proposal(&setup.hearth, &rename)["status"], "failed");
    let error = setup.fails(&["calendar", "add", "Offline", "--start", "2030-03-09"]);
    assert!(error.contains("CalDAV calendar `work`"), "{error}");

    // Back up: the event was never changed, and syncing works again.
    setup.radicale.restart();
    let (_, body) = setup.server_copy("review.ics");
    assert!(body.contains("SUMMARY:Review"), "{body}");
    assert_eq!(setup.sync()["resources"].as_u64(), Some(1));
}

#[test]
fn a_server_on_a_private_network_needs_the_users_consent() {
    let Some(setup) = Setup::new() else {
        return;
    };
    let config = setup.config().replace("allow_private_network = true\n", "");
    setup.hearth.write("config.toml", &config);
    let error = setup.fails(&["calendar", "sync"]);
    assert!(error.contains("allow_private_network = true"), "{error}");

    // Allowing the private network never opens cloud metadata addresses.
    let metadata = config.replace(&setup.calendar, "http://169.254.169.254/alice/work/")
        + "allow_private_network = true\n";
    setup.hearth.write("config.toml", &metadata);
    let error = setup.fails(&["calendar", "sync"]);
    assert!(error.contains("169.254.169.254"), "{error}");
    assert!(!error.contains("allow_private_network = true"), "{error}");

    // A password in clear in config.toml is refused, and says where it goes.
    let config = format!("{config}password = \"{PASSWORD}\"\n");
    setup.hearth.write("config.toml", &config);
    let list = setup.ok(&["calendar", "list"]);
    assert!(
        list.contains("a password is never kept in config.toml"),
        "{list}"
    );
    assert!(!list.contains(PASSWORD), "{list}");
}

#[test]
fn importing_into_a_caldav_calendar_puts_each_event_as_its_own_resource() {
    let Some(setup) = Setup::new() else {
        return;
    };
    setup.put(
        "lunch.ics",
        &event("lunch@other", "Lunch", "20300305T120000Z", ""),
    );
    // A file with a series and its override, a single event, and one the server has.
    let file = setup.hearth.write(
        "import.ics",
        &SERIES.replace(
            "END:VCALENDAR\r\n",
            "BEGIN:VEVENT\r\nUID:talk@import\r\nDTSTAMP:20300101T000000Z\r\nDTSTART:20300307T150000Z\r\nDURATION:PT1H\r\nSUMMARY:Talk\r\nEND:VEVENT\r\n\
BEGIN:VEVENT\r\nUID:lunch@other\r\nDTSTAMP:20300101T000000Z\r\nDTSTART:20300305T120000Z\r\nDURATION:PT1H\r\nSUMMARY:Lunch again\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
        ),
    );
    let report = setup.ok(&["calendar", "import", file.to_str().unwrap(), "--json"]);
    let report: Value = serde_json::from_str(report.trim()).unwrap();
    assert_eq!(report["imported"], 2, "{report}");
    assert!(
        report["skipped"][0]
            .as_str()
            .unwrap()
            .contains("lunch@other"),
        "{report}"
    );
    // The series and its override share one resource; the talk has its own.
    let (status, series) = setup.server_copy("weekly@other.ics");
    assert_eq!(status, 200, "{series}");
    assert_eq!(series.matches("BEGIN:VEVENT").count(), 2, "{series}");
    assert_eq!(setup.server_copy("talk@import.ics").0, 200);
    assert_eq!(
        setup.titles(),
        [
            "2030-03-04T09:00 Weekly review",
            "2030-03-05T12:00 Lunch",
            "2030-03-07T15:00 Talk",
            "2030-03-11T10:00 Weekly review (moved)",
            "2030-03-18T09:00 Weekly review",
        ]
    );
    // Export gives one calendar of every resource.
    let exported = setup.ok(&["calendar", "export"]);
    assert_eq!(exported.matches("BEGIN:VCALENDAR").count(), 1, "{exported}");
    assert_eq!(exported.matches("BEGIN:VEVENT").count(), 4, "{exported}");
}
