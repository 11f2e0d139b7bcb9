//! A team server user's own sign-in for an external agent (`agent/connect`): the agent
//! runs for them with their variables and a home of their own, never with what the
//! server passes its own agents; nobody else runs turns on it; disconnected, it goes.

use hearth_protocol::{
    self as wire, ChatParams, ChatResolve, ChatSend, ChatSendParams, SessionCreate,
    SessionCreateParams, Subscribe, SubscribeParams, UserMessage,
};
use hearth_server::{Client, Notifications, Notified, ServerError};
use hearth_test_support::acp_test_agent;

use super::serve_support::{Served, next};
use super::support::Hearth;
use super::team_users::connect_as;

/// Asks `harness` for `prompt` in a new session; the turns as JSON text.
async fn ask(
    client: &Client,
    notifications: &mut Notifications,
    harness: &str,
    prompt: &str,
) -> String {
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            harness: Some(harness.to_owned()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap()
        .session;
    let chat = session.chats[0].summary.uri.clone();
    client
        .call::<Subscribe>(&SubscribeParams {
            resource: chat.clone(),
            last_seq: None,
            turn_limit: None,
        })
        .await
        .unwrap();
    let sent = client
        .call::<ChatSend>(&ChatSendParams {
            chat: chat.clone(),
            message: UserMessage {
                text: prompt.to_owned(),
                ..UserMessage::default()
            },
        })
        .await
        .unwrap();
    loop {
        if let Notified::Envelope(envelope) = next(notifications).await
            && let wire::Action::TurnCompleted { turn_id, .. } = &envelope.action
            && *turn_id == sent.turn_id
        {
            break;
        }
    }
    let resolved = client
        .call::<ChatResolve>(&ChatParams { chat })
        .await
        .unwrap();
    serde_json::to_string(&resolved.chat.turns).unwrap()
}

/// Why a session on `harness` is refused to `client`.
async fn refused_kind(client: &Client, harness: &str) -> wire::ErrorKind {
    let refused = client
        .call::<SessionCreate>(&SessionCreateParams {
            harness: Some(harness.to_owned()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap_err();
    refusal(refused).data.unwrap().kind
}

fn refusal(error: ServerError) -> wire::RpcError {
    match error {
        ServerError::Rpc(error) => error,
        other => panic!("expected an error response, got {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_users_own_agent_runs_with_their_variables_and_never_the_servers() {
    let hearth = Hearth::new();
    let state = tempfile::tempdir().unwrap();
    hearth.write(
        "config.toml",
        &format!(
            "[agents.tester]\ncommand = \"{}\"\nenv = {{ HEARTH_TEST_AGENT_STATE = \"{}\" }}\npass_env = [\"SERVER_SECRET\"]\n",
            acp_test_agent().display(),
            state.path().display()
        ),
    );
    let token = |printed: String| printed.lines().last().unwrap().trim().to_owned();
    let alice = token(hearth.ok(&["users", "add", "alice"]));
    let bob = token(hearth.ok(&["users", "add", "bob"]));
    let served = Served::start(hearth, &["--users"], &[("SERVER_SECRET", "the-operators")]);
    let probe = "/env ALICE_KEY SERVER_SECRET HEARTH_TEST_AGENT_STATE";

    // The operator's agent gets what the server passes it.
    let (operator, mut operators) = served.client().await;
    let said = ask(&operator, &mut operators, "tester", probe).await;
    assert!(
        said.contains("SERVER_SECRET=set") && said.contains("ALICE_KEY=unset"),
        "{said}"
    );

    // Alice connects her own sign-in; her agent gets it, and not the server's.
    let (as_alice, mut hers) = connect_as(&served, &alice).await;
    let refused = as_alice
        .call::<wire::AgentConnect>(&wire::AgentConnectParams {
            agent: "tester".into(),
            env: [("HOME".to_owned(), "/root".to_owned())].into(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        refusal(refused).data.unwrap().kind,
        wire::ErrorKind::InvalidParams
    );
    let connected = as_alice
        .call::<wire::AgentConnect>(&wire::AgentConnectParams {
            agent: "tester".into(),
            env: [("ALICE_KEY".to_owned(), "alices-own".to_owned())].into(),
        })
        .await
        .unwrap();
    let harness = connected.harness;
    assert!(harness.ends_with("_tester"), "{harness}");
    let said = ask(&as_alice, &mut hers, &harness, probe).await;
    assert!(said.contains("ALICE_KEY=set"), "{said}");
    assert!(said.contains("SERVER_SECRET=unset"), "{said}");
    assert!(
        said.contains("HEARTH_TEST_AGENT_STATE=set"),
        "the operator's settings: {said}"
    );
    let home = served.hearth.home.path().join("users");
    assert!(
        std::fs::read_dir(&home)
            .unwrap()
            .any(|user| user.unwrap().path().join("home").is_dir()),
        "her agent's home is in her folder"
    );

    // Bob never runs it, nor sees it.
    let (as_bob, _) = connect_as(&served, &bob).await;
    assert_eq!(
        refused_kind(&as_bob, &harness).await,
        wire::ErrorKind::Forbidden
    );
    let his = as_bob.initialize("e2e").await.unwrap();
    assert!(
        his.harnesses.iter().all(|info| info.id != harness),
        "{his:?}"
    );
    let mine = as_alice.initialize("e2e").await.unwrap();
    let own = mine.harnesses.iter().find(|info| info.id == harness);
    assert!(
        own.is_some_and(|info| info.name.ends_with("(your own sign-in)")),
        "{mine:?}"
    );

    // The operator cannot connect one (their agents are configured), and Alice's goes
    // when she disconnects it.
    let refused = operator
        .call::<wire::AgentConnect>(&wire::AgentConnectParams {
            agent: "tester".into(),
            env: [("X_KEY".to_owned(), "x".to_owned())].into(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        refusal(refused).data.unwrap().kind,
        wire::ErrorKind::Forbidden
    );
    as_alice
        .call::<wire::AgentDisconnect>(&wire::AgentDisconnectParams {
            agent: "tester".into(),
        })
        .await
        .unwrap();
    assert_eq!(
        refused_kind(&as_alice, &harness).await,
        wire::ErrorKind::NotFound
    );
}

/// `hearth --server URL agents ARGS` as the user of `token`, with `env`; its output.
fn agents_command(
    served: &Served,
    token: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> std::process::Output {
    served
        .hearth
        .command()
        .args(["--server", served.url.as_str(), "agents"])
        .args(args)
        .env("HEARTH_TOKEN", token)
        .env_remove("ALICE_KEY")
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_connects_their_sign_in_from_the_command_line_with_values_from_its_environment() {
    let hearth = Hearth::new();
    let state = tempfile::tempdir().unwrap();
    hearth.write(
        "config.toml",
        &format!(
            "[agents.tester]\ncommand = \"{}\"\nenv = {{ HEARTH_TEST_AGENT_STATE = \"{}\" }}\n",
            acp_test_agent().display(),
            state.path().display()
        ),
    );
    let alice = hearth.ok(&["users", "add", "alice"]);
    let alice = alice.lines().last().unwrap().trim().to_owned();
    let served = Served::start(hearth, &["--users"], &[]);

    // A value is never taken from the command line: a variable not set is refused.
    let unset = agents_command(
        &served,
        &alice,
        &["connect", "tester", "--pass", "ALICE_KEY"],
        &[],
    );
    assert!(!unset.status.success());
    let said = String::from_utf8_lossy(&unset.stderr);
    assert!(said.contains("ALICE_KEY is not set"), "{said}");

    let connected = agents_command(
        &served,
        &alice,
        &["connect", "tester", "--pass", "ALICE_KEY"],
        &[("ALICE_KEY", "alices-own")],
    );
    let printed = String::from_utf8_lossy(&connected.stdout);
    assert!(
        connected.status.success(),
        "{printed}{}",
        String::from_utf8_lossy(&connected.stderr)
    );
    let harness = printed
        .split_whitespace()
        .find(|word| word.ends_with("_tester"))
        .unwrap_or_else(|| panic!("no harness in {printed}"))
        .to_owned();
    let (as_alice, mut hers) = connect_as(&served, &alice).await;
    let said = ask(&as_alice, &mut hers, &harness, "/env ALICE_KEY").await;
    assert!(said.contains("ALICE_KEY=set"), "{said}");

    let gone = agents_command(&served, &alice, &["disconnect", "tester"], &[]);
    assert!(
        gone.status.success(),
        "{}",
        String::from_utf8_lossy(&gone.stderr)
    );
    assert!(String::from_utf8_lossy(&gone.stdout).contains(&harness));
    assert_eq!(
        refused_kind(&as_alice, &harness).await,
        wire::ErrorKind::NotFound
    );

    // Without a server, the command says what it is for.
    let lone = Hearth::new().fails(&["--local", "agents", "connect", "tester", "--pass", "PATH"]);
    assert!(
        lone.contains("--server URL") && lone.contains("HEARTH_TOKEN"),
        "{lone}"
    );
}
