//! A team server's users from the command line: `hearth users` adds them and prints
//! their API tokens; `hearth serve --users` admits them; each sees only their own
//! sessions (the operator sees all); a revoked token stops working at once.

use hearth_protocol::{
    self as wire, ChatParams, ChatResolve, SessionCreate, SessionCreateParams, SessionList,
    SessionListParams, Subscribe, SubscribeParams, SubscribeResponse,
};
use hearth_server::{Client, Notifications, Notified, Secret};
use hearth_test_support::postgres::fresh_database;

use super::serve_support::{Served, next};
use super::support::Hearth;

/// The token `hearth users add` or `hearth users token` printed (its last line).
fn token_in(printed: &str) -> String {
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
fn users_on(url: &str, args: &[&str]) -> String {
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

async fn connect_as(node: &Served, token: &str) -> (Client, Notifications) {
    let token = Secret::parse(token).unwrap();
    let (client, notifications) = Client::connect(&node.url, &token).await.unwrap();
    client.initialize("e2e").await.unwrap();
    (client, notifications)
}

async fn listed(client: &Client) -> Vec<String> {
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
    let alice = token_in(&users_on(&url, &["add", "alice"]));
    let bob = token_in(&users_on(&url, &["add", "bob"]));
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
}
