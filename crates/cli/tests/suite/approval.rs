//! Proposals end to end: staged through the tool path, reviewed, approved (the calendar
//! file changes), rejected, replayed, tampered with, expired, conflicting.

use pretty_assertions::assert_eq;

use super::support::Hearth;
use super::tool_support::{audit_rows, proposal, stage_event, tamper, with_calendar};

fn read(path: &std::path::Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

#[test]
fn staging_writes_nothing_and_approving_the_shown_hash_writes_the_ics() {
    let (hearth, calendar) = with_calendar();
    let id = stage_event(&hearth, "Dentist", "2030-03-04T09:00");
    assert_eq!(read(&calendar), None, "staging must not write");

    let listed = hearth.ok(&["proposals", "list", "--status", "pending"]);
    // Listed by the shortest start of its id.
    let short = listed.split_whitespace().next().unwrap();
    assert!(
        id.starts_with(short) && listed.contains("pending"),
        "{listed}"
    );
    let shown = hearth.ok(&["proposals", "show", &id]);
    assert!(shown.contains("+ title: Dentist"), "{shown}");
    let hash = proposal(&hearth, &id)["payloadHash"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        shown.contains(&format!("Payload:  sha256 {hash}")),
        "{shown}"
    );

    let short = hearth.fails(&["proposals", "approve", &id, "--hash", &hash[..7]]);
    assert!(short.contains("too short"), "{short}");
    let approved = hearth.ok(&["proposals", "approve", &id, "--hash", &hash[..16]]);
    assert!(
        approved.starts_with(&format!("Applied proposal {id}")),
        "{approved}"
    );
    let text = read(&calendar).expect("the calendar file was written");
    assert!(text.contains("SUMMARY:Dentist"), "{text}");
    assert!(text.contains("DTSTART:20300304T090000Z"), "{text}");
    assert_eq!(proposal(&hearth, &id)["status"], "applied");

    let events = hearth.ok(&[
        "calendar",
        "events",
        "--from",
        "2030-03-01",
        "--to",
        "2030-03-10",
        "--json",
    ]);
    assert_eq!(events.lines().count(), 1, "{events}");
    assert!(events.contains("\"title\":\"Dentist\""), "{events}");
}

#[test]
fn rejecting_leaves_the_calendar_alone_and_cannot_be_undone_by_approving() {
    let (hearth, calendar) = with_calendar();
    let id = stage_event(&hearth, "Maybe", "2030-03-04");
    let rejected = hearth.ok(&["proposals", "reject", &id, "--reason", "not this week"]);
    assert!(
        rejected.starts_with(&format!("Rejected proposal {id}")),
        "{rejected}"
    );
    let shown = proposal(&hearth, &id);
    assert_eq!(
        (shown["status"].as_str(), shown["reason"].as_str()),
        (Some("rejected"), Some("not this week"))
    );
    let error = hearth.fails(&["proposals", "approve", &id]);
    assert!(
        error.contains("is rejected, so it cannot be approved"),
        "{error}"
    );
    assert_eq!(read(&calendar), None);
}

#[test]
fn approving_twice_is_a_no_op() {
    let (hearth, calendar) = with_calendar();
    let id = stage_event(&hearth, "Once", "2030-03-04T10:00");
    hearth.ok(&["proposals", "approve", &id, "--yes"]);
    let first = read(&calendar).unwrap();
    let again = hearth.ok(&["proposals", "approve", &id]);
    assert_eq!(
        again,
        format!("Proposal {id} was already applied; nothing was done.\n")
    );
    let replay = hearth.ok(&["proposals", "apply", &id]);
    assert!(replay.contains("already applied"), "{replay}");
    assert_eq!(read(&calendar).unwrap(), first);
    assert_eq!(first.matches("BEGIN:VEVENT").count(), 1);
    let applies = audit_rows(&hearth)
        .iter()
        .filter(|row| row["decision"] == "applied")
        .count();
    assert_eq!(applies, 1);
}

#[test]
fn a_payload_changed_after_approval_is_refused_and_recorded() {
    let (hearth, calendar) = with_calendar();
    let id = stage_event(&hearth, "Lunch", "2030-03-04T12:00");
    let approved = hearth.ok(&["proposals", "approve", &id, "--yes", "--no-apply"]);
    assert!(
        approved.starts_with(&format!("Approved proposal {id}")),
        "{approved}"
    );
    tamper(
        &hearth.database(),
        &[&format!(
            "UPDATE proposals SET payload = replace(payload, 'Lunch', 'Wire money') WHERE id = '{id}'"
        )],
    );
    let error = hearth.fails(&["proposals", "apply", &id]);
    assert!(error.contains("changed after the approval"), "{error}");
    assert_eq!(read(&calendar), None);
    let shown = proposal(&hearth, &id);
    assert_eq!(shown["status"], "failed");
    let last = audit_rows(&hearth).pop().unwrap();
    assert_eq!(
        (last["decision"].as_str(), last["actor"].as_str()),
        (Some("refused"), Some("user"))
    );
    // Still refused when tried again.
    hearth.fails(&["proposals", "apply", &id]);
    assert_eq!(read(&calendar), None);
}

#[test]
fn a_stale_hash_is_refused() {
    let (hearth, calendar) = with_calendar();
    let id = stage_event(&hearth, "Gym", "2030-03-05T18:00");
    let error = hearth.fails(&["proposals", "approve", &id, "--hash", "00000000deadbeef"]);
    assert!(error.contains("not 00000000deadbeef"), "{error}");
    assert_eq!(proposal(&hearth, &id)["status"], "pending");
    assert_eq!(read(&calendar), None);
}

#[test]
fn an_expired_proposal_is_refused() {
    let (hearth, calendar) = with_calendar();
    let id = stage_event(&hearth, "Old news", "2030-03-04T09:00");
    tamper(
        &hearth.database(),
        &[&format!(
            "UPDATE proposals SET expires_at = created_at WHERE id = '{id}'"
        )],
    );
    let error = hearth.fails(&["proposals", "approve", &id]);
    assert!(error.contains("expired"), "{error}");
    assert_eq!(read(&calendar), None);
    let expired = hearth.ok(&["proposals", "list", "--status", "expired", "--json"]);
    assert!(expired.contains(&id), "{expired}");
    let audit = audit_rows(&hearth);
    assert!(
        audit
            .iter()
            .any(|row| row["decision"] == "expired" && row["actor"] == "hearth"),
        "{audit:?}"
    );
}

#[test]
fn an_expired_approval_is_refused() {
    let (hearth, calendar) = with_calendar();
    let id = stage_event(&hearth, "Later", "2030-03-04T09:00");
    hearth.ok(&["proposals", "approve", &id, "--yes", "--no-apply"]);
    tamper(
        &hearth.database(),
        &[&format!(
            "UPDATE proposals SET expires_at = created_at WHERE id = '{id}'"
        )],
    );
    let error = hearth.fails(&["proposals", "apply", &id]);
    assert!(error.contains("expired"), "{error}");
    assert_eq!(read(&calendar), None);
}

#[test]
fn calendar_proposals_fail_clearly_only_when_their_own_event_changed() {
    let (hearth, calendar) = with_calendar();
    let added = hearth.ok(&[
        "calendar",
        "add",
        "First",
        "--start",
        "2030-03-01",
        "--json",
    ]);
    let first: serde_json::Value = serde_json::from_str(added.trim()).unwrap();
    let first = first["events"][0].as_str().unwrap().to_owned();
    let second = stage_event(&hearth, "Second", "2030-03-02");
    let third = stage_event(&hearth, "Third", "2030-03-03");
    let arguments = serde_json::json!({"id": first, "title": "First, renamed"}).to_string();
    let output = hearth.ok(&["tools", "call", "event_update", &arguments, "--json"]);
    let outcome: serde_json::Value = serde_json::from_str(output.trim()).unwrap();
    let rename = outcome["proposal"]["id"].as_str().unwrap().to_owned();

    // Approving one proposal leaves the others on the same file valid, and the user
    // adding another event meanwhile does not matter either.
    hearth.ok(&["proposals", "approve", &second, "--yes"]);
    hearth.ok(&["calendar", "add", "Meanwhile", "--start", "2030-03-04"]);
    hearth.ok(&["proposals", "approve", &third, "--yes"]);
    let text = read(&calendar).unwrap();
    for title in ["First", "Second", "Third", "Meanwhile"] {
        assert!(text.contains(&format!("SUMMARY:{title}\r\n")), "{text}");
    }

    // The event the rename was staged against was edited by hand since.
    let edited = text.replace("SUMMARY:First\r\n", "SUMMARY:First (moved)\r\n");
    std::fs::write(&calendar, &edited).unwrap();
    let error = hearth.fails(&["proposals", "approve", &rename, "--yes"]);
    assert!(error.contains("conflict"), "{error}");
    assert!(
        error.contains(&format!("event 'First' ({first}) was changed in")),
        "{error}"
    );
    assert!(error.contains("marked failed"), "{error}");
    assert_eq!(read(&calendar).unwrap(), edited);
    assert_eq!(proposal(&hearth, &rename)["status"], "failed");
}

#[test]
fn tools_an_agent_might_try_to_approve_with_do_not_exist() {
    let hearth = Hearth::new();
    let output = hearth.run(&["tools", "call", "approve", r#"{"id": "x"}"#]);
    assert!(!output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.starts_with("no such tool `approve`"), "{text}");
    let listed = hearth.ok(&["tools", "list", "--json"]);
    for line in listed.lines() {
        let tool: serde_json::Value = serde_json::from_str(line).unwrap();
        let name = tool["name"].as_str().unwrap();
        assert!(
            !["approv", "apply", "reject", "polic"]
                .iter()
                .any(|word| name.contains(word)),
            "{name}"
        );
    }
}
