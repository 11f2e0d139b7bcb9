//! The audit log: what is recorded, append-only triggers, the hash chain, redaction,
//! export.

use hearth_core::ChatUri;
use hearth_tools::{AuditQuery, AuditRow, REDACTED};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{Bench, context, on_every_backend, user};

on_every_backend!(
    every_call_decision_and_apply_is_recorded_in_order,
    verify_walks_an_intact_chain,
    detached_entries_are_written_in_order_before_the_next_append,
    export_keeps_the_newest_rows_oldest_first_as_json_lines,
);

fn summary(rows: &[AuditRow]) -> Vec<(String, Option<String>, String, String)> {
    rows.iter()
        .map(|row| {
            (
                row.entry.kind.clone(),
                row.entry.tool.clone(),
                row.entry.decision.clone(),
                row.entry.outcome.split(':').next().unwrap().to_owned(),
            )
        })
        .collect()
}

async fn oldest_first(bench: &Bench) -> Vec<AuditRow> {
    bench.audit.export(1000).await.unwrap()
}

async fn every_call_decision_and_apply_is_recorded_in_order(bench: Bench) {
    let toolbox = bench.toolbox();
    let call = context();
    toolbox.call(&call, "echo", json!({"text": "hi"})).await;
    toolbox.call(&call, "approve", json!({})).await;
    toolbox.call(&call, "echo", json!({"text": 5})).await;
    let proposal = bench.stage("a.md", "x").await;
    bench
        .gate
        .approve_and_apply(&proposal.id, &proposal.payload_hash, &user())
        .await
        .unwrap();
    let rejected = bench.stage("b.md", "y").await;
    bench
        .gate
        .reject(&rejected.id, &user(), None)
        .await
        .unwrap();
    bench
        .audit
        .record_permission(&user(), &call.chat, "request-1", "Run `ls`?", "allow_once")
        .await
        .unwrap();
    let rows = oldest_first(&bench).await;
    let tool = |name: &str| Some(name.to_owned());
    assert_eq!(
        summary(&rows),
        [
            ("tool_call".into(), tool("echo"), "ran".into(), "ok".into()),
            (
                "tool_call".into(),
                tool("approve"),
                "denied".into(),
                "error".into()
            ),
            (
                "tool_call".into(),
                tool("echo"),
                "denied".into(),
                "error".into()
            ),
            (
                "tool_call".into(),
                tool("note_write"),
                "staged".into(),
                "ok".into()
            ),
            (
                "proposal".into(),
                tool("note_write"),
                "approved".into(),
                "ok".into()
            ),
            (
                "proposal".into(),
                tool("note_write"),
                "applied".into(),
                "ok".into()
            ),
            (
                "tool_call".into(),
                tool("note_write"),
                "staged".into(),
                "ok".into()
            ),
            (
                "proposal".into(),
                tool("note_write"),
                "rejected".into(),
                "ok".into()
            ),
            ("permission".into(), None, "answered".into(), "ok".into()),
        ]
    );
    assert_eq!(rows[0].entry.actor, call.chat.to_string());
    assert_eq!(
        rows[0].entry.argument_hash.as_deref(),
        Some(hearth_tools::value_hash(&json!({"text": "hi"})).as_str())
    );
    assert_eq!(rows[4].entry.actor, "user");
    assert_eq!(
        rows[4].entry.proposal_id.as_deref(),
        Some(proposal.id.as_str())
    );
    assert_eq!(
        rows[4].entry.argument_hash.as_deref(),
        Some(proposal.payload_hash.as_str())
    );
    assert_eq!(rows[4].entry.detail.as_ref().unwrap()["via"], "test");
    assert_eq!(
        rows[8].entry.detail.as_ref().unwrap()["option"],
        "allow_once"
    );
    assert_eq!(
        rows.iter().map(|row| row.seq).collect::<Vec<_>>(),
        (1..=9).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn the_table_refuses_update_and_delete() {
    let bench = Bench::new().await;
    bench
        .toolbox()
        .call(&context(), "echo", json!({"text": "hi"}))
        .await;
    let update = sqlx::query("UPDATE audit_log SET outcome = 'ok: nothing happened'")
        .execute(bench.sqlite().pool())
        .await
        .unwrap_err();
    assert!(update.to_string().contains("append-only"), "{update}");
    let delete = sqlx::query("DELETE FROM audit_log")
        .execute(bench.sqlite().pool())
        .await
        .unwrap_err();
    assert!(delete.to_string().contains("append-only"), "{delete}");
    assert_eq!(oldest_first(&bench).await.len(), 1);
}

async fn verify_walks_an_intact_chain(bench: Bench) {
    let empty = bench.audit.verify().await.unwrap();
    assert_eq!(
        (empty.rows, empty.head.clone(), empty.is_intact()),
        (0, None, true)
    );
    for index in 0..5 {
        bench
            .toolbox()
            .call(&context(), "echo", json!({"text": index.to_string()}))
            .await;
    }
    let report = bench.audit.verify().await.unwrap();
    let rows = oldest_first(&bench).await;
    assert_eq!(report.rows, 5);
    assert!(report.is_intact());
    assert_eq!(
        report.head,
        Some(hearth_tools::ChainHead {
            seq: 5,
            hash: rows[4].hash.clone()
        })
    );
    assert_eq!(report.keyed_from, Some(1));
    assert_eq!(rows[0].prev_hash, hearth_store::AUDIT_GENESIS_HASH);
    for pair in rows.windows(2) {
        assert_eq!(pair[1].prev_hash, pair[0].hash);
    }
}

#[tokio::test]
async fn verify_names_the_first_changed_row() {
    let bench = Bench::new().await;
    for index in 0..5 {
        bench
            .toolbox()
            .call(&context(), "echo", json!({"text": index.to_string()}))
            .await;
    }
    sqlx::query("DROP TRIGGER audit_log_no_update")
        .execute(bench.sqlite().pool())
        .await
        .unwrap();
    sqlx::query("UPDATE audit_log SET outcome = 'error: covered up' WHERE seq = 3")
        .execute(bench.sqlite().pool())
        .await
        .unwrap();
    let report = bench.audit.verify().await.unwrap();
    let broken = report.broken.expect("the chain is broken");
    assert_eq!(broken.seq, Some(3));
    assert!(broken.reason.contains("changed"), "{}", broken.reason);
}

#[tokio::test]
async fn verify_notices_a_rehashed_row_and_a_deleted_row() {
    let bench = Bench::new().await;
    for index in 0..4 {
        bench
            .toolbox()
            .call(&context(), "echo", json!({"text": index.to_string()}))
            .await;
    }
    sqlx::query("DROP TRIGGER audit_log_no_update")
        .execute(bench.sqlite().pool())
        .await
        .unwrap();
    // A forger who also replaces the row's hash breaks the next row's link.
    sqlx::query("UPDATE audit_log SET hash = '0123' WHERE seq = 2")
        .execute(bench.sqlite().pool())
        .await
        .unwrap();
    let broken = bench.audit.verify().await.unwrap().broken.unwrap();
    assert_eq!(broken.seq, Some(2));

    let bench = Bench::new().await;
    for index in 0..4 {
        bench
            .toolbox()
            .call(&context(), "echo", json!({"text": index.to_string()}))
            .await;
    }
    sqlx::query("DROP TRIGGER audit_log_no_delete")
        .execute(bench.sqlite().pool())
        .await
        .unwrap();
    sqlx::query("DELETE FROM audit_log WHERE seq = 2")
        .execute(bench.sqlite().pool())
        .await
        .unwrap();
    let broken = bench.audit.verify().await.unwrap().broken.unwrap();
    assert_eq!(broken.seq, Some(3));
    assert!(broken.reason.contains("missing"), "{}", broken.reason);
}

#[tokio::test]
async fn secrets_are_redacted_before_they_are_stored() {
    let bench = Bench::new().await;
    let toolbox = bench.toolbox();
    toolbox
        .call(
            &context(),
            "echo",
            json!({"text": "see https://example.com/?token=abc123 now", "api_key": "k-123456789"}),
        )
        .await;
    let outcome = toolbox.call(&context(), "fail", json!({})).await;
    // The model is told the error as it is; the audit log keeps it redacted.
    assert!(outcome.content.contains("sk-live-0123456789abcdefghij"));
    let rows = oldest_first(&bench).await;
    let arguments = &rows[0].entry.detail.as_ref().unwrap()["arguments"];
    assert_eq!(arguments["api_key"], REDACTED);
    assert_eq!(
        arguments["text"],
        format!("see https://example.com/?token={REDACTED} now")
    );
    assert_eq!(
        rows[1].entry.outcome,
        format!("error: `fail`: upstream refused Authorization: Bearer {REDACTED}")
    );
    let stored: Vec<String> =
        sqlx::query_scalar("SELECT outcome || COALESCE(detail, '') FROM audit_log")
            .fetch_all(bench.sqlite().pool())
            .await
            .unwrap();
    for text in stored {
        assert!(!text.contains("k-123456789"), "{text}");
        assert!(!text.contains("abc123"), "{text}");
        assert!(!text.contains("0123456789abcdefghij"), "{text}");
    }
}

async fn detached_entries_are_written_in_order_before_the_next_append(bench: Bench) {
    let chat = ChatUri::default_for(&context().session);
    bench.audit.record_detached(
        hearth_tools::AuditEntry::new(
            hearth_tools::Actor::Agent(chat),
            hearth_tools::AuditKind::Fetch,
            hearth_tools::Decision::Fetched,
            hearth_tools::AuditOutcome::ok(),
        )
        .tool("web_fetch")
        .detail(json!({"url": "https://ann:pw@example.com/"})),
    );
    bench
        .toolbox()
        .call(&context(), "echo", json!({"text": "after"}))
        .await;
    let rows = oldest_first(&bench).await;
    assert_eq!(
        rows.iter()
            .map(|row| row.entry.kind.as_str())
            .collect::<Vec<_>>(),
        ["fetch", "tool_call"]
    );
    assert_eq!(
        rows[0].entry.detail.as_ref().unwrap()["url"],
        format!("https://{REDACTED}@example.com/")
    );
}

async fn export_keeps_the_newest_rows_oldest_first_as_json_lines(bench: Bench) {
    for index in 0..7 {
        bench
            .toolbox()
            .call(&context(), "echo", json!({"text": index.to_string()}))
            .await;
    }
    let text = bench.audit.export_jsonl(3).await.unwrap();
    let seqs: Vec<i64> = text
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["seq"]
                .as_i64()
                .unwrap()
        })
        .collect();
    assert_eq!(seqs, [5, 6, 7]);
    assert!(
        bench.audit.export(0).await.unwrap().is_empty(),
        "keep 0 keeps none"
    );
    assert_eq!(bench.audit.export(1).await.unwrap()[0].seq, 7);
    let listed = bench
        .audit
        .list(&AuditQuery {
            limit: 2,
            ..AuditQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(listed.iter().map(|row| row.seq).collect::<Vec<_>>(), [7, 6]);
}
