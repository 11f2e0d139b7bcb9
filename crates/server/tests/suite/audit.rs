//! `audit/verify` through the real router: an intact log gives its head, which a later
//! verify checks; a rewritten entry and a head the log does not hold are reported as
//! problems; a malformed head is refused.

use hearth_protocol::{self as wire, AuditVerify, AuditVerifyParams, ErrorKind};
use hearth_server::ServerError;
use hearth_tools::{Actor, AuditEntry, AuditKind, AuditLog, AuditOutcome, Decision};
use pretty_assertions::assert_eq;

use super::support::{Setup, TestServer};

fn rpc_error(error: ServerError) -> wire::RpcError {
    match error {
        ServerError::Rpc(error) => error,
        other => panic!("expected an error response, got {other}"),
    }
}

#[tokio::test]
async fn the_audit_log_is_verified_and_tampering_is_reported() {
    let server = TestServer::start_with(Setup {
        approvals: true,
        ..Setup::default()
    })
    .await;
    let (client, _notifications) = server.client().await;
    let log = AuditLog::new(server.host.sqlite());
    for tool in ["events_list", "calendar_list", "event_get"] {
        let mut entry = AuditEntry::new(
            Actor::Hearth,
            AuditKind::ToolCall,
            Decision::Ran,
            AuditOutcome::Ok(None),
        );
        entry.tool = Some(tool.into());
        log.append(entry).await.unwrap();
    }

    let intact = client
        .call::<AuditVerify>(&AuditVerifyParams::default())
        .await
        .unwrap();
    assert!(intact.ok, "{intact:?}");
    assert_eq!(intact.entries, 3);
    assert_eq!(intact.problem, None);
    let head = intact.head.clone().expect("an intact log has a head");
    assert!(head.starts_with("3:"), "{head}");
    let kept = client
        .call::<AuditVerify>(&AuditVerifyParams {
            head: Some(head.clone()),
        })
        .await
        .unwrap();
    assert_eq!(kept, intact);

    let foreign = format!("2:{}", "ab".repeat(32));
    let not_held = client
        .call::<AuditVerify>(&AuditVerifyParams {
            head: Some(foreign),
        })
        .await
        .unwrap();
    assert!(!not_held.ok);
    assert!(
        not_held
            .problem
            .as_deref()
            .is_some_and(|p| p.contains("kept head")),
        "{not_held:?}"
    );

    let malformed = rpc_error(
        client
            .call::<AuditVerify>(&AuditVerifyParams {
                head: Some("yesterday".into()),
            })
            .await
            .unwrap_err(),
    );
    assert_eq!(malformed.kind(), ErrorKind::InvalidParams);
    assert!(malformed.message.contains("SEQ:HASH"), "{malformed:?}");

    // What someone with the database file could do: drop the guard and rewrite a row.
    for statement in [
        "DROP TRIGGER audit_log_no_update",
        "UPDATE audit_log SET tool = 'event_delete' WHERE seq = 2",
    ] {
        sqlx::query(statement)
            .execute(server.host.sqlite().pool())
            .await
            .unwrap();
    }
    let broken = client
        .call::<AuditVerify>(&AuditVerifyParams::default())
        .await
        .unwrap();
    assert!(!broken.ok, "{broken:?}");
    assert_eq!(broken.head, None);
    let problem = broken.problem.unwrap_or_default();
    assert!(
        problem.contains("broken at entry 2 (chain check)"),
        "{problem}"
    );
}
