//! `/read` and `/terminal`: client methods, called only when declared.

use std::path::PathBuf;

use agent_client_protocol::v1::schema::StopReason;
use pretty_assertions::assert_eq;

use super::support::{AgentProcess, ClientSetup, chunks};

#[tokio::test]
async fn read_returns_the_content_or_the_clients_error() {
    let setup = ClientSetup {
        files: [(PathBuf::from("/project/a.txt"), "alpha\n".to_owned())].into(),
        ..ClientSetup::default()
    };
    let mut agent = AgentProcess::start(&[]);
    agent
        .client(setup, async |mut harness| {
            harness.initialize().await;
            let session = harness.new_session("/project".as_ref()).await;
            harness.next_update().await;
            harness.prompt(&session, "/read /project/a.txt").await;
            harness.prompt(&session, "/read /project/missing.txt").await;
            assert_eq!(
                chunks(&harness.received()),
                vec![
                    ("agent", "alpha\n".to_owned()),
                    (
                        "agent",
                        "read failed: no file /project/missing.txt".to_owned()
                    ),
                ]
            );
        })
        .await;
    assert!(agent.finish().await.status.success());
}

#[tokio::test]
async fn terminal_runs_create_wait_output_release() {
    let setup = ClientSetup {
        terminal: true,
        ..ClientSetup::default()
    };
    let mut agent = AgentProcess::start(&[]);
    agent
        .client(setup, async |mut harness| {
            harness.initialize().await;
            let session = harness.new_session("/project".as_ref()).await;
            harness.next_update().await;
            let answer = harness.prompt(&session, "/terminal ls -l src").await;
            assert_eq!(answer.stop_reason, StopReason::EndTurn);
            assert_eq!(
                harness.log.terminal.lock().unwrap().clone(),
                vec![
                    r#"create ls ["-l", "src"] cwd=Some("/project") limit=Some(4096)"#.to_owned(),
                    "wait term-1".to_owned(),
                    "output term-1".to_owned(),
                    "release term-1".to_owned(),
                ]
            );
            assert_eq!(
                chunks(&harness.received()),
                vec![
                    ("agent", "exit code 7\n".to_owned()),
                    ("agent", "hello\n".to_owned())
                ]
            );
        })
        .await;
    assert!(agent.finish().await.status.success());
}

#[tokio::test]
async fn an_undeclared_terminal_is_never_called() {
    let mut agent = AgentProcess::start(&[]);
    agent
        .client(ClientSetup::default(), async |mut harness| {
            harness.initialize().await;
            let session = harness.new_session("/project".as_ref()).await;
            harness.next_update().await;
            harness.prompt(&session, "/terminal ls").await;
            assert!(harness.log.terminal.lock().unwrap().is_empty());
            assert_eq!(
                chunks(&harness.received()),
                vec![(
                    "agent",
                    "terminal failed: the client did not declare terminal in initialize".to_owned()
                )]
            );
        })
        .await;
    assert!(agent.finish().await.status.success());
}
