use hearth_test_support::{BoundedCommand, PROCESS_WAIT};

use super::support::{Hearth, stderr_line_count};

#[test]
fn a_chat_uri_where_a_session_is_expected() {
    let hearth = Hearth::new();
    let error = hearth.fails(&["sessions", "show", "hearth-chat:replay/abc/default"]);
    assert!(
        error.contains("is a chat URI, but a session URI"),
        "{error}"
    );
    assert_eq!(stderr_line_count(&error), 1, "{error}");
}

#[test]
fn malformed_and_unknown_uris() {
    let hearth = Hearth::new();
    let error = hearth.fails(&["sessions", "show", "not/a:uri"]);
    assert!(error.contains("not a valid session URI"), "{error}");
    // What could be an id is looked up as one (or the start of one).
    let error = hearth.fails(&["sessions", "show", "not-a-uri"]);
    assert!(
        error.contains("no session has an id starting with `not-a-uri`"),
        "{error}"
    );
    let error = hearth.fails(&["sessions", "show", "hearth-session:replay/nope"]);
    assert!(error.contains("does not exist"), "{error}");
    let error = hearth.fails(&["run", "--session", "hearth-session:replay/nope", "hi"]);
    assert!(error.contains("does not exist"), "{error}");
    let error = hearth.fails(&["run", "--provider", "nobody", "hi"]);
    assert!(
        error.contains("no harness for provider `nobody`"),
        "{error}"
    );
    assert_eq!(stderr_line_count(&error), 1, "{error}");
}

#[test]
fn a_corrupt_database_is_reported_and_left_alone() {
    let hearth = Hearth::new();
    let garbage = b"definitely not sqlite".repeat(64);
    std::fs::write(hearth.database(), &garbage).unwrap();
    let error = hearth.fails(&["run", "hi"]);
    assert!(error.contains("not a Hearth database"), "{error}");
    let error = hearth.fails(&["sessions", "list"]);
    assert!(error.contains("not an SQLite file"), "{error}");
    assert_eq!(std::fs::read(hearth.database()).unwrap(), garbage);
}

#[test]
fn a_broken_scenario_names_file_and_line() {
    let hearth = Hearth::new();
    let scenario = hearth.write(
        "broken.yaml",
        "name: x\nturns:\n  - steps:\n      - txt: hi\n",
    );
    let error = hearth.fails(&["run", "--scenario", scenario.to_str().unwrap(), "hi"]);
    assert!(error.contains("broken.yaml:4"), "{error}");
    assert!(hearth.session_uris().is_empty());
}

#[test]
fn a_data_directory_that_cannot_be_created() {
    let hearth = Hearth::new();
    let blocker = hearth.write("file", "x");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_hearth"))
        .arg("--home")
        .arg(blocker.join("home"))
        .args(["sessions", "list"])
        .output_within(PROCESS_WAIT);
    assert!(!output.status.success());
    let error = String::from_utf8(output.stderr).unwrap();
    assert!(error.contains(&blocker.display().to_string()), "{error}");
    assert_eq!(stderr_line_count(&error), 1, "{error}");
}

#[test]
fn an_invalid_config_file_names_the_line() {
    let hearth = Hearth::new();
    hearth.write(
        "config.toml",
        "[defaults]\nprovider = \"replay\"\ncolour = \"red\"\n",
    );
    let error = hearth.fails(&["sessions", "list"]);
    assert!(
        error.contains("config.toml") && error.contains("line 3"),
        "{error}"
    );
}
