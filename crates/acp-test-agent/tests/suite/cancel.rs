//! `session/cancel` ends a running turn with stop reason `cancelled`.

use agent_client_protocol::v1::schema::{CancelNotification, SessionUpdate, StopReason};
use pretty_assertions::assert_eq;

use super::support::{AgentProcess, ClientSetup, chunk_text, chunks, text_prompt, within};

#[tokio::test]
async fn slow_stops_when_cancelled() {
    let mut agent = AgentProcess::start(&[]);
    agent
        .client(ClientSetup::default(), async |mut harness| {
            harness.initialize().await;
            let session = harness.new_session("/work".as_ref()).await;
            assert!(matches!(
                harness.next_update().await,
                SessionUpdate::AvailableCommandsUpdate(_)
            ));
            // 1000 ticks take 20 s, twice the wait bound: only the cancel ends it in time.
            let pending = harness
                .connection
                .send_request(text_prompt(&session, "/slow 1000"));
            let first = harness.next_update().await;
            assert_eq!(chunk_text(&first), Some(("agent", "tick 1\n".to_owned())));
            harness
                .connection
                .send_notification(CancelNotification::new(session.clone()))
                .unwrap();
            let answer = within(pending.block_task()).await.unwrap();
            assert_eq!(answer.stop_reason, StopReason::Cancelled);
            let ticks = chunks(&harness.received()).len();
            assert!(ticks < 999, "{ticks} more ticks after the cancel");

            // The session takes the next prompt at once.
            let answer = harness.prompt(&session, "again").await;
            assert_eq!(answer.stop_reason, StopReason::EndTurn);
        })
        .await;
    assert!(agent.finish().await.status.success());
}

#[tokio::test]
async fn hang_answers_only_when_cancelled() {
    let mut agent = AgentProcess::start(&[]);
    agent
        .client(ClientSetup::default(), async |mut harness| {
            harness.initialize().await;
            let session = harness.new_session("/work".as_ref()).await;
            harness.next_update().await;
            let pending = harness
                .connection
                .send_request(text_prompt(&session, "/hang"));
            // A prompt on the same session is refused while the hang runs, which proves
            // the hang has started.
            let busy = within(
                harness
                    .connection
                    .send_request(text_prompt(&session, "hello"))
                    .block_task(),
            )
            .await
            .unwrap_err();
            assert!(
                busy.message.contains("already has a turn"),
                "{}",
                busy.message
            );
            harness
                .connection
                .send_notification(CancelNotification::new(session.clone()))
                .unwrap();
            let answer = within(pending.block_task()).await.unwrap();
            assert_eq!(answer.stop_reason, StopReason::Cancelled);
            assert!(harness.received().is_empty());
        })
        .await;
    assert!(agent.finish().await.status.success());
}
