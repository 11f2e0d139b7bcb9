//! Full-text search: every word said in a turn (the prompt, and the answer once the turn
//! ends) is found by any three or more of its characters, in any case; filters by
//! harness, project and time; pages; and a deleted session or chat is never found.

use hearth_core::{
    ChatId, ChatOrigin, ChatUri, HarnessId, ProjectId, StopReason, Turn, TurnId, UserMessage,
};
use hearth_store::{
    HIT_END, HIT_START, NewSession, Removal, SearchQuery, SqliteStore, Store, TrashKind,
};
use pretty_assertions::assert_eq;
use std::sync::Arc;

use super::fixtures::{at, chat_record, new_session, on_every_backend};

/// A finished turn saying `prompt` and answering `answer`, started at minute `minute`.
async fn say(store: &dyn Store, chat: &ChatUri, prompt: &str, answer: &str, minute: i64) {
    let mut turn = Turn::started(TurnId::generate(), UserMessage::text(prompt), at(minute));
    store.insert_turn(chat, &turn).await.unwrap();
    turn.push_text(answer);
    turn.end(StopReason::EndTurn);
    store.save_turn(chat, &turn).await.unwrap();
}

async fn session(store: &dyn Store, provider: &str, project: Option<&str>) -> NewSession {
    let session = new_session(provider, project, at(0));
    store.create_session(&session).await.unwrap();
    session
}

fn query(text: &str) -> SearchQuery {
    SearchQuery {
        text: text.to_owned(),
        limit: 50,
        ..SearchQuery::default()
    }
}

/// The turn ids a query finds, over every page.
async fn found(store: &dyn Store, query: &SearchQuery) -> Vec<String> {
    let mut ids = Vec::new();
    let mut query = query.clone();
    loop {
        let page = store.search_turns(&query).await.unwrap();
        ids.extend(page.hits.iter().map(|hit| hit.turn_id.to_string()));
        match page.next_cursor {
            Some(cursor) => query.cursor = Some(cursor),
            None => return ids,
        }
    }
}

async fn prompts_and_answers_are_found_by_any_part_of_their_words(store: Arc<dyn Store>) {
    let first = session(&*store, "codex", None).await;
    let chat = ChatUri::default_for(&first.summary.uri);
    say(
        &*store,
        &chat,
        "Why is the disk full?",
        "The log rotation stopped.",
        1,
    )
    .await;
    say(&*store, &chat, "Fix the Nginx config", "Reloaded nginx.", 2).await;

    let page = store.search_turns(&query("rotat")).await.unwrap();
    assert_eq!(page.hits.len(), 1);
    let hit = &page.hits[0];
    assert_eq!(hit.session, first.summary.uri);
    assert_eq!(hit.chat, chat);
    assert_eq!(hit.index, 1);
    assert_eq!(hit.title.as_deref(), Some("a session"));
    assert!(
        hit.snippet.contains(&format!("{HIT_START}rotat{HIT_END}")),
        "{:?}",
        hit.snippet
    );
    // Any case, every word required, prompt or answer.
    assert_eq!(found(&*store, &query("NGINX reload")).await.len(), 1);
    assert_eq!(found(&*store, &query("disk nginx")).await.len(), 0);
    assert_eq!(found(&*store, &query("the")).await.len(), 2);
    // Words a query language would take as syntax are plain words here.
    assert_eq!(found(&*store, &query("\"full?\" NOT")).await.len(), 0);
    let error = store.search_turns(&query("is")).await.unwrap_err();
    assert!(error.to_string().contains("too short"), "{error}");
}

async fn filters_narrow_by_agent_project_and_time_and_pages_go_on(store: Arc<dyn Store>) {
    let codex = session(&*store, "codex", None).await;
    let claude = session(&*store, "claude", Some("thesis")).await;
    let codex_chat = ChatUri::default_for(&codex.summary.uri);
    let claude_chat = ChatUri::default_for(&claude.summary.uri);
    for minute in 1..=7 {
        say(
            &*store,
            &codex_chat,
            &format!("budget {minute}"),
            "ok",
            minute,
        )
        .await;
    }
    say(&*store, &claude_chat, "budget of the thesis", "ok", 30).await;

    assert_eq!(found(&*store, &query("budget")).await.len(), 8);
    let codex_only = SearchQuery {
        harness: Some(HarnessId::parse("codex").unwrap()),
        ..query("budget")
    };
    assert_eq!(found(&*store, &codex_only).await.len(), 7);
    let thesis = SearchQuery {
        project: Some(ProjectId::parse("thesis").unwrap()),
        ..query("budget")
    };
    assert_eq!(found(&*store, &thesis).await.len(), 1);
    let claude_only = SearchQuery {
        chat: Some(claude_chat.clone()),
        ..query("budget")
    };
    assert_eq!(found(&*store, &claude_only).await.len(), 1);
    let recent = SearchQuery {
        since: Some(at(6)),
        ..query("budget")
    };
    assert_eq!(found(&*store, &recent).await.len(), 3);
    // Pages of three: every hit once, newest chat first, later turns first.
    let paged = SearchQuery {
        limit: 3,
        ..query("budget")
    };
    let first_page = store.search_turns(&paged).await.unwrap();
    assert_eq!(first_page.hits.len(), 3);
    assert_eq!(first_page.hits[0].chat, claude_chat);
    assert_eq!(first_page.hits[1].index, 7);
    let all = found(&*store, &paged).await;
    assert_eq!(all.len(), 8);
    let mut unique = all.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 8);
    let junk = SearchQuery {
        cursor: Some("junk".into()),
        ..query("budget")
    };
    assert!(store.search_turns(&junk).await.is_err());
}

async fn an_answer_is_found_once_its_turn_ends_and_a_deleted_one_never(store: Arc<dyn Store>) {
    let kept = session(&*store, "codex", None).await;
    let chat = ChatUri::default_for(&kept.summary.uri);
    let mut turn = Turn::started(TurnId::generate(), UserMessage::text("hello"), at(1));
    store.insert_turn(&chat, &turn).await.unwrap();
    turn.push_text("streaming marmalade");
    store.save_turn(&chat, &turn).await.unwrap();
    assert_eq!(found(&*store, &query("marmalade")).await.len(), 0);
    turn.end(StopReason::EndTurn);
    store.save_turn(&chat, &turn).await.unwrap();
    assert_eq!(found(&*store, &query("marmalade")).await.len(), 1);

    // A side chat deleted, then a whole session.
    let side = ChatUri::peer(&kept.summary.uri, ChatId::generate());
    store
        .insert_chat(&chat_record(side.clone(), ChatOrigin::User, at(2)))
        .await
        .unwrap();
    say(&*store, &side, "side quince", "ok", 3).await;
    let gone = session(&*store, "claude", None).await;
    let gone_chat = ChatUri::default_for(&gone.summary.uri);
    say(&*store, &gone_chat, "secret quince", "ok", 4).await;
    assert_eq!(found(&*store, &query("quince")).await.len(), 2);
    store.delete_chat(&side).await.unwrap();
    assert_eq!(found(&*store, &query("quince")).await.len(), 1);
    store.delete_session(&gone.summary.uri).await.unwrap();
    assert_eq!(found(&*store, &query("quince")).await.len(), 0);
    // Rebuilt from the stored turns, the index finds the same.
    assert_eq!(store.rebuild_search().await.unwrap(), 1);
    assert_eq!(found(&*store, &query("marmalade")).await.len(), 1);
    assert_eq!(found(&*store, &query("quince")).await.len(), 0);
}

/// Stores `kept` words in one session and `deleted` ones in another that is deleted, and
/// in a third that is moved to the trash; every kept word must be found in exactly the
/// turns holding it, no deleted or trashed one at all — until the trashed session is
/// restored, and never again once it is trashed again and the trash emptied.
async fn stored_words_are_found(kept: Vec<String>, deleted: Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("hearth.db"))
        .await
        .unwrap();
    let live = session(&store, "codex", None).await;
    let live_chat = ChatUri::default_for(&live.summary.uri);
    for (minute, word) in (0_i64..).zip(&kept) {
        let prompt = format!("about {word}");
        say(&store, &live_chat, &prompt, &format!("{word}!"), minute).await;
    }
    let gone = session(&store, "claude", None).await;
    let gone_chat = ChatUri::default_for(&gone.summary.uri);
    // Marked, so that no kept word can hold them.
    let marked: Vec<String> = deleted.iter().map(|word| format!("zq{word}")).collect();
    for word in &marked {
        say(&store, &gone_chat, word, word, 1).await;
    }
    store.delete_session(&gone.summary.uri).await.unwrap();
    for word in &kept {
        let needle = word.to_lowercase();
        let holding = kept
            .iter()
            .filter(|other| {
                format!("about {other} {other}!")
                    .to_lowercase()
                    .contains(&needle)
            })
            .count();
        assert_eq!(found(&store, &query(word)).await.len(), holding, "{word}");
    }
    for word in &marked {
        assert_eq!(found(&store, &query(word)).await.len(), 0, "{word}");
    }
    trashed_words_are_found_only_while_restored(&store, &deleted).await;
}

async fn trashed_words_are_found_only_while_restored(store: &dyn Store, words: &[String]) {
    let trashed = session(store, "gemini", None).await;
    let chat = ChatUri::default_for(&trashed.summary.uri);
    let marked: Vec<String> = words.iter().map(|word| format!("zt{word}")).collect();
    for word in &marked {
        say(store, &chat, word, word, 2).await;
    }
    let uri = trashed.summary.uri.clone();
    assert_eq!(store.trash_session(&uri).await.unwrap(), Removal::Trashed);
    for word in &marked {
        assert_eq!(
            found(store, &query(word)).await.len(),
            0,
            "{word} (trashed)"
        );
    }
    store
        .restore_from_trash(TrashKind::Session, &uri.to_string())
        .await
        .unwrap();
    for word in &marked {
        assert!(
            !found(store, &query(word)).await.is_empty(),
            "{word} (restored)"
        );
    }
    assert_eq!(store.trash_session(&uri).await.unwrap(), Removal::Trashed);
    assert_eq!(store.empty_trash(None).await.unwrap().len(), 1);
    store.rebuild_search().await.unwrap();
    for word in &marked {
        assert_eq!(found(store, &query(word)).await.len(), 0, "{word} (erased)");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(16))]

    #[test]
    fn every_stored_word_is_found_and_no_deleted_one(
        kept in proptest::collection::vec("[a-zA-Z0-9é]{3,12}", 1..6),
        deleted in proptest::collection::vec("[a-z]{3,12}", 1..4),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(stored_words_are_found(kept, deleted));
    }
}

on_every_backend!(
    prompts_and_answers_are_found_by_any_part_of_their_words,
    filters_narrow_by_agent_project_and_time_and_pages_go_on,
    an_answer_is_found_once_its_turn_ends_and_a_deleted_one_never,
);
