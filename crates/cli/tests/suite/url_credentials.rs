//! A password written into a URL (`http://alice:pw@host/`) — a CalDAV calendar, a
//! subscription, an MCP server, a project's source, `calendar add --caldav` — never
//! appears in what Hearth prints (stdout, stderr, its log at every level) or keeps in
//! its database: each place that names the URL shows `[redacted]` instead.

use std::path::Path;

use hearth_test_support::{BoundedCommand, PROCESS_WAIT};

use super::support::Hearth;

const PASSWORDS: [&str; 4] = ["caldavpw", "feedpw", "mcppw", "sourcepw"];

/// A port nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Every file of the database (with its write-ahead log), as bytes.
fn database_bytes(home: &Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    for entry in std::fs::read_dir(home).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("hearth.db") {
            bytes.extend(std::fs::read(&path).unwrap());
        }
    }
    assert!(!bytes.is_empty(), "no database in {}", home.display());
    bytes
}

fn assert_no_password(what: &str, text: &str) {
    for password in PASSWORDS {
        assert!(
            !text.contains(password),
            "`{password}` shown by {what}:\n{text}"
        );
    }
}

/// Runs `args` (success or not) with every log level on, and returns stdout and stderr
/// together, checked for passwords.
fn shown(hearth: &Hearth, args: &[&str]) -> String {
    let output = hearth
        .command()
        .env("HEARTH_LOG", "trace")
        .args(args)
        .output_within(PROCESS_WAIT);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_no_password(&format!("hearth {args:?}"), &text);
    text
}

#[test]
fn calendar_add_caldav_refuses_a_password_in_the_url_without_echoing_it() {
    let hearth = Hearth::new();
    let url = format!("http://alice:caldavpw@127.0.0.1:{}/", closed_port());
    for extra in [&[][..], &["--allow-private-network"][..]] {
        let mut args = vec!["calendar", "add", "--caldav", url.as_str()];
        args.extend_from_slice(extra);
        let output = shown(&hearth, &args);
        assert!(
            output.contains("`http://[redacted]@127.0.0.1:"),
            "the URL is named, redacted: {output}"
        );
        assert!(
            output.contains("--username") && output.contains("--password-env"),
            "says how to give them instead: {output}"
        );
    }
    assert!(!hearth.home.path().join("config.toml").exists());
}

#[test]
fn urls_with_passwords_in_the_configuration_are_redacted_everywhere_they_are_named() {
    let hearth = Hearth::new();
    let port = closed_port();
    hearth.write(
        "config.toml",
        &format!(
            r#"
[calendars.work]
kind = "caldav"
url = "http://alice:caldavpw@127.0.0.1:{port}/cal/"
allow_private_network = true

[calendars.feed]
kind = "subscription"
url = "http://bob:feedpw@127.0.0.1:{port}/feed.ics"
allow_private_network = true

[mcp_servers.remote]
url = "http://carol:mcppw@127.0.0.1:{port}/mcp"

[mcp_servers.own]
url = "http://carol:mcppw@127.0.0.1:{port}/mcp"
local = true
"#
        ),
    );
    let sync = shown(&hearth, &["calendar", "sync"]);
    assert!(
        sync.contains(&format!(
            "CalDAV calendar `work` (http://[redacted]@127.0.0.1:{port}/cal/)"
        )),
        "{sync}"
    );
    let sync_json = shown(&hearth, &["calendar", "sync", "--json"]);
    assert!(
        sync_json.contains("http://[redacted]@127.0.0.1"),
        "{sync_json}"
    );
    let list = shown(&hearth, &["calendar", "list"]);
    assert!(
        list.contains(&format!(
            "feed  feed (subscription, http://[redacted]@127.0.0.1:{port}/feed.ics)"
        )),
        "{list}"
    );
    let list_json = shown(&hearth, &["calendar", "list", "--json"]);
    assert!(
        list_json.contains(&format!(
            "\"location\":\"http://[redacted]@127.0.0.1:{port}/cal/\""
        )),
        "{list_json}"
    );
    shown(&hearth, &["calendar", "events"]);
    let doctor = shown(&hearth, &["doctor"]);
    assert!(
        doctor.contains(&format!(
            "FAIL    work (caldav, http://[redacted]@127.0.0.1:{port}/cal/)"
        )),
        "{doctor}"
    );
    assert!(
        doctor.contains(&format!("(http://[redacted]@127.0.0.1:{port}/mcp)")),
        "the MCP servers are listed, redacted: {doctor}"
    );
    // What the agent's tools say, and what they record in the audit log.
    let tools = shown(&hearth, &["tools", "call", "calendar_list"]);
    assert!(tools.contains("http://[redacted]@127.0.0.1"), "{tools}");
    shown(&hearth, &["tools", "call", "events_list"]);
    shown(
        &hearth,
        &[
            "tools",
            "call",
            "event_create",
            r#"{"calendar": "work", "title": "Dentist", "start": "2099-03-03"}"#,
        ],
    );
    shown(&hearth, &["proposals", "list"]);
    shown(&hearth, &["audit", "list"]);
    shown(&hearth, &["audit", "export"]);
    let database = database_bytes(hearth.home.path());
    for password in PASSWORDS {
        assert!(
            !database
                .windows(password.len())
                .any(|w| w == password.as_bytes()),
            "`{password}` is in the database"
        );
    }
}

#[test]
fn a_project_source_with_a_password_is_shown_redacted() {
    let hearth = Hearth::new();
    let folder = tempfile::tempdir().unwrap();
    let url = format!("http://dave:sourcepw@127.0.0.1:{}/page.html", closed_port());
    let folder_arg = folder.path().display().to_string();
    shown(
        &hearth,
        &[
            "projects",
            "new",
            "demo",
            "--folder",
            &folder_arg,
            "--source",
            &url,
        ],
    );
    let show = shown(&hearth, &["projects", "show", "demo"]);
    assert!(
        show.contains("1. web http://[redacted]@127.0.0.1:"),
        "{show}"
    );
    let retried = shown(&hearth, &["context", "retry", "demo"]);
    assert!(
        retried.contains("failed") && retried.contains("http://[redacted]@127.0.0.1:"),
        "{retried}"
    );
    let status = shown(&hearth, &["context", "status"]);
    assert!(status.contains("http://[redacted]@127.0.0.1:"), "{status}");
    shown(&hearth, &["doctor"]);
    shown(
        &hearth,
        &["run", "--provider", "replay", "--project", "demo", "hello"],
    );
    let database = database_bytes(hearth.home.path());
    assert!(
        !database.windows(8).any(|w| w == b"sourcepw"),
        "the password is in the database"
    );
}

#[test]
fn a_provider_base_url_with_a_password_is_refused_without_echoing_it() {
    let hearth = Hearth::new();
    let base = format!("http://user:llmbasepw@127.0.0.1:{}/v1", closed_port());
    for args in [
        &["providers", "list"][..],
        &["doctor"][..],
        &["run", "--provider", "openai", "hello"][..],
    ] {
        let output = hearth
            .command()
            .env("OPENAI_BASE_URL", &base)
            .env("OPENAI_API_KEY", "sk-test-key-for-this-test-only")
            .env("HEARTH_LOG", "trace")
            .args(args)
            .output_within(PROCESS_WAIT);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(!text.contains("llmbasepw"), "hearth {args:?}:\n{text}");
        assert!(
            text.contains("base URL `http://[redacted]@127.0.0.1:"),
            "hearth {args:?} names the URL, redacted:\n{text}"
        );
    }
}
