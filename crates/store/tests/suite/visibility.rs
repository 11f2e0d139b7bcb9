use hearth_core::{ChatUri, StopReason, Turn, TurnId, UserMessage, now};
use hearth_store::{SqliteStore, Store};

use super::fixtures::{at, new_session};

/// Writes through one connection are visible to reads through every other at once.
#[tokio::test]
async fn writes_are_visible_to_every_connection() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("hearth.db"))
        .await
        .unwrap();
    let session = new_session("replay", None, at(0));
    store.create_session(&session).await.unwrap();
    let chat = ChatUri::default_for(&session.summary.uri);
    for round in 0..50 {
        let mut turn = Turn::started(
            TurnId::generate(),
            UserMessage::text(format!("q{round}")),
            now(),
        );
        store.insert_turn(&chat, &turn).await.unwrap();
        // Touch several pooled connections with single-row reads.
        for _ in 0..4 {
            store.session(&session.summary.uri).await.unwrap();
            store.is_tombstoned(&session.summary.uri).await.unwrap();
        }
        turn.push_text("answer");
        turn.stop_reason = Some(StopReason::EndTurn);
        store.save_turn(&chat, &turn).await.unwrap();
        let turns = store.turns(&chat).await.unwrap();
        assert_eq!(
            turns.last().unwrap().response_text(),
            "answer",
            "stale read in round {round}"
        );
        let other = new_session("replay", None, at(round + 1));
        store.create_session(&other).await.unwrap();
        let target = ChatUri::default_for(&other.summary.uri);
        store.copy_turns(&chat, &target, &turn.id).await.unwrap();
        let copied = store.turns(&target).await.unwrap();
        assert_eq!(
            copied.last().unwrap().response_text(),
            "answer",
            "stale copy in round {round}"
        );
    }
}
