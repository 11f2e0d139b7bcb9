//! The approval gate: approve and apply, reject, idempotence, expiry, concurrency,
//! restarts.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use chrono::Duration;
use hearth_tools::{ApplyOutcome, ProposalQuery, ProposalStatus, ToolsError};
use pretty_assertions::assert_eq;

use super::support::{Bench, on_every_backend, user};

on_every_backend!(
    approving_the_shown_hash_and_applying_writes_the_change,
    rejecting_writes_nothing_and_rejected_proposals_cannot_be_approved_or_applied,
    a_pending_proposal_cannot_be_applied_without_approval,
    double_approve_and_double_apply_are_no_ops,
    approving_with_another_hash_is_refused,
    an_expired_proposal_cannot_be_approved,
    an_expired_approval_is_refused,
    expiring_sweeps_overdue_proposals_once,
    of_concurrent_applies_exactly_one_applies,
    a_conflict_while_applying_is_recorded_as_failed,
    proposals_survive_a_restart,
    listing_filters_by_status_and_pages,
);

async fn approving_the_shown_hash_and_applying_writes_the_change(bench: Bench) {
    let proposal = bench.stage("a.md", "hello").await;
    assert_eq!(proposal.status, ProposalStatus::Pending);
    assert_eq!(proposal.summary, "Write note 'a.md'");
    assert_eq!(
        proposal.payload_hash,
        hearth_tools::value_hash(&proposal.payload)
    );
    let decided = bench
        .gate
        .approve(&proposal.id, &proposal.payload_hash, &user())
        .await
        .unwrap();
    assert!(decided.changed);
    assert_eq!(decided.proposal.status, ProposalStatus::Approved);
    assert_eq!(
        decided.proposal.approved_hash.as_deref(),
        Some(proposal.payload_hash.as_str())
    );
    assert_eq!(decided.proposal.decided_by.as_deref(), Some("user"));
    assert_eq!(
        bench.note_text("a.md"),
        None,
        "approving alone writes nothing"
    );

    let outcome = bench.gate.apply(&proposal.id, &user()).await.unwrap();
    let ApplyOutcome::Applied {
        proposal: applied,
        summary,
    } = outcome
    else {
        panic!("not applied: {outcome:?}");
    };
    assert_eq!(summary, format!("wrote {}", bench.note("a.md").display()));
    assert_eq!(applied.status, ProposalStatus::Applied);
    assert_eq!(applied.outcome.as_deref(), Some(summary.as_str()));
    assert_eq!(bench.note_text("a.md").as_deref(), Some("hello"));
}

async fn rejecting_writes_nothing_and_rejected_proposals_cannot_be_approved_or_applied(
    bench: Bench,
) {
    let proposal = bench.stage("a.md", "hello").await;
    let decided = bench
        .gate
        .reject(&proposal.id, &user(), Some("not now"))
        .await
        .unwrap();
    assert!(decided.changed);
    assert_eq!(decided.proposal.status, ProposalStatus::Rejected);
    assert_eq!(decided.proposal.reason.as_deref(), Some("not now"));
    assert!(
        !bench
            .gate
            .reject(&proposal.id, &user(), None)
            .await
            .unwrap()
            .changed
    );
    let error = bench
        .gate
        .approve(&proposal.id, &proposal.payload_hash, &user())
        .await
        .unwrap_err();
    assert!(matches!(
        error,
        ToolsError::WrongStatus {
            status: ProposalStatus::Rejected,
            ..
        }
    ));
    assert!(bench.gate.apply(&proposal.id, &user()).await.is_err());
    assert_eq!(bench.note_text("a.md"), None);
}

async fn a_pending_proposal_cannot_be_applied_without_approval(bench: Bench) {
    let proposal = bench.stage("a.md", "hello").await;
    let error = bench.gate.apply(&proposal.id, &user()).await.unwrap_err();
    assert!(matches!(
        error,
        ToolsError::WrongStatus {
            status: ProposalStatus::Pending,
            ..
        }
    ));
    assert_eq!(bench.note_text("a.md"), None);
}

async fn double_approve_and_double_apply_are_no_ops(bench: Bench) {
    let proposal = bench.stage("a.md", "hello").await;
    let first = bench
        .gate
        .approve_and_apply(&proposal.id, &proposal.payload_hash, &user())
        .await
        .unwrap();
    assert!(matches!(first, ApplyOutcome::Applied { .. }));
    // The user edits the note after it was applied; a replay must not overwrite it.
    std::fs::write(bench.note("a.md"), "edited by the user").unwrap();
    let again = bench
        .gate
        .approve_and_apply(&proposal.id, &proposal.payload_hash, &user())
        .await
        .unwrap();
    assert!(
        matches!(again, ApplyOutcome::AlreadyApplied { .. }),
        "{again:?}"
    );
    let replay = bench.gate.apply(&proposal.id, &user()).await.unwrap();
    assert!(matches!(replay, ApplyOutcome::AlreadyApplied { .. }));
    let approve_again = bench
        .gate
        .approve(&proposal.id, &proposal.payload_hash, &user())
        .await
        .unwrap();
    assert!(!approve_again.changed);
    assert_eq!(bench.applies.load(Ordering::SeqCst), 1);
    assert_eq!(
        bench.note_text("a.md").as_deref(),
        Some("edited by the user")
    );
}

async fn approving_with_another_hash_is_refused(bench: Bench) {
    let proposal = bench.stage("a.md", "hello").await;
    let error = bench
        .gate
        .approve(&proposal.id, &"0".repeat(64), &user())
        .await
        .unwrap_err();
    assert!(matches!(error, ToolsError::HashMismatch { .. }), "{error}");
    assert_eq!(
        bench.proposal(&proposal.id).await.status,
        ProposalStatus::Pending
    );
}

async fn an_expired_proposal_cannot_be_approved(bench: Bench) {
    let proposal = bench.stage("a.md", "hello").await;
    assert_eq!(proposal.expires_at - proposal.created_at, Duration::days(7));
    bench.clock.advance(Duration::days(7));
    let error = bench
        .gate
        .approve(&proposal.id, &proposal.payload_hash, &user())
        .await
        .unwrap_err();
    assert!(matches!(error, ToolsError::Expired { .. }), "{error}");
    assert_eq!(
        bench.proposal(&proposal.id).await.status,
        ProposalStatus::Expired
    );
    assert!(bench.gate.apply(&proposal.id, &user()).await.is_err());
    assert_eq!(bench.note_text("a.md"), None);
}

async fn an_expired_approval_is_refused(bench: Bench) {
    let proposal = bench.stage("a.md", "hello").await;
    bench.clock.advance(Duration::days(6));
    bench
        .gate
        .approve(&proposal.id, &proposal.payload_hash, &user())
        .await
        .unwrap();
    bench.clock.advance(Duration::days(2));
    let error = bench.gate.apply(&proposal.id, &user()).await.unwrap_err();
    assert!(matches!(error, ToolsError::Expired { .. }), "{error}");
    assert_eq!(
        bench.proposal(&proposal.id).await.status,
        ProposalStatus::Expired
    );
    assert_eq!(bench.note_text("a.md"), None);
    assert_eq!(bench.applies.load(Ordering::SeqCst), 0);
}

async fn expiring_sweeps_overdue_proposals_once(bench: Bench) {
    let old = bench.stage("a.md", "old").await;
    bench.clock.advance(Duration::days(3));
    let fresh = bench.stage("b.md", "fresh").await;
    bench.clock.advance(Duration::days(5));
    let expired = bench.gate.expire().await.unwrap();
    assert_eq!(expired.len(), 1);
    assert_eq!(expired[0].id, old.id);
    assert!(bench.gate.expire().await.unwrap().is_empty());
    assert_eq!(
        bench.proposal(&fresh.id).await.status,
        ProposalStatus::Pending
    );
}

async fn of_concurrent_applies_exactly_one_applies(bench: Bench) {
    let bench = Arc::new(bench);
    let proposal = bench.stage("a.md", "once").await;
    bench
        .gate
        .approve(&proposal.id, &proposal.payload_hash, &user())
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let gate = bench.gate.clone();
        let id = proposal.id.clone();
        tasks.push(tokio::spawn(async move { gate.apply(&id, &user()).await }));
    }
    let mut applied = 0;
    for task in tasks {
        match task.await.unwrap().unwrap() {
            ApplyOutcome::Applied { .. } => applied += 1,
            ApplyOutcome::AlreadyApplied { .. } | ApplyOutcome::InProgress { .. } => {}
        }
    }
    assert_eq!(applied, 1);
    assert_eq!(bench.applies.load(Ordering::SeqCst), 1);
    assert_eq!(
        bench.proposal(&proposal.id).await.status,
        ProposalStatus::Applied
    );
}

async fn a_conflict_while_applying_is_recorded_as_failed(bench: Bench) {
    let proposal = bench.stage("a.md", "agent").await;
    std::fs::write(bench.note("a.md"), "the user wrote this meanwhile").unwrap();
    let error = bench
        .gate
        .approve_and_apply(&proposal.id, &proposal.payload_hash, &user())
        .await
        .unwrap_err();
    assert!(error.is_conflict(), "{error}");
    let after = bench.proposal(&proposal.id).await;
    assert_eq!(after.status, ProposalStatus::Failed);
    assert!(after.error.unwrap().starts_with("conflict: "));
    assert_eq!(
        bench.note_text("a.md").as_deref(),
        Some("the user wrote this meanwhile")
    );
}

async fn proposals_survive_a_restart(bench: Bench) {
    let pending = bench.stage("a.md", "after restart").await;
    bench.clock.advance(Duration::seconds(1));
    let approved = bench.stage("b.md", "approved before").await;
    bench
        .gate
        .approve(&approved.id, &approved.payload_hash, &user())
        .await
        .unwrap();
    let bench = bench.restart().await;
    let listed = bench.gate.list(&ProposalQuery::default()).await.unwrap();
    let statuses: Vec<_> = listed
        .proposals
        .iter()
        .map(|proposal| (proposal.id.clone(), proposal.status))
        .collect();
    assert_eq!(
        statuses,
        [
            (approved.id.clone(), ProposalStatus::Approved),
            (pending.id.clone(), ProposalStatus::Pending),
        ]
    );
    assert_eq!(bench.proposal(&pending.id).await, pending);
    bench
        .gate
        .approve_and_apply(&pending.id, &pending.payload_hash, &user())
        .await
        .unwrap();
    bench.gate.apply(&approved.id, &user()).await.unwrap();
    assert_eq!(bench.note_text("a.md").as_deref(), Some("after restart"));
    assert_eq!(bench.note_text("b.md").as_deref(), Some("approved before"));
}

async fn listing_filters_by_status_and_pages(bench: Bench) {
    let mut ids = Vec::new();
    for index in 0..5 {
        ids.push(bench.stage(&format!("{index}.md"), "x").await.id);
        bench.clock.advance(Duration::seconds(1));
    }
    bench.gate.reject(&ids[0], &user(), None).await.unwrap();
    let pending = bench
        .gate
        .list(&ProposalQuery {
            statuses: vec![ProposalStatus::Pending],
            limit: 2,
            ..ProposalQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(
        pending
            .proposals
            .iter()
            .map(|p| p.id.clone())
            .collect::<Vec<_>>(),
        [ids[4].clone(), ids[3].clone()]
    );
    let next = bench
        .gate
        .list(&ProposalQuery {
            statuses: vec![ProposalStatus::Pending],
            limit: 2,
            cursor: pending.next_cursor,
            ..ProposalQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(
        next.proposals
            .iter()
            .map(|p| p.id.clone())
            .collect::<Vec<_>>(),
        [ids[2].clone(), ids[1].clone()]
    );
    assert_eq!(next.next_cursor, None);
}
