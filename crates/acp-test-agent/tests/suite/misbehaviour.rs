//! The commands that break the rules on purpose.

use agent_client_protocol::v1::schema::StopReason;
use pretty_assertions::assert_eq;

use super::support::{AgentProcess, ClientSetup, chunks, text_prompt, within};

#[tokio::test]
async fn crash_exits_with_status_3_mid_turn() {
    let mut agent = AgentProcess::start(&[]);
    agent
        .client(ClientSetup::default(), async |mut harness| {
            harness.initialize().await;
            let session = harness.new_session("/work".as_ref()).await;
            harness.next_update().await;
            let answer = within(
                harness
                    .connection
                    .send_request(text_prompt(&session, "/crash"))
                    .block_task(),
            )
            .await;
            assert!(answer.is_err(), "the turn is never answered: {answer:?}");
            assert_eq!(
                chunks(&harness.received()),
                vec![("agent", "partial".to_owned())]
            );
        })
        .await;
    let finished = agent.finish().await;
    assert_eq!(finished.status.code(), Some(3));
    let stderr = finished.stderr;
    assert!(stderr.contains("hearth-acp-test-agent "), "{stderr}");
    assert!(stderr.contains("about to crash"), "{stderr}");
}

#[tokio::test]
async fn junk_lines_sit_between_two_chunks() {
    let mut agent = AgentProcess::start(&[]);
    agent
        .client(ClientSetup::default(), async |mut harness| {
            harness.initialize().await;
            let session = harness.new_session("/work".as_ref()).await;
            harness.next_update().await;
            let answer = harness.prompt(&session, "/junk").await;
            assert_eq!(answer.stop_reason, StopReason::EndTurn);
            assert_eq!(
                chunks(&harness.received()),
                vec![
                    ("agent", "before junk\n".to_owned()),
                    ("agent", "after junk\n".to_owned())
                ]
            );
        })
        .await;
    assert!(agent.finish().await.status.success());
}

#[tokio::test]
async fn stderr_and_pid() {
    let mut agent = AgentProcess::start(&[]);
    let pid = agent
        .client(ClientSetup::default(), async |mut harness| {
            harness.initialize().await;
            let session = harness.new_session("/work".as_ref()).await;
            harness.next_update().await;
            harness.prompt(&session, "/stderr 3").await;
            assert_eq!(
                chunks(&harness.received()),
                vec![("agent", "ok".to_owned())]
            );
            harness.prompt(&session, "/pid").await;
            chunks(&harness.received())[0].1.clone()
        })
        .await;
    let finished = agent.finish().await;
    assert!(finished.status.success());
    let stderr = finished.stderr;
    assert!(stderr.contains(&format!("pid {pid}")), "{stderr}");
    assert!(stderr.contains("stderr line 3 of 3"), "{stderr}");
}
