//! The trash: a deleted session or project is gone from every listing and lookup but
//! restorable with everything it held, until the trash is emptied (by age or at once),
//! which erases it as deleting did before; a session never used is erased at once; a
//! trashed or erased session found again by discovery stays deleted.

use std::path::PathBuf;

use hearth_core::{ChatUri, ProjectId, Provenance, StopReason, Turn, TurnId, UserMessage, now};
use hearth_store::{
    ProjectRecord, ProjectStore, Registration, Removal, SessionQuery, SqliteStore, Store,
    StoreError, TrashKind,
};
use pretty_assertions::assert_eq;

use super::fixtures::{at, new_session};

async fn store() -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("hearth.db"))
        .await
        .unwrap();
    (dir, store)
}

async fn say(store: &SqliteStore, chat: &ChatUri, prompt: &str) -> Turn {
    let mut turn = Turn::started(TurnId::generate(), UserMessage::text(prompt), at(1));
    store.insert_turn(chat, &turn).await.unwrap();
    turn.push_text("an answer");
    turn.end(StopReason::EndTurn);
    store.save_turn(chat, &turn).await.unwrap();
    turn
}

async fn listed(store: &SqliteStore) -> usize {
    store
        .list_sessions(&SessionQuery::default())
        .await
        .unwrap()
        .sessions
        .len()
}

#[tokio::test]
async fn a_used_session_goes_to_the_trash_and_comes_back_whole() {
    let (_dir, store) = store().await;
    let session = new_session("codex", None, at(0));
    store.create_session(&session).await.unwrap();
    let uri = session.summary.uri.clone();
    let chat = ChatUri::default_for(&uri);
    let turn = say(&store, &chat, "remember the owls").await;
    let chats_before = store.chats(&uri).await.unwrap();
    let summary_before = store.session(&uri).await.unwrap();

    assert_eq!(store.trash_session(&uri).await.unwrap(), Removal::Trashed);
    assert_eq!(store.session(&uri).await.unwrap(), None);
    assert_eq!(listed(&store).await, 0);
    assert!(store.chats(&uri).await.unwrap().is_empty());
    assert!(store.is_tombstoned(&uri).await.unwrap());
    // The agent listing it again does not bring it back.
    assert_eq!(
        store.register_discovered(&session).await.unwrap(),
        Registration::Tombstoned
    );
    // Nor does creating one with its URI erase it.
    assert!(matches!(
        store.create_session(&session).await,
        Err(StoreError::Conflict(_))
    ));
    let items = store.trash_items().await.unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(
        (
            items[0].kind,
            items[0].id.as_str(),
            items[0].title.as_deref()
        ),
        (
            TrashKind::Session,
            uri.to_string().as_str(),
            Some("a session")
        )
    );

    store
        .restore_from_trash(TrashKind::Session, &uri.to_string())
        .await
        .unwrap();
    assert_eq!(store.session(&uri).await.unwrap(), summary_before);
    assert_eq!(store.chats(&uri).await.unwrap(), chats_before);
    assert_eq!(store.turns(&chat).await.unwrap(), vec![turn]);
    assert!(store.trash_items().await.unwrap().is_empty());
    // Restoring twice: it is no longer in the trash.
    assert!(matches!(
        store
            .restore_from_trash(TrashKind::Session, &uri.to_string())
            .await,
        Err(StoreError::NotFound { .. })
    ));
}

#[tokio::test]
async fn a_session_never_used_is_erased_at_once_but_an_agents_own_goes_to_the_trash() {
    let (_dir, store) = store().await;
    let empty = new_session("codex", None, at(0));
    store.create_session(&empty).await.unwrap();
    assert_eq!(
        store.trash_session(&empty.summary.uri).await.unwrap(),
        Removal::Erased
    );
    assert!(store.trash_items().await.unwrap().is_empty());
    assert!(store.is_tombstoned(&empty.summary.uri).await.unwrap());

    // A draft is the user's words: kept in the trash.
    let drafted = new_session("codex", None, at(0));
    store.create_session(&drafted).await.unwrap();
    let chat = ChatUri::default_for(&drafted.summary.uri);
    store
        .set_draft(&chat, Some("half a thought"))
        .await
        .unwrap();
    assert_eq!(
        store.trash_session(&drafted.summary.uri).await.unwrap(),
        Removal::Trashed
    );

    // A session found by discovery keeps its history with its agent: kept too.
    let mut found = new_session("claude", None, at(0));
    found.summary.provenance = Provenance::External;
    store.register_discovered(&found).await.unwrap();
    assert_eq!(
        store.trash_session(&found.summary.uri).await.unwrap(),
        Removal::Trashed
    );
    assert_eq!(store.trash_items().await.unwrap().len(), 2);
    assert_eq!(
        store.trash_session(&found.summary.uri).await.unwrap(),
        Removal::Missing
    );
}

#[tokio::test]
async fn emptying_by_age_erases_only_what_is_old_enough_and_keeps_tombstones() {
    let (_dir, store) = store().await;
    let old = new_session("codex", None, at(0));
    store.create_session(&old).await.unwrap();
    let old_chat = ChatUri::default_for(&old.summary.uri);
    say(&store, &old_chat, "old words").await;
    store.trash_session(&old.summary.uri).await.unwrap();
    let cutoff = now();
    tokio::task::yield_now().await;
    let young = new_session("codex", None, at(0));
    store.create_session(&young).await.unwrap();
    say(&store, &ChatUri::default_for(&young.summary.uri), "young").await;
    // Deleted a moment after the cutoff.
    while now() <= cutoff {
        tokio::task::yield_now().await;
    }
    store.trash_session(&young.summary.uri).await.unwrap();

    let erased = store.empty_trash(Some(cutoff)).await.unwrap();
    assert_eq!(
        erased
            .iter()
            .map(|item| item.id.clone())
            .collect::<Vec<_>>(),
        vec![old.summary.uri.to_string()]
    );
    let left = store.trash_items().await.unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].id, young.summary.uri.to_string());
    // Erased: not restorable, its turns gone, its tombstone kept.
    assert!(matches!(
        store
            .restore_from_trash(TrashKind::Session, &old.summary.uri.to_string())
            .await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(store.turns(&old_chat).await.unwrap().is_empty());
    assert!(store.is_tombstoned(&old.summary.uri).await.unwrap());
    assert_eq!(
        store.register_discovered(&old).await.unwrap(),
        Registration::Tombstoned
    );
    assert_eq!(store.empty_trash(None).await.unwrap().len(), 1);
    assert!(store.trash_items().await.unwrap().is_empty());
}

fn project(id: &str, folder: &str, name: &str) -> ProjectRecord {
    let at = now();
    ProjectRecord {
        id: ProjectId::parse(id).unwrap(),
        folder: PathBuf::from(folder),
        name: name.into(),
        created_at: at,
        updated_at: at,
        trusted_digest: Some("digest".into()),
    }
}

#[tokio::test]
async fn a_deleted_project_is_restorable_unless_its_folder_was_taken() {
    let (_dir, store) = store().await;
    let owls = project("owls", "/work/owls", "Owls");
    store.insert_project(&owls).await.unwrap();
    assert!(store.delete_project(&owls.id).await.unwrap());
    assert_eq!(store.project(&owls.id).await.unwrap(), None);
    assert!(store.projects().await.unwrap().is_empty());
    let items = store.trash_items().await.unwrap();
    assert_eq!(
        (items[0].kind, items[0].title.as_deref()),
        (TrashKind::Project, Some("Owls"))
    );
    store
        .restore_from_trash(TrashKind::Project, "owls")
        .await
        .unwrap();
    assert_eq!(store.project(&owls.id).await.unwrap(), Some(owls.clone()));

    // Deleted again, and its folder taken by a new project: restoring says so.
    store.delete_project(&owls.id).await.unwrap();
    store
        .insert_project(&project("herons", "/work/owls", "Herons"))
        .await
        .unwrap();
    let refused = store.restore_from_trash(TrashKind::Project, "owls").await;
    assert!(
        matches!(refused, Err(StoreError::Conflict(_))),
        "{refused:?}"
    );
    assert_eq!(store.trash_items().await.unwrap().len(), 1);

    // Emptied: a tombstone with the trusted digest, nothing in the trash.
    assert_eq!(store.empty_trash(None).await.unwrap().len(), 1);
    assert!(store.is_project_deleted(&owls.id).await.unwrap());
    assert_eq!(
        store.deleted_project_digest(&owls.id).await.unwrap(),
        Some("digest".into())
    );
    assert!(store.trash_items().await.unwrap().is_empty());
}
