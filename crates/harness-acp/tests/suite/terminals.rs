//! Terminals the agent asks for: a command runs in a directory inside the session's
//! working directories, only once allowed, with its output capped; it is killed with the
//! turn; commands are audited.

use hearth_core::{ChatUri, PermissionAnswer, StopReason, ToolKind};
use hearth_harness_acp::{PermissionMode, PermissionPolicy};
use hearth_test_support::TestHost;

use super::support::{Setup, finish, last_answer, permission_request, send, session};

#[tokio::test]
async fn a_command_runs_in_the_working_directory_once_the_user_allows_it() {
    let setup = Setup::new().with_audit().await;
    std::fs::write(setup.work().join("marker.txt"), "here").unwrap();
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    let (turn_id, mut subscription) = send(&test.host, &chat, "/terminal ls").await;
    let (request_id, _, _) = permission_request(&mut subscription).await;
    let pending = test.host.pending_permissions();
    assert_eq!(
        pending[0].tool_call.as_ref().and_then(|call| call.kind),
        Some(ToolKind::Execute)
    );
    assert!(pending[0].title.contains("`ls`"), "{}", pending[0].title);
    test.host
        .respond_permission(
            &chat,
            &request_id,
            &PermissionAnswer {
                option_id: "allow-once".into(),
                via: "test".into(),
            },
        )
        .await
        .unwrap();
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::EndTurn);
    let answer = last_answer(&test.host, &chat).await;
    assert!(answer.starts_with("exit code 0"), "{answer}");
    assert!(
        answer.contains("marker.txt"),
        "it ran in the working directory: {answer}"
    );
    let rows = setup.audit_rows().await;
    let ran = rows
        .iter()
        .find(|(kind, _, _, _)| kind == "terminal")
        .expect("the command is audited");
    assert_eq!(ran.1, "ran");
    assert_eq!(ran.3["command"], "ls");
    assert_eq!(ran.3["directory"], setup.work().display().to_string());

    // Refused: nothing runs.
    let (turn_id, mut subscription) = send(&test.host, &chat, "/terminal touch ran.txt").await;
    let (request_id, _, _) = permission_request(&mut subscription).await;
    test.host
        .respond_permission(
            &chat,
            &request_id,
            &PermissionAnswer {
                option_id: "reject-once".into(),
                via: "test".into(),
            },
        )
        .await
        .unwrap();
    finish(&mut subscription, &turn_id).await;
    let answer = last_answer(&test.host, &chat).await;
    assert!(answer.contains("did not allow"), "{answer}");
    assert!(!setup.work().join("ran.txt").exists());
}

#[tokio::test]
async fn output_is_capped_and_a_turn_that_ends_kills_its_commands() {
    let mut setup = Setup::new();
    setup.policy = PermissionPolicy {
        mode: PermissionMode::Ask,
        allow_kinds: vec![ToolKind::Execute],
    };
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    // The agent asks for at most 4096 bytes of output: the newest are kept.
    std::fs::write(
        setup.work().join("long.sh"),
        "seq 1 20000\necho last-line\n",
    )
    .unwrap();
    let (turn_id, mut subscription) = send(&test.host, &chat, "/terminal sh long.sh").await;
    finish(&mut subscription, &turn_id).await;
    let answer = last_answer(&test.host, &chat).await;
    assert!(answer.starts_with("exit code 0"), "{answer}");
    // The newest output is kept, and the agent was told that the rest was cut.
    assert!(
        answer.ends_with("20000\nlast-line\n\n[output truncated]"),
        "{answer}"
    );
    assert!(!answer.contains("\n1\n2\n"), "the oldest output is gone");
    assert!(answer.len() < 4200, "{} bytes", answer.len());

    // A command that would outlive the turn is killed when the turn is aborted.
    let marker = setup.work().join("still-running");
    std::fs::write(
        setup.work().join("slow.sh"),
        format!("sleep 30\ntouch {}\n", marker.display()),
    )
    .unwrap();
    let (turn_id, mut subscription) = send(&test.host, &chat, "/terminal sh slow.sh").await;
    test.host.abort(&chat).await.unwrap();
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::Aborted);
    // No process of that command is left (it would touch the marker after 30 s).
    let deadline = std::time::Instant::now() + hearth_test_support::WAIT;
    loop {
        let running = std::process::Command::new("pgrep")
            .args(["-f", "sh slow.sh"])
            .output()
            .unwrap();
        if running.stdout.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the command outlived its turn"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_commands_output_shows_in_its_call_while_it_runs_and_when_it_ended() {
    let mut setup = Setup::new();
    setup.policy = PermissionPolicy {
        mode: PermissionMode::Ask,
        allow_kinds: vec![ToolKind::Execute],
    };
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    // The command waits for a file the test writes once the first line was shown.
    let go = setup.work().join("go");
    std::fs::write(
        setup.work().join("steps.sh"),
        format!(
            "echo first step\nwhile [ ! -e {} ]; do sleep 0.05; done\necho second step\n",
            go.display()
        ),
    )
    .unwrap();
    let (turn_id, mut subscription) = send(&test.host, &chat, "/terminal sh steps.sh").await;
    let shown = |envelope: &hearth_core::Envelope| match &envelope.action {
        hearth_core::Action::ToolCallUpdated { patch, .. } => {
            patch.content.as_ref().and_then(|content| {
                content.iter().find_map(|item| match item {
                    hearth_core::ToolCallContent::Text { text } => Some(text.clone()),
                    _ => None,
                })
            })
        }
        _ => None,
    };
    // While it runs: the first line, and not the second.
    let running = loop {
        let envelope = hearth_test_support::next_envelope(&mut subscription.receiver).await;
        if let Some(text) = shown(&envelope) {
            break text;
        }
    };
    assert_eq!(running, "```\nfirst step\n```");
    std::fs::write(&go, "").unwrap();
    let (envelopes, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::EndTurn);
    let last = envelopes.iter().rev().find_map(shown);
    assert_eq!(
        last.as_deref(),
        Some("```\nfirst step\nsecond step\n```\nexit status 0")
    );
    // What the chat keeps: the call, finished, showing the whole output.
    let state = test.host.chat(&chat).await.unwrap();
    let call = state.turns[0]
        .parts
        .iter()
        .find_map(|part| match part {
            hearth_core::ResponsePart::ToolCall(call)
                if call
                    .content
                    .iter()
                    .any(|item| matches!(item, hearth_core::ToolCallContent::Terminal { .. })) =>
            {
                Some(call.clone())
            }
            _ => None,
        })
        .expect("the call that ran in the terminal");
    assert_eq!(call.status, hearth_core::ToolCallStatus::Completed);
    assert!(
        call.content.iter().any(|item| matches!(
            item,
            hearth_core::ToolCallContent::Text { text } if text.contains("second step")
        )),
        "{call:?}"
    );
}
