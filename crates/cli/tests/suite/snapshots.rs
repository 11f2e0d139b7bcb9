//! Snapshots of what the commands print, so a change of wording is reviewed rather than
//! accidental: help, answers, listings, reports, and the errors a user meets first.
//!
//! Everything that differs between machines or runs is redacted: the data directory and
//! other temporary folders, ids, hashes, the current times, durations, the mock server's
//! address. Calendar fixtures are dated 2099, past the years redacted as "now", so their
//! dates stay in the snapshots. To accept a change, rerun with `INSTA_UPDATE=always` (or
//! `cargo insta review`) and review the `.snap` diff.

use std::path::Path;
use std::process::Output;

use hearth_test_support::{
    BoundedCommand, MockModelServer, MockResponse, OpenAiStream, PROCESS_WAIT,
};
use insta::assert_snapshot;
use serde_json::json;

use super::mock::{MODEL, configure, mock_config, server};
use super::short_ids::{SAME_MILLISECOND, rename_session};
use super::support::Hearth;
use super::tool_support::{stage_event, with_calendar};

/// Patterns for what changes from run to run, applied in order to every snapshot.
const FILTERS: &[(&str, &str)] = &[
    // UUID ids (sessions, chats, proposals, projects, events): random (v4), or
    // time-ordered (v7) as made before.
    (
        r"[0-9a-f]{8}-[0-9a-f]{4}-[47][0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}",
        "[ID]",
    ),
    // Their shortest unique starts, in the first column of listings and beside turns.
    (r"(?m)^ID +", "ID  "),
    (r"(?m)^[0-9a-f]{6,8} +", "[SHORT]  "),
    (r"(?m)^turn (\d+)  [0-9a-f]{6,8}$", "turn $1  [SHORT]"),
    // SHA-256 hex (payload hashes, the audit head), and the 16-character start shown
    // for `--hash`.
    (r"\b[0-9a-f]{64}\b", "[HASH]"),
    (r"\b[0-9a-f]{16}\b", "[HASH16]"),
    // The current time, as text and in iCalendar's compact form. Years from 2090 on are
    // left alone: the fixtures' events are in 2099.
    (
        r"\b20[0-8]\d-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?Z?)?",
        "[TIME]",
    ),
    (r"\b20[0-8]\d{5}T\d{6}Z?\b", "[STAMP]"),
    // How long something took.
    (r"\b\d+(\.\d+)? ?(ms|µs|s)\b", "[DURATION]"),
];

/// The settings of every snapshot here: [`FILTERS`], files named without the module.
fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    for (pattern, replacement) in FILTERS {
        settings.add_filter(pattern, *replacement);
    }
    settings
}

/// `text` with the data directory, the working directory and `folders` (each with its
/// placeholder) replaced; the rest is left to [`FILTERS`].
fn redact_also(text: &str, hearth: &Hearth, folders: &[(&Path, &str)]) -> String {
    let cwd = std::env::current_dir().unwrap();
    let mut pairs: Vec<(String, &str)> = Vec::new();
    for (path, placeholder) in folders
        .iter()
        .copied()
        .chain([(hearth.home.path(), "[HOME]"), (cwd.as_path(), "[CWD]")])
    {
        pairs.push((path.display().to_string(), placeholder));
        if let Ok(real) = path.canonicalize() {
            pairs.push((real.display().to_string(), placeholder));
        }
    }
    // The longest first, so a folder inside another is named as itself.
    pairs.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
    pairs
        .iter()
        .fold(text.to_owned(), |text, (path, placeholder)| {
            text.replace(path.as_str(), placeholder)
        })
}

fn redact(text: &str, hearth: &Hearth) -> String {
    redact_also(text, hearth, &[])
}

/// [`redact`], and the mock server's address (its port is new every run) as `[MOCK]`.
fn redact_mock(text: &str, hearth: &Hearth, server: &MockModelServer) -> String {
    redact(text, hearth).replace(&server.url(), "[MOCK]")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// Runs with no model provider in the environment; expects success.
fn ok(hearth: &Hearth, args: &[&str]) -> Output {
    let output = super::mock::run(hearth, args);
    assert!(
        output.status.success(),
        "hearth {args:?} failed: {}\n{}",
        stderr(&output),
        stdout(&output)
    );
    output
}

/// Runs with no model provider in the environment; expects failure and returns stderr.
fn fails(hearth: &Hearth, args: &[&str]) -> String {
    let output = super::mock::run(hearth, args);
    assert!(
        !output.status.success(),
        "hearth {args:?} succeeded unexpectedly: {}",
        stdout(&output)
    );
    stderr(&output)
}

/// The id part of a session URI (`hearth-session:<provider>/<id>`).
fn id_of(uri: &str) -> &str {
    uri.rsplit_once('/').unwrap().1
}

/// A calendar with two events, dated 2099 so the dates stay in the snapshots.
fn small_calendar() -> Hearth {
    let (hearth, _) = with_calendar();
    ok(
        &hearth,
        &["calendar", "add", "Standup", "--start", "2099-03-04T09:30"],
    );
    ok(
        &hearth,
        &[
            "calendar",
            "add",
            "Dentist",
            "--start",
            "2099-03-05T14:00",
            "--end",
            "2099-03-05T15:00",
        ],
    );
    hearth
}

#[test]
fn help() {
    let _settings = settings().bind_to_scope();
    let hearth = Hearth::new();
    assert_snapshot!("help", redact(&stdout(&ok(&hearth, &["--help"])), &hearth));
    assert_snapshot!(
        "help_run",
        redact(&stdout(&ok(&hearth, &["run", "--help"])), &hearth)
    );
}

#[test]
fn run_plays_the_demo_without_a_provider() {
    let _settings = settings().bind_to_scope();
    let hearth = Hearth::new();
    let output = ok(&hearth, &["run", "hello"]);
    assert_snapshot!("run_demo_stdout", redact(&stdout(&output), &hearth));
    assert_snapshot!("run_demo_stderr", redact(&stderr(&output), &hearth));
}

#[test]
fn run_against_a_provider() {
    let _settings = settings().bind_to_scope();
    let server = server();
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));
    server.enqueue(OpenAiStream::text_answer(MODEL, &["po", "ng"], 9, 1));
    let output = ok(&hearth, &["run", "say ping"]);
    assert_snapshot!(
        "run_mock_stdout",
        redact_mock(&stdout(&output), &hearth, &server)
    );
    assert_snapshot!(
        "run_mock_stderr",
        redact_mock(&stderr(&output), &hearth, &server)
    );
}

#[test]
fn doctor_without_a_provider() {
    let _settings = settings().bind_to_scope();
    let hearth = Hearth::new();
    let output = super::mock::run(&hearth, &["doctor"]);
    assert_eq!(output.status.code(), Some(1));
    assert_snapshot!("doctor_none_stdout", redact(&stdout(&output), &hearth));
    assert_snapshot!("doctor_none_stderr", redact(&stderr(&output), &hearth));
}

#[test]
fn doctor_with_a_provider() {
    let _settings = settings().bind_to_scope();
    let server = server();
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));
    let listing = json!({"object": "list", "data": [{"id": MODEL, "object": "model"}]});
    server.enqueue(MockResponse::json(200, &listing));
    server.enqueue(OpenAiStream::text_answer(MODEL, &["p"], 1, 1));
    let output = ok(&hearth, &["doctor"]);
    assert_snapshot!(
        "doctor_mock_stdout",
        redact_mock(&stdout(&output), &hearth, &server)
    );
    assert_snapshot!(
        "doctor_mock_stderr",
        redact_mock(&stderr(&output), &hearth, &server)
    );
}

#[test]
fn sessions_and_chats() {
    let _settings = settings().bind_to_scope();
    let hearth = Hearth::new();
    ok(&hearth, &["run", "hello"]);
    let session = hearth.session_uris().remove(0);
    let list = ok(&hearth, &["sessions", "list"]);
    assert_snapshot!("sessions_list", redact(&stdout(&list), &hearth));
    let show = ok(&hearth, &["sessions", "show", &session]);
    assert_snapshot!("sessions_show", redact(&stdout(&show), &hearth));
    let chats = ok(&hearth, &["chats", "list", &session]);
    assert_snapshot!("chats_list", redact(&stdout(&chats), &hearth));
}

#[test]
fn projects_and_context() {
    let _settings = settings().bind_to_scope();
    let hearth = Hearth::new();
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("notes.md"), "# Field notes\n\nHerons.\n").unwrap();
    let folders = [(folder.path(), "[FOLDER]")];
    let folder_arg = folder.path().display().to_string();
    let made = ok(
        &hearth,
        &[
            "projects",
            "new",
            "Herons",
            "--folder",
            &folder_arg,
            "--source",
            "notes.md",
        ],
    );
    assert_snapshot!(
        "projects_new_stdout",
        redact_also(&stdout(&made), &hearth, &folders)
    );
    assert_snapshot!(
        "projects_new_stderr",
        redact_also(&stderr(&made), &hearth, &folders)
    );
    let list = ok(&hearth, &["projects", "list"]);
    assert_snapshot!(
        "projects_list",
        redact_also(&stdout(&list), &hearth, &folders)
    );
    let show = ok(&hearth, &["projects", "show", "Herons"]);
    assert_snapshot!(
        "projects_show",
        redact_also(&stdout(&show), &hearth, &folders)
    );
    let status = ok(&hearth, &["context", "status", "Herons"]);
    assert_snapshot!(
        "context_status",
        redact_also(&stdout(&status), &hearth, &folders)
    );
}

#[test]
fn calendar_list_and_events() {
    let _settings = settings().bind_to_scope();
    let hearth = small_calendar();
    let list = ok(&hearth, &["calendar", "list"]);
    assert_snapshot!("calendar_list", redact(&stdout(&list), &hearth));
    let events = ok(
        &hearth,
        &[
            "calendar",
            "events",
            "--from",
            "2099-03-01",
            "--to",
            "2099-03-10",
        ],
    );
    assert_snapshot!("calendar_events", redact(&stdout(&events), &hearth));
}

#[test]
fn tools_list() {
    let _settings = settings().bind_to_scope();
    let hearth = Hearth::new();
    let output = ok(&hearth, &["tools", "list"]);
    assert_snapshot!("tools_list", redact(&stdout(&output), &hearth));
}

#[test]
fn a_staged_change_and_its_proposal() {
    let _settings = settings().bind_to_scope();
    let hearth = small_calendar();
    let arguments = json!({"title": "Lunch", "start": "2099-03-06T12:00"}).to_string();
    let staged = ok(&hearth, &["tools", "call", "event_create", &arguments]);
    assert_snapshot!("tools_call_stage", redact(&stdout(&staged), &hearth));
    let list = ok(&hearth, &["proposals", "list"]);
    assert_snapshot!("proposals_list", redact(&stdout(&list), &hearth));
    let listed: serde_json::Value = serde_json::from_str(
        stdout(&ok(&hearth, &["proposals", "list", "--json"]))
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let id = listed["id"].as_str().unwrap();
    let show = ok(&hearth, &["proposals", "show", id]);
    assert_snapshot!("proposals_show", redact(&stdout(&show), &hearth));
}

#[test]
fn audit_list_and_verify() {
    let _settings = settings().bind_to_scope();
    let (hearth, _) = with_calendar();
    ok(&hearth, &["tools", "call", "calendar_list"]);
    let id = stage_event(&hearth, "Dentist", "2099-03-04T09:00");
    ok(&hearth, &["proposals", "approve", &id, "--yes"]);
    let list = ok(&hearth, &["audit", "list"]);
    assert_snapshot!("audit_list", redact(&stdout(&list), &hearth));
    let verify = ok(&hearth, &["audit", "verify"]);
    assert_snapshot!("audit_verify", redact(&stdout(&verify), &hearth));
}

#[test]
fn agents_list_with_none_installed() {
    let _settings = settings().bind_to_scope();
    let hearth = Hearth::new();
    // Nothing on PATH, no npm prefix, an empty home: no agent program is found.
    let empty = tempfile::tempdir().unwrap();
    let output = super::mock::command(&hearth)
        .env("PATH", empty.path())
        .env("HOME", empty.path())
        .env_remove("NPM_CONFIG_PREFIX")
        .args(["agents", "list", "--no-start"])
        .output_within(PROCESS_WAIT);
    assert!(output.status.success(), "{}", stderr(&output));
    let folders = [(empty.path(), "[EMPTY]")];
    assert_snapshot!(
        "agents_list_none",
        redact_also(&stdout(&output), &hearth, &folders)
    );
}

#[test]
fn error_unknown_session() {
    let _settings = settings().bind_to_scope();
    let hearth = Hearth::new();
    let error = fails(
        &hearth,
        &[
            "sessions",
            "show",
            "hearth-session:replay/01a23529-c3de-7009-9504-f94cb2074d3c",
        ],
    );
    assert_snapshot!("error_unknown_session_uri", redact(&error, &hearth));
    let error = fails(&hearth, &["sessions", "show", "zzzz"]);
    assert_snapshot!("error_unknown_session_prefix", redact(&error, &hearth));
}

#[test]
fn error_ambiguous_and_too_short_prefixes() {
    let _settings = settings().bind_to_scope();
    let hearth = Hearth::new();
    ok(&hearth, &["run", "first walnut"]);
    ok(&hearth, &["run", "second chestnut"]);
    let uris = hearth.session_uris();
    // Time-ordered ids, as Hearth made before, share their first characters.
    let newest = rename_session(&hearth, &uris[0], SAME_MILLISECOND[0]);
    let oldest = rename_session(&hearth, &uris[1], SAME_MILLISECOND[1]);
    let (newest, oldest) = (id_of(&newest), id_of(&oldest));
    assert_eq!(newest[..4], oldest[..4], "{newest} {oldest}");
    let prefix = &newest[..4];
    let error = fails(&hearth, &["sessions", "show", prefix]);
    assert_snapshot!(
        "error_ambiguous_prefix",
        redact(&error, &hearth).replace(&format!("`{prefix}`"), "`[PREFIX]`")
    );
    let error = fails(&hearth, &["sessions", "show", "abc"]);
    assert_snapshot!("error_too_short_prefix", redact(&error, &hearth));
}

#[test]
fn error_config_file_missing() {
    let _settings = settings().bind_to_scope();
    let hearth = Hearth::new();
    let missing = hearth.home.path().join("missing.toml");
    let error = fails(
        &hearth,
        &[
            "--config",
            &missing.display().to_string(),
            "sessions",
            "list",
        ],
    );
    assert_snapshot!("error_config_missing", redact(&error, &hearth));
}

#[test]
fn error_unknown_default_provider() {
    let _settings = settings().bind_to_scope();
    let hearth = Hearth::new();
    configure(
        &hearth,
        "[defaults]\nprovider = \"opnai\"\n\n[providers.mine]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\n",
    );
    let error = fails(&hearth, &["run", "hello"]);
    assert_snapshot!("error_unknown_default_provider", redact(&error, &hearth));
}

#[test]
fn error_run_in_an_unknown_project() {
    let _settings = settings().bind_to_scope();
    let hearth = Hearth::new();
    let error = fails(&hearth, &["run", "--project", "nope", "hello"]);
    assert_snapshot!("error_unknown_project", redact(&error, &hearth));
}

#[test]
fn error_tool_arguments_not_json() {
    let _settings = settings().bind_to_scope();
    let (hearth, _) = with_calendar();
    let output = super::mock::run(&hearth, &["tools", "call", "event_create", "{bad"]);
    assert!(!output.status.success());
    assert_snapshot!(
        "error_tool_arguments_stdout",
        redact(&stdout(&output), &hearth)
    );
    assert_snapshot!(
        "error_tool_arguments_stderr",
        redact(&stderr(&output), &hearth)
    );
}

#[test]
fn error_approve_without_a_hash_on_a_pipe() {
    let _settings = settings().bind_to_scope();
    let (hearth, _) = with_calendar();
    let id = stage_event(&hearth, "Gym", "2099-03-05T18:00");
    let error = fails(&hearth, &["proposals", "approve", &id]);
    assert_snapshot!("error_approve_without_hash", redact(&error, &hearth));
}
