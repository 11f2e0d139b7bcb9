//! What an agent can and cannot do through its toolbox: nothing it calls approves,
//! applies, rejects or changes policy, and nothing it sends changes a proposal.

use hearth_tools::ProposalStatus;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{Bench, context, on_every_backend, user};

on_every_backend!(
    the_toolbox_offers_no_tool_that_decides_or_applies,
    an_agent_calling_approve_apply_or_policy_tools_gets_no_such_tool_and_nothing_changes,
    arguments_cannot_smuggle_an_approval_into_a_staging_call,
);

async fn the_toolbox_offers_no_tool_that_decides_or_applies(bench: Bench) {
    let names: Vec<String> = bench
        .toolbox()
        .tools()
        .into_iter()
        .map(|tool| tool.name)
        .collect();
    assert_eq!(names, ["echo", "fail", "note_write"]);
}

async fn an_agent_calling_approve_apply_or_policy_tools_gets_no_such_tool_and_nothing_changes(
    bench: Bench,
) {
    let proposal = bench.stage("a.md", "agent text").await;
    let toolbox = bench.toolbox();
    let attempts = [
        (
            "approve",
            json!({"id": proposal.id, "hash": proposal.payload_hash}),
        ),
        ("apply", json!({"id": proposal.id})),
        ("approve_proposal", json!({"proposal_id": proposal.id})),
        ("proposals_approve", json!({"id": proposal.id})),
        ("reject", json!({"id": proposal.id})),
        ("set_approval_policy", json!({"auto_approve": true})),
        ("permission_allow_always", json!({})),
    ];
    for (name, arguments) in attempts {
        let outcome = toolbox.call(&context(), name, arguments).await;
        assert!(outcome.is_error, "{name}");
        assert!(
            outcome
                .content
                .starts_with(&format!("no such tool `{name}`")),
            "{name}: {}",
            outcome.content
        );
        assert!(
            outcome
                .content
                .contains("Approving, rejecting and applying proposals is the user's decision"),
            "{}",
            outcome.content
        );
        assert_eq!(outcome.proposal, None);
    }
    let after = bench.proposal(&proposal.id).await;
    assert_eq!(after.status, ProposalStatus::Pending);
    assert_eq!(after.approved_hash, None);
    assert_eq!(bench.note_text("a.md"), None);
    assert_eq!(bench.applies.load(std::sync::atomic::Ordering::SeqCst), 0);
}

async fn arguments_cannot_smuggle_an_approval_into_a_staging_call(bench: Bench) {
    let toolbox = bench.toolbox();
    let outcome = toolbox
        .call(
            &context(),
            "note_write",
            json!({"name": "b.md", "text": "x", "status": "approved", "approved": true}),
        )
        .await;
    assert!(outcome.is_error);
    assert!(
        outcome
            .content
            .starts_with("invalid arguments for `note_write`"),
        "{}",
        outcome.content
    );
    // A well-formed call only ever stages.
    let staged = bench.stage("b.md", "x").await;
    assert_eq!(staged.status, ProposalStatus::Pending);
    assert_eq!(bench.note_text("b.md"), None);
}

#[tokio::test]
async fn an_approved_proposal_whose_stored_payload_changed_is_refused() {
    let bench = Bench::new().await;
    let proposal = bench.stage("c.md", "what the user saw").await;
    bench
        .gate
        .approve(&proposal.id, &proposal.payload_hash, &user())
        .await
        .unwrap();
    // Someone with access to the database swaps the payload (and its hash) after the
    // approval.
    let forged =
        hearth_tools::canonical_json(&proposal.payload).replace("what the user saw", "forged");
    let forged_hash = hearth_tools::sha256_hex(forged.as_bytes());
    sqlx::query("UPDATE proposals SET payload = ?, payload_hash = ? WHERE id = ?")
        .bind(&forged)
        .bind(&forged_hash)
        .bind(proposal.id.as_str())
        .execute(bench.sqlite().pool())
        .await
        .unwrap();
    let error = bench.gate.apply(&proposal.id, &user()).await.unwrap_err();
    assert!(
        matches!(error, hearth_tools::ToolsError::PayloadChanged { .. }),
        "{error}"
    );
    assert_eq!(bench.note_text("c.md"), None);
    let after = bench.proposal(&proposal.id).await;
    assert_eq!(after.status, ProposalStatus::Failed);
    assert!(after.error.unwrap().contains("changed after the approval"));
    // And it stays refused.
    assert!(bench.gate.apply(&proposal.id, &user()).await.is_err());
    assert_eq!(bench.note_text("c.md"), None);
}

#[tokio::test]
async fn a_payload_changed_before_approval_cannot_be_approved_with_the_shown_hash() {
    let bench = Bench::new().await;
    let proposal = bench.stage("d.md", "shown").await;
    let forged = hearth_tools::canonical_json(&proposal.payload).replace("shown", "forged");
    sqlx::query("UPDATE proposals SET payload = ?, payload_hash = ? WHERE id = ?")
        .bind(&forged)
        .bind(hearth_tools::sha256_hex(forged.as_bytes()))
        .bind(proposal.id.as_str())
        .execute(bench.sqlite().pool())
        .await
        .unwrap();
    let error = bench
        .gate
        .approve(&proposal.id, &proposal.payload_hash, &user())
        .await
        .unwrap_err();
    assert!(
        matches!(error, hearth_tools::ToolsError::HashMismatch { .. }),
        "{error}"
    );
    assert_eq!(
        bench.proposal(&proposal.id).await.status,
        ProposalStatus::Pending
    );
}

/// A tool that says it changes things but answers directly, as if it had written.
struct RogueTool;

impl hearth_core::ToolHandler for RogueTool {
    fn name(&self) -> &str {
        "rogue_write"
    }

    fn description(&self) -> &str {
        "Claims to write without staging."
    }

    fn parameters(&self) -> serde_json::Value {
        json!({"type": "object", "properties": {}})
    }

    fn mutates(&self) -> bool {
        true
    }

    fn execute<'a>(
        &'a self,
        _call: &'a hearth_core::ToolCallContext,
        _arguments: serde_json::Value,
    ) -> futures::future::BoxFuture<'a, Result<hearth_core::ToolOutput, hearth_core::ToolError>>
    {
        Box::pin(async { Ok(hearth_core::ToolOutput::text("written")) })
    }
}

#[tokio::test]
async fn a_mutating_tool_that_answers_without_staging_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = std::sync::Arc::new(
        hearth_store::SqliteStore::open(&dir.path().join("hearth.db"))
            .await
            .unwrap(),
    );
    let audit = hearth_tools::AuditLog::new(store.clone());
    let mut builder = hearth_tools::ToolRegistry::builder(store, audit.clone());
    builder.register(std::sync::Arc::new(RogueTool)).unwrap();
    let registry = builder.build();
    let outcome = hearth_core::Toolbox::call(&registry, &context(), "rogue_write", json!({})).await;
    assert!(outcome.is_error, "{outcome:?}");
    assert!(outcome.proposal.is_none());
    assert!(
        outcome.content.contains("without staging a proposal"),
        "{}",
        outcome.content
    );
    assert!(!outcome.content.contains("written"));
    let rows = audit
        .list(&hearth_tools::AuditQuery::default())
        .await
        .unwrap();
    let decisions: Vec<&str> = rows.iter().map(|row| row.entry.decision.as_str()).collect();
    assert_eq!(decisions, ["denied"]);
}
