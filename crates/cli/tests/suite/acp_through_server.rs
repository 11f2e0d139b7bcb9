//! `hearth --server URL acp`: an editor's ACP client whose sessions are kept on a running
//! team server, as the user whose API token the command presents. Driven by the official
//! Python SDK against the scripted mock model; the server's access rules decide what each
//! user's editor may list, load and approve.

use std::time::Duration;

use hearth_test_support::{MockResponse, OpenAiStream};
use pretty_assertions::assert_eq;
use serde_json::Value;

use super::acp_agent::{client_of, event_call, kinds, python, texts, with_calendar, work};
use super::mock::{MODEL, server};
use super::serve_support::Served;
use super::support::Hearth;
use super::team_users::{connect_as, listed};
use super::tool_support::audit_rows;

/// The API token `hearth users add` printed.
fn token(printed: &str) -> String {
    printed.lines().last().unwrap().trim().to_owned()
}

/// The id of the user called `name`.
fn user_id(hearth: &Hearth, name: &str) -> String {
    hearth
        .ok(&["users", "list", "--json"])
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|user| user["name"] == name)
        .unwrap_or_else(|| panic!("no user {name}"))["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The sessions a user's client lists on the server.
async fn listed_by(served: &Served, token: &str) -> Vec<String> {
    listed(&connect_as(served, token).await.0).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_through_a_team_server_works_as_its_user_and_loads_only_theirs() {
    let Some(python) = python() else { return };
    let model = server();
    let (hearth, _calendar) = with_calendar(&model);
    model.enqueue(OpenAiStream::text_answer(
        MODEL,
        &["Hello ", "from the server."],
        12,
        3,
    ));
    let alice = token(&hearth.ok(&["users", "add", "alice"]));
    let bob = token(&hearth.ok(&["users", "add", "bob"]));
    let served = Served::start(hearth, &["--users"], &[]);
    let through = ["--server", served.url.as_str()];
    let (_dir, work) = work();

    let report = client_of(
        &python,
        &served.hearth,
        &work,
        &["prompt"],
        &through,
        &[("HEARTH_TOKEN", &alice)],
    );
    assert_eq!(report["prompt"]["stopReason"], "end_turn");
    assert_eq!(
        texts(&report["updates"], "agent_message_chunk"),
        "Hello from the server."
    );
    let session = report["session"]["sessionId"].as_str().unwrap().to_owned();
    assert!(session.starts_with("hearth-session:mock/"), "{session}");
    // The prompt reached the server's model.
    let sent = model.requests().last().unwrap().json();
    assert!(sent.to_string().contains("hello from python"), "{sent}");
    // The model option was set on the server.
    assert_eq!(
        report["setModel"]["configOptions"][0]["currentValue"],
        "other-model"
    );

    // The session is Alice's on the server: she lists it, Bob does not.
    assert!(listed_by(&served, &alice).await.contains(&session));
    assert!(!listed_by(&served, &bob).await.contains(&session));

    // Bob's editor can neither load it nor list it.
    let bobs = client_of(
        &python,
        &served.hearth,
        &work,
        &["load", &session],
        &through,
        &[("HEARTH_TOKEN", &bob)],
    );
    assert!(bobs["load"].is_null(), "{bobs}");
    assert!(bobs["loadError"].is_string(), "{bobs}");
    assert!(bobs["replayed"].as_array().unwrap().is_empty(), "{bobs}");
    let bobs_list = bobs["list"]["sessions"].to_string();
    assert!(!bobs_list.contains(&session), "{bobs_list}");

    // Alice's editor, started again, loads it with its history from the server; it works
    // in her folder on the server, not in a folder of the editor's machine.
    let alices = client_of(
        &python,
        &served.hearth,
        &work,
        &["load", &session],
        &through,
        &[("HEARTH_TOKEN", &alice)],
    );
    let replayed = &alices["replayed"];
    assert_eq!(
        kinds(replayed),
        ["user_message_chunk", "agent_message_chunk"]
    );
    assert_eq!(
        texts(replayed, "agent_message_chunk"),
        "Hello from the server."
    );
    let listed = alices["list"]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|info| info["sessionId"] == session.as_str())
        .unwrap_or_else(|| panic!("{session} not listed: {alices}"))
        .clone();
    let folder = served
        .hearth
        .home
        .path()
        .join("users")
        .join(user_id(&served.hearth, "alice"));
    assert_eq!(listed["cwd"], folder.display().to_string());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_through_a_team_server_decides_a_proposal_as_its_user() {
    let Some(python) = python() else { return };
    let model = server();
    let (hearth, calendar) = with_calendar(&model);
    model.enqueue(event_call());
    model.enqueue(OpenAiStream::text_answer(
        MODEL,
        &["It awaits your approval."],
        1,
        1,
    ));
    let alice = token(&hearth.ok(&["users", "add", "alice"]));
    hearth.ok(&["users", "grant", "alice", "approver", "calendar:home"]);
    let alice_id = user_id(&hearth, "alice");
    let served = Served::start(hearth, &["--users"], &[]);
    let (_dir, work) = work();

    let report = client_of(
        &python,
        &served.hearth,
        &work,
        &["permission", "approve"],
        &["--server", served.url.as_str()],
        &[("HEARTH_TOKEN", &alice)],
    );
    assert_eq!(report["prompt"]["stopReason"], "end_turn", "{report}");
    let shown = report["questions"][0]["toolCall"].to_string();
    assert!(
        shown.contains("Dentist"),
        "the question shows the diff: {shown}"
    );
    let written = std::fs::read_to_string(&calendar).unwrap();
    assert!(written.contains("SUMMARY:Dentist"), "{written}");
    // The server recorded the decision as Alice's.
    let decisions: Vec<(String, String)> = audit_rows(&served.hearth)
        .iter()
        .filter(|row| {
            row["actor"]
                .as_str()
                .is_some_and(|actor| actor.starts_with("user"))
        })
        .map(|row| {
            (
                row["decision"].as_str().unwrap().to_owned(),
                row["actor"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let by = format!("user:{alice_id}");
    assert_eq!(
        decisions,
        [
            ("approved".to_owned(), by.clone()),
            ("applied".to_owned(), by)
        ]
    );
}

#[test]
fn an_editor_through_a_server_that_is_not_there_is_told_so() {
    let hearth = Hearth::new();
    // Without a token: which token is missing.
    let failed = hearth.fails(&["--server", "http://127.0.0.1:9", "acp"]);
    assert!(
        failed.contains("using the Hearth server at http://127.0.0.1:9")
            && failed.contains("token"),
        "{failed}"
    );
    // With one: that nothing answers there.
    let output = hearth
        .command()
        .args(["--server", "http://127.0.0.1:9", "acp"])
        .env("HEARTH_TOKEN", "ab".repeat(32))
        .output()
        .unwrap();
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("using the Hearth server at http://127.0.0.1:9") && said.contains("connect"),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_through_a_team_server_cancels_its_prompt_there() {
    let Some(python) = python() else { return };
    let model = server();
    let (hearth, _calendar) = with_calendar(&model);
    let pieces: Vec<String> = (0..40).map(|n| format!("word{n} ")).collect();
    let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
    model.enqueue(
        MockResponse::from(OpenAiStream::text_answer(MODEL, &pieces, 1, 1))
            .paced(Duration::from_millis(250)),
    );
    let alice = token(&hearth.ok(&["users", "add", "alice"]));
    let served = Served::start(hearth, &["--users"], &[]);
    let (_dir, work) = work();

    let report = client_of(
        &python,
        &served.hearth,
        &work,
        &["cancel"],
        &["--server", served.url.as_str()],
        &[("HEARTH_TOKEN", &alice)],
    );
    assert_eq!(report["prompt"]["stopReason"], "cancelled", "{report}");
    let said = texts(&report["updates"], "agent_message_chunk");
    assert!(said.starts_with("word0 "), "{said}");
    assert!(
        !said.contains("word39"),
        "the answer was not cut short: {said}"
    );
}
