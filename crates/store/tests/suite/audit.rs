//! The audit log's rows: each appended row takes the next sequence number and links to
//! the last row's hash, listings filter and page, applied proposals without their entry
//! are found; and appends from two nodes at once keep one chain, without gap or fork.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use hearth_store::{
    AUDIT_GENESIS_HASH, AuditDraft, AuditKeyUse, AuditQuery, AuditRecord, AuditSealer, AuditStore,
    PgStore, ProposalStatus, UnauditedApply,
};
use pretty_assertions::assert_eq;

use super::fixtures::{Backend, at, on_every_backend, pending_proposal, session_uri, two_nodes};

on_every_backend!(
    appended_rows_chain_in_order_and_list_newest_first,
    an_applied_proposal_is_unaudited_until_its_applied_entry_is_appended,
);

/// Seals with a hash of everything the row holds (the store treats seals as opaque).
struct TestSealer;

impl AuditSealer for TestSealer {
    fn key_id(&self) -> &str {
        "test-key"
    }

    fn seal(&self, record: &AuditRecord) -> String {
        let unsealed = AuditRecord {
            hash: String::new(),
            ..record.clone()
        };
        let mut hasher = DefaultHasher::new();
        format!("{unsealed:?}").hash(&mut hasher);
        format!("{:016x}", hasher.finish())
    }
}

fn draft(actor: &str, tool: Option<&str>, minute: i64) -> AuditDraft {
    AuditDraft {
        at: at(minute),
        actor: actor.into(),
        kind: "tool_call".into(),
        tool: tool.map(str::to_owned),
        argument_hash: Some("args".into()),
        proposal_id: None,
        decision: "allowed".into(),
        outcome: "ok".into(),
        detail: Some("{\"note\":1}".into()),
    }
}

/// Every row, oldest first, read as a verifier walks the chain: in batches after the
/// last sequence number read.
async fn whole_chain(store: &dyn AuditStore) -> Vec<AuditRecord> {
    let mut rows = Vec::new();
    loop {
        let after = rows.last().map_or(0, |row: &AuditRecord| row.seq);
        let batch = store.audit_after(after, 7).await.unwrap();
        if batch.is_empty() {
            return rows;
        }
        rows.extend(batch);
    }
}

/// Where the chain breaks, if it does: each row has the next sequence number from 1,
/// links to the hash of the row before it (the genesis hash for the first), and its
/// hash recomputes.
fn first_break(rows: &[AuditRecord]) -> Option<String> {
    let mut previous = AUDIT_GENESIS_HASH.to_owned();
    for (index, row) in rows.iter().enumerate() {
        let expected = index as i64 + 1;
        if row.seq != expected {
            return Some(format!("row {index} has seq {}, not {expected}", row.seq));
        }
        if row.prev_hash != previous {
            return Some(format!(
                "row {} does not link to row {}",
                row.seq,
                row.seq - 1
            ));
        }
        if row.hash != TestSealer.seal(row) {
            return Some(format!("row {}'s hash does not recompute", row.seq));
        }
        previous = row.hash.clone();
    }
    None
}

async fn appended_rows_chain_in_order_and_list_newest_first(store: Arc<dyn Backend>) {
    assert_eq!(store.database_file(), None);
    assert_eq!(store.last_keyed_audit().await.unwrap(), None);
    let drafts = [
        draft("user", Some("note_write"), 0),
        draft("hearth", None, 1),
        draft("user", Some("fetch"), 2),
        draft("user", Some("note_write"), 3),
    ];
    let mut appended = Vec::new();
    for entry in &drafts {
        appended.push(store.append_audit(entry, &TestSealer).await.unwrap());
    }
    let chain = whole_chain(&*store).await;
    assert_eq!(chain, appended);
    assert_eq!(first_break(&chain), None);
    assert_eq!(
        chain.iter().map(|row| &row.entry).collect::<Vec<_>>(),
        drafts.iter().collect::<Vec<_>>()
    );
    assert_eq!(
        store.last_keyed_audit().await.unwrap(),
        Some(AuditKeyUse {
            seq: 4,
            key_id: "test-key".into()
        })
    );

    let seqs = |rows: Vec<AuditRecord>| rows.iter().map(|row| row.seq).collect::<Vec<_>>();
    let page = |query: AuditQuery| {
        let store = Arc::clone(&store);
        async move { seqs(store.audit_page(&query).await.unwrap()) }
    };
    assert_eq!(page(AuditQuery::default()).await, vec![4, 3, 2, 1]);
    assert_eq!(
        page(AuditQuery {
            before: Some(4),
            limit: 2,
            ..AuditQuery::default()
        })
        .await,
        vec![3, 2]
    );
    assert_eq!(
        page(AuditQuery {
            actor: Some("user".into()),
            tool: Some("note_write".into()),
            ..AuditQuery::default()
        })
        .await,
        vec![4, 1]
    );
    assert_eq!(seqs(store.audit_after(2, 100).await.unwrap()), vec![3, 4]);
}

async fn an_applied_proposal_is_unaudited_until_its_applied_entry_is_appended(
    store: Arc<dyn Backend>,
) {
    let session = session_uri("openai");
    let applied = pending_proposal(&session, at(0), "h");
    let pending = pending_proposal(&session, at(0), "h");
    store.insert_proposal(&applied).await.unwrap();
    store.insert_proposal(&pending).await.unwrap();
    assert!(
        store
            .approve_proposal(&applied.id, "h", "user", at(1))
            .await
            .unwrap()
    );
    assert!(
        store
            .claim_proposal(&applied.id, "h", &applied.payload, at(2))
            .await
            .unwrap()
    );
    assert!(
        store
            .finish_proposal(&applied.id, Ok("done"), at(3))
            .await
            .unwrap()
    );
    assert_eq!(
        store.proposal(&applied.id).await.unwrap().unwrap().status,
        ProposalStatus::Applied
    );
    assert_eq!(
        store.unaudited_applies(10).await.unwrap(),
        vec![UnauditedApply {
            proposal_id: applied.id.to_string(),
            applied_at: Some(at(3)),
        }]
    );

    // An entry of another decision, or of another kind, does not count.
    for (kind, decision) in [("proposal", "approved"), ("tool_call", "applied")] {
        let entry = AuditDraft {
            kind: kind.into(),
            decision: decision.into(),
            proposal_id: Some(applied.id.to_string()),
            ..draft("user", Some("note_write"), 3)
        };
        store.append_audit(&entry, &TestSealer).await.unwrap();
    }
    assert_eq!(store.unaudited_applies(10).await.unwrap().len(), 1);
    let entry = AuditDraft {
        kind: "proposal".into(),
        decision: "applied".into(),
        proposal_id: Some(applied.id.to_string()),
        ..draft("hearth", Some("note_write"), 3)
    };
    store.append_audit(&entry, &TestSealer).await.unwrap();
    assert_eq!(store.unaudited_applies(10).await.unwrap(), vec![]);
}

const APPENDS_PER_NODE: usize = 50;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn appends_from_two_nodes_at_once_keep_one_chain_without_gap_or_fork() {
    let Some((first, second)) = two_nodes().await else {
        return;
    };
    // Each node appends its rows all at once, over its pool's connections, while the
    // other does the same.
    let append_all = |node: Arc<PgStore>, actor: &'static str| {
        tokio::spawn(async move {
            let appends = (0..APPENDS_PER_NODE).map(|index| {
                let node = Arc::clone(&node);
                async move {
                    node.append_audit(&draft(actor, Some("echo"), index as i64), &TestSealer)
                        .await
                        .unwrap()
                }
            });
            futures::future::join_all(appends).await
        })
    };
    let (first, second) = (Arc::new(first), Arc::new(second));
    let (by_first, by_second) = (
        append_all(Arc::clone(&first), "first"),
        append_all(Arc::clone(&second), "second"),
    );
    let (by_first, by_second) = (by_first.await.unwrap(), by_second.await.unwrap());

    let chain = whole_chain(&*first).await;
    assert_eq!(chain.len(), 2 * APPENDS_PER_NODE);
    assert_eq!(first_break(&chain), None);
    // What each append returned is the row stored at its place in the chain.
    for record in by_first.iter().chain(&by_second) {
        assert_eq!(&chain[record.seq as usize - 1], record);
    }
    let interleavings = chain
        .windows(2)
        .filter(|pair| pair[0].entry.actor != pair[1].entry.actor)
        .count();
    eprintln!(
        "{} rows chained; the writer changed {interleavings} times along the chain",
        chain.len()
    );
    // The second node reads the same chain.
    assert_eq!(whole_chain(&*second).await, chain);
}

#[tokio::test]
async fn the_log_on_postgres_refuses_to_change_or_lose_a_row() {
    let Some(url) = hearth_test_support::postgres::fresh_database().await else {
        return;
    };
    let store = PgStore::connect(&url).await.unwrap();
    store
        .append_audit(&draft("user", Some("echo"), 0), &TestSealer)
        .await
        .unwrap();
    for statement in [
        "UPDATE audit_log SET outcome = 'rewritten'",
        "DELETE FROM audit_log",
    ] {
        let error = sqlx::query(statement)
            .execute(store.pool())
            .await
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("the audit log is append-only"),
            "{statement}: {error}"
        );
    }
    let chain = whole_chain(&store).await;
    assert_eq!(chain.len(), 1);
    assert_eq!(
        chain[0].entry.outcome,
        draft("user", Some("echo"), 0).outcome
    );
}
