//! The audit log against someone who can write the database: rows cut from the end (a),
//! every row deleted (b), a row rewritten and the chain re-hashed with plain SHA-256
//! (c), an applied proposal whose entry is gone (d), rows re-sealed with the real key
//! (e), and a missing or replaced key. Each case has a control showing the test can
//! fail: the untampered log passes, or the same tampering passes where the log cannot
//! see it (what the README says an attacker who can write everything can still do).

use std::path::PathBuf;

use hearth_store::{AuditDraft, AuditRecord, AuditStore};
use hearth_tools::{AuditCheck, BrokenLink, ChainHead, ChainReport};
use hmac::{Hmac, KeyInit, Mac};
use pretty_assertions::assert_eq;
use serde_json::json;
use sha2::{Digest, Sha256};

use super::support::{Bench, context, user};

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

async fn echo(bench: &Bench, times: usize) {
    for index in 0..times {
        let outcome = bench
            .toolbox()
            .call(&context(), "echo", json!({"text": index.to_string()}))
            .await;
        assert!(!outcome.is_error, "{}", outcome.content);
    }
}

async fn sql(bench: &Bench, statement: &str) {
    sqlx::raw_sql(sqlx::AssertSqlSafe(statement.to_owned()))
        .execute(bench.sqlite().pool())
        .await
        .unwrap();
}

async fn verify(bench: &Bench) -> ChainReport {
    bench.audit.verify().await.unwrap()
}

/// The first failed check: which, where, why.
async fn first_failure(bench: &Bench) -> BrokenLink {
    let report = verify(bench).await;
    match report.broken {
        Some(broken) => broken,
        None => panic!("the log verified as intact: {report:?}"),
    }
}

fn key_file(bench: &Bench) -> PathBuf {
    bench.dir.path().join("audit.key")
}

fn head_file(bench: &Bench) -> PathBuf {
    bench.dir.path().join("audit.head")
}

async fn records(bench: &Bench) -> Vec<AuditRecord> {
    bench.sqlite().audit_after(0, 10_000).await.unwrap()
}

/// How rows were hashed before they were keyed, and how a short script re-hashes them.
fn plain_sha256(record: &AuditRecord) -> String {
    let entry = &record.entry;
    let content = json!([
        "hearth-audit-1",
        record.seq,
        entry.at.timestamp_millis(),
        entry.actor,
        entry.kind,
        entry.tool,
        entry.argument_hash,
        entry.proposal_id,
        entry.decision,
        entry.outcome,
        entry.detail,
        record.prev_hash,
    ]);
    hex(&Sha256::digest(content.to_string().as_bytes()))
}

/// How a keyed row is sealed, by someone who read the key file (`key`).
fn hmac_with(key: &[u8], record: &AuditRecord) -> String {
    let entry = &record.entry;
    let content = json!([
        "hearth-audit-2",
        record.seq,
        entry.at.timestamp_millis(),
        entry.actor,
        entry.kind,
        entry.tool,
        entry.argument_hash,
        entry.proposal_id,
        entry.decision,
        entry.outcome,
        entry.detail,
        record.key_id,
        record.prev_hash,
    ]);
    let mut mac = Hmac::<Sha256>::new_from_slice(key).unwrap();
    mac.update(content.to_string().as_bytes());
    hex(&mac.finalize().into_bytes())
}

/// The tamperer's script: drops the triggers, changes row `from` with `edit`, and
/// re-seals it and every row after it with `seal`, relinking the chain.
async fn rewrite(
    bench: &Bench,
    from: i64,
    edit: impl Fn(&mut AuditRecord),
    seal: impl Fn(&AuditRecord) -> String,
) {
    sql(bench, "DROP TRIGGER IF EXISTS audit_log_no_update").await;
    let mut previous = None;
    for mut record in records(bench).await {
        if record.seq < from {
            previous = Some(record.hash);
            continue;
        }
        if record.seq == from {
            edit(&mut record);
        }
        if let Some(previous) = &previous {
            record.prev_hash.clone_from(previous);
        }
        record.hash = seal(&record);
        sqlx::query(
            "UPDATE audit_log SET outcome = ?, prev_hash = ?, key_id = ?, hash = ? WHERE seq = ?",
        )
        .bind(&record.entry.outcome)
        .bind(&record.prev_hash)
        .bind(record.key_id.as_deref())
        .bind(&record.hash)
        .bind(record.seq)
        .execute(bench.sqlite().pool())
        .await
        .unwrap();
        previous = Some(record.hash);
    }
}

fn cover_up(record: &mut AuditRecord) {
    record.entry.outcome = "ok: nothing happened".to_owned();
}

/// Deletes every row after `last`, as someone who dropped the trigger would.
async fn cut_after(bench: &Bench, last: i64) {
    sql(bench, "DROP TRIGGER IF EXISTS audit_log_no_delete").await;
    sql(bench, &format!("DELETE FROM audit_log WHERE seq > {last}")).await;
}

/// Rewrites the head file to match the table: someone who can write it too.
async fn forge_head_file(bench: &Bench) {
    let text: String = records(bench)
        .await
        .iter()
        .map(|record| {
            format!(
                "{} {} {}\n",
                record.seq,
                record.hash,
                record.entry.at.to_rfc3339()
            )
        })
        .collect();
    std::fs::write(head_file(bench), text).unwrap();
}

/// Rows as Hearth wrote them before rows were keyed: plain SHA-256, no key id.
async fn insert_unkeyed(bench: &Bench, count: i64) {
    let mut previous = hearth_store::AUDIT_GENESIS_HASH.to_owned();
    for seq in 1..=count {
        let mut record = AuditRecord {
            seq,
            entry: AuditDraft {
                at: hearth_core::now(),
                actor: "user".to_owned(),
                kind: "tool_call".to_owned(),
                tool: Some("echo".to_owned()),
                argument_hash: None,
                proposal_id: None,
                decision: "ran".to_owned(),
                outcome: "ok".to_owned(),
                detail: None,
            },
            prev_hash: previous.clone(),
            key_id: None,
            hash: String::new(),
        };
        record.hash = plain_sha256(&record);
        sqlx::query(
            "INSERT INTO audit_log (seq, at, actor, kind, tool, decision, outcome, prev_hash, hash)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(seq)
        .bind(record.entry.at.timestamp_millis())
        .bind(&record.entry.actor)
        .bind(&record.entry.kind)
        .bind(record.entry.tool.as_deref())
        .bind(&record.entry.decision)
        .bind(&record.entry.outcome)
        .bind(&record.prev_hash)
        .bind(&record.hash)
        .execute(bench.sqlite().pool())
        .await
        .unwrap();
        previous = record.hash;
    }
}

// (a) Rows deleted at the tail.
#[tokio::test]
async fn rows_cut_from_the_end_fail_the_tail_check() {
    let bench = Bench::new().await;
    echo(&bench, 5).await;
    let before = verify(&bench).await;
    assert!(before.is_intact(), "control: the untouched log passes");
    assert_eq!(before.recorded_head, before.head);

    cut_after(&bench, 3).await;
    let broken = first_failure(&bench).await;
    assert_eq!((broken.check, broken.seq), (AuditCheck::Tail, Some(4)));
    assert!(
        broken.reason.contains(&format!(
            "the table ends at entry 3, but the head file {} records entry 5",
            head_file(&bench).display()
        )),
        "{}",
        broken.reason
    );
    assert!(
        broken
            .reason
            .contains("entries 4 to 5 were cut from the end"),
        "{}",
        broken.reason
    );
}

// (a), continued: someone who can write the head file too cuts both; only a head kept
// elsewhere shows it.
#[tokio::test]
async fn a_cut_made_in_the_table_and_the_head_file_shows_only_against_a_kept_head() {
    let bench = Bench::new().await;
    echo(&bench, 5).await;
    let kept = verify(&bench).await.head.unwrap();
    cut_after(&bench, 3).await;
    forge_head_file(&bench).await;
    let report = verify(&bench).await;
    assert!(
        report.is_intact(),
        "control: with both rewritten the log itself cannot tell: {report:?}"
    );

    let report = bench.audit.verify_with(&[kept]).await.unwrap();
    let broken = report.broken.unwrap();
    assert_eq!((broken.check, broken.seq), (AuditCheck::Kept, Some(5)));
    assert!(
        broken.reason.contains("the table ends at entry 3"),
        "{}",
        broken.reason
    );
}

// (b) Every row deleted.
#[tokio::test]
async fn deleting_every_row_fails_the_tail_check() {
    let bench = Bench::new().await;
    let empty = verify(&bench).await;
    assert!(
        empty.is_intact() && empty.head.is_none(),
        "control: a log that never had a row passes: {empty:?}"
    );
    echo(&bench, 3).await;
    assert!(verify(&bench).await.is_intact());

    cut_after(&bench, 0).await;
    let broken = first_failure(&bench).await;
    assert_eq!((broken.check, broken.seq), (AuditCheck::Tail, Some(1)));
    assert!(
        broken.reason.contains(&format!(
            "the table has no entries, but the head file {} records entry 3 (",
            head_file(&bench).display()
        )) && broken.reason.contains("every entry was deleted"),
        "{}",
        broken.reason
    );
}

// (b), continued: deleting the head file as well is noticed while keyed rows remain.
#[tokio::test]
async fn a_deleted_head_file_fails_the_tail_check_while_keyed_rows_remain() {
    let bench = Bench::new().await;
    echo(&bench, 3).await;
    cut_after(&bench, 2).await;
    std::fs::remove_file(head_file(&bench)).unwrap();
    let broken = first_failure(&bench).await;
    assert_eq!((broken.check, broken.seq), (AuditCheck::Tail, None));
    assert!(
        broken.reason.contains(&format!(
            "the head file {} is missing",
            head_file(&bench).display()
        )),
        "{}",
        broken.reason
    );
}

// (c) A row rewritten and the chain re-hashed with plain SHA-256: the script that
// passed before rows were keyed.
#[tokio::test]
async fn a_row_rewritten_and_rehashed_with_plain_sha256_fails_the_chain_check() {
    // Control: on rows written before rows were keyed, the script goes unnoticed — the
    // finding this test pins.
    let unkeyed = Bench::new().await;
    insert_unkeyed(&unkeyed, 4).await;
    rewrite(&unkeyed, 2, cover_up, plain_sha256).await;
    let report = verify(&unkeyed).await;
    assert!(report.is_intact(), "{report:?}");
    assert_eq!(report.keyed_from, None);

    // Keyed rows, the key id left as it was.
    let bench = Bench::new().await;
    echo(&bench, 4).await;
    rewrite(&bench, 2, cover_up, plain_sha256).await;
    let broken = first_failure(&bench).await;
    assert_eq!((broken.check, broken.seq), (AuditCheck::Chain, Some(2)));
    assert!(
        broken.reason.contains("does not match its seal"),
        "{}",
        broken.reason
    );

    // Keyed rows passed off as unkeyed from the changed one on.
    let bench = Bench::new().await;
    echo(&bench, 4).await;
    let unkey = |record: &mut AuditRecord| {
        cover_up(record);
        record.key_id = None;
    };
    rewrite(&bench, 2, unkey, plain_sha256).await;
    sql(&bench, "UPDATE audit_log SET key_id = NULL WHERE seq > 2").await;
    let broken = first_failure(&bench).await;
    assert_eq!((broken.check, broken.seq), (AuditCheck::Chain, Some(2)));
    assert!(
        broken.reason.contains("not sealed with the key"),
        "{}",
        broken.reason
    );

    // Every row passed off as unkeyed: a consistent plain chain, which the head file
    // still contradicts.
    let bench = Bench::new().await;
    echo(&bench, 4).await;
    sql(&bench, "DROP TRIGGER audit_log_no_update").await;
    sql(&bench, "UPDATE audit_log SET key_id = NULL").await;
    rewrite(&bench, 1, cover_up, plain_sha256).await;
    let broken = first_failure(&bench).await;
    assert_eq!((broken.check, broken.seq), (AuditCheck::Head, Some(1)));
}

// (d) An applied proposal with no audit entry about it.
#[tokio::test]
async fn an_applied_proposal_without_its_entry_fails_the_proposals_check() {
    let bench = Bench::new().await;
    let proposal = bench.stage("a.md", "x").await;
    bench
        .gate
        .approve_and_apply(&proposal.id, &proposal.payload_hash, &user())
        .await
        .unwrap();
    assert!(
        verify(&bench).await.is_intact(),
        "control: the untouched log passes"
    );
    let last = records(&bench).await.pop().unwrap();
    assert_eq!(
        (
            last.entry.decision.as_str(),
            last.entry.proposal_id.as_deref()
        ),
        ("applied", Some(proposal.id.as_str()))
    );

    // The apply's entry cut, with the head file to match: chain and tail are fine.
    cut_after(&bench, last.seq - 1).await;
    forge_head_file(&bench).await;
    let broken = first_failure(&bench).await;
    assert_eq!((broken.check, broken.seq), (AuditCheck::Proposals, None));
    assert!(
        broken.reason.contains(proposal.id.as_str()),
        "{}",
        broken.reason
    );

    // Control: the same cut of an entry about no applied proposal passes.
    let bench = Bench::new().await;
    let proposal = bench.stage("b.md", "y").await;
    bench
        .gate
        .approve_and_apply(&proposal.id, &proposal.payload_hash, &user())
        .await
        .unwrap();
    echo(&bench, 1).await;
    let last = records(&bench).await.pop().unwrap();
    cut_after(&bench, last.seq - 1).await;
    forge_head_file(&bench).await;
    assert!(verify(&bench).await.is_intact());
}

// (e) Rows rewritten and re-sealed by someone who read the key: the head file does not
// match.
#[tokio::test]
async fn rows_resealed_with_the_key_fail_the_head_check() {
    let bench = Bench::new().await;
    echo(&bench, 5).await;
    let kept = verify(&bench).await.head.unwrap();
    let key = std::fs::read(key_file(&bench)).unwrap();
    rewrite(&bench, 3, cover_up, |record| hmac_with(&key, record)).await;
    let broken = first_failure(&bench).await;
    assert_eq!((broken.check, broken.seq), (AuditCheck::Head, Some(3)));
    assert!(
        broken.reason.contains("re-sealed with the key"),
        "{}",
        broken.reason
    );

    // Control: with the head file rewritten too, the log cannot tell (the README says
    // so) — a head kept elsewhere can.
    forge_head_file(&bench).await;
    assert!(verify(&bench).await.is_intact());
    let report = bench.audit.verify_with(&[kept]).await.unwrap();
    let broken = report.broken.unwrap();
    assert_eq!((broken.check, broken.seq), (AuditCheck::Kept, Some(5)));
    assert!(
        broken.reason.contains("the log was rewritten"),
        "{}",
        broken.reason
    );
    let unchanged = ChainHead {
        seq: 2,
        hash: records(&bench).await[1].hash.clone(),
    };
    assert!(
        bench
            .audit
            .verify_with(&[unchanged])
            .await
            .unwrap()
            .is_intact(),
        "control: a kept head before the rewrite still matches"
    );
}

#[tokio::test]
async fn a_missing_key_with_keyed_rows_fails_and_no_new_key_is_made() {
    let bench = Bench::new().await;
    echo(&bench, 2).await;
    let key = std::fs::read(key_file(&bench)).unwrap();
    std::fs::remove_file(key_file(&bench)).unwrap();
    // A new process, which has not loaded the key yet.
    let bench = bench.restart().await;
    let broken = first_failure(&bench).await;
    assert_eq!((broken.check, broken.seq), (AuditCheck::Key, Some(1)));
    assert!(broken.reason.contains("is missing"), "{}", broken.reason);
    let appended = bench
        .audit
        .append(hearth_tools::AuditEntry::new(
            hearth_tools::Actor::Hearth,
            hearth_tools::AuditKind::ToolCall,
            hearth_tools::Decision::Ran,
            hearth_tools::AuditOutcome::ok(),
        ))
        .await
        .unwrap_err()
        .to_string();
    assert!(appended.contains("is missing"), "{appended}");
    assert!(!key_file(&bench).exists(), "no new key was made");
    assert_eq!(records(&bench).await.len(), 2);

    // Control: the key restored, the log passes and takes new entries.
    std::fs::write(key_file(&bench), &key).unwrap();
    echo(&bench, 1).await;
    let report = verify(&bench).await;
    assert!(report.is_intact(), "{report:?}");
    assert_eq!(report.rows, 3);
}

#[tokio::test]
async fn a_replaced_key_fails_the_key_check() {
    let bench = Bench::new().await;
    echo(&bench, 2).await;
    assert!(verify(&bench).await.is_intact(), "control");
    std::fs::write(key_file(&bench), [7_u8; 32]).unwrap();
    let broken = first_failure(&bench).await;
    assert_eq!((broken.check, broken.seq), (AuditCheck::Key, Some(1)));
    assert!(broken.reason.contains("holds key"), "{}", broken.reason);
}

#[tokio::test]
async fn rows_from_before_the_key_still_verify_and_the_first_keyed_row_covers_them() {
    let bench = Bench::new().await;
    insert_unkeyed(&bench, 3).await;
    let report = verify(&bench).await;
    assert!(report.is_intact(), "{report:?}");
    assert_eq!(report.keyed_from, None);
    assert!(!key_file(&bench).exists(), "verifying makes no key");

    echo(&bench, 2).await;
    let report = verify(&bench).await;
    assert!(report.is_intact(), "{report:?}");
    assert_eq!(report.keyed_from, Some(4));
    assert_eq!(report.head.as_ref().map(|head| head.seq), Some(5));

    // The first keyed row's seal covers the rows before it: re-hashing from an unkeyed
    // row on fails there.
    rewrite(&bench, 2, cover_up, plain_sha256).await;
    let broken = first_failure(&bench).await;
    assert_eq!((broken.check, broken.seq), (AuditCheck::Chain, Some(4)));
}
