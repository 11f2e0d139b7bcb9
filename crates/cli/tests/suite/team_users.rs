//! A team server's users from the command line: `hearth users` adds them and prints
//! their API tokens; `hearth serve --users` admits them; each sees only their own
//! sessions (the operator sees all); a revoked token stops working at once. And the
//! whole team at once: PostgreSQL, a real OpenID provider, three nodes and 200 clients
//! of two users, each client seeing every envelope of its chat and nothing of the other
//! user's.

use std::sync::Arc;
use std::time::Instant;

use hearth_core::Mirror;
use hearth_protocol::{
    self as wire, ChatParams, ChatResolve, ChatSend, ChatSendParams, ErrorKind, SessionCreate,
    SessionCreateParams, SessionList, SessionListParams, SessionShare, SessionShareParams,
    Subscribe, SubscribeParams, SubscribeResponse, UserMessage,
};
use hearth_server::{
    Client, LOGIN_KEY_FILE, Notifications, Notified, OIDC_CALLBACK_PATH, Secret, ServerError,
};
use hearth_test_support::oidc;
use hearth_test_support::postgres::fresh_database;
use tokio::sync::oneshot;

use super::serve_support::{Served, next};
use super::support::Hearth;

/// The token `hearth users add` or `hearth users token` printed (its last line).
pub(super) fn token_in(printed: &str) -> String {
    let token = printed.lines().last().unwrap_or_default().trim().to_owned();
    assert_eq!(token.len(), 64, "a token is 64 hex digits: {printed:?}");
    token
}

/// `hearth --server URL ARGS` as the holder of `token` (`None`: the operator).
fn as_user(served: &Served, token: Option<&str>, args: &[&str]) -> std::process::Output {
    let mut command = served.hearth.command();
    if let Some(token) = token {
        command.env("HEARTH_TOKEN", token);
    }
    command
        .args(["--server", &served.url])
        .args(args)
        .output()
        .unwrap()
}

fn sessions(served: &Served, token: Option<&str>) -> Vec<serde_json::Value> {
    let output = as_user(served, token, &["sessions", "list", "--json"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn each_user_sees_their_own_sessions_and_a_revoked_token_stops_at_once() {
    let hearth = Hearth::new();
    let alice = token_in(&hearth.ok(&["users", "add", "alice", "--team", "design"]));
    let bob = token_in(&hearth.ok(&["users", "add", "bob"]));
    let listed = hearth.ok(&["users", "list", "--json"]);
    assert!(
        listed.contains("\"alice\"") && listed.contains("\"design\""),
        "{listed}"
    );
    assert!(
        hearth
            .fails(&["users", "add", "Alice"])
            .contains("already exists"),
        "a name is taken whatever its case"
    );
    let served = Served::start(hearth, &["--users"], &[]);

    let ran = as_user(&served, Some(&alice), &["run", "hello from alice"]);
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let hers = sessions(&served, Some(&alice));
    assert_eq!(hers.len(), 1, "{hers:?}");
    assert!(sessions(&served, Some(&bob)).is_empty());
    assert_eq!(
        sessions(&served, None).len(),
        1,
        "the operator sees every session"
    );

    // A new token works beside the first; revoking ends both at once.
    let again = token_in(&served.hearth.ok(&["users", "token", "bob"]));
    assert!(sessions(&served, Some(&again)).is_empty());
    served.hearth.ok(&["users", "revoke", "bob"]);
    let refused = as_user(&served, Some(&bob), &["sessions", "list"]);
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("token"), "{said}");
    assert_eq!(sessions(&served, Some(&alice)).len(), 1);
}

/// `hearth users ARGS` on the team's database; what it printed.
pub(super) fn users_on(url: &str, args: &[&str]) -> String {
    let admin = Hearth::new();
    let output = admin
        .command()
        .env("HEARTH_STORE_URL", url)
        .arg("users")
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub(super) async fn connect_as(node: &Served, token: &str) -> (Client, Notifications) {
    let token = Secret::parse(token).unwrap();
    let (client, notifications) = Client::connect(&node.url, &token).await.unwrap();
    client.initialize("e2e").await.unwrap();
    (client, notifications)
}

/// The sessions `client` lists.
pub(super) async fn listed(client: &Client) -> Vec<String> {
    client
        .call::<SessionList>(&SessionListParams::default())
        .await
        .unwrap()
        .sessions
        .into_iter()
        .map(|session| session.uri)
        .collect()
}

#[tokio::test]
async fn two_users_on_three_nodes_never_see_each_others_sessions() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let alice = token_in(&users_on(&url, &["add", "alice", "--team", "design"]));
    let bob = token_in(&users_on(&url, &["add", "bob", "--team", "design"]));
    let nodes: Vec<Served> = ["n1", "n2", "n3"]
        .into_iter()
        .map(|name| {
            Served::start(
                Hearth::new(),
                &["--store", &url, "--users"],
                &[("HEARTH_NODE", name)],
            )
        })
        .collect();
    let (alice_on_1, _) = connect_as(&nodes[0], &alice).await;
    let (bob_on_2, mut bobs) = connect_as(&nodes[1], &bob).await;
    let (bob_on_3, _) = connect_as(&nodes[2], &bob).await;
    let SubscribeResponse::Snapshot { snapshot } = bob_on_2
        .call::<Subscribe>(&SubscribeParams {
            resource: "hearth-root:".into(),
            last_seq: None,
            turn_limit: None,
        })
        .await
        .unwrap()
    else {
        panic!("a fresh subscription gets a snapshot");
    };
    // Alice's session first, on node 1; then Bob's, on node 3.
    let hers = alice_on_1
        .call::<SessionCreate>(&SessionCreateParams::default())
        .await
        .unwrap()
        .session
        .summary
        .uri;
    let his = bob_on_3
        .call::<SessionCreate>(&SessionCreateParams::default())
        .await
        .unwrap()
        .session
        .summary
        .uri;
    // Node 2 hears of both from the database; Bob's view there shows only his.
    let envelope = loop {
        match next(&mut bobs).await {
            Notified::Envelope(envelope) => break envelope,
            _ => continue,
        }
    };
    assert_eq!(envelope.seq, snapshot.seq + 1);
    match &envelope.action {
        wire::Action::SessionAdded { summary } => assert_eq!(summary.uri, his),
        other => panic!("expected Bob's session, got {other:?}"),
    }
    for node in &nodes {
        let (as_alice, _) = connect_as(node, &alice).await;
        let (as_bob, _) = connect_as(node, &bob).await;
        let (operator, _) = node.client().await;
        assert_eq!(listed(&as_alice).await, vec![hers.clone()]);
        assert_eq!(listed(&as_bob).await, vec![his.clone()]);
        let mut all = listed(&operator).await;
        all.sort();
        let mut both = vec![hers.clone(), his.clone()];
        both.sort();
        assert_eq!(all, both);
        // Bob cannot open Alice's chat on any node.
        let refused = as_bob
            .call::<ChatResolve>(&ChatParams {
                chat: format!(
                    "{}",
                    hearth_core::ChatUri::default_for(&hers.parse().unwrap())
                ),
            })
            .await;
        assert!(refused.is_err(), "{refused:?}");
    }
    // Alice shares hers with their team on node 1: Bob's view on node 2 gains it, told
    // by the database.
    alice_on_1
        .call::<SessionShare>(&SessionShareParams {
            session: hers.clone(),
            team: Some("design".into()),
        })
        .await
        .unwrap();
    let envelope = loop {
        match next(&mut bobs).await {
            Notified::Envelope(envelope) => break envelope,
            _ => continue,
        }
    };
    assert_eq!(envelope.seq, snapshot.seq + 2);
    match &envelope.action {
        wire::Action::SessionAdded { summary } => {
            assert_eq!(summary.uri, hers);
            assert_eq!(summary.team.as_deref(), Some("design"));
        }
        other => panic!("expected Alice's shared session, got {other:?}"),
    }
}

/// One scripted answer of 40 words, a word every 50 ms (as the team server's tests).
fn scenario() -> String {
    let words: Vec<String> = (1..=40).map(|n| format!("w{n}")).collect();
    format!(
        "name: team\nturns:\n  - steps:\n      - text: \"{}\"\n        stream: words\n        delay_ms: 50\n",
        words.join(" ")
    )
}

/// A node of a team whose users log in at `issuer`, on the database at `url`, named
/// `name`. Every node holds the same `token` and login key, so a browser session one
/// node made is good on all (as behind a load balancer).
fn team_node(url: &str, name: &str, issuer: &str, token: &Secret, login_key: &Secret) -> Served {
    let hearth = Hearth::new();
    hearth.write(
        "config.toml",
        &format!(
            "[server.oidc]\nissuer = \"{issuer}\"\nclient_id = \"{}\"\nclient_secret = \"{}\"\n",
            oidc::CLIENT_ID,
            oidc::CLIENT_SECRET
        ),
    );
    hearth.write("token", &format!("{}\n", token.expose()));
    hearth.write(LOGIN_KEY_FILE, &format!("{}\n", login_key.expose()));
    let scenario = hearth.write("team.yaml", &scenario());
    Served::start(
        hearth,
        &[
            "--store",
            url,
            "--users",
            "--scenario",
            scenario.to_str().unwrap(),
        ],
        &[("HEARTH_NODE", name), ("HEARTH_REPLAY_DELAY_SCALE", "1")],
    )
}

/// Three nodes on the database at `url` and the OpenID provider their users log in at,
/// which sends browsers back to any of them (`None`: the provider cannot run here). The
/// provider's port is picked before the nodes start (they need its issuer, it needs
/// their callbacks), so when another process takes it meanwhile all are started again.
async fn team_with_provider(url: &str) -> Option<(Vec<Served>, oidc::Provider)> {
    oidc::installed()?;
    let mut failures = Vec::new();
    for _ in 0..3 {
        let (probe, issuer_port) = oidc::free_port();
        let issuer = format!("http://127.0.0.1:{issuer_port}");
        let token = Secret::generate().unwrap();
        let login_key = Secret::generate().unwrap();
        let nodes: Vec<Served> = ["n1", "n2", "n3"]
            .into_iter()
            .map(|name| team_node(url, name, &issuer, &token, &login_key))
            .collect();
        drop(probe);
        let callbacks: Vec<String> = nodes
            .iter()
            .map(|node| format!("{}{OIDC_CALLBACK_PATH}", node.url))
            .collect();
        match oidc::Provider::start(issuer_port, &callbacks).await? {
            Ok(provider) => return Some((nodes, provider)),
            Err(failure) => failures.push(failure),
        }
    }
    panic!("the provider never started: {failures:?}");
}

/// How a user of the team reaches it.
#[derive(Clone)]
enum Credential {
    /// A browser session made by an OpenID Connect login.
    Browser(String),
    /// An API token `hearth users add` printed.
    Token(Secret),
}

/// A connected, initialized client of `node` as the holder of `credential`.
async fn connect_with(node: &Served, credential: &Credential) -> (Client, Notifications) {
    let (client, notifications) = match credential {
        Credential::Browser(session) => Client::connect_with_session(&node.url, session).await,
        Credential::Token(token) => Client::connect(&node.url, token).await,
    }
    .unwrap_or_else(|error| panic!("connect to {}: {error}", node.url));
    client.initialize("e2e").await.unwrap();
    (client, notifications)
}

/// A new session of the replay harness: its URI and its chat's.
async fn new_replay_session(client: &Client) -> (String, String) {
    let created = client
        .call::<SessionCreate>(&SessionCreateParams {
            harness: Some("replay".into()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    (
        created.session.summary.uri.clone(),
        created.session.chats[0].summary.uri.clone(),
    )
}

async fn subscribe(client: &Client, resource: &str) -> Result<Mirror, ServerError> {
    match client
        .call::<Subscribe>(&SubscribeParams {
            resource: resource.to_owned(),
            last_seq: None,
            turn_limit: None,
        })
        .await?
    {
        SubscribeResponse::Snapshot { snapshot } => Ok(Mirror::new(snapshot.try_into().unwrap())),
        other => panic!("a fresh subscription to {resource} gets a snapshot, not {other:?}"),
    }
}

/// The id in a session's URI (every chat URI of the session names it too).
fn session_id(session: &str) -> &str {
    session
        .strip_prefix("hearth-session:")
        .unwrap_or_else(|| panic!("not a session URI: {session}"))
}

/// Fails when `envelope` names any of `foreign` (another user's session ids).
fn assert_names_none(envelope: &wire::Envelope, foreign: &[String], who: &str) {
    let text = serde_json::to_string(envelope).unwrap();
    for id in foreign {
        assert!(
            !text.contains(id.as_str()),
            "{who} received an envelope naming another user's session {id}: {text}"
        );
    }
}

/// Applies `envelope` to `mirror`: a gap fails.
fn apply(mirror: &mut Mirror, envelope: wire::Envelope, who: &str) {
    mirror
        .apply(&hearth_core::Envelope::try_from(envelope).unwrap())
        .unwrap_or_else(|gap| panic!("{who} missed an envelope: {gap:?}"));
}

/// A client following `chat` until its one turn ended, applying every envelope in order
/// (a gap or a resync fails) and checking none names `foreign`: the chat's turns, and
/// when the client had the turn's end.
async fn follow_the_turn(
    client: Client,
    mut notes: Notifications,
    chat: String,
    foreign: Arc<Vec<String>>,
    who: String,
    subscribed: oneshot::Sender<()>,
) -> (Vec<hearth_core::Turn>, Instant) {
    let mut mirror = subscribe(&client, &chat)
        .await
        .unwrap_or_else(|error| panic!("{who} subscribes to {chat}: {error}"));
    let _ = subscribed.send(());
    loop {
        let hearth_core::ResourceState::Chat(state) = &mirror.snapshot.state else {
            panic!("{chat} is not a chat: {:?}", mirror.snapshot.state);
        };
        if state.turns.len() == 1 && state.turns[0].stop_reason.is_some() {
            let ended = Instant::now();
            let turns = state.turns.clone();
            client.close().await;
            return (turns, ended);
        }
        match next(&mut notes).await {
            Notified::Envelope(envelope) => {
                assert_names_none(&envelope, &foreign, &who);
                apply(&mut mirror, envelope, &who);
            }
            Notified::Resync(resync) => panic!("{who} fell behind: {resync:?}"),
            _ => {}
        }
    }
}

/// A root subscriber: once told its user's sessions (`own`), applies every envelope in
/// order (a gap fails) until it has been told of each of them, then whatever else had
/// arrived; returns them all.
async fn watch_root(
    client: Client,
    mut notes: Notifications,
    mut root: Mirror,
    own: oneshot::Receiver<Vec<String>>,
    who: String,
) -> Vec<wire::Envelope> {
    let own = own.await.unwrap();
    let mut seen = Vec::new();
    let added = |seen: &[wire::Envelope], session: &String| {
        seen.iter().any(|envelope| {
            matches!(&envelope.action, wire::Action::SessionAdded { summary } if &summary.uri == session)
        })
    };
    while !own.iter().all(|session| added(&seen, session)) {
        if let Notified::Envelope(envelope) = next(&mut notes).await {
            apply(&mut root, envelope.clone(), &who);
            seen.push(envelope);
        }
    }
    while let Ok(notified) = notes.try_recv() {
        if let Notified::Envelope(envelope) = notified {
            apply(&mut root, envelope.clone(), &who);
            seen.push(envelope);
        }
    }
    client.close().await;
    seen
}

/// Chat followers in the team test, half of them Alice's, half Bob's.
const TEAM_CLIENTS: usize = 200;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_on_postgres_with_an_openid_provider_three_nodes_and_200_clients() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let bob =
        Credential::Token(Secret::parse(&token_in(&users_on(&url, &["add", "bob"]))).unwrap());
    let Some((nodes, _provider)) = team_with_provider(&url).await else {
        return;
    };
    // Alice logs in at the provider through node 1, as in a browser: that login makes her
    // a user, named after the provider's `name` claim.
    // Her login goes through all three nodes, as a load balancer without sticky sessions
    // would send it.
    let alice = Credential::Browser(
        oidc::log_in_across([&nodes[0].url, &nodes[1].url, &nodes[2].url], "alice").await,
    );
    let users = users_on(&url, &["list", "--json"]);
    assert!(users.contains("\"alice\""), "{users}");
    let members = [("alice", alice), ("bob", bob)];

    // One root subscriber per user on each node, before any session is made.
    let mut roots = Vec::new();
    for (index, node) in nodes.iter().enumerate() {
        for (user, (name, credential)) in members.iter().enumerate() {
            let (client, notes) = connect_with(node, credential).await;
            let root = subscribe(&client, "hearth-root:").await.unwrap();
            let who = format!("{name}'s root subscriber on node {}", index + 1);
            let (tell, own) = oneshot::channel();
            roots.push((
                user,
                tell,
                tokio::spawn(watch_root(client, notes, root, own, who)),
            ));
        }
    }

    // Alice makes two sessions through node 1 (her browser session), Bob two through
    // node 2 (his token).
    let mut sessions: [Vec<String>; 2] = [Vec::new(), Vec::new()];
    let mut chats: [Vec<String>; 2] = [Vec::new(), Vec::new()];
    for (user, node) in [(0, &nodes[0]), (1, &nodes[1])] {
        let (client, _notes) = connect_with(node, &members[user].1).await;
        for _ in 0..2 {
            let (session, chat) = new_replay_session(&client).await;
            sessions[user].push(session);
            chats[user].push(chat);
        }
    }
    let ids = |user: usize| -> Arc<Vec<String>> {
        Arc::new(
            sessions[user]
                .iter()
                .map(|session| session_id(session).to_owned())
                .collect(),
        )
    };
    let foreign = [ids(1), ids(0)];

    // 200 clients, each following one of its user's chats, over the three nodes; every
    // one subscribed before the first turn is sent.
    let mut followers = Vec::new();
    for index in 0..TEAM_CLIENTS {
        let user = index % 2;
        let node = index % nodes.len();
        let chat = (index / 2) % 2;
        let (name, credential) = &members[user];
        let (client, notes) = connect_with(&nodes[node], credential).await;
        let who = format!("{name}'s client {index} on node {}", node + 1);
        let (ready, subscribed) = oneshot::channel();
        followers.push((
            user,
            chat,
            tokio::spawn(follow_the_turn(
                client,
                notes,
                chats[user][chat].clone(),
                Arc::clone(&foreign[user]),
                who,
                ready,
            )),
        ));
        subscribed.await.unwrap();
    }

    // One turn in each chat, each sent by its owner on another node than the last (so
    // answered there): Alice's on nodes 1 and 2, Bob's on nodes 3 and 1.
    let plan: Vec<(usize, usize, usize)> = (0..4).map(|k| (k / 2, k % 2, k % 3)).collect();
    let mut senders = Vec::new();
    for &(user, _, node) in &plan {
        senders.push(connect_with(&nodes[node], &members[user].1).await);
    }
    let first_send = Instant::now();
    let mut sent = [Vec::new(), Vec::new()];
    for (&(user, chat, node), (sender, _)) in plan.iter().zip(&senders) {
        let turn = sender
            .call::<ChatSend>(&ChatSendParams {
                chat: chats[user][chat].clone(),
                message: UserMessage {
                    text: format!("{} {chat}", members[user].0),
                    ..UserMessage::default()
                },
            })
            .await
            .unwrap_or_else(|error| {
                panic!(
                    "{} sends to their chat {chat} on node {}: {error}",
                    members[user].0,
                    node + 1
                )
            });
        sent[user].push(turn.turn_id);
    }

    // Every client has every envelope of its chat, in order, and the same turn.
    let mut last_end = first_send;
    let mut seen: Vec<(usize, usize, Vec<hearth_core::Turn>)> = Vec::new();
    for (user, chat, follower) in followers {
        let (turns, ended) = follower.await.unwrap();
        last_end = last_end.max(ended);
        seen.push((user, chat, turns));
    }
    eprintln!(
        "{TEAM_CLIENTS} clients over 3 nodes: {} ms from the first send to the last client having the last turn's end",
        (last_end - first_send).as_millis()
    );
    for (index, (user, chat, turns)) in seen.iter().enumerate() {
        let name = members[*user].0;
        assert_eq!(turns.len(), 1, "client {index}: {turns:?}");
        let turn = &turns[0];
        assert_eq!(turn.id.as_str(), sent[*user][*chat], "client {index}");
        assert_eq!(turn.user.text, format!("{name} {chat}"), "client {index}");
        assert!(
            turn.response_text().ends_with("w40"),
            "client {index}: {:?}",
            turn.response_text()
        );
        let first = seen
            .iter()
            .find(|(other, other_chat, _)| other == user && other_chat == chat)
            .unwrap();
        assert_eq!(turns, &first.2, "client {index} and the first of its chat");
    }

    // The root subscribers heard of their own user's sessions only.
    for (user, tell, watcher) in roots {
        tell.send(sessions[user].clone()).unwrap();
        let envelopes = watcher.await.unwrap();
        let who = format!("{}'s root subscriber", members[user].0);
        for envelope in &envelopes {
            assert_names_none(envelope, &foreign[user], &who);
        }
        let added: Vec<&str> = envelopes
            .iter()
            .filter_map(|envelope| match &envelope.action {
                wire::Action::SessionAdded { summary } => Some(summary.uri.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(added, sessions[user], "{who}");
    }

    // On every node each user lists their own two sessions, and cannot subscribe to the
    // other's chats.
    for (index, node) in nodes.iter().enumerate() {
        for (user, (name, credential)) in members.iter().enumerate() {
            let (client, _notes) = connect_with(node, credential).await;
            let mut listed = listed(&client).await;
            listed.sort();
            let mut own = sessions[user].clone();
            own.sort();
            assert_eq!(listed, own, "{name} on node {}", index + 1);
            for chat in &chats[1 - user] {
                match subscribe(&client, chat).await {
                    Err(ServerError::Rpc(error)) => assert_eq!(
                        error.kind(),
                        ErrorKind::NotFound,
                        "{name} subscribing to {chat} on node {}: {error:?}",
                        index + 1
                    ),
                    Err(error) => panic!("{name} subscribing to {chat}: {error}"),
                    Ok(_) => panic!(
                        "{name} subscribed to another user's chat {chat} on node {}",
                        index + 1
                    ),
                }
            }
        }
    }
}
