//! A proposal staged by another process sharing the store (written straight into it
//! here, as a `hearth run` beside the server would) is announced to the root's
//! subscribers like the server's own.

use hearth_core::{ChatUri, SessionUri, TurnId};
use hearth_protocol::{self as wire, Subscribe, SubscribeParams};
use hearth_store::{ProposalRecord, ProposalStatus, ProposalStore};

use super::support::{Setup, TestServer, next_envelope};

fn staged_elsewhere(summary: &str) -> ProposalRecord {
    let session: SessionUri = "hearth-session:fake/elsewhere".parse().unwrap();
    let now = chrono::Utc::now();
    ProposalRecord {
        id: hearth_core::ProposalId::generate(),
        tool: "event_create".into(),
        session: session.clone(),
        chat: ChatUri::default_for(&session),
        turn_id: TurnId::generate(),
        call_id: "call-1".into(),
        summary: summary.into(),
        diff: String::new(),
        payload: "{}".into(),
        payload_hash: "00".repeat(32),
        status: ProposalStatus::Pending,
        approved_hash: None,
        decided_by: None,
        decided_at: None,
        reason: None,
        outcome: None,
        error: None,
        created_at: now,
        expires_at: now + chrono::Duration::days(1),
        updated_at: now,
        applied_at: None,
    }
}

#[tokio::test]
async fn a_proposal_staged_by_another_process_is_announced() {
    let server = TestServer::start_with(Setup {
        approvals: true,
        ..Setup::default()
    })
    .await;
    let (client, mut notifications) = server.client().await;
    client
        .call::<Subscribe>(&SubscribeParams {
            resource: hearth_protocol::ROOT_RESOURCE.to_owned(),
            last_seq: None,
            turn_limit: None,
        })
        .await
        .unwrap();
    let record = staged_elsewhere("Dentist");
    server.host.sqlite().insert_proposal(&record).await.unwrap();
    let envelope = next_envelope(&mut notifications).await;
    match envelope.action {
        wire::Action::ProposalChanged { proposal_id } => {
            assert_eq!(proposal_id, record.id.to_string());
        }
        other => panic!("expected proposalChanged, got {other:?}"),
    }
}
