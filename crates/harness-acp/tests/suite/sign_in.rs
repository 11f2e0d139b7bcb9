//! Signing in to an agent and out: the methods it offers read into how each is run, a
//! terminal sign-in run as the agent's own program with its environment, `authenticate`,
//! and `logout` where offered.

use std::process::Stdio;

use hearth_harness_acp::{SignInMethod, SignInWay};
use hearth_test_support::{TestHost, acp_test_agent};
use pretty_assertions::assert_eq;
use tokio::io::AsyncWriteExt;

use super::support::Setup;

fn new_session(setup: &Setup) -> hearth_host::NewSessionRequest {
    hearth_host::NewSessionRequest {
        provider: hearth_core::HarnessId::parse("tester").unwrap(),
        scope: hearth_core::Scope::Global,
        title: None,
        model: None,
        working_directories: vec![setup.work()],
        owner: None,
    }
}

/// Runs a terminal sign-in with `answer` typed on its stdin; returns its stdout.
async fn run_terminal(method: &SignInMethod, answer: &str) -> (bool, String) {
    let SignInWay::Terminal(command) = &method.way else {
        panic!("{method:?} is run in a terminal");
    };
    let mut child = command
        .command()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(answer.as_bytes()).await.unwrap();
    drop(stdin);
    let output = tokio::time::timeout(std::time::Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("the sign-in ends")
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

fn stored(setup: &Setup) -> serde_json::Value {
    let state = setup
        .env
        .iter()
        .find(|(name, _)| name == "HEARTH_TEST_AGENT_STATE")
        .map(|(_, value)| value.clone())
        .unwrap();
    let text = std::fs::read_to_string(std::path::Path::new(&state).join("signed-in.json"))
        .expect("the sign-in stored its credential");
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn a_terminal_method_runs_the_agents_own_program_with_its_environment() {
    let setup = Setup::with_env(&[
        ("HEARTH_TEST_AGENT_AUTH", "1"),
        ("HEARTH_TEST_AGENT_TERMINAL_AUTH", "spec"),
    ]);
    // Not signed in: a session is refused, and the user is told how to sign in.
    let test = TestHost::start(setup.agents()).await;
    let error = test
        .host
        .create_session(new_session(&setup))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("Sign in with `hearth agents login tester`"),
        "{error}"
    );
    assert!(
        error.contains("`test-terminal` (Test terminal login"),
        "{error}"
    );
    let harness = setup.harness();
    let methods = harness.sign_in_methods().await.unwrap();
    harness.stop().await;
    let ids: Vec<(&str, bool)> = methods
        .iter()
        .map(|method| (method.id.as_str(), method.is_terminal()))
        .collect();
    assert_eq!(ids, vec![("test-login", false), ("test-terminal", true)]);
    let terminal = &methods[1];
    let SignInWay::Terminal(command) = &terminal.way else {
        unreachable!()
    };
    assert_eq!(command.program, acp_test_agent());
    assert_eq!(command.args, vec!["login".to_owned()]);
    assert_eq!(command.directory, setup.work());
    let variables = command.env.resolve();
    assert_eq!(
        variables
            .get(std::ffi::OsStr::new("HEARTH_TEST_AGENT_LOGIN_BY"))
            .and_then(|value| value.to_str()),
        Some("spec"),
        "the method's variables are set"
    );
    assert!(
        variables.contains_key(std::ffi::OsStr::new("HEARTH_TEST_AGENT_STATE")),
        "the agent's own variables are kept"
    );

    let (succeeded, shown) = run_terminal(terminal, "Ada\n").await;
    assert!(succeeded, "{shown}");
    assert!(shown.ends_with("signed in as Ada\n"), "{shown}");
    let credential = stored(&setup);
    assert_eq!(credential["by"], "spec");
    assert_eq!(credential["args"], serde_json::json!([]));
    assert_eq!(
        credential["cwd"],
        serde_json::json!(setup.work().display().to_string())
    );

    // Signed in: a new agent process opens sessions without `authenticate`.
    let test = TestHost::start(setup.agents()).await;
    test.host.create_session(new_session(&setup)).await.unwrap();
}

#[tokio::test]
async fn a_method_naming_its_command_in_meta_runs_that_command() {
    let setup = Setup::with_env(&[("HEARTH_TEST_AGENT_TERMINAL_AUTH", "meta")]);
    let harness = setup.harness();
    let methods = harness.sign_in_methods().await.unwrap();
    harness.stop().await;
    assert_eq!(methods.len(), 1);
    let SignInWay::Terminal(command) = &methods[0].way else {
        panic!("{:?} is run in a terminal", methods[0]);
    };
    assert_eq!(
        command.program.canonicalize().unwrap(),
        acp_test_agent().canonicalize().unwrap()
    );
    assert_eq!(
        command.args,
        vec!["login".to_owned(), "--from-meta".to_owned()]
    );
    let (succeeded, shown) = run_terminal(&methods[0], "Grace\n").await;
    assert!(succeeded, "{shown}");
    assert_eq!(stored(&setup)["args"], serde_json::json!(["--from-meta"]));

    // An empty answer cancels: the sign-in fails.
    let (succeeded, shown) = run_terminal(&methods[0], "\n").await;
    assert!(!succeeded, "{shown}");
}

#[tokio::test]
async fn authenticate_reports_the_agents_answer() {
    let setup = Setup::with_env(&[("HEARTH_TEST_AGENT_AUTH", "1")]);
    let harness = setup.harness();
    let methods = harness.sign_in_methods().await.unwrap();
    assert_eq!(methods.len(), 1);
    assert_eq!(methods[0].way, SignInWay::Agent);
    let error = harness.authenticate("test-login").await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("HEARTH_TEST_AGENT_TOKEN is not set"),
        "{error}"
    );
    harness.stop().await;

    let setup = Setup::with_env(&[
        ("HEARTH_TEST_AGENT_AUTH", "1"),
        ("HEARTH_TEST_AGENT_TOKEN", "secret"),
    ]);
    let harness = setup.harness();
    harness.authenticate("test-login").await.unwrap();
    harness.stop().await;
}

#[tokio::test]
async fn logout_is_sent_only_to_an_agent_that_offers_it() {
    let setup = Setup::with_env(&[("HEARTH_TEST_AGENT_CAPS", "none")]);
    let harness = setup.harness();
    let error = harness.sign_out().await.unwrap_err();
    assert!(
        error.to_string().contains("does not offer ACP `logout`"),
        "{error}"
    );
    harness.stop().await;

    let setup = Setup::with_env(&[
        ("HEARTH_TEST_AGENT_CAPS", "logout"),
        ("HEARTH_TEST_AGENT_TERMINAL_AUTH", "spec"),
    ]);
    let harness = setup.harness();
    let methods = harness.sign_in_methods().await.unwrap();
    let (succeeded, _) = run_terminal(&methods[0], "Ada\n").await;
    assert!(succeeded);
    stored(&setup);
    assert!(harness.check().await.unwrap().0.logout);
    harness.sign_out().await.unwrap();
    harness.stop().await;
    let state = &setup.env[0].1;
    assert!(
        !std::path::Path::new(state).join("signed-in.json").exists(),
        "logout removed the stored sign-in"
    );
}
