use hearth_core::{
    ChatId, ChatOrigin, ChatUri, ResponsePart, StopReason, ToolCallPart, ToolCallStatus,
    ToolResult, Turn, TurnId, Usage, UserMessage, now,
};
use hearth_store::{PgStore, SqliteStore, Store, StoreError};
use pretty_assertions::assert_eq;
use std::sync::Arc;

use super::fixtures::{at, chat_record, new_session, on_every_backend};

fn rich_turn() -> Turn {
    let mut turn = Turn::started(TurnId::generate(), UserMessage::text("plan my week"), now());
    turn.push_reasoning("Let me look.");
    turn.parts.push(ResponsePart::ToolCall(ToolCallPart {
        call_id: "c1".into(),
        name: "events_list".into(),
        arguments: serde_json::json!({"from": "2026-12-01"}),
        status: ToolCallStatus::Completed,
        result: Some(ToolResult {
            content: "3 events".into(),
            is_error: false,
        }),
        title: None,
        kind: None,
        locations: Vec::new(),
        content: Vec::new(),
    }));
    turn.push_text("You have three events.");
    turn.usage = Some(Usage {
        input_tokens: 10,
        output_tokens: 5,
        ..Usage::default()
    });
    turn
}

#[tokio::test]
async fn a_turn_is_visible_to_another_handle_once_inserted_and_checkpointed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hearth.db");
    let writer = SqliteStore::open(&path).await.unwrap();
    let reader = SqliteStore::open(&path).await.unwrap();
    let session = new_session("replay", None, at(0));
    writer.create_session(&session).await.unwrap();
    let chat = ChatUri::default_for(&session.summary.uri);
    let mut turn = Turn::started(TurnId::generate(), UserMessage::text("hello"), now());
    writer.insert_turn(&chat, &turn).await.unwrap();
    assert_eq!(reader.turns(&chat).await.unwrap(), vec![turn.clone()]);

    turn.push_text("partial ans");
    writer.save_turn(&chat, &turn).await.unwrap();
    let stored = reader.turns(&chat).await.unwrap();
    assert_eq!(stored[0].response_text(), "partial ans");
    assert_eq!(stored[0].stop_reason, None);

    turn.push_text("wer");
    turn.stop_reason = Some(StopReason::EndTurn);
    turn.completed_at = Some(now());
    writer.save_turn(&chat, &turn).await.unwrap();
    assert_eq!(reader.turns(&chat).await.unwrap(), vec![turn]);
    // The session moved to the top of the list.
    let listed = reader.session(&session.summary.uri).await.unwrap().unwrap();
    assert!(listed.updated_at > session.summary.updated_at);
}

async fn every_part_kind_round_trips(store: Arc<dyn Store>) {
    let session = new_session("replay", None, at(0));
    store.create_session(&session).await.unwrap();
    let chat = ChatUri::default_for(&session.summary.uri);
    let mut turn = rich_turn();
    turn.parts.push(ResponsePart::Plan {
        entries: vec![hearth_core::PlanEntry {
            content: "a".into(),
            status: hearth_core::PlanStatus::InProgress,
        }],
    });
    turn.parts.push(ResponsePart::Proposal {
        proposal_id: hearth_core::ProposalId::generate(),
        summary: "create event".into(),
    });
    turn.parts.push(ResponsePart::PermissionRequest {
        request_id: "r1".into(),
        title: "run ls?".into(),
        options: vec![hearth_core::PermissionOption {
            id: "allow".into(),
            label: "Allow".into(),
            kind: Some(hearth_core::PermissionOptionKind::AllowAlways),
        }],
        outcome: None,
        tool_call_id: Some("c1".into()),
    });
    turn.parts.push(ResponsePart::Error {
        message: "rate limited".into(),
    });
    turn.stop_reason = Some(StopReason::Other("provider_specific".into()));
    turn.completed_at = Some(now());
    store.insert_turn(&chat, &turn).await.unwrap();
    assert_eq!(store.turns(&chat).await.unwrap(), vec![turn]);
}

async fn duplicate_turn_ids_conflict_and_unknown_chats_are_not_found(store: Arc<dyn Store>) {
    let session = new_session("replay", None, at(0));
    store.create_session(&session).await.unwrap();
    let chat = ChatUri::default_for(&session.summary.uri);
    let turn = rich_turn();
    store.insert_turn(&chat, &turn).await.unwrap();
    assert!(matches!(
        store.insert_turn(&chat, &turn).await,
        Err(StoreError::Conflict(_))
    ));
    let missing = ChatUri::peer(&session.summary.uri, ChatId::generate());
    assert!(matches!(
        store.insert_turn(&missing, &turn).await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store.save_turn(&missing, &turn).await,
        Err(StoreError::NotFound { .. })
    ));
}

async fn fork_copies_turns_through_the_fork_point(store: Arc<dyn Store>) {
    let session = new_session("replay", None, at(0));
    store.create_session(&session).await.unwrap();
    let source = ChatUri::default_for(&session.summary.uri);
    let mut turns = Vec::new();
    for index in 0..4 {
        let mut turn = Turn::started(
            TurnId::generate(),
            UserMessage::text(format!("q{index}")),
            now(),
        );
        turn.push_text(&format!("a{index}"));
        if index < 3 {
            turn.stop_reason = Some(StopReason::EndTurn);
        }
        store.insert_turn(&source, &turn).await.unwrap();
        turns.push(turn);
    }
    let fork = ChatUri::peer(&session.summary.uri, ChatId::generate());
    store
        .insert_chat(&chat_record(
            fork.clone(),
            ChatOrigin::Fork {
                source_chat: source.clone(),
                turn_id: turns[1].id.clone(),
            },
            at(5),
        ))
        .await
        .unwrap();
    assert_eq!(
        store
            .copy_turns(&source, &fork, &turns[1].id)
            .await
            .unwrap(),
        2
    );
    assert_eq!(store.turns(&fork).await.unwrap(), turns[..2].to_vec());
    // A running turn copied into a fork reads as incomplete there.
    let fork_all = ChatUri::peer(&session.summary.uri, ChatId::generate());
    store
        .insert_chat(&chat_record(fork_all.clone(), ChatOrigin::User, at(6)))
        .await
        .unwrap();
    store
        .copy_turns(&source, &fork_all, &turns[3].id)
        .await
        .unwrap();
    assert_eq!(
        store.turns(&fork_all).await.unwrap()[3].stop_reason,
        Some(StopReason::Incomplete)
    );
    let unknown = TurnId::generate();
    assert!(matches!(
        store.copy_turns(&source, &fork, &unknown).await,
        Err(StoreError::NotFound { .. })
    ));
}

/// Two of a chat's four turns damaged in the database (by `damage(body, turn id)`): the
/// chat reads whole and by pages, each damaged turn as an unreadable one.
async fn damaged_turns_read_as_unreadable(store: &dyn Store, damage: impl AsyncFn(String, String)) {
    let session = new_session("replay", None, at(0));
    store.create_session(&session).await.unwrap();
    let chat = ChatUri::default_for(&session.summary.uri);
    let mut turns = Vec::new();
    for text in ["one", "two", "three", "four"] {
        let mut turn = Turn::started(TurnId::generate(), UserMessage::text(text), now());
        turn.push_text(&format!("answer {text}"));
        turn.end(StopReason::EndTurn);
        store.insert_turn(&chat, &turn).await.unwrap();
        turns.push(turn);
    }
    // Damage two of them: one body is not JSON at all, one holds a part of no known kind.
    for (turn, body) in [
        (&turns[1], "{\"id\": \"cut off here".to_owned()),
        (
            &turns[3],
            format!(
                "{{\"id\":\"{}\",\"user\":{{\"text\":\"four\"}},\"parts\":[{{\"type\":\"hologram\"}}],\"started_at\":0}}",
                turns[3].id
            ),
        ),
    ] {
        damage(body, turn.id.to_string()).await;
    }

    let read = store.turns(&chat).await.unwrap();
    assert_eq!(read.len(), 4);
    // A page reads the same turns.
    let page = store.turn_page(&chat, None, 10).await.unwrap();
    assert_eq!(page.turns, read);
    assert!(!page.has_more);
    assert_eq!(read[0], turns[0]);
    assert_eq!(read[2], turns[2]);
    for (index, user) in [(1, ""), (3, "four")] {
        let unreadable = &read[index];
        assert_eq!(unreadable.id, turns[index].id);
        assert_eq!(unreadable.user.text, user, "what could be read is kept");
        assert_eq!(unreadable.stop_reason, Some(StopReason::Error));
        let [ResponsePart::Error { message }] = unreadable.parts.as_slice() else {
            panic!("not an unreadable turn: {unreadable:?}");
        };
        assert!(
            message.starts_with("this turn could not be read: "),
            "{message}"
        );
        assert!(
            message.contains(&chat.to_string()),
            "names the chat: {message}"
        );
        assert!(
            message.contains(turns[index].id.as_str()),
            "names the turn: {message}"
        );
    }
}

#[tokio::test]
async fn a_turn_that_cannot_be_read_shows_as_unreadable_and_the_rest_of_the_chat_reads() {
    let store = SqliteStore::open_in_memory().await.unwrap();
    damaged_turns_read_as_unreadable(&store, async |body, id| {
        sqlx::query("UPDATE turns SET body = $1 WHERE turn_id = $2")
            .bind(body)
            .bind(id)
            .execute(store.pool())
            .await
            .unwrap();
    })
    .await;
}

#[tokio::test]
async fn a_turn_that_cannot_be_read_on_postgres_shows_as_unreadable_too() {
    let Some(url) = hearth_test_support::postgres::fresh_database().await else {
        return;
    };
    let store = PgStore::connect(&url).await.unwrap();
    damaged_turns_read_as_unreadable(&store, async |body, id| {
        sqlx::query("UPDATE turns SET body = $1 WHERE turn_id = $2")
            .bind(body)
            .bind(id)
            .execute(store.pool())
            .await
            .unwrap();
    })
    .await;
}

on_every_backend!(
    every_part_kind_round_trips,
    duplicate_turn_ids_conflict_and_unknown_chats_are_not_found,
    fork_copies_turns_through_the_fork_point,
);
