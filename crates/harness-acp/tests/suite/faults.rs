//! An agent that is missing, fails its handshake, wants a sign-in, dies or is killed
//! mid-turn, floods or dirties its output, or stalls: the turn ends with an error that
//! names the agent, its exit status and its last words; what streamed is kept; the next
//! prompt restarts it; the chat is not lost.

use hearth_core::{ChatUri, ResponsePart, StopReason};
use hearth_test_support::TestHost;
use pretty_assertions::assert_eq;

use super::support::{Setup, finish, last_answer, send, session};

fn error_of(turn: &hearth_core::Turn) -> String {
    turn.parts
        .iter()
        .find_map(|part| match part {
            ResponsePart::Error { message } => Some(message.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn an_agent_that_dies_mid_turn_keeps_what_streamed_and_restarts_on_the_next_prompt() {
    let setup = Setup::new();
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    let (turn_id, mut subscription) = send(&test.host, &chat, "/crash").await;
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::Error);
    let state = test.host.chat(&chat).await.unwrap();
    let turn = state.turns.last().unwrap();
    assert_eq!(turn.response_text(), "partial");
    let error = error_of(turn);
    assert!(error.contains("agent `tester` stopped"), "{error}");
    assert!(error.contains("exit status 3"), "{error}");
    assert!(error.contains("about to crash"), "{error}");
    let (turn_id, mut subscription) = send(&test.host, &chat, "are you back?").await;
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::EndTurn);
    assert_eq!(last_answer(&test.host, &chat).await, "echo: are you back?");
}

#[tokio::test]
async fn an_agent_killed_mid_turn_is_reported_with_its_signal() {
    let setup = Setup::new();
    let harness = setup.harness();
    let test = TestHost::start(vec![std::sync::Arc::new(harness.clone())]).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    let pid = harness.process_id().await.expect("the agent runs");
    let (turn_id, mut subscription) = send(&test.host, &chat, "/slow 500").await;
    // Let it stream, then kill it as `kill -9` would.
    loop {
        let envelope = hearth_test_support::next_envelope(&mut subscription.receiver).await;
        if matches!(envelope.action, hearth_core::Action::TextDelta { .. }) {
            break;
        }
    }
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(i32::try_from(pid).unwrap()).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::Error);
    let state = test.host.chat(&chat).await.unwrap();
    let turn = state.turns.last().unwrap();
    assert!(
        turn.response_text().starts_with("tick 1"),
        "what streamed is kept"
    );
    let error = error_of(turn);
    assert!(error.contains("killed by signal 9"), "{error}");
    let (turn_id, mut subscription) = send(&test.host, &chat, "again").await;
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::EndTurn);
    assert_ne!(
        harness.process_id().await,
        Some(pid),
        "a new process answers"
    );
}

#[tokio::test]
async fn junk_on_stdout_is_skipped_and_a_flood_stops_the_agent() {
    let setup = Setup::new();
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    let (turn_id, mut subscription) = send(&test.host, &chat, "/junk").await;
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::EndTurn);
    assert_eq!(
        last_answer(&test.host, &chat).await,
        "before junk\nafter junk\n"
    );

    let (turn_id, mut subscription) = send(&test.host, &chat, "/flood").await;
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::Error);
    let state = test.host.chat(&chat).await.unwrap();
    let error = error_of(state.turns.last().unwrap());
    assert!(error.contains("wrote a line longer than 32 MiB"), "{error}");
    let (turn_id, mut subscription) = send(&test.host, &chat, "fine again").await;
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::EndTurn);
}

#[tokio::test]
async fn a_stalled_turn_is_aborted_and_a_chatty_stderr_never_blocks_the_agent() {
    let setup = Setup::new();
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    let (turn_id, mut subscription) = send(&test.host, &chat, "/hang").await;
    test.host.abort(&chat).await.unwrap();
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    let state = test.host.chat(&chat).await.unwrap();
    assert_eq!(reason, StopReason::Aborted, "{}", error_of(&state.turns[0]));
    let (turn_id, mut subscription) = send(&test.host, &chat, "/stderr 50000").await;
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    let state = test.host.chat(&chat).await.unwrap();
    assert_eq!(reason, StopReason::EndTurn, "{}", error_of(&state.turns[1]));
    assert_eq!(last_answer(&test.host, &chat).await, "ok");
}

#[tokio::test]
async fn a_missing_or_failing_agent_says_what_failed() {
    let setup = Setup::new();
    let mut spec = setup.spec();
    spec.command = "/nonexistent/agent".into();
    let test = TestHost::start(vec![std::sync::Arc::new(
        hearth_harness_acp::AcpHarness::new(spec, setup.options()),
    )])
    .await;
    let error = test
        .host
        .create_session(hearth_host::NewSessionRequest {
            provider: hearth_core::HarnessId::parse("tester").unwrap(),
            scope: hearth_core::Scope::Global,
            title: None,
            model: None,
            working_directories: vec![setup.work()],
            owner: None,
        })
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("could not start agent `tester` (`/nonexistent/agent`): no such program"),
        "{error}"
    );

    let mut spec = setup.spec();
    spec.command = "/bin/sh".into();
    spec.args = vec![
        "-c".into(),
        "echo 'cannot find my config' >&2; exit 7".into(),
    ];
    let test = TestHost::start(vec![std::sync::Arc::new(
        hearth_harness_acp::AcpHarness::new(spec, setup.options()),
    )])
    .await;
    let error = test
        .host
        .create_session(hearth_host::NewSessionRequest {
            provider: hearth_core::HarnessId::parse("tester").unwrap(),
            scope: hearth_core::Scope::Global,
            title: None,
            model: None,
            working_directories: vec![setup.work()],
            owner: None,
        })
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("exit status 7"), "{error}");
    assert!(error.contains("cannot find my config"), "{error}");
}

#[tokio::test]
async fn an_agent_that_wants_a_sign_in_lists_its_methods_and_signs_in_when_configured() {
    let setup = Setup::with_env(&[
        ("HEARTH_TEST_AGENT_AUTH", "1"),
        ("HEARTH_TEST_AGENT_TOKEN", "t0k3n"),
    ]);
    let test = TestHost::start(setup.agents()).await;
    let request = || hearth_host::NewSessionRequest {
        provider: hearth_core::HarnessId::parse("tester").unwrap(),
        scope: hearth_core::Scope::Global,
        title: None,
        model: None,
        working_directories: vec![setup.work()],
        owner: None,
    };
    let error = test
        .host
        .create_session(request())
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("needs you to sign in"), "{error}");
    assert!(
        error.contains("`test-login` (Test login: set HEARTH_TEST_AGENT_TOKEN)"),
        "{error}"
    );

    let mut spec = setup.spec();
    spec.auth_method = Some("test-login".into());
    let test = TestHost::start(vec![std::sync::Arc::new(
        hearth_harness_acp::AcpHarness::new(spec, setup.options()),
    )])
    .await;
    let session = test.host.create_session(request()).await.unwrap();
    let chat = ChatUri::default_for(&session);
    let (turn_id, mut subscription) = send(&test.host, &chat, "signed in").await;
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::EndTurn);

    let mut spec = setup.spec();
    spec.auth_method = Some("oauth".into());
    let test = TestHost::start(vec![std::sync::Arc::new(
        hearth_harness_acp::AcpHarness::new(spec, setup.options()),
    )])
    .await;
    let error = test
        .host
        .create_session(request())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("does not offer the sign-in method `oauth`"),
        "{error}"
    );
}
