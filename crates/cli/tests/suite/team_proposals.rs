//! `hearth --server URL proposals …` as a team server's user: the server's proposals that
//! are theirs, listed, shown and decided through the server (never the local data
//! directory's), and nobody else's.

use std::process::Output;

use hearth_test_support::OpenAiStream;
use serde_json::Value;

use super::acp_agent::{event_call, with_calendar};
use super::mock::{MODEL, server};
use super::serve_support::Served;
use super::tool_support::audit_rows;

/// `hearth --server URL ARGS` as the user of `token`.
fn as_user(served: &Served, token: &str, args: &[&str]) -> Output {
    served
        .hearth
        .command()
        .args(["--server", served.url.as_str()])
        .args(args)
        .env("HEARTH_TOKEN", token)
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn a_user_decides_their_proposals_through_the_server_and_nobody_elses() {
    let model = server();
    let (hearth, calendar) = with_calendar(&model);
    model.enqueue(event_call());
    model.enqueue(OpenAiStream::text_answer(MODEL, &["Staged."], 1, 1));
    let token = |printed: String| printed.lines().last().unwrap().trim().to_owned();
    let alice = token(hearth.ok(&["users", "add", "alice"]));
    let bob = token(hearth.ok(&["users", "add", "bob"]));
    hearth.ok(&["users", "grant", "alice", "approver", "calendar:home"]);
    let served = Served::start(hearth, &["--users"], &[]);

    // Her agent stages an event on the server.
    stdout(&as_user(&served, &alice, &["run", "add the dentist"]));
    let listed = stdout(&as_user(&served, &alice, &["proposals", "list", "--json"]));
    assert_eq!(listed.lines().count(), 1, "{listed}");
    let proposal: Value = serde_json::from_str(listed.trim()).unwrap();
    let id = proposal["id"].as_str().unwrap().to_owned();
    assert_eq!(proposal["status"], "pending");
    let hash = proposal["payloadHash"].as_str().unwrap().to_owned();

    // Bob's list is empty and he cannot name hers.
    let his = stdout(&as_user(&served, &bob, &["proposals", "list"]));
    assert_eq!(his, "No proposals.\n");
    let refused = as_user(&served, &bob, &["proposals", "approve", &id, "--yes"]);
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("no proposal"), "{said}");

    // She reviews it by a short id and approves it by the hash she saw.
    let shown = stdout(&as_user(&served, &alice, &["proposals", "show", &id[..8]]));
    assert!(
        shown.contains("Dentist") && shown.contains(&hash),
        "{shown}"
    );
    let approved = stdout(&as_user(
        &served,
        &alice,
        &["proposals", "approve", &id[..8], "--hash", &hash[..12]],
    ));
    assert!(approved.starts_with("Applied proposal"), "{approved}");
    let written = std::fs::read_to_string(&calendar).unwrap();
    assert!(written.contains("SUMMARY:Dentist"), "{written}");
    let after = stdout(&as_user(
        &served,
        &alice,
        &["proposals", "show", &id, "--json"],
    ));
    let after: Value = serde_json::from_str(after.trim()).unwrap();
    assert_eq!(after["status"], "applied");
    assert!(
        audit_rows(&served.hearth)
            .iter()
            .any(|row| row["decision"] == "approved"
                && row["actor"]
                    .as_str()
                    .is_some_and(|actor| actor.starts_with("user:"))),
        "the server recorded her decision as hers"
    );

    // What only this data directory can do is said so.
    let apply = as_user(&served, &alice, &["proposals", "apply", &id]);
    assert!(!apply.status.success());
    let said = String::from_utf8_lossy(&apply.stderr);
    assert!(
        said.contains("applied its proposals when they were approved"),
        "{said}"
    );
}
