//! Sessions outlive the process: a second process lists, loads, resumes and forks.

use agent_client_protocol::v1::schema::{
    ForkSessionRequest, ListSessionsRequest, LoadSessionRequest, ResumeSessionRequest, SessionId,
    StopReason,
};
use pretty_assertions::assert_eq;

use super::support::{AgentProcess, ClientSetup, chunks, within};

#[tokio::test]
async fn a_second_process_lists_and_loads_a_session() {
    let state = tempfile::tempdir().unwrap();
    let env = [("HEARTH_TEST_AGENT_STATE", state.path().to_str().unwrap())];

    let mut first = AgentProcess::start(&env);
    let session: SessionId = first
        .client(ClientSetup::default(), async |harness| {
            harness.initialize().await;
            let session = harness.new_session("/work/one".as_ref()).await;
            for text in ["first question", "second question"] {
                let answer = harness.prompt(&session, text).await;
                assert_eq!(answer.stop_reason, StopReason::EndTurn);
            }
            session
        })
        .await;
    assert!(first.finish().await.status.success());

    let mut second = AgentProcess::start(&env);
    second
        .client(ClientSetup::default(), async |mut harness| {
            harness.initialize().await;
            let listed = within(
                harness
                    .connection
                    .send_request(ListSessionsRequest::new())
                    .block_task(),
            )
            .await
            .unwrap();
            assert_eq!(listed.sessions.len(), 1);
            let info = &listed.sessions[0];
            assert_eq!(info.session_id, session);
            assert_eq!(info.cwd, std::path::PathBuf::from("/work/one"));
            assert_eq!(info.title.as_deref(), Some("first question"));
            assert!(info.updated_at.is_some());
            assert_eq!(listed.next_cursor, None);

            let elsewhere = within(
                harness
                    .connection
                    .send_request(
                        ListSessionsRequest::new().cwd(std::path::PathBuf::from("/work/two")),
                    )
                    .block_task(),
            )
            .await
            .unwrap();
            assert!(elsewhere.sessions.is_empty());

            within(
                harness
                    .connection
                    .send_request(LoadSessionRequest::new(session.clone(), "/work/one"))
                    .block_task(),
            )
            .await
            .unwrap();
            // The replay arrived before the answer.
            assert_eq!(
                chunks(&harness.received()),
                vec![
                    ("user", "first question".to_owned()),
                    ("agent", "echo: first question".to_owned()),
                    ("user", "second question".to_owned()),
                    ("agent", "echo: second question".to_owned()),
                ]
            );
            let answer = harness.prompt(&session, "third").await;
            assert_eq!(answer.stop_reason, StopReason::EndTurn);
        })
        .await;
    assert!(second.finish().await.status.success());

    let mut third = AgentProcess::start(&env);
    third
        .client(ClientSetup::default(), async |mut harness| {
            harness.initialize().await;
            within(
                harness
                    .connection
                    .send_request(ResumeSessionRequest::new(session.clone(), "/work/one"))
                    .block_task(),
            )
            .await
            .unwrap();
            assert!(harness.received().is_empty(), "resume replays nothing");

            let fork = within(
                harness
                    .connection
                    .send_request(ForkSessionRequest::new(session.clone(), "/work/fork"))
                    .block_task(),
            )
            .await
            .unwrap();
            assert_ne!(fork.session_id, session);
            let listed = within(
                harness
                    .connection
                    .send_request(
                        ListSessionsRequest::new().cwd(std::path::PathBuf::from("/work/fork")),
                    )
                    .block_task(),
            )
            .await
            .unwrap();
            let ids: Vec<SessionId> = listed
                .sessions
                .into_iter()
                .map(|info| info.session_id)
                .collect();
            assert_eq!(ids, vec![fork.session_id.clone()]);

            within(
                harness
                    .connection
                    .send_request(LoadSessionRequest::new(
                        fork.session_id.clone(),
                        "/work/fork",
                    ))
                    .block_task(),
            )
            .await
            .unwrap();
            assert_eq!(
                chunks(&harness.received()).len(),
                6,
                "the fork holds three exchanges"
            );
        })
        .await;
    assert!(third.finish().await.status.success());
}
