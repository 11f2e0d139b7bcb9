//! The audit log end to end: what it records, verify (and tampering), export.

use pretty_assertions::assert_eq;

use super::tool_support::{audit_rows, execute, stage_event, tamper, with_calendar};

#[test]
fn calls_and_decisions_are_recorded_and_the_chain_verifies() {
    let (hearth, _) = with_calendar();
    hearth.ok(&["tools", "call", "calendar_list"]);
    let id = stage_event(&hearth, "Dentist", "2030-03-04T09:00");
    hearth.ok(&["proposals", "approve", &id]);
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
        verified.starts_with("The audit log is intact: 4 entries"),
        "{verified}"
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
    assert!(error.contains("broken at entry 2"), "{error}");
    assert!(error.contains("changed"), "{error}");
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
    assert_eq!(kinds, [("fetch", "fetched"), ("tool_call", "ran")]);
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
