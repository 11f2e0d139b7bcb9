//! Chat leases between hosts on one database (each host is a separate lease holder, as
//! two processes are): a second host is refused while the first answers, takes the chat
//! over once it is done — reading what the first wrote — or once the first was dropped or
//! its lease expired; running turns renew their lease; an old blob never replaces a newer
//! one another host wrote.

use std::sync::Arc;
use std::time::Duration;

use hearth_core::{
    ChatUri, Harness, HarnessData, ResourceUri, Signal, StopReason, TurnId, UserMessage, now,
};
use hearth_host::{Host, HostConfig, HostError};
use hearth_store::{LeaseHolder, Store, StoreError, Takeover};
use hearth_test_support::{
    Call, FakeAgent, TestHost, eventually, test_config, until_turn_completes,
};
use pretty_assertions::assert_eq;

fn agents(fake: &Arc<FakeAgent>) -> Vec<Arc<dyn Harness>> {
    vec![fake.clone() as Arc<dyn Harness>]
}

/// A second host (a second process) on the test host's database.
async fn second_host(test: &TestHost, fake: &Arc<FakeAgent>, config: HostConfig) -> Host {
    Host::start(test.open_store().await, agents(fake), config)
}

/// Runs a turn on `host` to the end: the answer, then the harness's new blob.
async fn answer(host: &Host, fake: &FakeAgent, chat: &ChatUri, prompt: &str, text: &str) -> TurnId {
    let mut subscription = host
        .subscribe(&ResourceUri::Chat(chat.clone()))
        .await
        .unwrap();
    let turn = host.send(chat, UserMessage::text(prompt)).await.unwrap();
    assert_eq!(fake.wait_for_send(chat).await, turn);
    fake.progress(
        chat,
        Signal::TextDelta {
            turn_id: turn.clone(),
            text: text.into(),
        },
    )
    .await;
    fake.progress(
        chat,
        Signal::ProviderDataChanged {
            provider_data: blob(text),
        },
    )
    .await;
    fake.finish_ok(chat);
    let (_, reason) = until_turn_completes(&mut subscription.receiver, &turn).await;
    assert_eq!(reason, StopReason::EndTurn);
    host.flush().await;
    turn
}

fn blob(history: &str) -> HarnessData {
    HarnessData::from_bytes(format!("{{\"history\":\"{history}\"}}").into_bytes())
}

fn leased(error: &HostError) -> &LeaseHolder {
    match error {
        HostError::Store(StoreError::Leased { holder, .. }) => holder,
        other => panic!("expected a lease refusal, got {other:?}"),
    }
}

async fn stored_blob(store: &dyn Store, chat: &ChatUri) -> Option<HarnessData> {
    store
        .chats(chat.session_ref())
        .await
        .unwrap()
        .into_iter()
        .find(|record| &record.summary.uri == chat)
        .and_then(|record| record.provider_data)
}

async fn a_second_host_is_refused_while_the_first_answers_then_builds_on_its_turn() {
    let first = FakeAgent::new("fake");
    let test = TestHost::start(agents(&first)).await;
    let session = test.session("fake").await;
    let chat = ChatUri::default_for(&session);
    let second = FakeAgent::new("fake");
    let other = second_host(&test, &second, test_config()).await;

    let mut subscription = test
        .host
        .subscribe(&ResourceUri::Chat(chat.clone()))
        .await
        .unwrap();
    let turn = test
        .host
        .send(&chat, UserMessage::text("one"))
        .await
        .unwrap();
    first.wait_for_send(&chat).await;
    // The second host reads the chat while the first answers, and may not answer in it.
    assert_eq!(other.chat(&chat).await.unwrap().turns.len(), 1);
    let error = other
        .send(&chat, UserMessage::text("two"))
        .await
        .unwrap_err();
    assert_eq!(leased(&error).pid, std::process::id());
    assert_eq!(
        error.to_string(),
        format!(
            "chat `{chat}` is answering in another Hearth process (pid {} on {}); wait for it or abort it there",
            std::process::id(),
            leased(&error).host
        )
    );
    assert!(error.is_retryable());
    // Nothing of the refused turn was stored, and the harness never saw it.
    assert_eq!(test.store.turns(&chat).await.unwrap().len(), 1);
    assert!(
        !second
            .calls()
            .iter()
            .any(|call| matches!(call, Call::Send { .. }))
    );

    fake_answer(&first, &chat, &turn, "answer one").await;
    until_turn_completes(&mut subscription.receiver, &turn).await;
    test.host.flush().await;

    // Now the second host answers, with the chat as the first left it.
    let materialized_before = materializations(&second, &chat);
    answer(&other, &second, &chat, "two", "answer two").await;
    let state = other.chat(&chat).await.unwrap();
    let answers: Vec<String> = state
        .turns
        .iter()
        .map(|turn| turn.response_text())
        .collect();
    assert_eq!(
        answers,
        vec!["answer one".to_owned(), "answer two".to_owned()]
    );
    // Its harness was handed the first host's blob before the turn.
    let materialized = materializations(&second, &chat);
    assert_eq!(materialized.len(), materialized_before.len() + 1);
    assert_eq!(materialized.last().unwrap(), &Some(blob("answer one")));
    let stored = test.store.turns(&chat).await.unwrap();
    assert_eq!(stored.len(), 2);
    assert_eq!(stored[1].response_text(), "answer two");
}

async fn fake_answer(fake: &FakeAgent, chat: &ChatUri, turn: &TurnId, text: &str) {
    fake.progress(
        chat,
        Signal::TextDelta {
            turn_id: turn.clone(),
            text: text.into(),
        },
    )
    .await;
    fake.progress(
        chat,
        Signal::ProviderDataChanged {
            provider_data: blob(text),
        },
    )
    .await;
    fake.finish_ok(chat);
}

fn materializations(fake: &FakeAgent, chat: &ChatUri) -> Vec<Option<HarnessData>> {
    fake.calls()
        .into_iter()
        .filter_map(|call| match call {
            Call::Materialize {
                chat: materialized,
                provider_data,
            } if &materialized == chat => Some(provider_data),
            _ => None,
        })
        .collect()
}

async fn a_chat_another_host_wrote_is_read_again_before_the_next_turn() {
    let first = FakeAgent::new("fake");
    let test = TestHost::start(agents(&first)).await;
    let session = test.session("fake").await;
    let chat = ChatUri::default_for(&session);
    answer(&test.host, &first, &chat, "one", "answer one").await;

    // A second host, loaded now, answers in the chat the first host still holds in memory.
    let second = FakeAgent::new("fake");
    let other = second_host(&test, &second, test_config()).await;
    answer(&other, &second, &chat, "two", "answer two").await;
    // Reading the chat alone does not reload it.
    let before = materializations(&first, &chat).len();
    assert_eq!(test.host.chat(&chat).await.unwrap().turns.len(), 1);

    let mut subscription = test
        .host
        .subscribe(&ResourceUri::Chat(chat.clone()))
        .await
        .unwrap();
    answer(&test.host, &first, &chat, "three", "answer three").await;
    let materialized = materializations(&first, &chat);
    assert_eq!(materialized.len(), before + 1);
    assert_eq!(materialized.last().unwrap(), &Some(blob("answer two")));
    let answers: Vec<String> = test
        .host
        .chat(&chat)
        .await
        .unwrap()
        .turns
        .iter()
        .map(|turn| turn.response_text())
        .collect();
    assert_eq!(answers, ["answer one", "answer two", "answer three"]);
    // Subscribers were told about the turn the other host added.
    let envelope = hearth_test_support::next_envelope(&mut subscription.receiver).await;
    assert!(
        matches!(&envelope.action, hearth_core::Action::TurnStarted { turn } if turn.response_text() == "answer two"),
        "{envelope:?}"
    );
    // A host that wrote the chat last does not read it again.
    answer(&test.host, &first, &chat, "four", "answer four").await;
    assert_eq!(materializations(&first, &chat).len(), before + 1);
}

async fn a_turn_another_host_answers_reaches_this_hosts_subscribers_as_it_goes() {
    let first = FakeAgent::new("fake");
    let test = TestHost::start(agents(&first)).await;
    let session = test.session("fake").await;
    let chat = ChatUri::default_for(&session);
    let mut watching = test
        .host
        .subscribe(&ResourceUri::Chat(chat.clone()))
        .await
        .unwrap();
    let second = FakeAgent::new("fake");
    let other = second_host(&test, &second, test_config()).await;
    let turn = other.send(&chat, UserMessage::text("go")).await.unwrap();
    assert_eq!(second.wait_for_send(&chat).await, turn);
    // What this host's subscriber has seen of the turn, built from its envelopes alone.
    let mut seen = hearth_core::ChatState {
        summary: test.host.chat(&chat).await.unwrap().summary,
        turns: Vec::new(),
        draft: None,
        queued: Vec::new(),
        agent: None,
    };
    for piece in ["Hel", "lo"] {
        second
            .progress(
                &chat,
                Signal::TextDelta {
                    turn_id: turn.clone(),
                    text: piece.into(),
                },
            )
            .await;
        // Each time the other host has stored more of the turn (every checkpoint), this
        // host is told — the database announces it, or a look finds it — and catches its
        // subscribers up.
        let wanted = if piece == "Hel" { "Hel" } else { "Hello" };
        follow_until(&test.host, &chat, &mut watching, &mut seen, |state| {
            state
                .turns
                .first()
                .is_some_and(|turn| turn.response_text() == wanted)
        })
        .await;
    }
    second.finish_ok(&chat);
    follow_until(&test.host, &chat, &mut watching, &mut seen, |state| {
        state
            .turns
            .first()
            .is_some_and(|turn| turn.stop_reason == Some(StopReason::EndTurn))
    })
    .await;
    assert_eq!(seen.turns, other.chat(&chat).await.unwrap().turns);
    assert_eq!(test.host.chat(&chat).await.unwrap().turns, seen.turns);
    assert!(
        !test.host.follow_outside_turn(&chat).await.unwrap(),
        "nothing new once the turn ended"
    );
}

/// Lets `host` follow the chat another host answers, applying what its subscriber
/// receives to `seen`, until `done` holds of it; fails after the test wait.
async fn follow_until(
    host: &Host,
    chat: &ChatUri,
    watching: &mut hearth_host::Subscription,
    seen: &mut hearth_core::ChatState,
    done: impl Fn(&hearth_core::ChatState) -> bool,
) {
    let deadline = tokio::time::Instant::now() + hearth_test_support::WAIT;
    while !done(seen) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "this host's subscriber never saw the turn get this far: {seen:?}"
        );
        host.follow_outside_turn(chat).await.unwrap();
        while let Ok(envelope) = watching.receiver.try_recv() {
            hearth_core::reduce_chat(seen, &envelope.action);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn an_old_blob_never_replaces_a_newer_one_another_host_wrote() {
    let first = FakeAgent::new("fake");
    let test = TestHost::start(agents(&first)).await;
    let session = test.session("fake").await;
    let chat = ChatUri::default_for(&session);
    answer(&test.host, &first, &chat, "one", "answer one").await;
    let second = FakeAgent::new("fake");
    let other = second_host(&test, &second, test_config()).await;
    answer(&other, &second, &chat, "two", "answer two").await;
    // The first host's harness changes its (older) blob after the fact, as a title
    // generated in the background does.
    first
        .progress(
            &chat,
            Signal::ProviderDataChanged {
                provider_data: blob("answer one, titled"),
            },
        )
        .await;
    test.host.flush().await;
    assert_eq!(
        stored_blob(test.store.as_ref(), &chat).await,
        Some(blob("answer two"))
    );
    // With nobody else in between, a later change is stored.
    second
        .progress(
            &chat,
            Signal::ProviderDataChanged {
                provider_data: blob("answer two, titled"),
            },
        )
        .await;
    other.flush().await;
    assert_eq!(
        stored_blob(test.store.as_ref(), &chat).await,
        Some(blob("answer two, titled"))
    );
}

async fn the_lease_of_a_host_dropped_mid_turn_is_taken_over() {
    let first = FakeAgent::new("fake");
    let test = TestHost::start(agents(&first)).await;
    let session = test.session("fake").await;
    let chat = ChatUri::default_for(&session);
    test.host
        .send(&chat, UserMessage::text("one"))
        .await
        .unwrap();
    first.wait_for_send(&chat).await;
    let second = FakeAgent::new("fake");
    let other = second_host(&test, &second, test_config()).await;
    other.chat(&chat).await.unwrap();
    leased(
        &other
            .send(&chat, UserMessage::text("two"))
            .await
            .unwrap_err(),
    );
    // The first host goes away without shutting down, as a process that crashed.
    let TestHost {
        host, dir, store, ..
    } = test;
    drop(host);
    answer(&other, &second, &chat, "two", "answer two").await;
    let stored = store.turns(&chat).await.unwrap();
    assert_eq!(stored.len(), 2);
    assert_eq!(stored[0].stop_reason, None);
    assert_eq!(stored[1].response_text(), "answer two");
    drop(dir);
}

async fn a_lease_from_another_machine_is_refused_until_it_expires() {
    let fake = FakeAgent::new("fake");
    let test = TestHost::start(agents(&fake)).await;
    let session = test.session("fake").await;
    let chat = ChatUri::default_for(&session);
    let elsewhere = LeaseHolder {
        instance: "another-machine".into(),
        pid: 4242,
        host: "elsewhere.example".into(),
    };
    test.store
        .take_lease(&chat, &elsewhere, Duration::from_secs(60), &Takeover::Ended)
        .await
        .unwrap();
    let error = test
        .host
        .send(&chat, UserMessage::text("hi"))
        .await
        .unwrap_err();
    assert_eq!(leased(&error), &elsewhere);
    assert!(
        error
            .to_string()
            .contains("is answering in another Hearth process (pid 4242 on elsewhere.example)"),
        "{error}"
    );
    // The refusal leaves the chat idle here: asking again is refused the same way, not as
    // a turn already running.
    let again = test
        .host
        .send(&chat, UserMessage::text("hi"))
        .await
        .unwrap_err();
    assert_eq!(leased(&again), &elsewhere);
    assert_eq!(test.store.turns(&chat).await.unwrap().len(), 0);
    // That process stopped without releasing it: once its lease expires, it is taken.
    test.store
        .take_lease(&chat, &elsewhere, Duration::ZERO, &Takeover::Ended)
        .await
        .unwrap();
    answer(&test.host, &fake, &chat, "hi", "hello").await;
    let leases = test.store.leases(&session).await.unwrap();
    assert_eq!(leases.len(), 1);
    assert_ne!(leases[0].holder, elsewhere);
    assert!(!leases[0].is_live(now()), "released after the turn");
}

async fn a_running_turn_renews_its_lease() {
    let fake = FakeAgent::new("fake");
    let config = HostConfig {
        // Renewed every 2 s: long enough that a busy machine, slow to renew, does not
        // let the lease lapse before another host is refused below.
        lease_ttl: Duration::from_secs(6),
        ..test_config()
    };
    let test = TestHost::start_with(agents(&fake), config).await;
    let session = test.session("fake").await;
    let chat = ChatUri::default_for(&session);
    test.host
        .send(&chat, UserMessage::text("long"))
        .await
        .unwrap();
    fake.wait_for_send(&chat).await;
    let first = test.store.leases(&session).await.unwrap()[0].expires_at;
    // Renewed while the turn runs: its end moves on (waited on, bounded).
    let store = test.store.clone();
    let session_uri = session.clone();
    let deadline = tokio::time::Instant::now() + hearth_test_support::WAIT;
    loop {
        let lease = store.leases(&session_uri).await.unwrap().remove(0);
        if lease.expires_at > first {
            assert!(lease.is_live(now()));
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the lease was never renewed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // So another host is still refused.
    let second = FakeAgent::new("fake");
    let other = second_host(&test, &second, test_config()).await;
    other.chat(&chat).await.unwrap();
    leased(
        &other
            .send(&chat, UserMessage::text("me too"))
            .await
            .unwrap_err(),
    );
    fake.finish_ok(&chat);
    eventually("the turn to end", || {
        test.host.active_chats(&session).is_empty()
    })
    .await;
}

hearth_test_support::on_every_backend!(
    a_turn_another_host_answers_reaches_this_hosts_subscribers_as_it_goes,
    a_second_host_is_refused_while_the_first_answers_then_builds_on_its_turn,
    a_chat_another_host_wrote_is_read_again_before_the_next_turn,
    an_old_blob_never_replaces_a_newer_one_another_host_wrote,
    the_lease_of_a_host_dropped_mid_turn_is_taken_over,
    a_lease_from_another_machine_is_refused_until_it_expires,
    a_running_turn_renews_its_lease,
    asks_reach_the_host_answering_the_chat,
);

/// A stop and a permission answer asked of a host that does not run the chat's turn
/// reach the host that does (PostgreSQL carries the ask; the test plays `hearth serve`,
/// which hands each ask it hears to its host). SQLite carries no asks: the other host
/// says there is nothing to stop or answer.
async fn asks_reach_the_host_answering_the_chat() {
    let first = FakeAgent::new("fake");
    let test = TestHost::start(agents(&first)).await;
    let session = test.session("fake").await;
    let chat = ChatUri::default_for(&session);
    let second = FakeAgent::new("fake");
    let other = second_host(&test, &second, test_config()).await;
    let mut heard = test.stores().changes().await.unwrap();
    let mut watching = test
        .host
        .subscribe(&ResourceUri::Chat(chat.clone()))
        .await
        .unwrap();
    let turn = test
        .host
        .send(&chat, UserMessage::text("go"))
        .await
        .unwrap();
    assert_eq!(first.wait_for_send(&chat).await, turn);
    first
        .progress(
            &chat,
            Signal::PermissionRequested {
                turn_id: turn.clone(),
                request_id: "r1".into(),
                title: "run it?".into(),
                options: vec![hearth_core::PermissionOption {
                    id: "allow".into(),
                    label: "Allow".into(),
                    kind: Some(hearth_core::PermissionOptionKind::AllowOnce),
                }],
                tool_call_id: None,
            },
        )
        .await;
    let answer = hearth_core::PermissionAnswer {
        option_id: "allow".into(),
        via: "server".into(),
    };
    let answered = other.respond_permission(&chat, "r1", &answer).await;
    let Some(heard) = heard.as_mut() else {
        assert!(
            matches!(answered, Err(HostError::NotFound { .. })),
            "{answered:?}"
        );
        assert!(!other.abort(&chat).await.unwrap(), "nothing to stop here");
        return;
    };
    answered.unwrap();
    assert!(other.abort(&chat).await.unwrap(), "the stop was passed on");
    // What the first host hears, it acts on: the answer, then the stop.
    let mut asks = Vec::new();
    while asks.len() < 2 {
        let change = tokio::time::timeout(hearth_test_support::WAIT, heard.recv())
            .await
            .expect("the asks arrive")
            .expect("the feed stays open");
        if let hearth_store::Change::Asked(ask) = change {
            test.host.take_ask(&ask).await.unwrap();
            asks.push(ask);
        }
    }
    assert!(first.calls().contains(&Call::RespondPermission(
        chat.clone(),
        "r1".into(),
        "allow".into()
    )));
    let (_, stop) = until_turn_completes(&mut watching.receiver, &turn).await;
    assert_eq!(stop, StopReason::Aborted);
    // The second host heard the same asks and left them: it runs no turn of the chat.
    assert!(
        second
            .calls()
            .iter()
            .all(|call| !matches!(call, Call::RespondPermission(..)))
    );
}
