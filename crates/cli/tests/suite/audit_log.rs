//! The audit log end to end: what it records, verify (and tampering), the head it
//! prints to keep, export.

use std::path::PathBuf;

use pretty_assertions::assert_eq;

use super::support::Hearth;
use super::tool_support::{audit_rows, execute, stage_event, tamper, with_calendar};

fn head_file(hearth: &Hearth) -> PathBuf {
    hearth.home.path().join("audit.head")
}

fn key_file(hearth: &Hearth) -> PathBuf {
    hearth.home.path().join("audit.key")
}

/// The `Head: SEQ:HASH` line verify prints.
fn printed_head(verified: &str) -> String {
    verified
        .lines()
        .find_map(|line| line.strip_prefix("Head: "))
        .unwrap_or_else(|| panic!("no head printed: {verified}"))
        .to_owned()
}

/// Deletes the entries after `last`, as someone who dropped the trigger would.
fn cut_after(hearth: &Hearth, last: i64) {
    tamper(
        &hearth.database(),
        &[
            "DROP TRIGGER audit_log_no_delete",
            &format!("DELETE FROM audit_log WHERE seq > {last}"),
        ],
    );
}

/// Drops the head file's lines after entry `last`, as someone who can write it would.
fn cut_head_file_after(hearth: &Hearth, last: i64) {
    let text = std::fs::read_to_string(head_file(hearth)).unwrap();
    let kept: String = text
        .lines()
        .filter(|line| {
            line.split(' ')
                .next()
                .and_then(|seq| seq.parse::<i64>().ok())
                .is_none_or(|seq| seq <= last)
        })
        .map(|line| format!("{line}\n"))
        .collect();
    std::fs::write(head_file(hearth), kept).unwrap();
}

#[test]
fn calls_and_decisions_are_recorded_and_the_chain_verifies() {
    let (hearth, _) = with_calendar();
    hearth.ok(&["tools", "call", "calendar_list"]);
    let id = stage_event(&hearth, "Dentist", "2030-03-04T09:00");
    hearth.ok(&["proposals", "approve", &id, "--yes"]);
    let rows = audit_rows(&hearth);
    let decisions: Vec<(&str, &str)> = rows
        .iter()
        .map(|row| {
            (
                row["kind"].as_str().unwrap(),
                row["decision"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        decisions,
        [
            ("tool_call", "ran"),
            ("tool_call", "staged"),
            ("proposal", "approved"),
            ("proposal", "applied"),
        ]
    );
    assert!(rows.iter().all(|row| row["actor"] == "user"));
    let verified = hearth.ok(&["audit", "verify"]);
    assert!(
        verified.starts_with("The audit log is intact: 4 entries, each sealed with the key in"),
        "{verified}"
    );
    assert_eq!(
        printed_head(&verified),
        format!("4:{}", rows[3]["hash"].as_str().unwrap())
    );
    let listed = hearth.ok(&["audit", "list", "--limit", "1"]);
    assert!(
        listed.contains("applied") && listed.contains(&id),
        "{listed}"
    );
}

#[test]
fn verify_names_a_tampered_entry() {
    let (hearth, _) = with_calendar();
    for _ in 0..3 {
        hearth.ok(&["tools", "call", "calendar_list"]);
    }
    tamper(
        &hearth.database(),
        &[
            "DROP TRIGGER audit_log_no_update",
            "UPDATE audit_log SET outcome = 'error: nothing' WHERE seq = 2",
        ],
    );
    let error = hearth.fails(&["audit", "verify"]);
    assert!(error.contains("broken at entry 2 (chain check)"), "{error}");
    assert!(error.contains("changed"), "{error}");
}

#[test]
fn the_key_and_head_file_are_private_files_in_the_data_directory() {
    let (hearth, _) = with_calendar();
    hearth.ok(&["tools", "call", "calendar_list"]);
    hearth.ok(&["tools", "call", "calendar_list"]);
    assert_eq!(std::fs::read(key_file(&hearth)).unwrap().len(), 32);
    let rows = audit_rows(&hearth);
    let lines: Vec<String> = std::fs::read_to_string(head_file(&hearth))
        .unwrap()
        .lines()
        .filter(|line| !line.starts_with('#'))
        .map(|line| line.split(' ').take(2).collect::<Vec<_>>().join(" "))
        .collect();
    let expected: Vec<String> = rows
        .iter()
        .map(|row| format!("{} {}", row["seq"], row["hash"].as_str().unwrap()))
        .collect();
    assert_eq!(lines, expected);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        for file in [key_file(&hearth), head_file(&hearth)] {
            let mode = std::fs::metadata(&file).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{}", file.display());
        }
    }
}

// (a) Entries deleted at the end.
#[test]
fn verify_fails_when_entries_are_cut_from_the_end() {
    let (hearth, _) = with_calendar();
    for _ in 0..4 {
        hearth.ok(&["tools", "call", "calendar_list"]);
    }
    hearth.ok(&["audit", "verify"]);
    cut_after(&hearth, 2);
    let error = hearth.fails(&["audit", "verify"]);
    assert!(error.contains("broken at entry 3 (tail check)"), "{error}");
    assert!(
        error.contains("entries 3 to 4 were cut from the end"),
        "{error}"
    );
}

// (b) Every entry deleted.
#[test]
fn verify_fails_when_every_entry_is_deleted() {
    let (hearth, _) = with_calendar();
    hearth.ok(&["tools", "call", "calendar_list"]);
    hearth.ok(&["audit", "verify"]);
    cut_after(&hearth, 0);
    let error = hearth.fails(&["audit", "verify"]);
    assert!(error.contains("every entry was deleted"), "{error}");
}

// The head printed for the user defeats someone who cut both the table and the head file.
#[test]
fn verify_prints_the_head_to_keep_and_a_kept_head_shows_a_consistent_cut() {
    let (hearth, _) = with_calendar();
    for _ in 0..3 {
        hearth.ok(&["tools", "call", "calendar_list"]);
    }
    let verified = hearth.ok(&["audit", "verify"]);
    let kept = printed_head(&verified);
    assert!(
        verified.contains(&format!("hearth audit verify --head {kept}")),
        "{verified}"
    );
    hearth.ok(&["audit", "verify", "--head", &kept]);

    cut_after(&hearth, 2);
    cut_head_file_after(&hearth, 2);
    // Control: with both cut, the log alone cannot tell.
    hearth.ok(&["audit", "verify"]);
    let error = hearth.fails(&["audit", "verify", "--head", &kept]);
    assert!(error.contains("(kept head check)"), "{error}");
    assert!(error.contains("the table ends at entry 2"), "{error}");

    let error = hearth.fails(&["audit", "verify", "--head", "3:nothex"]);
    assert!(error.contains("is not a head"), "{error}");
}

// (d) An applied proposal with no entry about it.
#[test]
fn verify_fails_when_an_applied_proposal_has_no_entry() {
    let (hearth, _) = with_calendar();
    let id = stage_event(&hearth, "Dentist", "2030-03-04T09:00");
    hearth.ok(&["proposals", "approve", &id, "--yes"]);
    let rows = audit_rows(&hearth);
    let last = rows.last().unwrap();
    assert_eq!(
        (last["decision"].as_str(), last["proposal_id"].as_str()),
        (Some("applied"), Some(id.as_str()))
    );
    hearth.ok(&["audit", "verify"]);
    let seq = last["seq"].as_i64().unwrap();
    cut_after(&hearth, seq - 1);
    cut_head_file_after(&hearth, seq - 1);
    let error = hearth.fails(&["audit", "verify"]);
    assert!(error.contains("(proposals check)"), "{error}");
    assert!(error.contains(&id), "{error}");
}

#[test]
fn a_missing_key_fails_verify_and_is_never_replaced() {
    let (hearth, _) = with_calendar();
    hearth.ok(&["tools", "call", "calendar_list"]);
    let key = std::fs::read(key_file(&hearth)).unwrap();
    std::fs::remove_file(key_file(&hearth)).unwrap();
    let error = hearth.fails(&["audit", "verify"]);
    assert!(error.contains("broken at entry 1 (key check)"), "{error}");
    assert!(error.contains("audit.key is missing"), "{error}");
    // A tool still runs; its entry is refused rather than sealed with a new key.
    hearth.ok(&["tools", "call", "calendar_list"]);
    assert!(!key_file(&hearth).exists());
    assert_eq!(audit_rows(&hearth).len(), 1);

    // Control: restored, the log verifies and records again.
    std::fs::write(key_file(&hearth), key).unwrap();
    hearth.ok(&["tools", "call", "calendar_list"]);
    let verified = hearth.ok(&["audit", "verify"]);
    assert!(
        verified.starts_with("The audit log is intact: 2 entries"),
        "{verified}"
    );
}

#[test]
fn verify_reports_as_json_with_the_head() {
    let (hearth, _) = with_calendar();
    hearth.ok(&["tools", "call", "calendar_list"]);
    let report: serde_json::Value =
        serde_json::from_str(hearth.ok(&["audit", "verify", "--json"]).trim()).unwrap();
    let rows = audit_rows(&hearth);
    assert_eq!(report["head"]["seq"], 1);
    assert_eq!(report["head"]["hash"], rows[0]["hash"]);
    assert_eq!(report["keyedFrom"], 1);
    assert_eq!(report["broken"], serde_json::Value::Null);
    cut_after(&hearth, 0);
    let output = hearth.run(&["audit", "verify", "--json"]);
    assert!(!output.status.success());
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["broken"]["check"], "tail");
}

#[test]
fn the_log_refuses_changes_while_its_triggers_stand() {
    let (hearth, _) = with_calendar();
    hearth.ok(&["tools", "call", "calendar_list"]);
    let delete = execute(&hearth.database(), "DELETE FROM audit_log").unwrap_err();
    assert!(delete.to_string().contains("append-only"), "{delete}");
    let update = execute(&hearth.database(), "UPDATE audit_log SET actor = 'nobody'").unwrap_err();
    assert!(update.to_string().contains("append-only"), "{update}");
    assert_eq!(audit_rows(&hearth).len(), 1);
    hearth.ok(&["audit", "verify"]);
}

#[test]
fn export_keeps_the_newest_entries() {
    let (hearth, _) = with_calendar();
    for _ in 0..5 {
        hearth.ok(&["tools", "call", "calendar_list"]);
    }
    let file = hearth.home.path().join("audit.jsonl");
    hearth.ok(&[
        "audit",
        "export",
        "--keep",
        "2",
        "--output",
        file.to_str().unwrap(),
    ]);
    let seqs: Vec<i64> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["seq"]
                .as_i64()
                .unwrap()
        })
        .collect();
    assert_eq!(seqs, [4, 5]);
}

#[test]
fn fetches_are_recorded_with_secrets_redacted() {
    let (hearth, _) = with_calendar();
    let arguments = r#"{"url": "http://127.0.0.1:9/feed?api_key=hunter2secret"}"#;
    let output = hearth.run(&["tools", "call", "web_fetch", arguments]);
    assert!(!output.status.success(), "a loopback address is refused");
    let rows = audit_rows(&hearth);
    let kinds: Vec<(&str, &str)> = rows
        .iter()
        .map(|row| {
            (
                row["kind"].as_str().unwrap(),
                row["decision"].as_str().unwrap(),
            )
        })
        .collect();
    // The fetch is recorded as tried; the call, which the guard refused, as denied.
    assert_eq!(kinds, [("fetch", "fetched"), ("tool_call", "denied")]);
    assert!(
        rows[0]["outcome"].as_str().unwrap().starts_with("error: "),
        "{:?}",
        rows[0]
    );
    assert_eq!(
        rows[0]["detail"]["url"],
        "http://127.0.0.1:9/feed?api_key=[redacted]"
    );
    let exported = hearth.ok(&["audit", "export"]);
    assert!(!exported.contains("hunter2secret"), "{exported}");
    hearth.ok(&["audit", "verify"]);
}
