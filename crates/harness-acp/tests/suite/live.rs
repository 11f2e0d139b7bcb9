//! An agent's footprint stays bounded: at most the configured number of its sessions
//! stay open (the least recently used idle one is closed, and reopened with its history
//! when its chat is used again), and an agent unused for the idle time is stopped and
//! started again on use.

use std::sync::Arc;
use std::time::{Duration, Instant};

use hearth_core::{ChatUri, Harness, StopReason};
use hearth_harness_acp::{AcpHarness, LiveLimits};
use hearth_test_support::TestHost;
use pretty_assertions::assert_eq;

use super::support::{Setup, finish, last_answer, send, session};

fn harness(setup: &Setup, live: LiveLimits) -> AcpHarness {
    let mut options = setup.options();
    options.live = live;
    AcpHarness::new(setup.spec(), options)
}

async fn answer(test: &TestHost, chat: &ChatUri, text: &str) -> String {
    let (turn_id, mut subscription) = send(&test.host, chat, text).await;
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::EndTurn, "{text}");
    last_answer(&test.host, chat).await
}

#[tokio::test]
async fn beyond_the_limit_the_least_recently_used_session_is_closed_and_reopens_on_use() {
    let setup = Setup::new();
    let harness = harness(
        &setup,
        LiveLimits {
            max_sessions: 2,
            ..LiveLimits::default()
        },
    );
    let test = TestHost::start(vec![Arc::new(harness.clone()) as Arc<dyn Harness>]).await;
    let mut chats = Vec::new();
    for word in ["heron", "otter", "lynx"] {
        let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
        assert_eq!(
            answer(&test, &chat, &format!("remember {word}")).await,
            format!("echo: remember {word}")
        );
        chats.push(chat);
    }
    // Three chats, two open sessions: the first chat's was closed.
    assert_eq!(answer(&test, &chats[2], "/live").await, "live sessions: 2");
    // Used again, the first chat's session reopens (with its history) and the least
    // recently used of the others is closed in its place.
    assert_eq!(
        answer(&test, &chats[0], "and again").await,
        "echo: and again"
    );
    assert_eq!(answer(&test, &chats[0], "/live").await, "live sessions: 2");
    let state = test.host.chat(&chats[0]).await.unwrap();
    assert_eq!(state.turns[0].response_text(), "echo: remember heron");
    assert_eq!(answer(&test, &chats[1], "/live").await, "live sessions: 2");
    test.host.shutdown().await;
}

#[tokio::test]
async fn an_agent_unused_for_the_idle_time_is_stopped_and_starts_again_on_use() {
    let setup = Setup::new();
    let harness = harness(
        &setup,
        LiveLimits {
            max_sessions: 4,
            idle_release: Duration::from_secs(1),
        },
    );
    let test = TestHost::start(vec![Arc::new(harness.clone()) as Arc<dyn Harness>]).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    assert_eq!(answer(&test, &chat, "first").await, "echo: first");
    let first = harness.process_id().await.expect("the agent runs");
    let deadline = Instant::now() + Duration::from_secs(30);
    while harness.process_id().await.is_some() {
        assert!(
            Instant::now() < deadline,
            "the unused agent was not stopped"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The chat goes on: the agent starts again and reopens the session.
    assert_eq!(answer(&test, &chat, "second").await, "echo: second");
    let second = harness.process_id().await.expect("the agent runs again");
    assert_ne!(first, second);
    assert_eq!(test.host.chat(&chat).await.unwrap().turns.len(), 2);
    test.host.shutdown().await;
}
