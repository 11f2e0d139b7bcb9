//! Hearth's own agent with the real toolbox: a model's calendar write only stages a
//! proposal (reported back to the model), a model cannot approve it, the user can.

use hearth_test_support::OpenAiStream;
use pretty_assertions::assert_eq;

use super::mock::{MODEL, completions, configure, mock_config, ok, server, tool_call};
use super::support::Hearth;
use super::tool_support::{audit_rows, proposal};

/// The content of the tool message the model got back in request `index`.
fn tool_result(server: &hearth_test_support::MockModelServer, index: usize) -> String {
    let request = &completions(server)[index];
    let messages = request.json()["messages"].as_array().unwrap().clone();
    let message = messages
        .iter()
        .rev()
        .find(|message| message["role"] == "tool")
        .expect("a tool result was sent to the model");
    message["content"].as_str().unwrap().to_owned()
}

#[test]
fn a_model_stages_an_event_and_only_the_user_applies_it() {
    let server = server();
    let hearth = Hearth::new();
    let calendar = hearth.home.path().join("home.ics");
    configure(
        &hearth,
        &format!(
            "{}\n[calendars.home]\nkind = \"ics\"\npath = {:?}\ndefault = true\n",
            mock_config(&server),
            calendar.display().to_string()
        ),
    );
    server.enqueue(tool_call(
        "event_create",
        r#"{"title": "Dentist", "start": "2030-03-04T09:00"}"#,
    ));
    // The model then tries to approve its own proposal.
    server.enqueue(tool_call("approve_proposal", r#"{"id": "anything"}"#));
    server.enqueue(OpenAiStream::text_answer(
        MODEL,
        &["It awaits your approval."],
        1,
        1,
    ));
    let (stdout, _) = ok(&hearth, &["run", "book the dentist"]);
    assert!(stdout.contains("It awaits your approval."), "{stdout}");

    let staged = tool_result(&server, 1);
    assert!(staged.starts_with("Staged proposal "), "{staged}");
    assert!(staged.contains("Nothing has been changed yet"), "{staged}");
    // Refused by the agent or the toolbox, in their words; never approved.
    let refused = tool_result(&server, 2);
    assert!(refused.contains("approve_proposal"), "{refused}");
    assert!(!refused.contains("Staged proposal"), "{refused}");
    assert!(!calendar.exists(), "nothing is written before approval");

    let listed = hearth.ok(&["proposals", "list", "--json"]);
    assert_eq!(listed.lines().count(), 1, "{listed}");
    let id = serde_json::from_str::<serde_json::Value>(listed.trim()).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(staged.contains(&id), "{staged}");
    let chat = proposal(&hearth, &id)["chat"].as_str().unwrap().to_owned();
    assert!(chat.starts_with("hearth-chat:mock/"), "{chat}");
    assert_eq!(proposal(&hearth, &id)["status"], "pending");

    hearth.ok(&["proposals", "approve", &id, "--yes"]);
    assert!(
        std::fs::read_to_string(&calendar)
            .unwrap()
            .contains("SUMMARY:Dentist")
    );
    let actors: Vec<(String, String)> = audit_rows(&hearth)
        .iter()
        .map(|row| {
            (
                row["actor"].as_str().unwrap().to_owned(),
                row["decision"].as_str().unwrap().to_owned(),
            )
        })
        // A call the agent itself refuses never reaches the toolbox.
        .filter(|(_, decision)| decision != "denied")
        .collect();
    assert_eq!(
        actors,
        [
            (chat, "staged".to_owned()),
            ("user".to_owned(), "approved".to_owned()),
            ("user".to_owned(), "applied".to_owned()),
        ]
    );
}
