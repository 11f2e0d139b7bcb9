//! The agent's questions to the user (`elicitation/create`): a choice is held for the
//! user like a permission request and its answer goes back as the form's value; a form
//! Hearth cannot ask is declined with a notice; an agent whose policy refuses
//! everything gets `decline` without anyone being asked.

use hearth_core::{ChatUri, PermissionAnswer, ResponsePart, StopReason};
use hearth_harness_acp::{PermissionMode, PermissionPolicy};
use hearth_test_support::TestHost;
use pretty_assertions::assert_eq;

use super::support::{Setup, finish, last_answer, permission_request, send, session};

fn answer(option: &str) -> PermissionAnswer {
    PermissionAnswer {
        option_id: option.into(),
        via: "test".into(),
    }
}

#[tokio::test]
async fn a_choice_is_asked_and_the_chosen_value_goes_back_to_the_agent() {
    let setup = Setup::new().with_audit().await;
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);

    let (turn_id, mut subscription) = send(&test.host, &chat, "/ask choice").await;
    let (request_id, options, tool_call_id) = permission_request(&mut subscription).await;
    assert_eq!(tool_call_id, None);
    let shown: Vec<(String, String)> = options
        .iter()
        .map(|option| (option.id.clone(), option.label.clone()))
        .collect();
    assert_eq!(
        shown,
        vec![
            ("choice-1".to_owned(), "red".to_owned()),
            ("choice-2".to_owned(), "green".to_owned()),
            ("choice-3".to_owned(), "blue".to_owned()),
            ("decline".to_owned(), "Decline".to_owned()),
        ]
    );
    let pending = test.host.pending_permissions();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].title, "Which colour?");
    test.host
        .respond_permission(&chat, &request_id, &answer("choice-2"))
        .await
        .unwrap();
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::EndTurn);
    assert_eq!(
        last_answer(&test.host, &chat).await,
        "answer: accept color=green"
    );

    // Declined.
    let (turn_id, mut subscription) = send(&test.host, &chat, "/ask confirm").await;
    let (request_id, options, _) = permission_request(&mut subscription).await;
    assert_eq!(options.len(), 2);
    test.host
        .respond_permission(&chat, &request_id, &answer("decline"))
        .await
        .unwrap();
    finish(&mut subscription, &turn_id).await;
    assert_eq!(last_answer(&test.host, &chat).await, "answer: decline");

    let rows = setup.audit_rows().await;
    let decisions: Vec<(String, String)> = rows
        .iter()
        .map(|(kind, decision, outcome, _)| (format!("{kind} {decision}"), outcome.clone()))
        .collect();
    assert!(
        decisions.contains(&("permission answered".to_owned(), "ok: choice-2".to_owned())),
        "{decisions:?}"
    );
}

#[tokio::test]
async fn a_form_hearth_cannot_ask_is_declined_with_a_notice() {
    let setup = Setup::new();
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    let (turn_id, mut subscription) = send(&test.host, &chat, "/ask text").await;
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::EndTurn);
    assert_eq!(last_answer(&test.host, &chat).await, "answer: decline");
    let state = test.host.chat(&chat).await.unwrap();
    let notices: Vec<String> = state
        .turns
        .last()
        .unwrap()
        .parts
        .iter()
        .filter_map(|part| match part {
            ResponsePart::Notice { message, .. } => Some(message.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        notices,
        vec![
            "tester asked \"Your name?\", which Hearth declined: its form has fields Hearth cannot ask for yet (text, numbers, several fields)"
                .to_owned()
        ]
    );
}

#[tokio::test]
async fn an_agent_whose_policy_refuses_everything_is_declined_unasked() {
    let mut setup = Setup::new();
    setup.policy = PermissionPolicy {
        mode: PermissionMode::Reject,
        allow_kinds: Vec::new(),
    };
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    let (turn_id, mut subscription) = send(&test.host, &chat, "/ask choice").await;
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::EndTurn);
    assert_eq!(last_answer(&test.host, &chat).await, "answer: decline");
    assert!(test.host.pending_permissions().is_empty());
}
