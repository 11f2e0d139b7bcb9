//! Restore and discovery: after a restart a chat reopens with `session/load` (or stays
//! readable with a clear note when the agent cannot reopen it); the agent's own
//! conversations join as external sessions with their history; the sessions that back
//! Hearth's chats never do.

use hearth_core::{ChatSeed, ChatUri, Provenance, StopReason};
use hearth_store::SessionQuery;
use hearth_test_support::TestHost;
use pretty_assertions::assert_eq;

use super::support::{AGENT, Setup, finish, last_answer, send, session};

#[tokio::test]
async fn after_a_restart_a_chat_reopens_with_its_history() {
    let setup = Setup::new();
    let test = TestHost::start(setup.agents()).await;
    let session = session(&test.host, &setup.work()).await;
    let chat = ChatUri::default_for(&session);
    let (turn_id, mut subscription) = send(&test.host, &chat, "remember heron").await;
    finish(&mut subscription, &turn_id).await;
    let test = test.restart(setup.agents()).await;
    let state = test.host.chat(&chat).await.unwrap();
    assert_eq!(state.turns.len(), 1);
    assert_eq!(state.turns[0].response_text(), "echo: remember heron");
    let (turn_id, mut subscription) = send(&test.host, &chat, "and now?").await;
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::EndTurn);
    // The agent's replay on reopening did not add turns.
    assert_eq!(test.host.chat(&chat).await.unwrap().turns.len(), 2);
}

#[tokio::test]
async fn an_agent_that_cannot_reopen_sessions_leaves_the_chat_readable_with_a_note() {
    let setup = Setup::with_env(&[("HEARTH_TEST_AGENT_CAPS", "none")]);
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    let (turn_id, mut subscription) = send(&test.host, &chat, "first").await;
    finish(&mut subscription, &turn_id).await;
    let test = test.restart(setup.agents()).await;
    assert_eq!(last_answer(&test.host, &chat).await, "echo: first");
    let (turn_id, mut subscription) = send(&test.host, &chat, "second").await;
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::Error);
    let state = test.host.chat(&chat).await.unwrap();
    let error = state.turns[1]
        .parts
        .iter()
        .find_map(|part| match part {
            hearth_core::ResponsePart::Error { message } => Some(message.clone()),
            _ => None,
        })
        .unwrap_or_default();
    assert!(error.contains("cannot reopen its conversations"), "{error}");
    assert!(error.contains("history stays readable"), "{error}");
    assert_eq!(state.turns[0].response_text(), "echo: first");
}

#[tokio::test]
async fn the_agents_own_conversations_join_as_external_sessions_with_their_history() {
    let setup = Setup::new();
    // Conversations the agent had elsewhere: created through another Hearth database.
    let elsewhere = TestHost::start(setup.agents()).await;
    let theirs = session(&elsewhere.host, &setup.work()).await;
    let chat = ChatUri::default_for(&theirs);
    let (turn_id, mut subscription) = send(&elsewhere.host, &chat, "written elsewhere").await;
    finish(&mut subscription, &turn_id).await;
    elsewhere.host.shutdown().await;

    let test = TestHost::start(setup.agents()).await;
    // Hearth's own session, with a peer chat: their agent sessions back chats.
    let ours = session(&test.host, &setup.work()).await;
    let peer = test.host.create_chat(&ours, ChatSeed::Fresh).await.unwrap();
    let (turn_id, mut subscription) = send(&test.host, &peer, "peer talk").await;
    finish(&mut subscription, &turn_id).await;

    test.host
        .start_harness(&hearth_core::HarnessId::parse(AGENT).unwrap())
        .await
        .unwrap();
    let page = test
        .host
        .list_sessions(&SessionQuery::default())
        .await
        .unwrap();
    let external: Vec<_> = page
        .sessions
        .iter()
        .filter(|summary| summary.provenance == Provenance::External)
        .collect();
    // Only the one from elsewhere: neither our default chat's nor our peer's session.
    assert_eq!(external.len(), 1, "{page:#?}");
    assert_eq!(external[0].title.as_deref(), Some("written elsewhere"));
    assert_eq!(external[0].working_directories, vec![setup.work()]);
    let discovered = ChatUri::default_for(&external[0].uri);
    let state = test.host.chat(&discovered).await.unwrap();
    assert_eq!(state.turns.len(), 1);
    assert_eq!(state.turns[0].user.text, "written elsewhere");
    assert_eq!(state.turns[0].response_text(), "echo: written elsewhere");
    // It goes on in Hearth.
    let (turn_id, mut subscription) = send(&test.host, &discovered, "hello from hearth").await;
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::EndTurn);
    // A second look finds nothing new.
    test.host
        .start_harness(&hearth_core::HarnessId::parse(AGENT).unwrap())
        .await
        .unwrap();
    let page = test
        .host
        .list_sessions(&SessionQuery::default())
        .await
        .unwrap();
    assert_eq!(page.sessions.len(), 2, "{page:#?}");
}
