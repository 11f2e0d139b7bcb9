//! Restore and discovery: after a restart a chat reopens with `session/load`, or, when
//! the agent refuses or cannot reopen its session, goes on in a new session that gets
//! the chat's transcript, with a notice; the agent's own
//! conversations join as external sessions with their history; the sessions that back
//! Hearth's chats never do.

use hearth_core::{ChatSeed, ChatUri, Provenance, ResponsePart, StopReason};
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

/// The notices of a chat's turn `index`.
async fn notices_of(host: &hearth_host::Host, chat: &ChatUri, index: usize) -> Vec<String> {
    let state = host.chat(chat).await.unwrap();
    state.turns[index]
        .parts
        .iter()
        .filter_map(|part| match part {
            ResponsePart::Notice { message } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

/// How the last reopening of a session went, as recorded for `agents list`.
fn last_reopen(setup: &Setup) -> serde_json::Value {
    let file = setup
        .data
        .path()
        .join(format!("agent-reopens/{AGENT}.json"));
    serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap()
}

/// Removes the agent's record of every session, as an agent that loses its sessions on
/// a restart does.
fn forget_every_session(setup: &Setup) {
    for entry in std::fs::read_dir(setup._state.path()).unwrap() {
        std::fs::remove_file(entry.unwrap().path()).unwrap();
    }
}

#[tokio::test]
async fn a_chat_with_no_turn_goes_on_after_a_restart_though_the_agent_never_saved_it() {
    // Like Codex and the Claude agents: a session is saved with its first turn.
    let setup = Setup::with_env(&[("HEARTH_TEST_AGENT_SAVE", "with-first-turn")]);
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    let test = test.restart(setup.agents()).await;
    let (turn_id, mut subscription) = send(&test.host, &chat, "hello").await;
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::EndTurn);
    // Nothing to hand over: the prompt goes as it is.
    assert_eq!(last_answer(&test.host, &chat).await, "echo: hello");
    let notices = notices_of(&test.host, &chat, 0).await;
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].contains("goes on in a new session"),
        "{notices:?}"
    );
    assert_eq!(last_reopen(&setup)["reopened"], false);
    // The new session is the chat's now: it reopens after another restart.
    let test = test.restart(setup.agents()).await;
    let (turn_id, mut subscription) = send(&test.host, &chat, "again").await;
    finish(&mut subscription, &turn_id).await;
    assert_eq!(last_answer(&test.host, &chat).await, "echo: again");
    assert!(notices_of(&test.host, &chat, 1).await.is_empty());
    assert_eq!(last_reopen(&setup)["reopened"], true);
    assert_eq!(last_reopen(&setup)["method"], "session/load");
}

#[tokio::test]
async fn a_chat_whose_session_the_agent_lost_goes_on_with_its_transcript() {
    let setup = Setup::new();
    let test = TestHost::start(setup.agents()).await;
    let session = session(&test.host, &setup.work()).await;
    let chat = ChatUri::default_for(&session);
    let (turn_id, mut subscription) = send(&test.host, &chat, "the secret word is heron").await;
    finish(&mut subscription, &turn_id).await;
    let test = test.restart(setup.agents()).await;
    forget_every_session(&setup);
    let (turn_id, mut subscription) = send(&test.host, &chat, "what was the word?").await;
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::EndTurn);
    // The test agent echoes its prompt: the new session got the earlier turn, both
    // sides, before the user's message.
    let answer = last_answer(&test.host, &chat).await;
    assert!(
        answer.starts_with("echo: <conversation_so_far>"),
        "{answer}"
    );
    assert!(answer.contains("the secret word is heron"), "{answer}");
    assert!(
        answer.contains("echo: the secret word is heron"),
        "{answer}"
    );
    assert!(answer.ends_with("what was the word?"), "{answer}");
    let notices = notices_of(&test.host, &chat, 1).await;
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(notices[0].contains("could not reopen"), "{notices:?}");
    assert!(notices[0].contains("not found"), "{notices:?}");
    assert!(
        notices[0].contains("gets this chat's history"),
        "{notices:?}"
    );
    let recorded = last_reopen(&setup);
    assert_eq!(recorded["reopened"], false, "{recorded}");
    assert!(
        recorded["message"].as_str().unwrap().contains("not found"),
        "{recorded}"
    );
    // The history shown is Hearth's, unchanged.
    let state = test.host.chat(&chat).await.unwrap();
    assert_eq!(state.turns.len(), 2);
    assert_eq!(state.turns[0].user.text, "the secret word is heron");
    // The new session is what is stored: after another restart it reopens, and the
    // history is not handed over twice.
    let test = test.restart(setup.agents()).await;
    let (turn_id, mut subscription) = send(&test.host, &chat, "and now?").await;
    finish(&mut subscription, &turn_id).await;
    assert_eq!(last_answer(&test.host, &chat).await, "echo: and now?");
    assert!(notices_of(&test.host, &chat, 2).await.is_empty());
    assert_eq!(last_reopen(&setup)["reopened"], true);
}

#[tokio::test]
async fn an_agent_that_cannot_reopen_sessions_goes_on_from_the_transcript() {
    let setup = Setup::with_env(&[("HEARTH_TEST_AGENT_CAPS", "none")]);
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    let (turn_id, mut subscription) = send(&test.host, &chat, "first").await;
    finish(&mut subscription, &turn_id).await;
    let test = test.restart(setup.agents()).await;
    assert_eq!(last_answer(&test.host, &chat).await, "echo: first");
    let (turn_id, mut subscription) = send(&test.host, &chat, "second").await;
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::EndTurn);
    let answer = last_answer(&test.host, &chat).await;
    assert!(answer.contains("<user>\nfirst\n</user>"), "{answer}");
    assert!(answer.contains("echo: first"), "{answer}");
    assert!(answer.ends_with("second"), "{answer}");
    let notices = notices_of(&test.host, &chat, 1).await;
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].contains("offers neither session/load nor session/resume"),
        "{notices:?}"
    );
    // Nothing was tried, so nothing is recorded as refused.
    assert!(
        !setup
            .data
            .path()
            .join(format!("agent-reopens/{AGENT}.json"))
            .exists()
    );
    // The next prompt in the same run goes to the new session as it is.
    let (turn_id, mut subscription) = send(&test.host, &chat, "third").await;
    finish(&mut subscription, &turn_id).await;
    assert_eq!(last_answer(&test.host, &chat).await, "echo: third");
}

#[tokio::test]
async fn a_fork_and_a_side_chat_never_used_go_on_after_a_restart() {
    // The agent forks sessions itself, and saves a session with its first turn: a fork
    // never used is gone after a restart.
    let setup = Setup::with_env(&[("HEARTH_TEST_AGENT_SAVE", "with-first-turn")]);
    let test = TestHost::start(setup.agents()).await;
    let session = session(&test.host, &setup.work()).await;
    let chat = ChatUri::default_for(&session);
    let (first, mut subscription) = send(&test.host, &chat, "the secret word is heron").await;
    finish(&mut subscription, &first).await;
    let fork = test
        .host
        .create_chat(
            &session,
            ChatSeed::Fork {
                source_chat: chat.clone(),
                turn_id: first.clone(),
            },
        )
        .await
        .unwrap();
    let aside = test
        .host
        .create_chat(
            &session,
            ChatSeed::SideChat {
                source_chat: chat.clone(),
                turn_id: first,
            },
        )
        .await
        .unwrap();
    let test = test.restart(setup.agents()).await;
    let (turn_id, mut subscription) = send(&test.host, &fork, "what was the word?").await;
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::EndTurn);
    let answer = last_answer(&test.host, &fork).await;
    assert!(answer.contains("<conversation_so_far>"), "{answer}");
    assert!(answer.contains("the secret word is heron"), "{answer}");
    assert!(answer.ends_with("what was the word?"), "{answer}");
    assert_eq!(notices_of(&test.host, &fork, 1).await.len(), 1);
    let (turn_id, mut subscription) = send(&test.host, &aside, "by the way?").await;
    finish(&mut subscription, &turn_id).await;
    let answer = last_answer(&test.host, &aside).await;
    assert!(answer.contains("<background_conversation>"), "{answer}");
    assert!(answer.contains("the secret word is heron"), "{answer}");
    // The source chat had its turn: its session reopens as it was.
    let (turn_id, mut subscription) = send(&test.host, &chat, "still there?").await;
    finish(&mut subscription, &turn_id).await;
    assert_eq!(last_answer(&test.host, &chat).await, "echo: still there?");
    assert!(notices_of(&test.host, &chat, 1).await.is_empty());
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
