//! Start-up, a new session and the plain echo.

use agent_client_protocol::ErrorCode;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    LoadSessionRequest, NewSessionRequest, SessionId, SessionUpdate, SetSessionConfigOptionRequest,
    StopReason,
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
            assert_eq!(names, ["slow", "settings", "write", "read"]);

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

/// Now on CLOCK_MONOTONIC, in nanoseconds (the clock `/timed` stamps with).
fn monotonic_nanos() -> u64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    u64::try_from(now.tv_sec).unwrap() * 1_000_000_000 + u64::try_from(now.tv_nsec).unwrap()
}

#[tokio::test]
async fn timed_chunks_carry_the_time_they_were_written_at() {
    let mut agent = AgentProcess::start(&[]);
    agent
        .client(ClientSetup::default(), async |mut harness| {
            harness.initialize().await;
            let session = harness.new_session("/work".as_ref()).await;
            harness.next_update().await;
            let before = monotonic_nanos();
            let answer = harness.prompt(&session, "/timed 20").await;
            let after = monotonic_nanos();
            assert_eq!(answer.stop_reason, StopReason::EndTurn);
            let texts: Vec<String> = chunks(&harness.received())
                .into_iter()
                .map(|(kind, text)| {
                    assert_eq!(kind, "agent");
                    text
                })
                .collect();
            let stamps: Vec<(u32, u64)> = texts
                .iter()
                .map(|text| {
                    let (index, nanos) = text.strip_suffix('\n').unwrap().split_once(' ').unwrap();
                    (index.parse().unwrap(), nanos.parse().unwrap())
                })
                .collect();
            assert_eq!(
                stamps.iter().map(|(index, _)| *index).collect::<Vec<_>>(),
                (0..20).collect::<Vec<_>>()
            );
            // Read from the clock this process reads: after the prompt left, before its
            // answer came, and at least the 1 ms gap apart.
            for (index, nanos) in &stamps {
                assert!(
                    (before..=after).contains(nanos),
                    "chunk {index} stamped {nanos}, outside {before}..={after}"
                );
            }
            for pair in stamps.windows(2) {
                assert!(
                    pair[1].1 - pair[0].1 >= 1_000_000,
                    "chunks {} and {} less than 1 ms apart",
                    pair[0].0,
                    pair[1].0
                );
            }

            // The session's history holds the same text.
            within(
                harness
                    .connection
                    .send_request(LoadSessionRequest::new(session.clone(), "/work"))
                    .block_task(),
            )
            .await
            .unwrap();
            assert_eq!(
                chunks(&harness.received()),
                vec![("user", "/timed 20".to_owned()), ("agent", texts.concat())]
            );
        })
        .await;
    assert!(agent.finish().await.status.success());
}
