//! Several nodes on one PostgreSQL database: the audit entries they record at once form
//! one chain that verifies, without gap or fork.

use std::sync::Arc;

use hearth_store::PgStore;
use hearth_tools::{
    Actor, AuditEntry, AuditFiles, AuditKind, AuditLog, AuditOutcome, Decision, UserActor,
};
use pretty_assertions::assert_eq;

const ENTRIES_PER_NODE: usize = 50;

fn entry(node: &str, index: usize) -> AuditEntry {
    AuditEntry::new(
        Actor::User(UserActor::new(node)),
        AuditKind::ToolCall,
        Decision::Ran,
        AuditOutcome::ok_with(format!("{node} {index}")),
    )
    .tool("echo")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entries_recorded_by_two_nodes_at_once_verify_as_one_chain() {
    let Some(url) = hearth_test_support::postgres::fresh_database().await else {
        return;
    };
    // The nodes share the log's key and head file, as a team server's nodes share its
    // data directory.
    let dir = tempfile::tempdir().unwrap();
    let files = AuditFiles::in_dir(dir.path());
    let mut nodes = Vec::new();
    for _ in 0..2 {
        let store = Arc::new(PgStore::connect(&url).await.unwrap());
        nodes.push(AuditLog::with_files(store, files.clone()));
    }
    // The first entry makes the key; then both nodes record at once.
    nodes[0].append(entry("first", 0)).await.unwrap();
    let tasks: Vec<_> = nodes
        .iter()
        .zip(["first", "second"])
        .map(|(log, name)| {
            let log = log.clone();
            tokio::spawn(async move {
                for index in 1..=ENTRIES_PER_NODE {
                    log.append(entry(name, index)).await.unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }

    for log in &nodes {
        let report = log.verify().await.unwrap();
        assert!(report.is_intact(), "{:?}", report.broken);
        assert_eq!(report.rows, 2 * ENTRIES_PER_NODE as u64 + 1);
        assert_eq!(report.keyed_from, Some(1));
    }
    // Which node recorded a row, as its outcome says.
    let rows = nodes[1].export(1000).await.unwrap();
    let node = |row: &hearth_tools::AuditRow| row.entry.outcome.contains("second");
    let by_second = rows.iter().filter(|row| node(row)).count();
    let switches = rows
        .windows(2)
        .filter(|pair| node(&pair[0]) != node(&pair[1]))
        .count();
    eprintln!(
        "{} entries from two nodes verify as one chain; the writer changed {switches} times",
        rows.len()
    );
    assert_eq!(by_second, ENTRIES_PER_NODE);
}
