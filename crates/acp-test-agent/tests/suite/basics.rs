//! Start-up, a new session and the plain echo.

use agent_client_protocol::ErrorCode;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    NewSessionRequest, SessionId, SessionUpdate, SetSessionConfigOptionRequest, StopReason,
};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{AgentProcess, ClientSetup, chunks, text_prompt, within};

#[tokio::test]
async fn initialize_new_session_and_an_echo() {
    let state = tempfile::tempdir().unwrap();
    let mut agent =
        AgentProcess::start(&[("HEARTH_TEST_AGENT_STATE", state.path().to_str().unwrap())]);
    agent
        .client(ClientSetup::default(), async |mut harness| {
            let init = harness.initialize().await;
            assert_eq!(init.protocol_version, ProtocolVersion::V1);
            let info = init.agent_info.unwrap();
            assert_eq!(info.name, "hearth-acp-test-agent");
            assert_eq!(info.version, env!("CARGO_PKG_VERSION"));
            assert!(init.auth_methods.is_empty());
            assert_eq!(
                serde_json::to_value(&init.agent_capabilities).unwrap(),
                json!({
                    "loadSession": true,
                    "promptCapabilities": {"image": true, "audio": false, "embeddedContext": true},
                    "mcpCapabilities": {"http": false, "sse": false},
                    "sessionCapabilities": {"list": {}, "fork": {}, "resume": {}, "close": {}},
                    "auth": {},
                })
            );

            let created = within(
                harness
                    .connection
                    .send_request(NewSessionRequest::new("/work/project"))
                    .block_task(),
            )
            .await
            .unwrap();
            assert_eq!(
                serde_json::to_value(created.config_options.unwrap()).unwrap(),
                json!([{
                    "id": "model",
                    "name": "Model",
                    "description": "The model that answers in this session",
                    "category": "model",
                    "type": "select",
                    "currentValue": "test-small",
                    "options": [
                        {"value": "test-small", "name": "Test small"},
                        {"value": "test-large", "name": "Test large"},
                    ],
                }])
            );
            let SessionUpdate::AvailableCommandsUpdate(commands) = harness.next_update().await
            else {
                panic!("available_commands_update comes right after session/new");
            };
            let names: Vec<&str> = commands
                .available_commands
                .iter()
                .map(|command| command.name.as_str())
                .collect();
            assert_eq!(names, ["slow", "write", "read"]);

            let answer = harness.prompt(&created.session_id, "hello there").await;
            assert_eq!(answer.stop_reason, StopReason::EndTurn);
            assert_eq!(
                chunks(&harness.received()),
                vec![
                    ("agent", "echo: ".to_owned()),
                    ("agent", "hello there".to_owned())
                ]
            );
        })
        .await;
    assert!(agent.finish().await.status.success());
}

#[tokio::test]
async fn the_model_option_changes_and_refuses_unknown_values() {
    let mut agent = AgentProcess::start(&[]);
    agent
        .client(ClientSetup::default(), async |mut harness| {
            harness.initialize().await;
            let session = harness.new_session("/work".as_ref()).await;
            harness.next_update().await;
            let changed = within(
                harness
                    .connection
                    .send_request(SetSessionConfigOptionRequest::new(
                        session.clone(),
                        "model",
                        "test-large",
                    ))
                    .block_task(),
            )
            .await
            .unwrap();
            let current =
                serde_json::to_value(&changed.config_options).unwrap()[0]["currentValue"].clone();
            assert_eq!(current, json!("test-large"));
            let SessionUpdate::ConfigOptionUpdate(update) = harness.next_update().await else {
                panic!("config_option_update follows the change");
            };
            assert_eq!(update.config_options, changed.config_options);

            let refused = within(
                harness
                    .connection
                    .send_request(SetSessionConfigOptionRequest::new(
                        session.clone(),
                        "model",
                        "test-huge",
                    ))
                    .block_task(),
            )
            .await
            .unwrap_err();
            assert_eq!(refused.code, ErrorCode::INVALID_PARAMS);
            assert!(refused.message.contains("test-huge"), "{}", refused.message);
        })
        .await;
    assert!(agent.finish().await.status.success());
}

#[tokio::test]
async fn an_unknown_session_is_named_in_the_error() {
    let mut agent = AgentProcess::start(&[]);
    agent
        .client(ClientSetup::default(), async |harness| {
            harness.initialize().await;
            let ghost = SessionId::new("0190aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee");
            let error = within(
                harness
                    .connection
                    .send_request(text_prompt(&ghost, "hello"))
                    .block_task(),
            )
            .await
            .unwrap_err();
            assert_eq!(error.code, ErrorCode::RESOURCE_NOT_FOUND);
            assert!(
                error.message.contains(ghost.0.as_ref()),
                "{}",
                error.message
            );
            assert_eq!(error.data, Some(json!({ "sessionId": ghost.0.as_ref() })));
        })
        .await;
    assert!(agent.finish().await.status.success());
}

#[tokio::test]
async fn chunks_arrive_whole_and_in_order() {
    let mut agent = AgentProcess::start(&[]);
    agent
        .client(ClientSetup::default(), async |mut harness| {
            harness.initialize().await;
            let session = harness.new_session("/work".as_ref()).await;
            harness.next_update().await;
            let answer = harness.prompt(&session, "/chunks 1000 8").await;
            assert_eq!(answer.stop_reason, StopReason::EndTurn);
            let texts: Vec<String> = chunks(&harness.received())
                .into_iter()
                .map(|(_, text)| text)
                .collect();
            let expected: Vec<String> = (0..1000).map(|index| format!("{index:07}\n")).collect();
            assert_eq!(texts, expected);
        })
        .await;
    assert!(agent.finish().await.status.success());
}
