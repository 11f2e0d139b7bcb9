//! The agent's file requests: confined to the session's directories (never out through
//! `..`, a symlink, a hard link or a special file, never into Hearth's data directory),
//! a write nobody allowed asks the user first with its diff, and writes are audited.

use std::os::unix::fs::symlink;

use hearth_core::{ChatUri, PermissionAnswer, ResponsePart, ToolCallContent, ToolKind};
use hearth_harness_acp::{PermissionMode, PermissionPolicy};
use hearth_test_support::TestHost;
use pretty_assertions::assert_eq;

use super::support::{Setup, finish, last_answer, permission_request, send, session};

#[tokio::test]
async fn a_write_the_agent_did_not_ask_for_is_shown_with_its_diff_and_asked() {
    let setup = Setup::new().with_audit().await;
    let target = setup.work().join("notes.md");
    std::fs::write(&target, "old line\n").unwrap();
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    let (turn_id, mut subscription) = send(
        &test.host,
        &chat,
        &format!("/write-noask {} new line", target.display()),
    )
    .await;
    let (request_id, _, tool_call_id) = permission_request(&mut subscription).await;
    let pending = test.host.pending_permissions();
    let call = pending[0].tool_call.clone().expect("Hearth's own call");
    assert_eq!(Some(&call.call_id), tool_call_id.as_ref());
    assert_eq!(call.kind, Some(ToolKind::Edit));
    assert_eq!(
        call.content,
        vec![ToolCallContent::Diff {
            path: target.display().to_string(),
            old_text: Some("old line\n".into()),
            new_text: "new line".into(),
        }]
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "old line\n");
    test.host
        .respond_permission(
            &chat,
            &request_id,
            &PermissionAnswer {
                option_id: "allow-once".into(),
                via: "test".into(),
            },
        )
        .await
        .unwrap();
    finish(&mut subscription, &turn_id).await;
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "new line");
    let rows = setup.audit_rows().await;
    let written = rows
        .iter()
        .find(|(kind, _, _, _)| kind == "file_write")
        .expect("the write is audited");
    assert_eq!(written.1, "written");
    assert_eq!(
        written.3["hashes"]["before"].as_str().map(str::len),
        Some(64)
    );
    assert_ne!(written.3["hashes"]["before"], written.3["hashes"]["after"]);

    // Refused: nothing written, the agent told why.
    let (turn_id, mut subscription) = send(
        &test.host,
        &chat,
        &format!("/write-noask {} refused", target.display()),
    )
    .await;
    let (request_id, _, _) = permission_request(&mut subscription).await;
    test.host
        .respond_permission(
            &chat,
            &request_id,
            &PermissionAnswer {
                option_id: "reject-once".into(),
                via: "test".into(),
            },
        )
        .await
        .unwrap();
    finish(&mut subscription, &turn_id).await;
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "new line");
    let answer = last_answer(&test.host, &chat).await;
    assert!(
        answer.starts_with("write failed: the user did not allow"),
        "{answer}"
    );
}

#[tokio::test]
async fn reads_inside_work_and_a_missing_file_reads_empty() {
    let setup = Setup::new();
    std::fs::write(setup.work().join("a.txt"), "alpha\nbeta\n").unwrap();
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    let (turn_id, mut subscription) = send(
        &test.host,
        &chat,
        &format!("/read {}", setup.work().join("a.txt").display()),
    )
    .await;
    finish(&mut subscription, &turn_id).await;
    assert_eq!(last_answer(&test.host, &chat).await, "alpha\nbeta\n");
    let (turn_id, mut subscription) = send(
        &test.host,
        &chat,
        &format!("/read {}", setup.work().join("missing.txt").display()),
    )
    .await;
    finish(&mut subscription, &turn_id).await;
    assert_eq!(last_answer(&test.host, &chat).await, "");
}

/// Every way out of the working directory, tried as a read and as a write the policy
/// allows (so confinement alone decides), must fail and leave the outside untouched.
#[tokio::test]
async fn file_requests_cannot_leave_the_working_directory() {
    let mut setup = Setup::new().with_audit().await;
    setup.policy = PermissionPolicy {
        mode: PermissionMode::Reject,
        allow_kinds: vec![ToolKind::Edit],
    };
    let work = setup.work();
    let outside = tempfile::tempdir().unwrap();
    let outside = outside.path().canonicalize().unwrap();
    let secret = outside.join("secret.txt");
    std::fs::write(&secret, "outside secret").unwrap();
    symlink(&secret, work.join("file-link")).unwrap();
    symlink(&outside, work.join("dir-link")).unwrap();
    symlink("/dev/null", work.join("device-link")).unwrap();
    std::fs::hard_link(&secret, work.join("hard-link")).unwrap();
    // Hearth's data directory inside the working directory.
    let data = work.join(".hearth");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(data.join("token"), "hearth token").unwrap();
    let mut options = setup.options();
    options.data_directory = Some(data.clone());
    let harness = hearth_harness_acp::AcpHarness::new(setup.spec(), options);
    let test = TestHost::start(vec![std::sync::Arc::new(harness)]).await;
    let chat = ChatUri::default_for(&session(&test.host, &work).await);
    let escapes = [
        outside.join("secret.txt").display().to_string(),
        format!(
            "{}/../{}/secret.txt",
            work.display(),
            outside.file_name().unwrap().to_string_lossy()
        ),
        work.join("file-link").display().to_string(),
        work.join("dir-link/secret.txt").display().to_string(),
        work.join("device-link").display().to_string(),
        work.join("hard-link").display().to_string(),
        data.join("token").display().to_string(),
        "relative.txt".to_owned(),
    ];
    for path in &escapes {
        let (turn_id, mut subscription) = send(&test.host, &chat, &format!("/read {path}")).await;
        finish(&mut subscription, &turn_id).await;
        let answer = last_answer(&test.host, &chat).await;
        assert!(answer.starts_with("read failed"), "read {path}: {answer}");
        assert!(!answer.contains("outside secret") && !answer.contains("hearth token"));
        let (turn_id, mut subscription) = send(
            &test.host,
            &chat,
            &format!("/write-noask {path} overwritten"),
        )
        .await;
        finish(&mut subscription, &turn_id).await;
        let answer = last_answer(&test.host, &chat).await;
        assert!(answer.starts_with("write failed"), "write {path}: {answer}");
    }
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "outside secret");
    assert_eq!(
        std::fs::read_to_string(data.join("token")).unwrap(),
        "hearth token"
    );
    // Refused writes are in the audit log, and the turn said why.
    let refused = setup
        .audit_rows()
        .await
        .into_iter()
        .filter(|(kind, decision, _, _)| kind == "file_write" && decision == "refused")
        .count();
    assert!(
        refused >= escapes.len() - 1,
        "{refused} refused writes audited"
    );
    let state = test.host.chat(&chat).await.unwrap();
    assert!(state.turns.iter().any(|turn| turn
        .parts
        .iter()
        .any(|part| matches!(part, ResponsePart::Error { message } if message.contains("outside the session's working directories")))));
    // A control: the same request inside works.
    let (turn_id, mut subscription) = send(
        &test.host,
        &chat,
        &format!("/write-noask {} fine", work.join("inside.txt").display()),
    )
    .await;
    finish(&mut subscription, &turn_id).await;
    assert_eq!(
        std::fs::read_to_string(work.join("inside.txt")).unwrap(),
        "fine"
    );
}

/// Projects' context snapshots live in Hearth's data directory: a session given the
/// cache as a directory may read them there, and nothing else of the data directory,
/// and may write none of it.
#[tokio::test]
async fn context_snapshots_in_the_data_directory_are_readable_and_nothing_else_of_it() {
    let mut setup = Setup::new();
    setup.policy = PermissionPolicy {
        mode: PermissionMode::Reject,
        allow_kinds: vec![ToolKind::Edit],
    };
    let data = setup.data.path().canonicalize().unwrap();
    let cache = data.join("context-cache");
    std::fs::create_dir_all(cache.join("files")).unwrap();
    std::fs::write(cache.join("files/file-1.md"), "# Snapshot\n").unwrap();
    std::fs::write(data.join("hearth.db"), "secret").unwrap();
    let options = hearth_harness_acp::AcpOptions {
        readable: vec![cache.clone()],
        ..setup.options()
    };
    let agents: Vec<std::sync::Arc<dyn hearth_core::Harness>> = vec![std::sync::Arc::new(
        hearth_harness_acp::AcpHarness::new(setup.spec(), options),
    )];
    let test = TestHost::start(agents).await;
    let session = test
        .host
        .create_session(hearth_host::NewSessionRequest {
            provider: hearth_core::HarnessId::parse(super::support::AGENT).unwrap(),
            scope: hearth_core::Scope::Global,
            title: None,
            model: None,
            // The whole data directory is asked for too: only the cache may be read.
            working_directories: vec![setup.work(), cache.clone(), data.clone()],
            owner: None,
        })
        .await
        .unwrap();
    let chat = ChatUri::default_for(&session);
    let ask = async |prompt: String| {
        let (turn_id, mut subscription) = send(&test.host, &chat, &prompt).await;
        finish(&mut subscription, &turn_id).await;
        last_answer(&test.host, &chat).await
    };
    let snapshot = cache.join("files/file-1.md");
    assert_eq!(
        ask(format!("/read {}", snapshot.display())).await,
        "# Snapshot\n"
    );
    let database = ask(format!("/read {}", data.join("hearth.db").display())).await;
    assert!(database.starts_with("read failed"), "{database}");
    let written = ask(format!("/write-noask {} changed", snapshot.display())).await;
    assert!(written.starts_with("write failed"), "{written}");
    assert_eq!(std::fs::read_to_string(&snapshot).unwrap(), "# Snapshot\n");
    // The working directory still works as before.
    std::fs::write(setup.work().join("a.txt"), "alpha").unwrap();
    assert_eq!(
        ask(format!("/read {}", setup.work().join("a.txt").display())).await,
        "alpha"
    );
}
