//! A team server: several `hearth serve` nodes, each with its own data directory, on one
//! PostgreSQL database. Every node serves every session; a turn answered on one node
//! streams to the clients of the others as it goes (as its checkpoints are stored); a node killed mid-answer loses no acknowledged turn
//! and the chat's next turn runs on another node once its lease ends; a node cut off from
//! PostgreSQL refuses writes instead of keeping them on its own.

use std::time::{Duration, Instant};

use hearth_core::{self as core, Mirror};
use hearth_protocol::{
    self as wire, ChatAbort, ChatParams, ChatQueue, ChatQueueParams, ChatSend, ChatSendParams,
    SessionCreate, SessionCreateParams, SessionList, SessionListParams, Subscribe, SubscribeParams,
    SubscribeResponse, UserMessage,
};
use hearth_server::{Client, Notifications, Notified};
use hearth_test_support::postgres::fresh_database;
use pretty_assertions::assert_eq;

use super::serve_support::{Served, WAIT, next};
use super::support::Hearth;

/// One scripted answer of 40 words, a word every 50 ms: long enough to kill a node in
/// the middle of it.
fn scenario() -> String {
    let words: Vec<String> = (1..=40).map(|n| format!("w{n}")).collect();
    format!(
        "name: team\nturns:\n  - steps:\n      - text: \"{}\"\n        stream: words\n        delay_ms: 50\n",
        words.join(" ")
    )
}

/// A node on the database at `url`, named `node` (nodes of different names count as
/// different machines: a stopped one is known only by its leases ending), whose chat
/// leases last 3 s.
fn node(url: &str, name: &str) -> Served {
    let hearth = Hearth::new();
    hearth.write("config.toml", "[server]\nlease_seconds = 3\n");
    let scenario = hearth.write("team.yaml", &scenario());
    Served::start(
        hearth,
        &["--store", url, "--scenario", scenario.to_str().unwrap()],
        &[("HEARTH_NODE", name), ("HEARTH_REPLAY_DELAY_SCALE", "1")],
    )
}

async fn new_chat(client: &Client) -> String {
    let created = client
        .call::<SessionCreate>(&SessionCreateParams {
            harness: Some("replay".into()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    created.session.chats[0].summary.uri.clone()
}

async fn mirror(client: &Client, resource: &str) -> Mirror {
    match client
        .call::<Subscribe>(&SubscribeParams {
            resource: resource.to_owned(),
            last_seq: None,
            turn_limit: None,
        })
        .await
        .unwrap()
    {
        SubscribeResponse::Snapshot { snapshot } => Mirror::new(snapshot.try_into().unwrap()),
        other => panic!("expected a snapshot, got {other:?}"),
    }
}

async fn send(client: &Client, chat: &str, text: &str) -> Result<String, String> {
    client
        .call::<ChatSend>(&ChatSendParams {
            chat: chat.to_owned(),
            message: UserMessage {
                text: text.into(),
                ..UserMessage::default()
            },
        })
        .await
        .map(|sent| sent.turn_id)
        .map_err(|error| format!("{error:#}"))
}

/// Applies envelopes to `mirror` until `until` holds of one; returns that envelope.
async fn follow(
    notes: &mut Notifications,
    mirror: &mut Mirror,
    mut until: impl FnMut(&wire::Action) -> bool,
) -> wire::Action {
    loop {
        let Notified::Envelope(envelope) = next(notes).await else {
            continue;
        };
        let action = envelope.action.clone();
        mirror
            .apply(&core::Envelope::try_from(envelope).unwrap())
            .unwrap();
        if until(&action) {
            return action;
        }
    }
}

fn completes(turn_id: &str) -> impl Fn(&wire::Action) -> bool {
    move |action| matches!(action, wire::Action::TurnCompleted { turn_id: id, .. } if id == turn_id)
}

fn chat_state(mirror: &Mirror) -> &core::ChatState {
    match &mirror.snapshot.state {
        core::ResourceState::Chat(state) => state,
        other => panic!("not a chat: {other:?}"),
    }
}

#[tokio::test]
async fn every_node_serves_the_teams_sessions_and_sees_the_answers_given_on_the_others() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let nodes = [
        node(&url, "node-a"),
        node(&url, "node-b"),
        node(&url, "node-c"),
    ];
    let (a, _a_notes) = nodes[0].client().await;
    let (b, mut b_notes) = nodes[1].client().await;
    let (c, mut c_notes) = nodes[2].client().await;

    // Node b's root subscribers hear of a session node a makes.
    let mut b_root = mirror(&b, "hearth-root:").await;
    let chat = new_chat(&a).await;
    let session = chat
        .replacen("hearth-chat:", "hearth-session:", 1)
        .rsplit_once('/')
        .unwrap()
        .0
        .to_owned();
    let added = follow(&mut b_notes, &mut b_root, |action| {
        matches!(action, wire::Action::SessionAdded { .. })
    })
    .await;
    let wire::Action::SessionAdded { summary } = added else {
        unreachable!()
    };
    assert_eq!(summary.uri, session);

    // A turn sent on node c, followed on c and, as it streams, on b.
    let mut on_b = mirror(&b, &chat).await;
    let mut on_c = mirror(&c, &chat).await;
    let turn = send(&c, &chat, "first").await.unwrap();
    follow(&mut c_notes, &mut on_c, completes(&turn)).await;
    let mut streamed_to_b = 0;
    follow(&mut b_notes, &mut on_b, |action| {
        if matches!(action, wire::Action::TextDelta { .. }) {
            streamed_to_b += 1;
        }
        completes(&turn)(action)
    })
    .await;
    assert!(
        streamed_to_b > 1,
        "node b's client saw the answer as it went, not only its end: {streamed_to_b} deltas"
    );
    assert_eq!(chat_state(&on_b).turns, chat_state(&on_c).turns);
    assert!(
        chat_state(&on_b).turns[0].response_text().ends_with("w40"),
        "{:?}",
        chat_state(&on_b).turns[0]
    );

    // Every node lists the session.
    for (index, node) in nodes.iter().enumerate() {
        let (client, _) = node.client().await;
        let listed = client
            .call::<SessionList>(&SessionListParams::default())
            .await
            .unwrap();
        assert!(
            listed.sessions.iter().any(|listed| listed.uri == session),
            "node {index}: {listed:?}"
        );
    }
}

#[tokio::test]
async fn a_node_killed_mid_answer_loses_no_acknowledged_turn_and_the_next_runs_on_another() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let mut doomed = node(&url, "node-a");
    let survivor = node(&url, "node-b");
    let (a, mut a_notes) = doomed.client().await;
    let chat = new_chat(&a).await;
    let mut on_a = mirror(&a, &chat).await;
    let first = send(&a, &chat, "doomed").await.unwrap();
    // Half a second of the answer streamed: checkpoints (every 200 ms) stored some of it.
    let mut deltas = 0;
    follow(&mut a_notes, &mut on_a, |action| {
        if matches!(action, wire::Action::TextDelta { .. }) {
            deltas += 1;
        }
        deltas >= 10
    })
    .await;
    doomed.child.kill().unwrap();
    doomed.child.wait().unwrap();
    let killed = Instant::now();

    // On node b the chat takes a turn once node a's lease ended (3 s): until then the
    // send is refused, saying another process answers.
    let (b, mut b_notes) = survivor.client().await;
    let mut on_b = mirror(&b, &chat).await;
    let second = loop {
        match send(&b, &chat, "next").await {
            Ok(turn) => break turn,
            Err(error) => {
                assert!(
                    error.contains("answering in another Hearth process"),
                    "{error}"
                );
                assert!(
                    killed.elapsed() < WAIT,
                    "no node took the chat over: {error}"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    eprintln!(
        "fail-over: the next turn was accepted {} ms after the node was killed",
        killed.elapsed().as_millis()
    );
    follow(&mut b_notes, &mut on_b, completes(&second)).await;
    let turns = &chat_state(&on_b).turns;
    assert_eq!(turns.len(), 2, "{turns:?}");
    assert_eq!(turns[0].id.as_str(), first);
    assert_eq!(turns[0].user.text, "doomed");
    let partial = turns[0].response_text();
    assert!(
        partial.starts_with("w1") && !partial.ends_with("w40"),
        "the partial answer is kept as it was checkpointed: {partial:?}"
    );
    assert_eq!(turns[0].stop_reason, Some(core::StopReason::Incomplete));
    assert_eq!(turns[1].id.as_str(), second);
    assert!(turns[1].response_text().ends_with("w40"));
}

#[tokio::test]
async fn a_node_cut_off_from_postgres_refuses_writes_saying_why() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let served = node(&url, "node-a");
    let (client, _notes) = served.client().await;
    let chat = new_chat(&client).await;
    // The database drops the node: every connection of this database is ended, and
    // new ones are refused.
    let database = url.rsplit_once('/').unwrap().1.to_owned();
    let admin = std::env::var(hearth_test_support::postgres::SERVER_VARIABLE).unwrap();
    let mut connection = <sqlx::PgConnection as sqlx::Connection>::connect(&admin)
        .await
        .unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "ALTER DATABASE {database} WITH ALLOW_CONNECTIONS false"
    )))
    .execute(&mut connection)
    .await
    .unwrap();
    sqlx::query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1")
        .bind(&database)
        .execute(&mut connection)
        .await
        .unwrap();
    let error = send(&client, &chat, "lost?").await.unwrap_err();
    assert!(
        error.contains("cannot be reached")
            || error.contains("not currently accepting connections"),
        "{error}"
    );
    // Once the database is back, the chat takes the turn, and nothing was stored meanwhile.
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "ALTER DATABASE {database} WITH ALLOW_CONNECTIONS true"
    )))
    .execute(&mut connection)
    .await
    .unwrap();
    let (fresh, mut notes) = served.client().await;
    let mut on_node = mirror(&fresh, &chat).await;
    assert_eq!(chat_state(&on_node).turns, []);
    let turn = send(&fresh, &chat, "back").await.unwrap();
    follow(&mut notes, &mut on_node, completes(&turn)).await;
    assert_eq!(chat_state(&on_node).turns.len(), 1);
}

/// Clients per node in the many-clients test, and the chats they follow.
const CLIENTS: usize = 200;
const CHATS: usize = 4;
const TURNS: usize = 2;

/// Follows `chat` until it holds [`TURNS`] ended turns: every envelope applied in order
/// (a gap fails), no resync. Returns the chat's turns.
async fn follow_to_the_end(
    client: Client,
    mut notes: Notifications,
    chat: String,
    subscribed: tokio::sync::oneshot::Sender<()>,
) -> Vec<core::Turn> {
    let mut mirror = mirror(&client, &chat).await;
    let _ = subscribed.send(());
    loop {
        let state = chat_state(&mirror);
        if state.turns.len() == TURNS && state.turns.iter().all(|turn| turn.stop_reason.is_some()) {
            let turns = state.turns.clone();
            client.close().await;
            return turns;
        }
        match next(&mut notes).await {
            Notified::Envelope(envelope) => mirror
                .apply(&core::Envelope::try_from(envelope).unwrap())
                .unwrap_or_else(|gap| panic!("a client of {chat} missed an envelope: {gap:?}")),
            Notified::Resync(resync) => panic!("a client of {chat} fell behind: {resync:?}"),
            _ => {}
        }
    }
}

#[tokio::test]
async fn two_hundred_clients_over_three_nodes_each_see_every_turn_of_the_chat_they_follow() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let nodes = [
        node(&url, "node-a"),
        node(&url, "node-b"),
        node(&url, "node-c"),
    ];
    let (first, _) = nodes[0].client().await;
    let mut chats = Vec::new();
    for _ in 0..CHATS {
        chats.push(new_chat(&first).await);
    }
    // Every client subscribed before the first turn is sent.
    let mut followers = Vec::new();
    for index in 0..CLIENTS {
        let (client, notes) = nodes[index % nodes.len()].client().await;
        let chat = chats[index % CHATS].clone();
        let (ready, subscribed) = tokio::sync::oneshot::channel();
        followers.push(tokio::spawn(follow_to_the_end(client, notes, chat, ready)));
        subscribed.await.unwrap();
    }
    // Each chat's turns are sent one after the other, each from another node.
    let mut senders = Vec::new();
    for (index, chat) in chats.iter().enumerate() {
        let chat = chat.clone();
        let clients = [
            nodes[index % 3].client().await,
            nodes[(index + 1) % 3].client().await,
        ];
        senders.push(tokio::spawn(async move {
            for (turn, (client, notes)) in clients.into_iter().enumerate() {
                let mut on_sender = mirror(&client, &chat).await;
                let mut notes = notes;
                let sent = loop {
                    match send(&client, &chat, &format!("turn {turn}")).await {
                        Ok(sent) => break sent,
                        // The previous node is still releasing the chat.
                        Err(error) if error.contains("answering in another Hearth process") => {
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        }
                        Err(error) => panic!("{error}"),
                    }
                };
                follow(&mut notes, &mut on_sender, completes(&sent)).await;
            }
        }));
    }
    for sender in senders {
        sender.await.unwrap();
    }
    let mut seen = Vec::new();
    for follower in followers {
        seen.push(follower.await.unwrap());
    }
    for (index, turns) in seen.iter().enumerate() {
        let same_chat = &seen[index % CHATS];
        assert_eq!(
            turns,
            same_chat,
            "client {index} and client {}",
            index % CHATS
        );
        assert_eq!(turns[0].user.text, "turn 0");
        assert_eq!(turns[1].user.text, "turn 1");
        assert!(
            turns
                .iter()
                .all(|turn| turn.response_text().ends_with("w40"))
        );
    }
}

#[tokio::test]
async fn a_message_sent_on_one_node_while_another_answers_waits_for_it_then_runs() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let nodes = [node(&url, "node-a"), node(&url, "node-b")];
    let (a, _a_notes) = nodes[0].client().await;
    let (b, mut b_notes) = nodes[1].client().await;
    let chat = new_chat(&a).await;
    let mut on_b = mirror(&b, &chat).await;
    let first = send(&a, &chat, "first").await.unwrap();
    // Node b's client sees the answer running on node a…
    follow(&mut b_notes, &mut on_b, |action| {
        matches!(action, wire::Action::TextDelta { .. })
    })
    .await;
    // …so what it sends waits for it, as behind a turn of its own node.
    let queued = b
        .call::<ChatQueue>(&ChatQueueParams {
            chat: chat.clone(),
            message: UserMessage {
                text: "second".into(),
                ..UserMessage::default()
            },
        })
        .await
        .unwrap();
    assert_eq!(
        queued.turn_id, None,
        "queued behind the turn node a answers"
    );
    follow(&mut b_notes, &mut on_b, completes(&first)).await;
    let started = follow(
        &mut b_notes,
        &mut on_b,
        |action| matches!(action, wire::Action::TurnStarted { turn } if turn.user.text == "second"),
    )
    .await;
    let wire::Action::TurnStarted { turn: second } = started else {
        unreachable!()
    };
    follow(&mut b_notes, &mut on_b, completes(&second.id)).await;
    let turns = &chat_state(&on_b).turns;
    assert_eq!(turns.len(), 2);
    assert!(
        turns
            .iter()
            .all(|turn| turn.response_text().ends_with("w40"))
    );
    assert!(chat_state(&on_b).queued.is_empty());
}

#[tokio::test]
async fn a_stop_asked_on_one_node_stops_the_turn_another_node_answers() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let answering = node(&url, "node-a");
    let other = node(&url, "node-b");
    let (a, mut a_notes) = answering.client().await;
    let chat = new_chat(&a).await;
    let mut on_a = mirror(&a, &chat).await;
    let turn = send(&a, &chat, "long").await.unwrap();
    let mut deltas = 0;
    follow(&mut a_notes, &mut on_a, |action| {
        if matches!(action, wire::Action::TextDelta { .. }) {
            deltas += 1;
        }
        deltas >= 5
    })
    .await;
    // Node b runs no turn of the chat: it asks node a, through the database.
    let (b, _b_notes) = other.client().await;
    let aborted = b
        .call::<ChatAbort>(&ChatParams { chat: chat.clone() })
        .await
        .unwrap();
    assert!(aborted.aborted, "node b passed the stop on");
    follow(&mut a_notes, &mut on_a, completes(&turn)).await;
    let stopped = &chat_state(&on_a).turns[0];
    assert_eq!(stopped.stop_reason, Some(core::StopReason::Aborted));
    assert!(
        !stopped.response_text().ends_with("w40"),
        "stopped before the end: {:?}",
        stopped.response_text()
    );
}
