//! Projects end to end with the real binary: a project's instructions and context reach
//! the model, its sessions are scoped to it, a moved folder is reported and re-linked,
//! a deleted project keeps its sessions readable and takes no new turns, the AGENTS.md
//! mirror never touches a user's file, and the context cache's commands.

use std::path::Path;

use hearth_test_support::OpenAiStream;
use pretty_assertions::assert_eq;

use super::mock::{MODEL, completions, configure, conversation, mock_config, ok, run, server};
use super::support::Hearth;

/// Makes a project in `folder` with one Markdown source and instructions; returns its id.
fn make_project(hearth: &Hearth, folder: &Path) -> String {
    std::fs::write(
        folder.join("notes.md"),
        "# Field notes\n\nThe heron nests by the Grüße river.\n",
    )
    .unwrap();
    let folder_arg = folder.display().to_string();
    let (stdout, _) = ok(
        hearth,
        &[
            "projects",
            "new",
            "Herons",
            "--folder",
            &folder_arg,
            "--source",
            "notes.md",
        ],
    );
    assert!(stdout.starts_with("made project `Herons` ("), "{stdout}");
    let text = std::fs::read_to_string(folder.join("project.md")).unwrap();
    std::fs::write(
        folder.join("project.md"),
        format!("{text}Always answer in haiku.\n"),
    )
    .unwrap();
    // Instructions written in an editor are trusted like any change on disk.
    let trusted = hearth.ok(&["projects", "trust", "Herons", "--yes"]);
    assert!(trusted.starts_with("trusted project `Herons`"), "{trusted}");
    text.lines()
        .find_map(|line| line.strip_prefix("id: "))
        .unwrap()
        .to_owned()
}

fn system_prompt(request: &hearth_test_support::RecordedRequest) -> String {
    request.json()["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn a_project_session_gets_the_instructions_and_its_context_once() {
    let server = server();
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));
    let folder = tempfile::tempdir().unwrap();
    let id = make_project(&hearth, folder.path());
    server.enqueue(OpenAiStream::text_answer(MODEL, &["Herons wait"], 3, 1));
    server.enqueue(OpenAiStream::text_answer(MODEL, &["Still water"], 3, 1));

    let (stdout, _) = ok(
        &hearth,
        &["run", "--project", "Herons", "where do herons nest?"],
    );
    assert_eq!(stdout, "Herons wait\n");
    let requests = completions(&server);
    let system = system_prompt(&requests[0]);
    assert!(system.contains("Always answer in haiku."), "{system}");
    assert!(
        system.contains("You are working in a Hearth project"),
        "{system}"
    );
    let turns = conversation(&requests[0]);
    let (role, first) = &turns[0];
    assert_eq!(role, "user");
    assert!(first.starts_with("<project_context>"), "{first}");
    assert!(first.ends_with("where do herons nest?"), "{first}");
    // The block names the snapshot by its absolute path, and the snapshot holds the note.
    let snapshot = first
        .split_whitespace()
        .find(|word| word.contains("context-cache") && word.ends_with(".md"))
        .unwrap_or_else(|| panic!("no snapshot path in {first}"))
        .trim_matches(|c: char| c == '`' || c == '(' || c == ')');
    assert!(Path::new(snapshot).is_absolute(), "{snapshot}");
    assert!(
        Path::new(snapshot).starts_with(hearth.home.path().join("context-cache")),
        "{snapshot}"
    );
    let converted = std::fs::read_to_string(snapshot).unwrap();
    assert!(
        converted.contains("The heron nests by the Grüße river."),
        "{converted}"
    );

    // The session is the project's; what is stored is the prompt as typed.
    let listed = hearth.ok(&["sessions", "list", "--project", &id]);
    let session = hearth.session_uris().remove(0);
    assert!(listed.contains(&session), "{listed}");
    assert!(
        hearth
            .ok(&["sessions", "list", "--global"])
            .contains("no sessions")
    );
    let show = hearth.ok(&["sessions", "show", &session]);
    assert!(show.contains("› where do herons nest?\n"), "{show}");
    assert!(!show.contains("project_context"), "{show}");

    // The next turn carries the instructions again, the context block only once.
    ok(&hearth, &["run", "--session", &session, "and in winter?"]);
    let requests = completions(&server);
    assert!(system_prompt(&requests[1]).contains("Always answer in haiku."));
    let turns = conversation(&requests[1]);
    let last = &turns.last().unwrap().1;
    assert_eq!(last, "and in winter?");
    let blocks = turns
        .iter()
        .filter(|(_, text)| text.contains("<project_context>"))
        .count();
    assert_eq!(blocks, 1, "{turns:?}");
}

#[test]
fn a_moved_project_is_reported_refuses_turns_and_works_again_once_relinked() {
    let server = server();
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));
    let parent = tempfile::tempdir().unwrap();
    let folder = parent.path().join("herons");
    std::fs::create_dir(&folder).unwrap();
    let id = make_project(&hearth, &folder);
    server.enqueue(OpenAiStream::text_answer(MODEL, &["one"], 1, 1));
    ok(&hearth, &["run", "--project", &id, "first"]);
    let session = hearth.session_uris().remove(0);

    let moved = parent.path().join("herons-2026");
    std::fs::rename(&folder, &moved).unwrap();
    let listed = hearth.ok(&["projects", "list"]);
    assert!(listed.contains("[missing]"), "{listed}");
    let doctor = run(&hearth, &["doctor"]);
    assert!(!doctor.status.success());
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert!(report.contains("MISSING Herons"), "{report}");
    assert!(report.contains("hearth projects relink"), "{report}");
    let refused = run(&hearth, &["run", "--session", &session, "second"]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("takes no new turns"), "{stderr}");
    assert!(stderr.contains("hearth projects relink"), "{stderr}");
    let refused = run(&hearth, &["run", "--project", &id, "new session"]);
    assert!(!refused.status.success());
    // Nothing was stored by the refused turns, and the history still reads.
    let show = hearth.ok(&["sessions", "show", &session]);
    assert!(show.contains("› first\none"), "{show}");
    assert!(!show.contains("second"), "{show}");
    assert_eq!(hearth.session_uris().len(), 1);

    let relinked = hearth.ok(&["projects", "relink", &id[..8], &moved.display().to_string()]);
    assert!(
        relinked.contains(&moved.display().to_string()),
        "{relinked}"
    );
    server.enqueue(OpenAiStream::text_answer(MODEL, &["two"], 1, 1));
    let (stdout, _) = ok(&hearth, &["run", "--session", &session, "second"]);
    assert_eq!(stdout, "two\n");
}

#[test]
fn a_deleted_project_keeps_its_sessions_readable_and_takes_no_new_turns() {
    let server = server();
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));
    let folder = tempfile::tempdir().unwrap();
    let id = make_project(&hearth, folder.path());
    server.enqueue(OpenAiStream::text_answer(MODEL, &["one"], 1, 1));
    ok(&hearth, &["run", "--project", &id, "first"]);
    let session = hearth.session_uris().remove(0);
    assert!(folder.path().join("AGENTS.md").exists());

    let deleted = hearth.ok(&["projects", "delete", "Herons"]);
    assert!(deleted.contains("sessions stay readable"), "{deleted}");
    // Hearth's mirror goes; the user's project.md and notes stay.
    assert!(!folder.path().join("AGENTS.md").exists());
    assert!(folder.path().join("project.md").exists());
    assert!(hearth.ok(&["projects", "list"]).contains("no projects yet"));

    let show = hearth.ok(&["sessions", "show", &session]);
    assert!(show.contains("› first\none"), "{show}");
    assert!(
        hearth
            .ok(&["sessions", "list", "--project", &id])
            .contains(&session)
    );
    let refused = run(&hearth, &["run", "--session", &session, "second"]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("was deleted"), "{stderr}");
    assert_eq!(completions(&server).len(), 1);
}

#[test]
fn the_agents_md_mirror_follows_the_project_and_never_touches_a_users_file() {
    let hearth = Hearth::new();
    let folder = tempfile::tempdir().unwrap();
    let folder_arg = folder.path().display().to_string();
    hearth.ok(&["projects", "new", "Mirror", "--folder", &folder_arg]);
    let mirror = folder.path().join("AGENTS.md");
    let first = std::fs::read_to_string(&mirror).unwrap();
    assert!(first.starts_with(hearth_projects::MIRROR_MARKER), "{first}");
    assert!(first.contains("# Project: Mirror"), "{first}");

    // Updated when the project changes.
    hearth.ok(&["projects", "rename", "Mirror", "Looking glass"]);
    let renamed = std::fs::read_to_string(&mirror).unwrap();
    assert!(renamed.contains("# Project: Looking glass"), "{renamed}");

    // A file the user took over (marker removed) is theirs from then on.
    let users = "# My own agent notes\n";
    std::fs::write(&mirror, users).unwrap();
    hearth.ok(&["projects", "rename", "Looking glass", "Mirror again"]);
    assert_eq!(std::fs::read_to_string(&mirror).unwrap(), users);
    let show = hearth.ok(&["projects", "show", "Mirror again"]);
    assert!(
        show.contains("AGENTS.md: the user's own (left alone)"),
        "{show}"
    );
    hearth.ok(&["projects", "delete", "Mirror again"]);
    assert_eq!(std::fs::read_to_string(&mirror).unwrap(), users);

    // A project made where the user already has an AGENTS.md leaves it alone.
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("AGENTS.md"), users).unwrap();
    let (_, stderr) = ok(
        &hearth,
        &[
            "projects",
            "new",
            "Theirs",
            "--folder",
            &other.path().display().to_string(),
        ],
    );
    assert!(
        stderr.contains("is yours, so Hearth leaves it alone"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(other.path().join("AGENTS.md")).unwrap(),
        users
    );
}

#[test]
fn sources_are_added_shown_removed_and_their_cache_reported_retried_and_collected() {
    let hearth = Hearth::new();
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("a.md"), "# A\n\nalpha\n").unwrap();
    std::fs::write(folder.path().join("b.txt"), "beta\n").unwrap();
    std::fs::create_dir(folder.path().join("papers")).unwrap();
    let folder_arg = folder.path().display().to_string();
    hearth.ok(&["projects", "new", "Sources", "--folder", &folder_arg]);
    let added = hearth.ok(&[
        "projects",
        "add-source",
        "Sources",
        "a.md",
        "b.txt",
        "papers",
        "missing.pdf",
    ]);
    assert!(added.contains("added file a.md"), "{added}");
    assert!(added.contains("added folder papers"), "{added}");
    let show = hearth.ok(&["projects", "show", "Sources"]);
    assert!(
        show.contains(
            "  1. file a.md\n  2. file b.txt\n  3. folder papers\n  4. file missing.pdf\n"
        ),
        "{show}"
    );
    let status = hearth.ok(&["context", "status", "Sources"]);
    assert!(status.contains("file a.md: not prepared yet"), "{status}");

    // A retry prepares what it can and fails on what it cannot, naming it.
    let retried = run(&hearth, &["context", "retry", "Sources"]);
    assert!(!retried.status.success());
    let stdout = String::from_utf8_lossy(&retried.stdout);
    assert!(stdout.contains("file a.md  ready"), "{stdout}");
    assert!(stdout.contains("file missing.pdf  failed"), "{stdout}");
    let status = hearth.ok(&["context", "status", "Sources"]);
    assert!(status.contains("file a.md: ready"), "{status}");
    assert!(status.contains("file missing.pdf"), "{status}");

    // Removing a source and collecting drops its snapshot; the others stay.
    hearth.ok(&["projects", "remove-source", "Sources", "2"]);
    let collected = hearth.ok(&["context", "gc"]);
    assert!(collected.contains("removed 1 snapshot(s)"), "{collected}");
    let status = hearth.ok(&["context", "status", "Sources"]);
    assert!(status.contains("file a.md: ready"), "{status}");
    assert!(!status.contains("b.txt"), "{status}");
    hearth.ok(&["context", "clear"]);
    let status = hearth.ok(&["context", "status", "Sources"]);
    assert!(status.contains("file a.md: not prepared yet"), "{status}");
}

#[test]
fn bad_project_input_gets_clear_errors() {
    let hearth = Hearth::new();
    let unknown = hearth.fails(&["run", "--project", "nope", "hi"]);
    assert!(unknown.contains("no project is called `nope`"), "{unknown}");
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(
        folder.path().join("project.md"),
        "---\nname: [broken\n---\n",
    )
    .unwrap();
    let broken = hearth.fails(&[
        "projects",
        "new",
        "Broken",
        "--folder",
        &folder.path().display().to_string(),
    ]);
    assert!(broken.contains("not a valid project file"), "{broken}");
    // The broken file is the user's: left as it was.
    assert_eq!(
        std::fs::read_to_string(folder.path().join("project.md")).unwrap(),
        "---\nname: [broken\n---\n"
    );
}

#[test]
fn chat_opens_sessions_in_their_scope_and_a_failed_open_keeps_the_user_where_they_were() {
    use std::io::Write;
    use std::process::Stdio;

    use hearth_test_support::{BoundedChild, PROCESS_WAIT};

    let server = server();
    server.set_fallback(OpenAiStream::text_answer(MODEL, &["ok"], 1, 1));
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));
    let folder = tempfile::tempdir().unwrap();
    let id = make_project(&hearth, folder.path());
    ok(&hearth, &["run", "in the global scope"]);
    let global = hearth.session_uris().remove(0);
    ok(&hearth, &["run", "--project", &id, "in the project"]);
    let in_project = hearth
        .session_uris()
        .into_iter()
        .find(|session| session != &global)
        .unwrap();

    let mut child = super::mock::command(&hearth)
        .args(["chat", "--session", &global])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let script = format!(
        "/open {in_project}\n/project\nfollow-up\n/open hearth-session:mock/not-there\n/project\n/project nope\n/project global\n/quit\n"
    );
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let output = child.wait_with_output_within(PROCESS_WAIT);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(output.status.success(), "{stderr}");
    let project_scope = format!("project {id}");
    assert!(
        stderr.contains(&format!("hearth: now in {project_scope}")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("hearth: in {project_scope}\n")),
        "{stderr}"
    );
    // The failed open names what failed and that nothing moved.
    assert!(
        stderr.contains("cannot open hearth-session:mock/not-there"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("still in {project_scope} (session {in_project})")),
        "{stderr}"
    );
    assert_eq!(
        stderr
            .matches(&format!("hearth: in {project_scope}\n"))
            .count(),
        2,
        "{stderr}"
    );
    assert!(stderr.contains("no project is called `nope`"), "{stderr}");
    assert!(
        stderr.contains("hearth: now in the global scope; new session"),
        "{stderr}"
    );
    // The follow-up went to the project's session, with its history.
    let show = hearth.ok(&["sessions", "show", &in_project]);
    assert!(show.contains("› follow-up"), "{show}");
    let follow_up = completions(&server)
        .into_iter()
        .map(|request| conversation(&request))
        .find(|turns| turns.last().is_some_and(|(_, text)| text == "follow-up"))
        .unwrap();
    assert!(
        follow_up
            .iter()
            .any(|(_, text)| text.ends_with("in the project")),
        "{follow_up:?}"
    );
    // Three sessions now: the global one, the project's, and the new global one.
    let sessions = hearth.session_uris();
    assert_eq!(sessions.len(), 3, "{sessions:?}");
    assert!(
        hearth
            .ok(&["sessions", "list", "--global"])
            .contains(&global)
    );
}

#[tokio::test]
async fn projects_through_the_server_protocol() {
    use hearth_protocol::{
        ProjectAddSource, ProjectAddSourceParams, ProjectCreate, ProjectCreateParams,
        ProjectDelete, ProjectGet, ProjectList, ProjectListParams, ProjectParams, ProjectRelink,
        ProjectRelinkParams, ProjectRemoveSource, ProjectRemoveSourceParams, ProjectRename,
        ProjectRenameParams, ProjectState, SessionCreate, SessionCreateParams,
    };

    use super::serve_support::Served;

    let served = Served::start(Hearth::new(), &[], &[]);
    let (client, _notifications) = served.client().await;
    let parent = tempfile::tempdir().unwrap();
    let folder = parent.path().join("owls");
    let created = client
        .call::<ProjectCreate>(&ProjectCreateParams {
            name: "Owls".into(),
            folder: folder.display().to_string(),
            description: Some("Night birds".into()),
            trust: false,
            review_digest: None,
        })
        .await
        .unwrap();
    let hearth_protocol::ProjectCreateResponse::Created {
        project: created,
        adopted: false,
    } = created
    else {
        panic!("a new project needs no trust: {created:?}");
    };
    assert_eq!(
        (
            created.name.as_str(),
            created.state,
            created.description.as_deref()
        ),
        ("Owls", ProjectState::Ready, Some("Night birds"))
    );
    assert!(folder.join("project.md").exists());
    let id = created.id.clone();

    let added = client
        .call::<ProjectAddSource>(&ProjectAddSourceParams {
            project: "Owls".into(),
            source: "https://example.org/owls".into(),
        })
        .await
        .unwrap()
        .project;
    assert_eq!(added.sources.len(), 1);
    assert_eq!(
        (
            added.sources[0].kind.as_str(),
            added.sources[0].target.as_str()
        ),
        ("web", "https://example.org/owls")
    );
    let renamed = client
        .call::<ProjectRename>(&ProjectRenameParams {
            project: id.clone(),
            name: "Owls at night".into(),
        })
        .await
        .unwrap()
        .project;
    assert_eq!(renamed.name, "Owls at night");
    let removed = client
        .call::<ProjectRemoveSource>(&ProjectRemoveSourceParams {
            project: id.clone(),
            source: "1".into(),
        })
        .await
        .unwrap()
        .project;
    assert!(removed.sources.is_empty());

    // A session made in the project through the server works in its folder's scope.
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            harness: Some("replay".into()),
            project_id: Some(id.clone()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap()
        .session;
    assert_eq!(
        serde_json::to_value(&session.summary.scope).unwrap()["projectId"],
        serde_json::Value::from(id.clone())
    );

    // A moved folder shows as missing, refuses new sessions with a clear error, and
    // comes back when re-linked.
    let moved = parent.path().join("owls-moved");
    std::fs::rename(&folder, &moved).unwrap();
    let listed = client
        .call::<ProjectList>(&ProjectListParams {})
        .await
        .unwrap()
        .projects;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].state, ProjectState::Missing);
    assert!(
        listed[0]
            .problem
            .as_deref()
            .unwrap()
            .contains("projects relink"),
        "{listed:?}"
    );
    let refused = client
        .call::<SessionCreate>(&SessionCreateParams {
            harness: Some("replay".into()),
            project_id: Some(id.clone()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("takes no new turns"), "{refused}");
    let relinked = client
        .call::<ProjectRelink>(&ProjectRelinkParams {
            project: id.clone(),
            folder: moved.display().to_string(),
        })
        .await
        .unwrap()
        .project;
    assert_eq!(relinked.state, ProjectState::Ready);
    assert_eq!(relinked.folder, moved.display().to_string());

    // Bad input is a clear error on an open connection.
    let relative = client
        .call::<ProjectRelink>(&ProjectRelinkParams {
            project: id.clone(),
            folder: "owls".into(),
        })
        .await
        .unwrap_err()
        .to_string();
    assert!(relative.contains("not an absolute path"), "{relative}");
    let unknown = client
        .call::<ProjectGet>(&ProjectParams {
            project: "nope".into(),
        })
        .await
        .unwrap_err()
        .to_string();
    assert!(unknown.contains("no project is called `nope`"), "{unknown}");

    let deleted = client
        .call::<ProjectDelete>(&ProjectParams {
            project: id.clone(),
        })
        .await
        .unwrap();
    assert_eq!(deleted.id, id);
    assert!(deleted.mirror_removed);
    assert!(!moved.join("AGENTS.md").exists());
    let listed = client
        .call::<ProjectList>(&ProjectListParams {})
        .await
        .unwrap()
        .projects;
    assert!(listed.is_empty());
}

#[test]
fn hearths_own_agent_reads_a_context_snapshot_and_nothing_else_of_the_data_directory() {
    use std::sync::Arc;

    use hearth_test_support::{MockResponse, RecordedRequest};

    let server = server();
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));
    let folder = tempfile::tempdir().unwrap();
    make_project(&hearth, folder.path());
    let database = hearth.home.path().join("hearth.db").display().to_string();
    // The model reads the snapshot its first prompt names, then tries the database.
    server.set_responder(Arc::new(move |request: &RecordedRequest| {
        let body = request.json();
        let messages = body["messages"].as_array()?;
        let tool_results = messages
            .iter()
            .filter(|message| message["role"] == "tool")
            .count();
        let first = messages.iter().find(|message| message["role"] == "user")?["content"]
            .as_str()?
            .to_owned();
        let snapshot = first
            .split_whitespace()
            .find(|word| word.contains("context-cache") && word.ends_with(".md"))?
            .to_owned();
        let (id, path) = match tool_results {
            0 => ("call-1", snapshot),
            1 => ("call-2", database.clone()),
            _ => {
                return Some(MockResponse::from(OpenAiStream::text_answer(
                    MODEL,
                    &["done"],
                    1,
                    1,
                )));
            }
        };
        let arguments = serde_json::json!({ "path": path }).to_string();
        Some(MockResponse::from(
            OpenAiStream::new(MODEL)
                .role()
                .tool_call(0, id, "file_read")
                .tool_arguments(0, &arguments)
                .finish("tool_calls")
                .done(),
        ))
    }));
    let (stdout, _) = ok(&hearth, &["run", "--project", "Herons", "read your notes"]);
    assert_eq!(stdout, "done\n");
    let requests = completions(&server);
    let last = requests.last().unwrap().json();
    let results: Vec<String> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(|message| message["content"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(
        results[0].contains("The heron nests by the Grüße river."),
        "{results:?}"
    );
    assert!(!results[1].contains("SQLite"), "{results:?}");
    assert!(
        results[1].contains("denied") || results[1].contains("outside"),
        "{results:?}"
    );
}

/// The model's tool results in the last request, in order.
fn last_tool_results(server: &hearth_test_support::MockModelServer) -> Vec<String> {
    let requests = completions(server);
    requests.last().unwrap().json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(|message| message["content"].as_str().unwrap().to_owned())
        .collect()
}

/// After the folder moved and `projects relink`, `run -c --project` goes on with the
/// same conversation, working in the new folder: a relative `file_read` reads the
/// moved file, and the session records the new folder.
#[test]
fn a_relinked_projects_sessions_continue_in_its_new_folder() {
    let server = server();
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));
    let parent = tempfile::tempdir().unwrap();
    let folder = parent.path().join("herons");
    std::fs::create_dir(&folder).unwrap();
    let id = make_project(&hearth, &folder);
    server.enqueue(OpenAiStream::text_answer(MODEL, &["one"], 1, 1));
    ok(&hearth, &["run", "--project", &id, "first"]);
    let session = hearth.session_uris().remove(0);

    let moved = parent.path().join("herons-2026");
    std::fs::rename(&folder, &moved).unwrap();
    let output = run(
        &hearth,
        &["projects", "relink", &id, &moved.display().to_string()],
    );
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "hearth: 1 of its sessions now work in {}",
            moved.display()
        )),
        "{stderr}"
    );

    server.enqueue(
        OpenAiStream::new(MODEL)
            .role()
            .tool_call(0, "call-1", "file_read")
            .tool_arguments(0, r#"{"path": "notes.md"}"#)
            .finish("tool_calls")
            .done(),
    );
    server.enqueue(OpenAiStream::text_answer(MODEL, &["two"], 1, 1));
    let (stdout, _) = ok(&hearth, &["run", "-c", "--project", &id, "read the notes"]);
    assert_eq!(stdout, "two\n");
    assert_eq!(
        hearth.session_uris(),
        [session.as_str()],
        "the same session went on"
    );
    let results = last_tool_results(&server);
    assert!(
        results[0].contains("The heron nests by the Grüße river."),
        "{results:?}"
    );
    let shown: serde_json::Value =
        serde_json::from_str(&hearth.ok(&["sessions", "show", &session, "--json"])).unwrap();
    // (Either JSON casing: the spelling of `--json` output is being unified.)
    let directories = shown["session"]
        .get("workingDirectories")
        .or_else(|| shown["session"].get("working_directories"))
        .unwrap_or(&serde_json::Value::Null);
    assert_eq!(
        directories[0].as_str(),
        Some(moved.canonicalize().unwrap().display().to_string().as_str()),
        "{shown}"
    );
}

/// `projects delete` says the folder's project.md stays; `projects new` there makes a
/// project again (a new one: new id, the name given, the file's instructions kept and,
/// as the user trusted them before, not asked about again), while the deleted project's
/// sessions stay with it.
#[test]
fn a_deleted_projects_folder_can_become_a_project_again() {
    let server = server();
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));
    let folder = tempfile::tempdir().unwrap();
    let folder_arg = folder.path().display().to_string();
    let old_id = make_project(&hearth, folder.path());
    server.enqueue(OpenAiStream::text_answer(MODEL, &["one"], 1, 1));
    ok(&hearth, &["run", "--project", &old_id, "first"]);
    let old_session = hearth.session_uris().remove(0);
    let deleted = hearth.ok(&["projects", "delete", "Herons"]);
    assert!(deleted.contains("project.md stay"), "{deleted}");

    let (made, _) = ok(
        &hearth,
        &["projects", "new", "Herons again", "--folder", &folder_arg],
    );
    assert!(made.starts_with("made project `Herons again` ("), "{made}");
    let file = std::fs::read_to_string(folder.path().join("project.md")).unwrap();
    let new_id = file
        .lines()
        .find_map(|line| line.strip_prefix("id: "))
        .unwrap()
        .to_owned();
    assert_ne!(new_id, old_id);
    assert!(file.contains("name: Herons again"), "{file}");
    assert!(file.contains("Always answer in haiku."), "{file}");
    assert!(file.contains("notes.md"), "the sources stay: {file}");
    let listed = hearth.ok(&["projects", "list"]);
    assert!(
        listed.contains(&new_id) && listed.contains("[ready]"),
        "{listed}"
    );

    server.enqueue(OpenAiStream::text_answer(MODEL, &["two"], 1, 1));
    let (stdout, _) = ok(&hearth, &["run", "--project", &new_id, "hello"]);
    assert_eq!(stdout, "two\n");
    assert!(
        system_prompt(completions(&server).last().unwrap()).contains("Always answer in haiku."),
        "the new project's turns get the instructions"
    );
    let refused = run(&hearth, &["run", "--session", &old_session, "second"]);
    assert!(
        !refused.status.success(),
        "the deleted project's session takes no new turns"
    );
}

/// Two live projects cannot share a name (as `--project` finds them: ignoring case).
#[test]
fn two_projects_cannot_share_a_name() {
    let hearth = Hearth::new();
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    let canonical = first.path().canonicalize().unwrap();
    hearth.ok(&[
        "projects",
        "new",
        "Herons",
        "--folder",
        &first.path().display().to_string(),
    ]);
    let refused = hearth.fails(&[
        "projects",
        "new",
        "herons",
        "--folder",
        &second.path().display().to_string(),
    ]);
    assert!(
        refused.contains("a project called `Herons` already exists")
            && refused.contains(&format!("in {}", canonical.display())),
        "{refused}"
    );
    assert!(
        !second.path().join("project.md").exists(),
        "nothing was written"
    );
    hearth.ok(&[
        "projects",
        "new",
        "Egrets",
        "--folder",
        &second.path().display().to_string(),
    ]);
    let refused = hearth.fails(&["projects", "rename", "Egrets", "HERONS"]);
    assert!(
        refused.contains("a project called `Herons` already exists"),
        "{refused}"
    );
    assert!(hearth.ok(&["projects", "list"]).contains("Egrets"));
    // Renaming a project to its own name in another case is fine.
    hearth.ok(&["projects", "rename", "Herons", "HERONS"]);
}
