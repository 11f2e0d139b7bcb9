//! The agent's permission requests: held for the user, answered only through the host,
//! answered by the policy without asking where configured, refused when they name files
//! outside the session's directories, cancelled with their turn; every request and
//! answer audited.

use hearth_core::{
    ChatUri, PERMISSION_CANCELLED, PermissionAnswer, PermissionOptionKind, ResponsePart,
    StopReason, ToolKind,
};
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

/// The outcome recorded for the turn's (only) permission request.
async fn recorded_outcome(test: &TestHost, chat: &ChatUri) -> Option<String> {
    let state = test.host.chat(chat).await.unwrap();
    state
        .turns
        .last()
        .unwrap()
        .parts
        .iter()
        .find_map(|part| match part {
            ResponsePart::PermissionRequest { outcome, .. } => outcome.clone(),
            _ => None,
        })
}

#[tokio::test]
async fn a_write_the_user_allows_lands_in_the_working_directory() {
    let setup = Setup::new().with_audit().await;
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    let target = setup.work().join("hello.txt");
    let (turn_id, mut subscription) = send(
        &test.host,
        &chat,
        &format!("/write {} hello from hearth", target.display()),
    )
    .await;
    let (request_id, options, tool_call_id) = permission_request(&mut subscription).await;
    assert_eq!(
        options.iter().map(|option| option.kind).collect::<Vec<_>>(),
        vec![
            Some(PermissionOptionKind::AllowOnce),
            Some(PermissionOptionKind::AllowAlways),
            Some(PermissionOptionKind::RejectOnce),
            Some(PermissionOptionKind::RejectAlways),
        ]
    );
    // Waiting for the user, listed by the host, the file untouched.
    let pending = test.host.pending_permissions();
    assert_eq!(pending.len(), 1);
    let call = pending[0]
        .tool_call
        .as_ref()
        .expect("the tool call it is about");
    assert_eq!(Some(&call.call_id), tool_call_id.as_ref());
    assert_eq!(call.kind, Some(ToolKind::Edit));
    assert!(!target.exists());
    test.host
        .respond_permission(&chat, &request_id, &answer("allow-once"))
        .await
        .unwrap();
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::EndTurn);
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "hello from hearth"
    );
    assert_eq!(
        last_answer(&test.host, &chat).await,
        format!("wrote {}", target.display())
    );
    assert_eq!(
        recorded_outcome(&test, &chat).await.as_deref(),
        Some("allow-once")
    );
    assert!(test.host.pending_permissions().is_empty());
    let rows = setup.audit_rows().await;
    let kinds: Vec<(&str, &str)> = rows
        .iter()
        .map(|(kind, decision, _, _)| (kind.as_str(), decision.as_str()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("permission", "requested"),
            ("permission", "answered"),
            ("file_write", "written"),
        ],
        "{rows:#?}"
    );
    let written = &rows[2].3;
    assert_eq!(written["path"], target.display().to_string());
    assert!(written["hashes"]["before"].is_null());
    assert_eq!(written["hashes"]["after"].as_str().map(str::len), Some(64));
    assert_eq!(rows[1].3["via"], "test");
}

#[tokio::test]
async fn a_refused_write_writes_nothing_and_always_answers_are_remembered_for_the_chat() {
    let setup = Setup::new();
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    let target = setup.work().join("no.txt");
    let (turn_id, mut subscription) = send(
        &test.host,
        &chat,
        &format!("/write {} nope", target.display()),
    )
    .await;
    let (request_id, _, _) = permission_request(&mut subscription).await;
    test.host
        .respond_permission(&chat, &request_id, &answer("reject-always"))
        .await
        .unwrap();
    finish(&mut subscription, &turn_id).await;
    assert_eq!(last_answer(&test.host, &chat).await, "not allowed");
    assert!(!target.exists());
    // The next edit in this chat is refused without asking.
    let (turn_id, mut subscription) = send(
        &test.host,
        &chat,
        &format!("/write {} again", target.display()),
    )
    .await;
    finish(&mut subscription, &turn_id).await;
    assert_eq!(last_answer(&test.host, &chat).await, "not allowed");
    assert_eq!(
        recorded_outcome(&test, &chat).await.as_deref(),
        Some("reject-once")
    );
    assert!(!target.exists());
}

#[tokio::test]
async fn a_write_aimed_outside_the_working_directory_is_refused_without_asking() {
    let setup = Setup::new().with_audit().await;
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escape.txt");
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    for prompt in [
        format!("/write {} escaped", target.display()),
        format!(
            "/write {}/../{}/escape.txt nope",
            setup.work().display(),
            outside.path().display()
        ),
    ] {
        let (turn_id, mut subscription) = send(&test.host, &chat, &prompt).await;
        let (_, reason) = finish(&mut subscription, &turn_id).await;
        assert_eq!(reason, StopReason::EndTurn);
        assert_eq!(
            last_answer(&test.host, &chat).await,
            "not allowed",
            "{prompt}"
        );
        assert_eq!(
            recorded_outcome(&test, &chat).await.as_deref(),
            Some("reject-once")
        );
    }
    assert!(!target.exists());
    let rows = setup.audit_rows().await;
    let policy: Vec<&str> = rows
        .iter()
        .filter(|(_, decision, _, _)| decision == "policy")
        .map(|(_, _, outcome, _)| outcome.as_str())
        .collect();
    assert_eq!(policy.len(), 2, "{rows:#?}");
    assert!(
        policy[0].contains("outside the session's working directories"),
        "{policy:?}"
    );
}

#[tokio::test]
async fn the_policy_answers_without_asking() {
    let mut allow = Setup::new();
    allow.policy = PermissionPolicy {
        mode: PermissionMode::Ask,
        allow_kinds: vec![ToolKind::Edit],
    };
    let test = TestHost::start(allow.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &allow.work()).await);
    let target = allow.work().join("allowed.txt");
    let (turn_id, mut subscription) = send(
        &test.host,
        &chat,
        &format!("/write {} by policy", target.display()),
    )
    .await;
    finish(&mut subscription, &turn_id).await;
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "by policy");
    assert_eq!(
        recorded_outcome(&test, &chat).await.as_deref(),
        Some("allow-once")
    );

    let mut reject = Setup::new();
    reject.policy = PermissionPolicy {
        mode: PermissionMode::Reject,
        allow_kinds: Vec::new(),
    };
    let test = TestHost::start(reject.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &reject.work()).await);
    let target = reject.work().join("refused.txt");
    let (turn_id, mut subscription) = send(
        &test.host,
        &chat,
        &format!("/write {} by policy", target.display()),
    )
    .await;
    finish(&mut subscription, &turn_id).await;
    assert!(!target.exists());
    assert_eq!(last_answer(&test.host, &chat).await, "not allowed");
}

#[tokio::test]
async fn aborting_a_turn_cancels_its_waiting_request() {
    let setup = Setup::new();
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    let target = setup.work().join("late.txt");
    let (turn_id, mut subscription) = send(
        &test.host,
        &chat,
        &format!("/write {} late", target.display()),
    )
    .await;
    let (request_id, _, _) = permission_request(&mut subscription).await;
    test.host.abort(&chat).await.unwrap();
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::Aborted);
    assert_eq!(
        recorded_outcome(&test, &chat).await.as_deref(),
        Some(PERMISSION_CANCELLED)
    );
    let late = test
        .host
        .respond_permission(&chat, &request_id, &answer("allow-once"))
        .await;
    assert!(late.is_err(), "a request of an ended turn was answered");
    assert!(!target.exists());
    // The chat goes on.
    let (turn_id, mut subscription) = send(&test.host, &chat, "still here?").await;
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::EndTurn);
}
