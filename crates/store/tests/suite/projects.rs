//! The project registry: ids and folders unique among live projects, moves recorded,
//! deletions kept as tombstones.

use std::path::PathBuf;

use hearth_core::{ProjectId, now};
use hearth_store::{ProjectRecord, ProjectStore, SqliteStore, StoreError};
use pretty_assertions::assert_eq;

fn record(id: &str, folder: &str, name: &str) -> ProjectRecord {
    let at = now();
    ProjectRecord {
        id: ProjectId::parse(id).unwrap(),
        folder: PathBuf::from(folder),
        name: name.into(),
        created_at: at,
        updated_at: at,
        trusted_digest: None,
    }
}

#[tokio::test]
async fn projects_are_registered_listed_by_name_moved_and_deleted_with_a_tombstone() {
    let store = SqliteStore::open_in_memory().await.unwrap();
    let owls = record("owls", "/work/owls", "owls");
    let herons = record("herons", "/work/herons", "Herons");
    store.insert_project(&owls).await.unwrap();
    store.insert_project(&herons).await.unwrap();
    let names: Vec<String> = store
        .projects()
        .await
        .unwrap()
        .into_iter()
        .map(|project| project.name)
        .collect();
    assert_eq!(names, vec!["Herons", "owls"]);

    // A second project cannot take a live project's id or folder.
    let same_folder = record("other", "/work/owls", "Other");
    assert!(matches!(
        store.insert_project(&same_folder).await,
        Err(StoreError::Conflict(_))
    ));
    let same_id = record("owls", "/work/elsewhere", "Owls again");
    assert!(matches!(
        store.insert_project(&same_id).await,
        Err(StoreError::Conflict(_))
    ));

    let moved = ProjectRecord {
        folder: PathBuf::from("/work/birds/owls"),
        ..owls.clone()
    };
    store.update_project(&moved).await.unwrap();
    let found = store.project(&owls.id).await.unwrap().unwrap();
    assert_eq!(found.folder, PathBuf::from("/work/birds/owls"));

    assert!(store.delete_project(&owls.id).await.unwrap());
    assert!(!store.delete_project(&owls.id).await.unwrap());
    assert_eq!(store.project(&owls.id).await.unwrap(), None);
    assert!(store.is_project_deleted(&owls.id).await.unwrap());
    assert!(!store.is_project_deleted(&herons.id).await.unwrap());
    // A deleted project is not updated back to life, and its folder is free again.
    assert!(matches!(
        store.update_project(&moved).await,
        Err(StoreError::NotFound { .. })
    ));
    store
        .insert_project(&record("new-owls", "/work/birds/owls", "New owls"))
        .await
        .unwrap();
    assert_eq!(store.projects().await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_projects_trusted_digest_is_kept_apart_from_moves_and_goes_with_deletion() {
    let store = SqliteStore::open_in_memory().await.unwrap();
    let owls = ProjectRecord {
        trusted_digest: Some("first".into()),
        ..record("owls", "/work/owls", "Owls")
    };
    store.insert_project(&owls).await.unwrap();
    let found = store.project(&owls.id).await.unwrap().unwrap();
    assert_eq!(found.trusted_digest.as_deref(), Some("first"));

    // A move or rename leaves what was trusted alone, even when the record carries
    // another digest; only trust_project changes it.
    let moved = ProjectRecord {
        folder: PathBuf::from("/work/birds/owls"),
        trusted_digest: Some("ignored".into()),
        ..owls.clone()
    };
    store.update_project(&moved).await.unwrap();
    let found = store.project(&owls.id).await.unwrap().unwrap();
    assert_eq!(found.trusted_digest.as_deref(), Some("first"));
    store.trust_project(&owls.id, "second").await.unwrap();
    let listed = store.projects().await.unwrap();
    assert_eq!(listed[0].trusted_digest.as_deref(), Some("second"));

    store.delete_project(&owls.id).await.unwrap();
    assert!(matches!(
        store.trust_project(&owls.id, "third").await,
        Err(StoreError::NotFound { .. })
    ));
    let unknown = ProjectId::parse("nobody").unwrap();
    assert!(matches!(
        store.trust_project(&unknown, "x").await,
        Err(StoreError::NotFound { .. })
    ));
}
