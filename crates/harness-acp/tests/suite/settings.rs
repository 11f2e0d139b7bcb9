//! A chat's settings on the agent: the chosen model and mode reach the agent, are set
//! again after the agent restarts (the test agent then comes back on its defaults, as
//! real agents do), and a choice the agent no longer offers is dropped without failing
//! the turn; the usage a turn reports follows the ACP schema (tokens from the answer,
//! the context window and cost from `usage_update`).

use hearth_core::{Action, ChatUri, Cost, StopReason, Usage};
use hearth_test_support::TestHost;
use pretty_assertions::assert_eq;

use super::support::{Setup, finish, last_answer, send, session};

/// The test agent forgets a session's model and mode when it reopens it.
const REOPEN_DEFAULTS: (&str, &str) = ("HEARTH_TEST_AGENT_REOPEN_DEFAULTS", "1");

/// Asks the agent which model and mode the chat's session is on.
async fn agent_settings(host: &hearth_host::Host, chat: &ChatUri) -> String {
    let (turn_id, mut subscription) = send(host, chat, "/settings").await;
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::EndTurn);
    last_answer(host, chat).await
}

/// The current model and mode the chat's agent state shows.
async fn shown_settings(host: &hearth_host::Host, chat: &ChatUri) -> (String, String) {
    let agent = host
        .chat(chat)
        .await
        .unwrap()
        .agent
        .expect("an agent state");
    (
        agent.models.expect("models").current,
        agent.modes.expect("modes").current,
    )
}

/// Waits until the chat's agent state shows `model` and `mode` (the host takes the
/// harness's report of it on its own time); fails after a deadline with what it shows.
async fn until_shown(host: &hearth_host::Host, chat: &ChatUri, model: &str, mode: &str) {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let shown = shown_settings(host, chat).await;
        if shown == (model.to_owned(), mode.to_owned()) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the chat's agent state shows {shown:?}, not ({model:?}, {mode:?})"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_chosen_model_and_mode_are_set_again_after_the_agent_restarts() {
    let setup = Setup::with_env(&[REOPEN_DEFAULTS]);
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    test.host
        .set_model(&chat, "test-large".into())
        .await
        .unwrap();
    test.host.set_mode(&chat, "code".into()).await.unwrap();
    assert_eq!(
        agent_settings(&test.host, &chat).await,
        "model test-large mode code"
    );

    let test = test.restart(setup.agents()).await;
    // Without setting them again the agent would answer `model test-small mode ask`.
    assert_eq!(
        agent_settings(&test.host, &chat).await,
        "model test-large mode code"
    );
    until_shown(&test.host, &chat, "test-large", "code").await;
}

#[tokio::test]
async fn a_chat_revived_in_a_new_session_keeps_its_chosen_model_and_mode() {
    let setup = Setup::new();
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    test.host
        .set_model(&chat, "test-large".into())
        .await
        .unwrap();
    test.host.set_mode(&chat, "code".into()).await.unwrap();
    assert_eq!(
        agent_settings(&test.host, &chat).await,
        "model test-large mode code"
    );
    // The agent loses every session it had: the chat goes on in a new one.
    let state = setup
        .env
        .iter()
        .find(|(name, _)| name == "HEARTH_TEST_AGENT_STATE")
        .map(|(_, value)| std::path::PathBuf::from(value))
        .unwrap();
    let test = test.restart(setup.agents()).await;
    for entry in std::fs::read_dir(&state).unwrap() {
        std::fs::remove_file(entry.unwrap().path()).unwrap();
    }
    // The first prompt carries the chat's history to the new session; the next one is
    // the agent's to answer.
    let revived = agent_settings(&test.host, &chat).await;
    assert!(revived.contains("<conversation_so_far>"), "{revived}");
    assert_eq!(
        agent_settings(&test.host, &chat).await,
        "model test-large mode code"
    );
}

#[tokio::test]
async fn a_fork_and_a_side_chat_go_on_with_the_model_and_mode_their_source_chose() {
    let setup = Setup::new();
    let test = TestHost::start(setup.agents()).await;
    let session = session(&test.host, &setup.work()).await;
    let chat = ChatUri::default_for(&session);
    test.host
        .set_model(&chat, "test-large".into())
        .await
        .unwrap();
    test.host.set_mode(&chat, "code".into()).await.unwrap();
    let (first, mut subscription) = send(&test.host, &chat, "hello").await;
    finish(&mut subscription, &first).await;
    // An earlier turn than the last: a new session of the agent, not its own fork.
    let (_, mut subscription) = send(&test.host, &chat, "and more").await;
    let last = test.host.chat(&chat).await.unwrap().turns[1].id.clone();
    finish(&mut subscription, &last).await;
    for seed in [
        hearth_core::ChatSeed::Fork {
            source_chat: chat.clone(),
            turn_id: first.clone(),
        },
        hearth_core::ChatSeed::SideChat {
            source_chat: chat.clone(),
            turn_id: first.clone(),
        },
    ] {
        let peer = test.host.create_chat(&session, seed).await.unwrap();
        // The first prompt hands the history over; the next is the agent's to answer.
        agent_settings(&test.host, &peer).await;
        assert_eq!(
            agent_settings(&test.host, &peer).await,
            "model test-large mode code"
        );
    }
}

#[tokio::test]
async fn an_unchosen_chat_stays_on_what_the_agent_reopens_it_with() {
    // The control: the test agent does come back on its defaults.
    let setup = Setup::with_env(&[REOPEN_DEFAULTS]);
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    assert_eq!(
        agent_settings(&test.host, &chat).await,
        "model test-small mode ask"
    );
    let test = test.restart(setup.agents()).await;
    assert_eq!(
        agent_settings(&test.host, &chat).await,
        "model test-small mode ask"
    );
}

#[tokio::test]
async fn a_model_the_agent_no_longer_offers_is_dropped_and_the_chat_goes_on() {
    let mut setup = Setup::with_env(&[REOPEN_DEFAULTS]);
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    test.host
        .set_model(&chat, "test-large".into())
        .await
        .unwrap();
    test.host.set_mode(&chat, "code".into()).await.unwrap();

    setup
        .env
        .push(("HEARTH_TEST_AGENT_MODELS".into(), "test-small".into()));
    let test = test.restart(setup.agents()).await;
    // The turn runs on the model the agent has; the mode it still offers is set again.
    assert_eq!(
        agent_settings(&test.host, &chat).await,
        "model test-small mode code"
    );
    until_shown(&test.host, &chat, "test-small", "code").await;
}

#[tokio::test]
async fn a_mode_the_agent_does_not_offer_is_refused_by_name() {
    let setup = Setup::new();
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    let error = test
        .host
        .set_mode(&chat, "yolo".into())
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("no mode `yolo`"), "{error}");
    assert!(error.contains("ask, code"), "{error}");
    assert_eq!(shown_settings(&test.host, &chat).await.1, "ask");
}

#[tokio::test]
async fn a_mode_switch_shows_in_the_chats_agent_state() {
    let setup = Setup::new();
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    test.host.set_mode(&chat, "code".into()).await.unwrap();
    until_shown(&test.host, &chat, "test-small", "code").await;
    assert_eq!(
        agent_settings(&test.host, &chat).await,
        "model test-small mode code"
    );
}

#[tokio::test]
async fn usage_maps_tokens_the_context_window_and_cost() {
    let setup = Setup::new();
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    let (turn_id, mut subscription) = send(&test.host, &chat, "/usage").await;
    let (envelopes, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::EndTurn);
    let window = Usage {
        context_used: Some(1234),
        context_size: Some(200_000),
        cost: Cost::new(0.01, "USD"),
        ..Usage::default()
    };
    // The `usage_update` is the window and the cost, never input tokens.
    let updates: Vec<Usage> = envelopes
        .into_iter()
        .filter_map(|envelope| match envelope.action {
            Action::UsageUpdated { usage, .. } => Some(usage),
            _ => None,
        })
        .collect();
    assert_eq!(updates, vec![window.clone()]);
    // The turn ends with the answer's token counts joined to that window.
    let state = test.host.chat(&chat).await.unwrap();
    assert_eq!(
        state.turns[0].usage,
        Some(Usage {
            input_tokens: 100,
            output_tokens: 20,
            cached_input_tokens: 60,
            reasoning_tokens: 5,
            ..window
        })
    );
}
