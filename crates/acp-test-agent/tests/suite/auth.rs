//! `HEARTH_TEST_AGENT_AUTH=1`: session methods wait for `authenticate`.

use agent_client_protocol::ErrorCode;
use agent_client_protocol::v1::schema::{
    AuthMethod, AuthenticateRequest, ListSessionsRequest, NewSessionRequest,
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
