//! Proposals: each transition changes a proposal only in the state it expects and says
//! whether it did; listings page newest first; and on a database shared by two nodes,
//! of two nodes making the same transition at once exactly one succeeds.

use std::collections::BTreeSet;
use std::sync::Arc;

use hearth_core::{ProposalId, SessionUri};
use hearth_store::{
    PgStore, ProposalQuery, ProposalRecord, ProposalStatus, ProposalStore, SqliteStore, StoreError,
};
use pretty_assertions::assert_eq;
use tokio::sync::Barrier;

use super::fixtures::{Backend, at, on_every_backend, pending_proposal, session_uri, two_nodes};

on_every_backend!(
    a_proposal_is_approved_by_its_hash_claimed_once_and_finished_once,
    rejecting_expiring_and_failing_change_only_proposals_in_the_expected_state,
    listings_page_newest_first_and_filter_by_status_and_session,
    proposals_changed_since_a_time_are_listed_oldest_change_first,
);

async fn proposals_changed_since_a_time_are_listed_oldest_change_first(store: Arc<dyn Backend>) {
    let session = session_uri("openai");
    let mut staged = Vec::new();
    for minute in [3, 1, 2] {
        let proposal = pending_proposal(&session, at(minute), HASH);
        store.insert_proposal(&proposal).await.unwrap();
        staged.push((proposal.id.to_string(), at(minute)));
    }
    staged.sort_by_key(|(_, time)| *time);
    assert_eq!(store.proposals_changed_after(at(0)).await.unwrap(), staged);
    assert_eq!(
        store.proposals_changed_after(at(2)).await.unwrap(),
        staged[1..].to_vec()
    );
    assert!(
        store
            .proposals_changed_after(at(4))
            .await
            .unwrap()
            .is_empty()
    );
}

const HASH: &str = "a1";

async fn a_proposal_is_approved_by_its_hash_claimed_once_and_finished_once(
    store: Arc<dyn Backend>,
) {
    let session = session_uri("openai");
    let staged = pending_proposal(&session, at(0), HASH);
    store.insert_proposal(&staged).await.unwrap();
    assert_eq!(
        store.proposal(&staged.id).await.unwrap().as_ref(),
        Some(&staged)
    );
    assert!(matches!(
        store.insert_proposal(&staged).await,
        Err(StoreError::Conflict(_))
    ));

    // Not claimed before approval; approved only with the payload hash it holds.
    assert!(
        !store
            .claim_proposal(&staged.id, HASH, &staged.payload, at(1))
            .await
            .unwrap()
    );
    assert!(
        !store
            .approve_proposal(&staged.id, "b2", "user", at(1))
            .await
            .unwrap()
    );
    assert!(
        store
            .approve_proposal(&staged.id, HASH, "user", at(1))
            .await
            .unwrap()
    );
    assert!(
        !store
            .approve_proposal(&staged.id, HASH, "user", at(2))
            .await
            .unwrap()
    );

    // Claimed only with the approved hash and payload, and once.
    assert!(
        !store
            .claim_proposal(&staged.id, HASH, "{\"other\":1}", at(2))
            .await
            .unwrap()
    );
    assert!(
        store
            .claim_proposal(&staged.id, HASH, &staged.payload, at(2))
            .await
            .unwrap()
    );
    assert!(
        !store
            .claim_proposal(&staged.id, HASH, &staged.payload, at(2))
            .await
            .unwrap()
    );
    assert!(
        store
            .finish_proposal(&staged.id, Ok("wrote a note"), at(3))
            .await
            .unwrap()
    );
    assert!(
        !store
            .finish_proposal(&staged.id, Err("again"), at(4))
            .await
            .unwrap()
    );

    let applied = ProposalRecord {
        status: ProposalStatus::Applied,
        approved_hash: Some(HASH.into()),
        decided_by: Some("user".into()),
        decided_at: Some(at(1)),
        outcome: Some("wrote a note".into()),
        updated_at: at(3),
        applied_at: Some(at(3)),
        ..staged.clone()
    };
    assert_eq!(store.proposal(&staged.id).await.unwrap(), Some(applied));
    assert_eq!(store.proposal(&ProposalId::generate()).await.unwrap(), None);
}

async fn rejecting_expiring_and_failing_change_only_proposals_in_the_expected_state(
    store: Arc<dyn Backend>,
) {
    let session = session_uri("openai");
    let rejected = pending_proposal(&session, at(0), HASH);
    let overdue = pending_proposal(&session, at(0), HASH);
    let overdue_approved = pending_proposal(&session, at(0), HASH);
    let fresh = pending_proposal(&session, at(50), HASH);
    let stuck = pending_proposal(&session, at(0), HASH);
    for proposal in [&rejected, &overdue, &overdue_approved, &fresh, &stuck] {
        store.insert_proposal(proposal).await.unwrap();
    }

    assert!(
        store
            .reject_proposal(&rejected.id, "user", Some("not now"), at(1))
            .await
            .unwrap()
    );
    assert!(
        !store
            .reject_proposal(&rejected.id, "user", None, at(2))
            .await
            .unwrap()
    );
    let found = store.proposal(&rejected.id).await.unwrap().unwrap();
    assert_eq!(
        (found.status, found.reason.as_deref()),
        (ProposalStatus::Rejected, Some("not now"))
    );

    for approved in [&overdue_approved, &stuck] {
        assert!(
            store
                .approve_proposal(&approved.id, HASH, "user", at(1))
                .await
                .unwrap()
        );
    }
    assert!(
        store
            .claim_proposal(&stuck.id, HASH, &stuck.payload, at(2))
            .await
            .unwrap()
    );

    // An hour after staging: the pending and approved ones of minute 0 expire, once.
    let expired: BTreeSet<ProposalId> = store
        .expire_proposals(at(60))
        .await
        .unwrap()
        .into_iter()
        .map(|proposal| {
            assert_eq!(proposal.status, ProposalStatus::Expired);
            proposal.id
        })
        .collect();
    assert_eq!(
        expired,
        BTreeSet::from([overdue.id.clone(), overdue_approved.id.clone()])
    );
    assert!(store.expire_proposals(at(60)).await.unwrap().is_empty());
    // Expired: neither approved nor claimed.
    assert!(
        !store
            .approve_proposal(&overdue.id, HASH, "user", at(61))
            .await
            .unwrap()
    );
    assert!(
        !store
            .claim_proposal(
                &overdue_approved.id,
                HASH,
                &overdue_approved.payload,
                at(61)
            )
            .await
            .unwrap()
    );

    // The apply that stopped: stale once it is older than the cut-off, failed from
    // applying only.
    let stale: Vec<ProposalId> = store
        .stale_applying(at(3))
        .await
        .unwrap()
        .into_iter()
        .map(|proposal| proposal.id)
        .collect();
    assert_eq!(stale, vec![stuck.id.clone()]);
    assert!(store.stale_applying(at(2)).await.unwrap().is_empty());
    assert!(
        !store
            .fail_proposal(&stuck.id, ProposalStatus::Approved, "stopped", at(70))
            .await
            .unwrap()
    );
    assert!(
        store
            .fail_proposal(&stuck.id, ProposalStatus::Applying, "stopped", at(70))
            .await
            .unwrap()
    );
    let found = store.proposal(&stuck.id).await.unwrap().unwrap();
    assert_eq!(
        (found.status, found.error.as_deref()),
        (ProposalStatus::Failed, Some("stopped"))
    );
}

async fn listings_page_newest_first_and_filter_by_status_and_session(store: Arc<dyn Backend>) {
    let (first, second) = (session_uri("openai"), session_uri("openai"));
    let mut staged = Vec::new();
    for minute in 0..7 {
        let session = if minute % 2 == 0 { &first } else { &second };
        let proposal = pending_proposal(session, at(minute), HASH);
        store.insert_proposal(&proposal).await.unwrap();
        staged.push(proposal);
    }
    assert!(
        store
            .approve_proposal(&staged[4].id, HASH, "user", at(10))
            .await
            .unwrap()
    );

    // Pages of three, newest first, until no cursor is given.
    let mut query = ProposalQuery {
        limit: 3,
        ..ProposalQuery::default()
    };
    let mut listed = Vec::new();
    let mut pages = 0;
    loop {
        let page = store.list_proposals(&query).await.unwrap();
        pages += 1;
        listed.extend(page.proposals.into_iter().map(|proposal| proposal.id));
        match page.next_cursor {
            Some(cursor) => query.cursor = Some(cursor),
            None => break,
        }
    }
    let newest_first: Vec<ProposalId> = staged.iter().rev().map(|p| p.id.clone()).collect();
    assert_eq!((listed, pages), (newest_first, 3));

    let ids = |proposals: Vec<ProposalRecord>| -> Vec<ProposalId> {
        proposals.into_iter().map(|proposal| proposal.id).collect()
    };
    let approved = store
        .list_proposals(&ProposalQuery {
            statuses: vec![ProposalStatus::Approved, ProposalStatus::Rejected],
            ..ProposalQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(ids(approved.proposals), vec![staged[4].id.clone()]);
    let of_second = store
        .list_proposals(&ProposalQuery {
            statuses: vec![ProposalStatus::Pending],
            session: Some(second.clone()),
            ..ProposalQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(
        ids(of_second.proposals),
        vec![
            staged[5].id.clone(),
            staged[3].id.clone(),
            staged[1].id.clone()
        ]
    );
    assert!(matches!(
        store
            .list_proposals(&ProposalQuery {
                cursor: Some("not a cursor".into()),
                ..ProposalQuery::default()
            })
            .await,
        Err(StoreError::Decode { .. })
    ));
}

/// Proposals with the ids given, staged in one session.
async fn staged_with_ids(store: &dyn ProposalStore, session: &SessionUri, ids: &[&str]) {
    for id in ids {
        let proposal = ProposalRecord {
            id: ProposalId::parse(id).unwrap(),
            ..pending_proposal(session, at(0), HASH)
        };
        store.insert_proposal(&proposal).await.unwrap();
    }
}

#[tokio::test]
async fn proposals_are_found_by_a_prefix_of_their_id_on_both_backends() {
    let ids = ["abc1", "abc2", "abd", "ab_x", "Abc3", "xyz"];
    let session = session_uri("openai");
    let sqlite = SqliteStore::open_in_memory().await.unwrap();
    staged_with_ids(&sqlite, &session, &ids).await;
    let postgres: Option<PgStore> = hearth_test_support::postgres::fresh_store().await;
    if let Some(postgres) = &postgres {
        staged_with_ids(postgres, &session, &ids).await;
    }
    let cases: [(&str, u32, &[&str]); 6] = [
        ("abc", 10, &["abc1", "abc2"]),
        ("ab", 10, &["ab_x", "abc1", "abc2", "abd"]),
        ("ab", 2, &["ab_x", "abc1"]),
        // `_` is a character of ids, not a wildcard.
        ("ab_", 10, &["ab_x"]),
        ("nothing", 10, &[]),
        // A prefix no id can have matches nothing.
        ("ab%", 10, &[]),
    ];
    for (prefix, max, expected) in cases {
        let expected: Vec<String> = expected.iter().map(|id| (*id).to_owned()).collect();
        let found = |records: Vec<ProposalRecord>| -> Vec<String> {
            records.into_iter().map(|p| p.id.to_string()).collect()
        };
        assert_eq!(
            found(sqlite.proposals_with_id_prefix(prefix, max).await.unwrap()),
            expected,
            "sqlite, prefix {prefix}"
        );
        if let Some(postgres) = &postgres {
            assert_eq!(
                found(
                    postgres
                        .proposals_with_id_prefix(prefix, max)
                        .await
                        .unwrap()
                ),
                expected,
                "postgres, prefix {prefix}"
            );
        }
    }
}

/// How many times each node won a race, over all rounds.
#[derive(Debug, Default)]
struct Wins {
    first: usize,
    second: usize,
}

/// Runs `attempt` on both nodes at once (released together by a barrier; each is given
/// its node and whether it is the first) and returns which of them succeeded.
async fn race<F, Fut>(nodes: &(Arc<PgStore>, Arc<PgStore>), attempt: F) -> (bool, bool)
where
    F: Fn(Arc<PgStore>, bool) -> Fut,
    Fut: Future<Output = bool> + Send + 'static,
{
    let barrier = Arc::new(Barrier::new(2));
    let spawn = |node: Arc<PgStore>, is_first: bool| {
        let barrier = Arc::clone(&barrier);
        let attempt = attempt(node, is_first);
        tokio::spawn(async move {
            barrier.wait().await;
            attempt.await
        })
    };
    let (first, second) = (
        spawn(Arc::clone(&nodes.0), true),
        spawn(Arc::clone(&nodes.1), false),
    );
    (first.await.unwrap(), second.await.unwrap())
}

const ROUNDS: usize = 40;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_two_nodes_claiming_one_approved_proposal_exactly_one_wins() {
    let Some((first, second)) = two_nodes().await else {
        return;
    };
    let nodes = (Arc::new(first), Arc::new(second));
    let session = session_uri("openai");
    let mut wins = Wins::default();
    for _ in 0..ROUNDS {
        let staged = pending_proposal(&session, at(0), HASH);
        nodes.0.insert_proposal(&staged).await.unwrap();
        assert!(
            nodes
                .1
                .approve_proposal(&staged.id, HASH, "user", at(1))
                .await
                .unwrap()
        );
        let (id, payload) = (staged.id.clone(), staged.payload.clone());
        let won = race(&nodes, move |node, _| {
            let (id, payload) = (id.clone(), payload.clone());
            async move {
                node.claim_proposal(&id, HASH, &payload, at(2))
                    .await
                    .unwrap()
            }
        })
        .await;
        assert!(
            won.0 != won.1,
            "exactly one node claims {}: {won:?}",
            staged.id
        );
        if won.0 {
            wins.first += 1;
        } else {
            wins.second += 1;
        }
        let found = nodes.0.proposal(&staged.id).await.unwrap().unwrap();
        assert_eq!(found.status, ProposalStatus::Applying);
    }
    eprintln!("claims won over {ROUNDS} races: {wins:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_two_nodes_approving_one_proposal_exactly_one_records_the_approval() {
    let Some((first, second)) = two_nodes().await else {
        return;
    };
    let nodes = (Arc::new(first), Arc::new(second));
    let session = session_uri("openai");
    let mut wins = Wins::default();
    for _ in 0..ROUNDS {
        let staged = pending_proposal(&session, at(0), HASH);
        nodes.0.insert_proposal(&staged).await.unwrap();
        let id = staged.id.clone();
        let won = race(&nodes, move |node, is_first| {
            let id = id.clone();
            let by = if is_first { "first" } else { "second" };
            async move { node.approve_proposal(&id, HASH, by, at(1)).await.unwrap() }
        })
        .await;
        assert!(
            won.0 != won.1,
            "exactly one node approves {}: {won:?}",
            staged.id
        );
        // The approval recorded is the winner's.
        let found = nodes.1.proposal(&staged.id).await.unwrap().unwrap();
        let winner = if won.0 { "first" } else { "second" };
        assert_eq!(
            (found.status, found.decided_by.as_deref()),
            (ProposalStatus::Approved, Some(winner))
        );
        if won.0 {
            wins.first += 1;
        } else {
            wins.second += 1;
        }
    }
    eprintln!("approvals won over {ROUNDS} races: {wins:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejection_racing_an_apply_on_another_node_leaves_exactly_one_outcome() {
    let Some((first, second)) = two_nodes().await else {
        return;
    };
    let nodes = (Arc::new(first), Arc::new(second));
    let session = session_uri("openai");
    let mut wins = Wins::default();
    for _ in 0..ROUNDS {
        let staged = pending_proposal(&session, at(0), HASH);
        nodes.0.insert_proposal(&staged).await.unwrap();
        assert!(
            nodes
                .0
                .approve_proposal(&staged.id, HASH, "user", at(1))
                .await
                .unwrap()
        );
        let (id, payload) = (staged.id.clone(), staged.payload.clone());
        // The first node claims the approved proposal to apply it; the second rejects it.
        let won = race(&nodes, move |node, is_first| {
            let (id, payload) = (id.clone(), payload.clone());
            async move {
                if is_first {
                    node.claim_proposal(&id, HASH, &payload, at(2))
                        .await
                        .unwrap()
                } else {
                    node.reject_proposal(&id, "user", None, at(2))
                        .await
                        .unwrap()
                }
            }
        })
        .await;
        assert!(
            won.0 != won.1,
            "exactly one of claim and reject changes {}: {won:?}",
            staged.id
        );
        let found = nodes.0.proposal(&staged.id).await.unwrap().unwrap();
        let expected = if won.0 {
            ProposalStatus::Applying
        } else {
            ProposalStatus::Rejected
        };
        assert_eq!(found.status, expected);
        if won.0 {
            wins.first += 1;
        } else {
            wins.second += 1;
        }
    }
    eprintln!("claim (first) against reject (second) over {ROUNDS} races: {wins:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_nodes_expiring_at_once_expire_each_proposal_once() {
    let Some((first, second)) = two_nodes().await else {
        return;
    };
    let nodes = (Arc::new(first), Arc::new(second));
    let session = session_uri("openai");
    let mut overdue = BTreeSet::new();
    for minute in 0..100 {
        let staged = pending_proposal(&session, at(minute), HASH);
        nodes.0.insert_proposal(&staged).await.unwrap();
        if minute % 3 == 0 {
            assert!(
                nodes
                    .0
                    .approve_proposal(&staged.id, HASH, "user", at(minute))
                    .await
                    .unwrap()
            );
        }
        // Staged at minute 0..=60: expired at minute 120 (an hour after staging).
        if minute <= 60 {
            overdue.insert(staged.id);
        }
    }
    let barrier = Arc::new(Barrier::new(2));
    let expire = |node: Arc<PgStore>| {
        let barrier = Arc::clone(&barrier);
        tokio::spawn(async move {
            barrier.wait().await;
            node.expire_proposals(at(120)).await.unwrap()
        })
    };
    let (by_first, by_second) = (expire(Arc::clone(&nodes.0)), expire(Arc::clone(&nodes.1)));
    let ids = |records: Vec<ProposalRecord>| -> BTreeSet<ProposalId> {
        records.into_iter().map(|proposal| proposal.id).collect()
    };
    let (by_first, by_second) = (ids(by_first.await.unwrap()), ids(by_second.await.unwrap()));
    eprintln!(
        "expired by the first node: {}, by the second: {}",
        by_first.len(),
        by_second.len()
    );
    assert!(
        by_first.is_disjoint(&by_second),
        "a proposal expired by both nodes: {:?}",
        by_first.intersection(&by_second).collect::<Vec<_>>()
    );
    let all: BTreeSet<ProposalId> = by_first.union(&by_second).cloned().collect();
    assert_eq!(all, overdue);
}
