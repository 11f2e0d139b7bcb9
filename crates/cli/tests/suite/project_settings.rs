//! `project/update`, `project/context` and `project/retrySource` through a real `hearth
//! serve`: the user's changes keep a trusted project trusted and reach its mirror; where
//! each source stands is read from the cache (a source that cannot be read is failed,
//! with why); a retry after the cause is fixed makes it ready; a project waiting for
//! the user's trust prepares nothing.

use hearth_protocol::{
    ErrorKind, ProjectContext, ProjectContextParams, ProjectRetrySource, ProjectRetrySourceParams,
    ProjectSourceState, ProjectUpdate, ProjectUpdateParams,
};
use hearth_server::ServerError;
use pretty_assertions::assert_eq;

use super::serve_support::Served;
use super::support::Hearth;

fn kind(error: ServerError) -> ErrorKind {
    match error {
        ServerError::Rpc(error) => error.kind(),
        other => panic!("expected an error response, got {other}"),
    }
}

fn update(project: &str) -> ProjectUpdateParams {
    ProjectUpdateParams {
        project: project.to_owned(),
        description: None,
        instructions: None,
        default_agent: None,
        default_model: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_are_saved_and_sources_report_where_they_stand() {
    let hearth = Hearth::new();
    let folder = tempfile::tempdir().unwrap();
    let folder = folder.path().canonicalize().unwrap();
    std::fs::write(folder.join("ready.md"), "# Ready\n\nText.\n").unwrap();
    hearth.ok(&[
        "projects",
        "new",
        "Desk",
        "--folder",
        &folder.display().to_string(),
        "--source",
        "ready.md",
        "--source",
        "later.md",
    ]);
    let served = Served::start(hearth, &[], &[]);
    let (client, _notifications) = served.client().await;

    // Settings: set, shown, cleared; an unknown agent is refused.
    let updated = client
        .call::<ProjectUpdate>(&ProjectUpdateParams {
            description: Some("My desk".into()),
            instructions: Some("Answer briefly.\n\n- cite the notes".into()),
            default_agent: Some("replay".into()),
            default_model: Some("small".into()),
            ..update("Desk")
        })
        .await
        .unwrap()
        .project;
    assert_eq!(updated.description.as_deref(), Some("My desk"));
    assert_eq!(
        updated.instructions,
        "Answer briefly.\n\n- cite the notes\n"
    );
    assert_eq!(updated.agent.as_deref(), Some("replay"));
    assert_eq!(updated.model.as_deref(), Some("small"));
    assert_eq!(updated.state, hearth_protocol::ProjectState::Ready);
    let mirror = std::fs::read_to_string(folder.join("AGENTS.md")).unwrap();
    assert!(mirror.contains("- cite the notes"), "{mirror}");
    let cleared = client
        .call::<ProjectUpdate>(&ProjectUpdateParams {
            description: Some(String::new()),
            default_model: Some(" ".into()),
            ..update("Desk")
        })
        .await
        .unwrap()
        .project;
    assert_eq!(cleared.description, None);
    assert_eq!(cleared.model, None);
    assert_eq!(
        cleared.agent.as_deref(),
        Some("replay"),
        "left out, left alone"
    );
    let unknown = client
        .call::<ProjectUpdate>(&ProjectUpdateParams {
            default_agent: Some("nobody".into()),
            ..update("Desk")
        })
        .await
        .unwrap_err();
    assert_eq!(kind(unknown), ErrorKind::InvalidParams);
    assert!(served.hearth.ok(&["projects", "list"]).contains("[ready]"));

    // The sources: the readable one is prepared, the missing one failed with why.
    let context = client
        .call::<ProjectContext>(&ProjectContextParams {
            project: "Desk".into(),
            wait: true,
        })
        .await
        .unwrap();
    let states: Vec<(String, ProjectSourceState)> = context
        .sources
        .iter()
        .map(|source| (source.target.clone(), source.state))
        .collect();
    assert_eq!(
        states,
        vec![
            ("ready.md".to_owned(), ProjectSourceState::Ready),
            ("later.md".to_owned(), ProjectSourceState::Failed),
        ]
    );
    assert_eq!(context.failed, 1);
    assert!(!context.materializing);
    assert!(context.sources[1].error.is_some(), "{context:?}");

    // A retry of a source the project lacks is refused; after the fix, it is ready.
    let nothing = client
        .call::<ProjectRetrySource>(&ProjectRetrySourceParams {
            project: "Desk".into(),
            source: "nothing.md".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(kind(nothing), ErrorKind::InvalidParams);
    std::fs::write(folder.join("later.md"), "# Later\n").unwrap();
    let retried = client
        .call::<ProjectRetrySource>(&ProjectRetrySourceParams {
            project: "Desk".into(),
            source: "later.md".into(),
        })
        .await
        .unwrap();
    assert_eq!(retried.failed, 0, "{retried:?}");
    assert!(
        retried
            .sources
            .iter()
            .all(|source| source.state == ProjectSourceState::Ready),
        "{retried:?}"
    );

    // A project.md changed behind Hearth's back: nothing is prepared until trusted.
    let text = std::fs::read_to_string(folder.join("project.md")).unwrap();
    std::fs::write(folder.join("project.md"), format!("{text}\nMore rules.\n")).unwrap();
    let untrusted = client
        .call::<ProjectContext>(&ProjectContextParams {
            project: "Desk".into(),
            wait: false,
        })
        .await
        .unwrap_err();
    assert_eq!(kind(untrusted), ErrorKind::Conflict);
}
