//! `HEARTH_TEST_AGENT_AUTH=1`: session methods wait for `authenticate` (or a stored
//! terminal sign-in); `HEARTH_TEST_AGENT_TERMINAL_AUTH` offers that sign-in; `logout`.

use agent_client_protocol::ErrorCode;
use agent_client_protocol::v1::schema::{
    AuthMethod, AuthenticateRequest, ListSessionsRequest, LogoutRequest, NewSessionRequest,
};
use pretty_assertions::assert_eq;

use super::support::{AgentProcess, ClientSetup, within};

#[tokio::test]
async fn without_the_token_authentication_fails_and_sessions_stay_closed() {
    let mut agent = AgentProcess::start(&[("HEARTH_TEST_AGENT_AUTH", "1")]);
    agent
        .client(ClientSetup::default(), async |harness| {
            let init = harness.initialize().await;
            assert_eq!(init.auth_methods.len(), 1);
            let AuthMethod::Agent(method) = &init.auth_methods[0] else {
                panic!("an agent-handled method is offered");
            };
            assert_eq!(method.id.0.as_ref(), "test-login");
            assert_eq!(method.name, "Test login");
            assert_eq!(
                method.description.as_deref(),
                Some("set HEARTH_TEST_AGENT_TOKEN")
            );

            let refused = within(
                harness
                    .connection
                    .send_request(NewSessionRequest::new("/work"))
                    .block_task(),
            )
            .await
            .unwrap_err();
            assert_eq!(refused.code, ErrorCode::AUTH_REQUIRED);
            let refused = within(
                harness
                    .connection
                    .send_request(ListSessionsRequest::new())
                    .block_task(),
            )
            .await
            .unwrap_err();
            assert_eq!(refused.code, ErrorCode::AUTH_REQUIRED);

            let failed = within(
                harness
                    .connection
                    .send_request(AuthenticateRequest::new("test-login"))
                    .block_task(),
            )
            .await
            .unwrap_err();
            assert!(
                failed.message.contains("HEARTH_TEST_AGENT_TOKEN"),
                "{}",
                failed.message
            );
            let still_refused = within(
                harness
                    .connection
                    .send_request(NewSessionRequest::new("/work"))
                    .block_task(),
            )
            .await
            .unwrap_err();
            assert_eq!(still_refused.code, ErrorCode::AUTH_REQUIRED);
        })
        .await;
    assert!(agent.finish().await.status.success());
}

#[tokio::test]
async fn with_the_token_authentication_opens_sessions() {
    let mut agent = AgentProcess::start(&[
        ("HEARTH_TEST_AGENT_AUTH", "1"),
        ("HEARTH_TEST_AGENT_TOKEN", "secret"),
    ]);
    agent
        .client(ClientSetup::default(), async |harness| {
            harness.initialize().await;
            let refused = within(
                harness
                    .connection
                    .send_request(NewSessionRequest::new("/work"))
                    .block_task(),
            )
            .await
            .unwrap_err();
            assert_eq!(refused.code, ErrorCode::AUTH_REQUIRED);
            let wrong = within(
                harness
                    .connection
                    .send_request(AuthenticateRequest::new("other"))
                    .block_task(),
            )
            .await
            .unwrap_err();
            assert_eq!(wrong.code, ErrorCode::INVALID_PARAMS);
            within(
                harness
                    .connection
                    .send_request(AuthenticateRequest::new("test-login"))
                    .block_task(),
            )
            .await
            .unwrap();
            harness.new_session("/work".as_ref()).await;
        })
        .await;
    assert!(agent.finish().await.status.success());
}

/// Runs the agent's terminal sign-in (`login ARGS`) with `answer` on stdin.
fn login(state: &std::path::Path, args: &[&str], answer: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_hearth-acp-test-agent"))
        .arg("login")
        .args(args)
        .env("HEARTH_TEST_AGENT_STATE", state)
        .env("HEARTH_TEST_AGENT_LOGIN_BY", "test")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(answer.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[tokio::test]
async fn the_terminal_sign_in_is_offered_only_to_a_client_that_can_run_it() {
    for (shape, declared) in [
        ("spec", true),
        ("spec", false),
        ("meta", true),
        ("meta", false),
    ] {
        let mut agent = AgentProcess::start(&[("HEARTH_TEST_AGENT_TERMINAL_AUTH", shape)]);
        let setup = ClientSetup {
            terminal_auth: declared,
            ..ClientSetup::default()
        };
        agent
            .client(setup, async |harness| {
                let init = harness.initialize().await;
                let offered: Vec<serde_json::Value> = init
                    .auth_methods
                    .iter()
                    .map(|method| serde_json::to_value(method).unwrap())
                    .collect();
                if !declared {
                    assert_eq!(offered, Vec::<serde_json::Value>::new(), "{shape}");
                    return;
                }
                assert_eq!(offered.len(), 1, "{shape}: {offered:?}");
                let method = &offered[0];
                assert_eq!(method["id"], "test-terminal");
                match shape {
                    "spec" => {
                        assert!(matches!(init.auth_methods[0], AuthMethod::Terminal(_)));
                        assert_eq!(method["args"], serde_json::json!(["login"]));
                        assert_eq!(
                            method["env"],
                            serde_json::json!({"HEARTH_TEST_AGENT_LOGIN_BY": "spec"})
                        );
                    }
                    _ => {
                        assert!(matches!(init.auth_methods[0], AuthMethod::Agent(_)));
                        let terminal = &method["_meta"]["terminal-auth"];
                        assert_eq!(
                            terminal["args"],
                            serde_json::json!(["login", "--from-meta"])
                        );
                        assert!(
                            terminal["command"]
                                .as_str()
                                .unwrap()
                                .ends_with("hearth-acp-test-agent"),
                            "{terminal}"
                        );
                    }
                }
            })
            .await;
        assert!(agent.finish().await.status.success());
    }
}

#[tokio::test]
async fn a_terminal_sign_in_opens_sessions_and_logout_closes_them_again() {
    let state = tempfile::tempdir().unwrap();
    let state_text = state.path().to_str().unwrap();

    // An empty answer cancels: nothing is stored.
    let cancelled = login(state.path(), &[], "\n");
    assert_eq!(cancelled.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&cancelled.stdout).contains("sign-in cancelled"));
    assert!(!state.path().join("signed-in.json").exists());

    let signed = login(state.path(), &["--extra"], "Ada\n");
    assert!(signed.status.success(), "{signed:?}");
    assert_eq!(
        String::from_utf8_lossy(&signed.stdout),
        "test agent sign-in; your name: signed in as Ada\n"
    );
    let stored: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(state.path().join("signed-in.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(stored["name"], "Ada");
    assert_eq!(stored["args"], serde_json::json!(["--extra"]));
    assert_eq!(stored["by"], "test");

    let mut agent = AgentProcess::start(&[
        ("HEARTH_TEST_AGENT_AUTH", "1"),
        ("HEARTH_TEST_AGENT_STATE", state_text),
        ("HEARTH_TEST_AGENT_CAPS", "logout"),
    ]);
    agent
        .client(ClientSetup::default(), async |harness| {
            let init = harness.initialize().await;
            assert!(init.agent_capabilities.auth.logout.is_some());
            harness.new_session("/work".as_ref()).await;
            within(
                harness
                    .connection
                    .send_request(LogoutRequest::new())
                    .block_task(),
            )
            .await
            .unwrap();
            let refused = within(
                harness
                    .connection
                    .send_request(NewSessionRequest::new("/work"))
                    .block_task(),
            )
            .await
            .unwrap_err();
            assert_eq!(refused.code, ErrorCode::AUTH_REQUIRED);
        })
        .await;
    assert!(agent.finish().await.status.success());
    assert!(!state.path().join("signed-in.json").exists());

    // Without the capability, `logout` is not offered.
    let mut agent = AgentProcess::start(&[("HEARTH_TEST_AGENT_CAPS", "none")]);
    agent
        .client(ClientSetup::default(), async |harness| {
            let init = harness.initialize().await;
            assert!(init.agent_capabilities.auth.logout.is_none());
            let refused = within(
                harness
                    .connection
                    .send_request(LogoutRequest::new())
                    .block_task(),
            )
            .await
            .unwrap_err();
            assert_eq!(refused.code, ErrorCode::METHOD_NOT_FOUND);
        })
        .await;
    assert!(agent.finish().await.status.success());
}
