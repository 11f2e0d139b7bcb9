//! `/write`: the tool call, the permission request, and the client's write.

use std::path::PathBuf;

use agent_client_protocol::v1::schema::{
    Diff, PermissionOptionKind, SessionUpdate, StopReason, ToolCallContent, ToolCallStatus,
    ToolKind,
};
use pretty_assertions::assert_eq;

use super::support::{AgentProcess, ClientSetup, chunks};

fn statuses(updates: &[SessionUpdate]) -> Vec<ToolCallStatus> {
    updates
        .iter()
        .filter_map(|update| match update {
            SessionUpdate::ToolCall(call) => Some(call.status),
            SessionUpdate::ToolCallUpdate(update) => update.fields.status,
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn an_allowed_write_goes_through_the_client() {
    let setup = ClientSetup {
        permission: Some("allow-once"),
        files: [(PathBuf::from("/project/notes.txt"), "old text".to_owned())].into(),
        ..ClientSetup::default()
    };
    let mut agent = AgentProcess::start(&[]);
    agent
        .client(setup, async |mut harness| {
            harness.initialize().await;
            let session = harness.new_session("/project".as_ref()).await;
            harness.next_update().await;
            let answer = harness
                .prompt(&session, "/write /project/notes.txt new  text")
                .await;
            assert_eq!(answer.stop_reason, StopReason::EndTurn);

            let permissions = harness.log.permissions.lock().unwrap().clone();
            assert_eq!(permissions.len(), 1);
            let request = &permissions[0];
            assert_eq!(request.session_id, session);
            let options: Vec<(&str, PermissionOptionKind)> = request
                .options
                .iter()
                .map(|option| (option.option_id.0.as_ref(), option.kind))
                .collect();
            assert_eq!(
                options,
                vec![
                    ("allow-once", PermissionOptionKind::AllowOnce),
                    ("allow-always", PermissionOptionKind::AllowAlways),
                    ("reject-once", PermissionOptionKind::RejectOnce),
                    ("reject-always", PermissionOptionKind::RejectAlways),
                ]
            );
            let fields = &request.tool_call.fields;
            assert_eq!(fields.title.as_deref(), Some("Write /project/notes.txt"));
            assert_eq!(fields.kind, Some(ToolKind::Edit));
            assert_eq!(fields.status, Some(ToolCallStatus::Pending));
            assert_eq!(
                fields.content,
                Some(vec![ToolCallContent::Diff(
                    Diff::new("/project/notes.txt", "new  text").old_text("old text".to_owned())
                )])
            );

            let writes = harness.log.writes.lock().unwrap().clone();
            assert_eq!(writes.len(), 1);
            assert_eq!(writes[0].session_id, session);
            assert_eq!(writes[0].path, PathBuf::from("/project/notes.txt"));
            assert_eq!(writes[0].content, "new  text");

            let updates = harness.received();
            assert_eq!(
                statuses(&updates),
                vec![ToolCallStatus::Pending, ToolCallStatus::Completed]
            );
            assert_eq!(
                chunks(&updates),
                vec![("agent", "wrote /project/notes.txt".to_owned())]
            );
        })
        .await;
    assert!(agent.finish().await.status.success());
}

#[tokio::test]
async fn a_rejected_write_writes_nothing() {
    let setup = ClientSetup {
        permission: Some("reject-once"),
        ..ClientSetup::default()
    };
    let mut agent = AgentProcess::start(&[]);
    agent
        .client(setup, async |mut harness| {
            harness.initialize().await;
            let session = harness.new_session("/project".as_ref()).await;
            harness.next_update().await;
            let answer = harness.prompt(&session, "/write ../../etc/passwd x").await;
            assert_eq!(answer.stop_reason, StopReason::EndTurn);
            assert_eq!(harness.log.permissions.lock().unwrap().len(), 1);
            assert!(harness.log.writes.lock().unwrap().is_empty());
            let updates = harness.received();
            assert_eq!(
                statuses(&updates),
                vec![ToolCallStatus::Pending, ToolCallStatus::Failed]
            );
            assert_eq!(chunks(&updates), vec![("agent", "not allowed".to_owned())]);
        })
        .await;
    assert!(agent.finish().await.status.success());
}

#[tokio::test]
async fn a_cancelled_permission_ends_the_turn_cancelled() {
    let mut agent = AgentProcess::start(&[]);
    agent
        .client(ClientSetup::default(), async |harness| {
            harness.initialize().await;
            let session = harness.new_session("/project".as_ref()).await;
            let answer = harness.prompt(&session, "/write /project/a.txt x").await;
            assert_eq!(answer.stop_reason, StopReason::Cancelled);
            assert!(harness.log.writes.lock().unwrap().is_empty());
        })
        .await;
    assert!(agent.finish().await.status.success());
}
