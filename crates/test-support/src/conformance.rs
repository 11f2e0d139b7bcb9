//! The behaviours every harness must show through the real host: create, send and
//! stream, abort mid-stream, fork, side chat, restore after a restart, dispose, metadata.
//! Written once; run against any [`Harness`] with [`conformance_suite!`](crate::conformance_suite).

use std::sync::Arc;

use hearth_core::{
    Action, ChatOrigin, ChatSeed, ChatUri, Harness, Mirror, Provenance, ResourceState, ResourceUri,
    StopReason, TurnId, UserMessage,
};
use hearth_host::{Host, HostError};
use hearth_store::SessionQuery;

use crate::test_host::{TestHost, next_envelope, until_turn_completes};

/// A harness under test.
pub trait ConformanceSubject: Send + Sync {
    /// A fresh harness instance; called again after a simulated restart.
    fn agent(&self) -> Arc<dyn Harness>;
    /// The harness's provider id.
    fn provider(&self) -> String;
    /// A prompt the harness answers quickly with at least two text deltas.
    fn quick_prompt(&self) -> UserMessage;
    /// A prompt the harness answers slowly (a second or more) with many text deltas.
    fn slow_prompt(&self) -> UserMessage;
}

/// Sends a prompt and waits for the turn; returns the turn id, envelopes and stop reason.
pub async fn run_turn(
    host: &Host,
    chat: &ChatUri,
    prompt: UserMessage,
) -> (TurnId, Vec<hearth_core::Envelope>, StopReason) {
    let (turn_id, mut subscription) = host
        .send_streaming(chat, prompt)
        .await
        .unwrap_or_else(|error| panic!("send: {error}"));
    let (envelopes, reason) = until_turn_completes(&mut subscription.receiver, &turn_id).await;
    (turn_id, envelopes, reason)
}

fn agents(subject: &dyn ConformanceSubject) -> Vec<Arc<dyn Harness>> {
    vec![subject.agent()]
}

/// Creating a session registers it with its default chat and a stored blob.
pub async fn create(subject: &dyn ConformanceSubject) {
    let test = TestHost::start(agents(subject)).await;
    let session = test.session(&subject.provider()).await;
    let page = test
        .host
        .list_sessions(&SessionQuery::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let listed = page
        .sessions
        .iter()
        .find(|s| s.uri == session)
        .unwrap_or_else(|| panic!("not listed"));
    assert_eq!(listed.provenance, Provenance::Hearth);
    let state = test
        .host
        .session(&session)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(state.chats.len(), 1);
    assert_eq!(state.chats[0].summary.uri, ChatUri::default_for(&session));
    assert_eq!(state.chats[0].summary.origin, ChatOrigin::User);
    let chat = test
        .host
        .chat(&ChatUri::default_for(&session))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(chat.turns.is_empty());
    let records = test
        .store
        .chats(&session)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        records[0].provider_data.is_some(),
        "the harness returned no provider data"
    );
}

/// A turn streams several text deltas and ends normally; clients that fold the
/// envelopes into the snapshot see exactly the host's state, and the store holds it.
pub async fn send_and_stream(subject: &dyn ConformanceSubject) {
    let test = TestHost::start(agents(subject)).await;
    let session = test.session(&subject.provider()).await;
    let chat = ChatUri::default_for(&session);
    let resource = ResourceUri::Chat(chat.clone());
    let mut client = test
        .host
        .subscribe(&resource)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut mirror = Mirror::new(client.snapshot.clone());
    let (turn_id, envelopes, reason) = run_turn(&test.host, &chat, subject.quick_prompt()).await;
    assert_eq!(reason, StopReason::EndTurn);
    let deltas = envelopes
        .iter()
        .filter(|e| matches!(e.action, Action::TextDelta { .. }))
        .count();
    assert!(
        deltas >= 2,
        "expected a streamed answer, got {deltas} text deltas"
    );
    assert!(matches!(
        envelopes.first().map(|e| &e.action),
        Some(Action::TurnStarted { .. })
    ));
    loop {
        let envelope = next_envelope(&mut client.receiver).await;
        mirror
            .apply(&envelope)
            .unwrap_or_else(|gap| panic!("{gap}"));
        if matches!(&envelope.action, Action::TurnCompleted { turn_id: id, .. } if id == &turn_id) {
            break;
        }
    }
    let state = test
        .host
        .chat(&chat)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(mirror.snapshot.state, ResourceState::Chat(state.clone()));
    assert!(!state.turns[0].response_text().is_empty());
    test.host.flush().await;
    let stored = test
        .store
        .turns(&chat)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(stored, state.turns);
}

/// Aborting mid-stream ends the turn as aborted, keeps what streamed, and leaves the
/// chat ready for the next turn.
pub async fn abort_mid_stream(subject: &dyn ConformanceSubject) {
    let test = TestHost::start(agents(subject)).await;
    let session = test.session(&subject.provider()).await;
    let chat = ChatUri::default_for(&session);
    let (turn_id, mut subscription) = test
        .host
        .send_streaming(&chat, subject.slow_prompt())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    loop {
        let envelope = next_envelope(&mut subscription.receiver).await;
        if matches!(envelope.action, Action::TextDelta { .. }) {
            break;
        }
        assert!(
            !matches!(envelope.action, Action::TurnCompleted { .. }),
            "finished before any text"
        );
    }
    assert!(
        test.host
            .abort(&chat)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    );
    let (_, reason) = until_turn_completes(&mut subscription.receiver, &turn_id).await;
    assert_eq!(reason, StopReason::Aborted);
    let state = test
        .host
        .chat(&chat)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let partial = state.turns[0].response_text();
    assert!(!partial.is_empty(), "the streamed text was lost");
    test.host.flush().await;
    let stored = test
        .store
        .turns(&chat)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(stored[0].stop_reason, Some(StopReason::Aborted));
    assert_eq!(stored[0].response_text(), partial);
    let (_, _, reason) = run_turn(&test.host, &chat, subject.quick_prompt()).await;
    assert_eq!(reason, StopReason::EndTurn);
}

/// Forking at a turn copies the history through it; both chats go on independently.
pub async fn fork(subject: &dyn ConformanceSubject) {
    let test = TestHost::start(agents(subject)).await;
    let session = test.session(&subject.provider()).await;
    let chat = ChatUri::default_for(&session);
    let (first, _, _) = run_turn(&test.host, &chat, subject.quick_prompt()).await;
    run_turn(&test.host, &chat, subject.quick_prompt()).await;
    let seed = ChatSeed::Fork {
        source_chat: chat.clone(),
        turn_id: first.clone(),
    };
    if !subject.agent().descriptor().capabilities.supports_fork() {
        let error = test.host.create_chat(&session, seed).await.unwrap_err();
        assert!(matches!(error, HostError::Unsupported { .. }), "{error}");
        return;
    }
    let forked = test
        .host
        .create_chat(&session, seed)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let source = test
        .host
        .chat(&chat)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let copy = test
        .host
        .chat(&forked)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(copy.turns, source.turns[..1].to_vec());
    assert_eq!(
        copy.summary.origin,
        ChatOrigin::Fork {
            source_chat: chat.clone(),
            turn_id: first
        }
    );
    let (_, _, reason) = run_turn(&test.host, &forked, subject.quick_prompt()).await;
    assert_eq!(reason, StopReason::EndTurn);
    assert_eq!(
        test.host
            .chat(&forked)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .turns
            .len(),
        2
    );
    assert_eq!(
        test.host
            .chat(&chat)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .turns
            .len(),
        2
    );
    let context = test
        .host
        .chat_context(&forked)
        .unwrap_or_else(|e| panic!("{e}"));
    let history = subject_agent(&test, subject)
        .messages(&context)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        history.len(),
        2,
        "the harness's fork does not hold the copied history"
    );
}

fn subject_agent(test: &TestHost, subject: &dyn ConformanceSubject) -> Arc<dyn Harness> {
    let provider = subject.provider();
    test.host
        .agent(&provider)
        .unwrap_or_else(|| panic!("{provider} not registered"))
}

/// A side chat sees the source's context but copies none of its visible history.
pub async fn side_chat(subject: &dyn ConformanceSubject) {
    let test = TestHost::start(agents(subject)).await;
    let session = test.session(&subject.provider()).await;
    let chat = ChatUri::default_for(&session);
    let (first, _, _) = run_turn(&test.host, &chat, subject.quick_prompt()).await;
    let seed = ChatSeed::SideChat {
        source_chat: chat.clone(),
        turn_id: first.clone(),
    };
    if !subject
        .agent()
        .descriptor()
        .capabilities
        .supports_side_chat()
    {
        let error = test.host.create_chat(&session, seed).await.unwrap_err();
        assert!(matches!(error, HostError::Unsupported { .. }), "{error}");
        return;
    }
    let side = test
        .host
        .create_chat(&session, seed)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let state = test
        .host
        .chat(&side)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(state.turns.is_empty());
    assert_eq!(
        state.summary.origin,
        ChatOrigin::SideChat {
            source_chat: chat,
            turn_id: first
        }
    );
    let (_, _, reason) = run_turn(&test.host, &side, subject.quick_prompt()).await;
    assert_eq!(reason, StopReason::EndTurn);
}

/// After a restart with new harness instances, the session, its chats and turns are
/// back; peers resolve on first use; the conversation continues with its history.
pub async fn restore(subject: &dyn ConformanceSubject) {
    let test = TestHost::start(agents(subject)).await;
    let session = test.session(&subject.provider()).await;
    let chat = ChatUri::default_for(&session);
    run_turn(&test.host, &chat, subject.quick_prompt()).await;
    let peer = if subject
        .agent()
        .descriptor()
        .capabilities
        .supports_peer_chats()
    {
        let peer = test
            .host
            .create_chat(&session, ChatSeed::Fresh)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        run_turn(&test.host, &peer, subject.quick_prompt()).await;
        Some(peer)
    } else {
        None
    };
    let before = test
        .host
        .chat(&chat)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let test = test.restart(agents(subject)).await;
    let state = test
        .host
        .session(&session)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(state.chats.len(), if peer.is_some() { 2 } else { 1 });
    if let Some(peer) = &peer {
        assert!(
            test.host.peek_chat(peer).is_none(),
            "a peer was resolved before anyone asked"
        );
        let subscription = test
            .host
            .subscribe(&ResourceUri::Chat(peer.clone()))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let ResourceState::Chat(peer_state) = subscription.snapshot.state else {
            panic!("not a chat")
        };
        assert_eq!(peer_state.turns.len(), 1);
    }
    let after = test
        .host
        .chat(&chat)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(after.turns, before.turns);
    let (_, _, reason) = run_turn(&test.host, &chat, subject.quick_prompt()).await;
    assert_eq!(reason, StopReason::EndTurn);
    let context = test
        .host
        .chat_context(&chat)
        .unwrap_or_else(|e| panic!("{e}"));
    let history = subject_agent(&test, subject)
        .messages(&context)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(history.len(), 2, "the restored chat lost its history");
}

/// Disposing a peer removes it from the catalog and the harness; deleting the session
/// removes it from the list for good.
pub async fn dispose(subject: &dyn ConformanceSubject) {
    let test = TestHost::start(agents(subject)).await;
    let session = test.session(&subject.provider()).await;
    if subject
        .agent()
        .descriptor()
        .capabilities
        .supports_peer_chats()
    {
        let peer = test
            .host
            .create_chat(&session, ChatSeed::Fresh)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let context = test
            .host
            .chat_context(&peer)
            .unwrap_or_else(|e| panic!("{e}"));
        test.host
            .dispose_chat(&peer)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let state = test
            .host
            .session(&session)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(state.chats.len(), 1);
        assert!(test.host.chat(&peer).await.is_err());
        assert!(
            subject_agent(&test, subject)
                .messages(&context)
                .await
                .is_err(),
            "the harness kept a disposed chat"
        );
    }
    test.host
        .delete_session(&session)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let page = test
        .host
        .list_sessions(&SessionQuery::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(page.sessions.iter().all(|s| s.uri != session));
    let error = test.host.session(&session).await.unwrap_err();
    assert!(error.to_string().contains("deleted"), "{error}");
}

/// The harness reports metadata and history consistent with the turns it ran.
pub async fn metadata(subject: &dyn ConformanceSubject) {
    let test = TestHost::start(agents(subject)).await;
    let session = test.session(&subject.provider()).await;
    let chat = ChatUri::default_for(&session);
    let prompts = [subject.quick_prompt(), subject.quick_prompt()];
    for prompt in prompts.clone() {
        run_turn(&test.host, &chat, prompt).await;
    }
    let context = test
        .host
        .chat_context(&chat)
        .unwrap_or_else(|e| panic!("{e}"));
    let agent = subject_agent(&test, subject);
    let metadata = agent
        .metadata(&context)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(metadata.turn_count, 2);
    let history = agent
        .messages(&context)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let texts: Vec<_> = history.iter().map(|turn| turn.user.text.clone()).collect();
    assert_eq!(
        texts,
        prompts.iter().map(|p| p.text.clone()).collect::<Vec<_>>()
    );
}

/// Generates one test per conformance behaviour for a subject expression.
#[macro_export]
macro_rules! conformance_suite {
    ($subject:expr) => {
        mod conformance {
            #[allow(unused_imports)]
            use super::*;

            #[tokio::test]
            async fn create() {
                $crate::conformance::create(&$subject).await;
            }
            #[tokio::test]
            async fn send_and_stream() {
                $crate::conformance::send_and_stream(&$subject).await;
            }
            #[tokio::test]
            async fn abort_mid_stream() {
                $crate::conformance::abort_mid_stream(&$subject).await;
            }
            #[tokio::test]
            async fn fork() {
                $crate::conformance::fork(&$subject).await;
            }
            #[tokio::test]
            async fn side_chat() {
                $crate::conformance::side_chat(&$subject).await;
            }
            #[tokio::test]
            async fn restore() {
                $crate::conformance::restore(&$subject).await;
            }
            #[tokio::test]
            async fn dispose() {
                $crate::conformance::dispose(&$subject).await;
            }
            #[tokio::test]
            async fn metadata() {
                $crate::conformance::metadata(&$subject).await;
            }
        }
    };
}
