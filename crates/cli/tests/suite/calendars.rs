//! The calendar commands: list, add, events, import and export.

use pretty_assertions::assert_eq;

use super::tool_support::with_calendar;

const OUTLOOK_EXPORT: &str = "BEGIN:VCALENDAR\r\n\
PRODID:-//Microsoft Corporation//Outlook 16.0 MIMEDIR//EN\r\n\
VERSION:2.0\r\n\
X-WR-CALNAME:Work\r\n\
BEGIN:VTIMEZONE\r\n\
TZID:Europe/Berlin\r\n\
BEGIN:STANDARD\r\n\
DTSTART:16011028T030000\r\n\
RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=10\r\n\
TZOFFSETFROM:+0200\r\n\
TZOFFSETTO:+0100\r\n\
END:STANDARD\r\n\
BEGIN:DAYLIGHT\r\n\
DTSTART:16010325T020000\r\n\
RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=3\r\n\
TZOFFSETFROM:+0100\r\n\
TZOFFSETTO:+0200\r\n\
END:DAYLIGHT\r\n\
END:VTIMEZONE\r\n\
BEGIN:VEVENT\r\n\
UID:standup-1@example.com\r\n\
DTSTAMP:20300101T000000Z\r\n\
DTSTART;TZID=Europe/Berlin:20300304T093000\r\n\
DTEND;TZID=Europe/Berlin:20300304T094500\r\n\
RRULE:FREQ=WEEKLY;BYDAY=MO,WE;COUNT=4\r\n\
SUMMARY:Work - Meetings - Standup\r\n\
X-MICROSOFT-CDO-BUSYSTATUS:BUSY\r\n\
END:VEVENT\r\n\
END:VCALENDAR\r\n";

#[test]
fn import_then_export_round_trips_the_events() {
    let (hearth, _) = with_calendar();
    let file = hearth.write("outlook.ics", OUTLOOK_EXPORT);
    let imported = hearth.ok(&["calendar", "import", file.to_str().unwrap()]);
    assert_eq!(imported, "Imported 1 event into `home`.\n");
    let again = hearth.ok(&["calendar", "import", file.to_str().unwrap(), "--json"]);
    let report: serde_json::Value = serde_json::from_str(again.trim()).unwrap();
    assert_eq!(
        report["imported"], 0,
        "a UID already there is skipped: {again}"
    );

    let exported = hearth.ok(&["calendar", "export"]);
    for line in [
        "UID:standup-1@example.com",
        "DTSTART;TZID=Europe/Berlin:20300304T093000",
        "RRULE:FREQ=WEEKLY;BYDAY=MO,WE;COUNT=4",
        "X-MICROSOFT-CDO-BUSYSTATUS:BUSY",
        "TZID:Europe/Berlin",
    ] {
        assert!(exported.contains(line), "{line} missing from:\n{exported}");
    }
    let out = hearth.home.path().join("exported.ics");
    hearth.ok(&[
        "calendar",
        "export",
        "--calendar",
        "home",
        "--output",
        out.to_str().unwrap(),
    ]);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), exported);

    // Importing the export into a fresh calendar gives the same occurrences.
    let (other, _) = with_calendar();
    other.ok(&["calendar", "import", out.to_str().unwrap()]);
    let range = [
        "calendar",
        "events",
        "--from",
        "2030-03-01",
        "--to",
        "2030-04-01",
        "--json",
    ];
    let listed = other.ok(&range);
    assert_eq!(listed, hearth.ok(&range));
    let starts: Vec<String> = listed
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["start"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        starts,
        [
            "2030-03-04T08:30",
            "2030-03-06T08:30",
            "2030-03-11T08:30",
            "2030-03-13T08:30"
        ]
    );
}

#[test]
fn add_list_and_filter_events() {
    let (hearth, calendar) = with_calendar();
    let added = hearth.ok(&[
        "calendar",
        "add",
        "Checkup",
        "--category",
        "Health",
        "--start",
        "2030-05-02T08:00",
        "--end",
        "2030-05-02T09:00",
        "--location",
        "Clinic",
    ]);
    assert!(added.contains("Health - Checkup"), "{added}");
    hearth.ok(&["calendar", "add", "Holiday", "--start", "2030-05-03"]);
    assert!(
        std::fs::read_to_string(&calendar)
            .unwrap()
            .contains("SUMMARY:Health - Checkup")
    );
    let text = hearth.ok(&[
        "calendar",
        "events",
        "--from",
        "2030-05-01",
        "--to",
        "2030-05-08",
    ]);
    assert!(
        text.contains("2030-05-02 08:00 – 2030-05-02 09:00  Health - Checkup @ Clinic"),
        "{text}"
    );
    assert!(text.contains("2030-05-03 (all day)  Holiday"), "{text}");
    let health = hearth.ok(&[
        "calendar",
        "events",
        "--from",
        "2030-05-01",
        "--to",
        "2030-05-08",
        "--category",
        "Health",
        "--json",
    ]);
    assert_eq!(health.lines().count(), 1, "{health}");
    let found = hearth.ok(&[
        "calendar",
        "events",
        "--from",
        "2030-05-01",
        "--to",
        "2030-05-08",
        "--query",
        "holiday",
        "--json",
    ]);
    assert_eq!(found.lines().count(), 1, "{found}");
    let listed = hearth.ok(&["calendar", "list", "--json"]);
    let summary: serde_json::Value = serde_json::from_str(listed.lines().next().unwrap()).unwrap();
    assert_eq!(
        (summary["id"].as_str(), summary["events"].as_u64()),
        (Some("home"), Some(2))
    );
    assert_eq!(summary["default"], true);
}

#[test]
fn a_default_calendar_is_created_on_first_use_without_configuration() {
    let hearth = super::support::Hearth::new();
    hearth.write("config.toml", "[defaults]\ntime_zone = \"UTC\"\n");
    let listed = hearth.ok(&["calendar", "list"]);
    assert!(listed.starts_with("default *  Default (ics, "), "{listed}");
    hearth.ok(&["calendar", "add", "First", "--start", "2030-01-01"]);
    let created = hearth.home.path().join("calendars").join("default.ics");
    assert!(
        std::fs::read_to_string(created)
            .unwrap()
            .contains("SUMMARY:First")
    );
}

#[test]
fn importing_a_file_that_is_not_utf8_warns_and_imports_it() {
    let (hearth, calendar) = with_calendar();
    // Latin-1 "Café" in the summary, as an old export might write it.
    let mut bytes = OUTLOOK_EXPORT
        .replace("Work - Meetings - Standup", "Work - Caf\u{1}")
        .into_bytes();
    let at = bytes.iter().position(|b| *b == 1).unwrap();
    bytes[at] = 0xE9;
    let file = hearth.home.path().join("latin1.ics");
    std::fs::write(&file, &bytes).unwrap();
    let output = hearth.ok(&["calendar", "import", file.to_str().unwrap()]);
    assert!(
        output.starts_with("Imported 1 event into `home`.\n"),
        "{output}"
    );
    assert!(
        output.contains("the file is not valid UTF-8 (first bad byte at offset")
            && output.contains("unreadable characters are imported as �"),
        "{output}"
    );
    assert!(
        std::fs::read_to_string(&calendar)
            .unwrap()
            .contains("SUMMARY:Work - Caf�\r\n")
    );
}

#[test]
fn importing_a_file_over_the_size_limit_is_refused_with_the_limit() {
    let (hearth, calendar) = with_calendar();
    let file = hearth.write("huge.ics", OUTLOOK_EXPORT);
    // Sparse: the size is what counts, and it is checked before reading.
    let limit = hearth_calendar::DEFAULT_MAX_CALENDAR_BYTES;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(limit + 1)
        .unwrap();
    let error = hearth.fails(&["calendar", "import", file.to_str().unwrap()]);
    assert!(
        error.contains(&format!(
            "huge.ics is {} bytes, over the limit of {limit} bytes",
            limit + 1
        )),
        "{error}"
    );
    assert!(!calendar.exists(), "nothing was imported");
}

/// `home`: an iCalendar file in a folder that exists; `work`: one in a folder that does
/// not; `vault`: a note folder that does not exist.
fn with_missing_calendars() -> (
    super::support::Hearth,
    std::path::PathBuf,
    std::path::PathBuf,
) {
    let hearth = super::support::Hearth::new();
    let home = hearth.home.path();
    let unmounted = home.join("unmounted/Calendars");
    let vault = home.join("Vault/Calendar");
    hearth.write(
        "config.toml",
        &format!(
            "[defaults]\ntime_zone = \"UTC\"\n\n[calendars.home]\nkind = \"ics\"\npath = {:?}\ndefault = true\n\n[calendars.work]\nkind = \"ics\"\npath = {:?}\n\n[calendars.vault]\nkind = \"notes\"\npath = {:?}\n",
            home.join("home.ics").display().to_string(),
            unmounted.join("work.ics").display().to_string(),
            vault.display().to_string()
        ),
    );
    (hearth, unmounted, vault)
}

#[test]
fn calendar_list_reports_a_missing_calendar_instead_of_no_events() {
    let (hearth, unmounted, vault) = with_missing_calendars();
    let listed = hearth.ok(&["calendar", "list"]);
    assert!(
        listed.contains("home *  home (ics, ")
            && listed.contains("    0 events; the file is created on the first write\n"),
        "{listed}"
    );
    for (id, folder) in [("work", &unmounted), ("vault", &vault)] {
        assert!(
            listed.contains(&format!(
                "    missing: {} does not exist; create it (or reconnect its drive), or correct `path` in [calendars.{id}].",
                folder.display()
            )),
            "{listed}"
        );
    }
    for id in ["work", "vault"] {
        let entry = listed.split(&format!("\n{id}  ")).nth(1).unwrap();
        let entry = entry.split("\n").take(2).collect::<Vec<_>>().join("\n");
        assert!(!entry.contains("0 events"), "{entry}");
    }
    let json = hearth.ok(&["calendar", "list", "--json"]);
    let storage: Vec<String> = json
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .map(|summary| format!("{} {}", summary["id"], summary["storage"]))
        .collect();
    assert_eq!(
        storage,
        [
            "\"home\" \"not_created\"",
            "\"vault\" \"missing\"",
            "\"work\" \"missing\""
        ]
    );

    // Writes are refused, and no folder is made.
    let error = hearth.fails(&[
        "calendar",
        "add",
        "Standup",
        "--start",
        "2030-03-04T09:00",
        "--calendar",
        "work",
    ]);
    assert!(
        error.contains(&format!(
            "calendar `work` is missing: {} does not exist",
            unmounted.display()
        )),
        "{error}"
    );
    assert!(!hearth.home.path().join("unmounted").exists());
    assert!(!vault.exists());
}

#[test]
fn doctor_reports_each_calendar_ok_or_missing_with_what_to_do() {
    let (hearth, unmounted, vault) = with_missing_calendars();
    let output = hearth.run(&["doctor"]);
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(!output.status.success(), "{stdout}");
    let home = hearth.home.path().join("home.ics");
    assert!(
        stdout.contains(&format!(
            "\ncalendars:\nok      home (ics, {}): no file yet; it is created on the first write\n",
            home.display()
        )),
        "{stdout}"
    );
    for (id, kind, location, folder) in [
        (
            "work",
            "ics",
            unmounted.join("work.ics").display().to_string(),
            &unmounted,
        ),
        ("vault", "notes", vault.display().to_string(), &vault),
    ] {
        assert!(
            stdout.contains(&format!(
                "MISSING {id} ({kind}, {location}): {} does not exist; nothing is read from or written to this calendar\n        fix: create the folder (or reconnect its drive), or correct `path` in [calendars.{id}] of ",
                folder.display()
            )),
            "{stdout}"
        );
    }
}

#[test]
fn calendar_events_says_when_its_calendars_cannot_be_read_instead_of_no_events() {
    let (hearth, unmounted, vault) = with_missing_calendars();
    let range = ["--from", "2030-03-01", "--to", "2030-03-08"];
    // One calendar whose folder is missing: nothing can be listed.
    let error = hearth.fails(&[&["calendar", "events", "--calendar", "work"][..], &range].concat());
    assert!(
        error.contains(&format!(
            "calendar `work` is missing: {} does not exist",
            unmounted.display()
        )),
        "{error}"
    );
    // Every calendar: `home` is read (its file is not there yet), the others are named
    // with what to do, and the empty listing does not claim there are no events.
    let output = hearth.run(&[&["calendar", "events"][..], &range].concat());
    let (stdout, stderr) = (
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    );
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "No events in the calendars that could be read.\n");
    for (id, folder) in [("work", &unmounted), ("vault", &vault)] {
        assert!(
            stderr.contains(&format!(
                "calendar `{id}` is missing: {} does not exist, so its events are not listed; create it (or reconnect its drive), or correct `path` in [calendars.{id}]",
                folder.display()
            )),
            "{stderr}"
        );
    }
    assert!(
        stderr.contains("calendar `home`: ")
            && stderr.contains("does not exist yet, so it has no events"),
        "{stderr}"
    );

    // A default calendar that is not a calendar at all: an error, not "No events.".
    let home = hearth.home.path().join("home.ics");
    std::fs::write(&home, "this is not a calendar\n").unwrap();
    let error = hearth.fails(&[&["calendar", "events", "--calendar", "home"][..], &range].concat());
    assert!(error.contains("is not a calendar"), "{error}");
    std::fs::create_dir_all(&unmounted).unwrap();
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(unmounted.join("work.ics"), "").unwrap();
    let output = hearth.run(&[&["calendar", "events"][..], &range].concat());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("calendar `home` could not be read, so its events are not listed: ")
            && stderr.contains("fix the file or correct `path` in [calendars.home]"),
        "{stderr}"
    );
}

#[test]
fn calendar_events_fails_when_no_calendar_can_be_read() {
    let hearth = super::support::Hearth::new();
    let home = hearth.home.path().join("home.ics");
    std::fs::write(&home, "not a calendar\n").unwrap();
    hearth.write(
        "config.toml",
        &format!(
            "[defaults]\ntime_zone = \"UTC\"\n\n[calendars.home]\nkind = \"ics\"\npath = {:?}\ndefault = true\n",
            home.display().to_string()
        ),
    );
    let error = hearth.fails(&["calendar", "events", "--from", "2030-03-01"]);
    assert!(
        error.contains("no calendar could be read, so there are no events to list:")
            && error.contains("calendar `home` could not be read"),
        "{error}"
    );
}

/// `(kind, decision, tool, actor, outcome)` of each audit entry, oldest first.
fn audited(hearth: &super::support::Hearth) -> Vec<[String; 5]> {
    super::tool_support::audit_rows(hearth)
        .iter()
        .map(|row| {
            ["kind", "decision", "tool", "actor", "outcome"]
                .map(|field| row[field].as_str().unwrap_or_default().to_owned())
        })
        .collect()
}

/// The user's own writes are audited as applied proposals are: `calendar add` and an
/// import that added events each leave an entry `hearth audit` shows and verifies.
#[test]
fn calendar_add_and_import_are_recorded_in_the_audit_log() {
    let (hearth, _) = with_calendar();
    let added = hearth.ok(&["calendar", "add", "Checkup", "--start", "2030-05-02T08:00"]);
    let file = hearth.write("outlook.ics", OUTLOOK_EXPORT);
    hearth.ok(&["calendar", "import", file.to_str().unwrap()]);
    // Importing it again adds nothing, and records nothing.
    hearth.ok(&["calendar", "import", file.to_str().unwrap()]);
    let entry = |tool: &str, outcome: String| {
        [
            "tool_call".to_owned(),
            "applied".to_owned(),
            tool.to_owned(),
            "user".to_owned(),
            outcome,
        ]
    };
    assert_eq!(
        audited(&hearth),
        [
            entry("calendar_add", format!("ok: {}", added.trim())),
            entry(
                "calendar_import",
                "ok: Imported 1 event into `home`".to_owned()
            ),
        ]
    );
    let rows = super::tool_support::audit_rows(&hearth);
    assert_eq!(rows[0]["detail"]["via"], "cli");
    let listed = hearth.ok(&["audit", "list"]);
    assert!(
        listed.contains("calendar_add") && listed.contains("calendar_import"),
        "{listed}"
    );
    let verified = hearth.ok(&["audit", "verify"]);
    assert!(
        verified.starts_with("The audit log is intact: 2 entries"),
        "{verified}"
    );
}

/// A series changed after one of its occurrences was: the newer series (SEQUENCE 1)
/// deleted the 6 March occurrence with an EXDATE, and the override that moved it
/// (SEQUENCE 0) was left in the file.
const DELETED_AFTER_MOVING: &str = "BEGIN:VCALENDAR\r\n\
VERSION:2.0\r\n\
PRODID:-//Test//EN\r\n\
BEGIN:VEVENT\r\n\
UID:standup-1@example.com\r\n\
DTSTAMP:20300301T000000Z\r\n\
SEQUENCE:1\r\n\
DTSTART:20300304T093000Z\r\n\
DTEND:20300304T094500Z\r\n\
RRULE:FREQ=WEEKLY;BYDAY=MO,WE;COUNT=4\r\n\
EXDATE:20300306T093000Z\r\n\
SUMMARY:Standup\r\n\
END:VEVENT\r\n\
BEGIN:VEVENT\r\n\
UID:standup-1@example.com\r\n\
DTSTAMP:20300201T000000Z\r\n\
SEQUENCE:0\r\n\
RECURRENCE-ID:20300306T093000Z\r\n\
DTSTART:20300306T110000Z\r\n\
DTEND:20300306T111500Z\r\n\
SUMMARY:Standup (moved)\r\n\
END:VEVENT\r\n\
END:VCALENDAR\r\n";

/// The meeting the user deleted does not come back in `hearth calendar events`.
#[test]
fn an_occurrence_deleted_after_it_was_moved_is_not_listed() {
    let (hearth, calendar) = with_calendar();
    std::fs::write(&calendar, DELETED_AFTER_MOVING).unwrap();
    let listed = hearth.ok(&[
        "calendar",
        "events",
        "--from",
        "2030-03-01",
        "--to",
        "2030-03-15",
    ]);
    assert!(!listed.contains("moved"), "{listed}");
    assert_eq!(listed.matches("Standup").count(), 3, "{listed}");
}
