//! The project registry: ids and folders unique among live projects, moves recorded,
//! deletions kept as tombstones.

use std::path::PathBuf;
use std::sync::Arc;

use hearth_core::{ProjectId, now};
use hearth_store::{ProjectRecord, ProjectStore, StoreError};
use pretty_assertions::assert_eq;

use super::fixtures::{Backend, at, new_session, on_every_backend};

on_every_backend!(
    projects_are_registered_listed_by_name_moved_and_deleted_with_a_tombstone,
    a_projects_trusted_digest_is_kept_apart_from_moves_and_goes_with_deletion,
    relinking_a_project_moves_its_sessions_working_directories_along,
);

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

async fn projects_are_registered_listed_by_name_moved_and_deleted_with_a_tombstone(
    store: Arc<dyn ProjectStore>,
) {
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

async fn a_projects_trusted_digest_is_kept_apart_from_moves_and_goes_with_deletion(
    store: Arc<dyn ProjectStore>,
) {
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

async fn relinking_a_project_moves_its_sessions_working_directories_along(store: Arc<dyn Backend>) {
    let owls = ProjectRecord {
        trusted_digest: Some("trusted".into()),
        ..record("owls", "/work/project", "Owls")
    };
    store.insert_project(&owls).await.unwrap();
    // Its session works in the project's folder and in one outside it.
    let inside = new_session("replay", Some("owls"), at(0));
    store.create_session(&inside).await.unwrap();
    // A session of no project keeps its directories, even inside the folder.
    let global = new_session("replay", None, at(1));
    store.create_session(&global).await.unwrap();

    let moved = ProjectRecord {
        folder: PathBuf::from("/work/birds/owls"),
        name: "Owls (moved)".into(),
        ..owls.clone()
    };
    let count = store
        .relink_project(&moved, &PathBuf::from("/work/project"))
        .await
        .unwrap();
    assert_eq!(count, 1);
    let found = store.project(&owls.id).await.unwrap().unwrap();
    assert_eq!(
        (found.folder, found.name, found.trusted_digest),
        (
            PathBuf::from("/work/birds/owls"),
            "Owls (moved)".to_owned(),
            Some("trusted".to_owned())
        )
    );
    let directories =
        |session: Option<hearth_core::SessionSummary>| session.unwrap().working_directories;
    assert_eq!(
        directories(store.session(&inside.summary.uri).await.unwrap()),
        vec![
            PathBuf::from("/work/birds/owls"),
            PathBuf::from("/work/notes")
        ]
    );
    assert_eq!(
        directories(store.session(&global.summary.uri).await.unwrap()),
        vec![PathBuf::from("/work/project"), PathBuf::from("/work/notes")]
    );

    // A deleted project is not relinked, and its tombstone keeps the trusted digest.
    assert!(store.delete_project(&owls.id).await.unwrap());
    assert!(matches!(
        store
            .relink_project(&owls, &PathBuf::from("/work/birds/owls"))
            .await,
        Err(StoreError::NotFound { .. })
    ));
    assert_eq!(
        store
            .deleted_project_digest(&owls.id)
            .await
            .unwrap()
            .as_deref(),
        Some("trusted")
    );
}
