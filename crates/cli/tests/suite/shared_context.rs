//! A team server's shared context cache from the command line: two nodes (two data
//! directories) on one PostgreSQL store, sharing one `file://` store; and the refusal
//! of a shared cache without a PostgreSQL store.

use std::path::{Path, PathBuf};
use std::process::Output;

use hearth_test_support::postgres::fresh_database;
use hearth_test_support::{BoundedCommand, PROCESS_WAIT};

use super::support::Hearth;

/// The marker appended to the shared object: only a node that took the object from the
/// shared store, rather than converting the file itself, has it.
const MARK: &str = "appended to the shared object";

/// `hearth ARGS` on `node`, with the team's store and shared cache.
fn on(node: &Hearth, store: Option<&str>, shared: &str, args: &[&str]) -> Output {
    let mut command = node.command();
    if let Some(store) = store {
        command.env("HEARTH_STORE_URL", store);
    }
    command
        .env("HEARTH_CONTEXT_SHARED", shared)
        .args(args)
        .output_within(PROCESS_WAIT)
}

fn ok(node: &Hearth, store: &str, shared: &str, args: &[&str]) -> String {
    let output = on(node, Some(store), shared, args);
    assert!(
        output.status.success(),
        "hearth {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The only file in `folder`.
fn only_file(folder: &Path) -> PathBuf {
    let entries: Vec<PathBuf> = std::fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| !path.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    entries[0].clone()
}

#[tokio::test]
async fn a_second_node_takes_the_first_nodes_snapshot_from_the_shared_store() {
    let Some(store) = fresh_database().await else {
        return;
    };
    let shared = tempfile::tempdir().unwrap();
    let location = format!("file://{}", shared.path().display());
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("a.md"), "# A\n\nalpha\n").unwrap();
    let (first, second) = (Hearth::new(), Hearth::new());
    let folder_arg = folder.path().display().to_string();
    ok(
        &first,
        &store,
        &location,
        &["projects", "new", "Sources", "--folder", &folder_arg],
    );
    ok(
        &first,
        &store,
        &location,
        &["projects", "add-source", "Sources", "a.md"],
    );

    let converted = ok(&first, &store, &location, &["context", "retry", "Sources"]);
    assert!(converted.contains("file a.md  ready"), "{converted}");
    let object = only_file(&shared.path().join("files"));
    let mut text = std::fs::read_to_string(&object).unwrap();
    assert!(text.contains("alpha"), "{text}");
    text.push_str(MARK);
    std::fs::write(&object, &text).unwrap();

    let taken = ok(&second, &store, &location, &["context", "retry", "Sources"]);
    assert!(taken.contains("file a.md  ready"), "{taken}");
    let local = only_file(&second.home.path().join("context-cache").join("files"));
    assert!(
        taken.contains(&local.display().to_string()),
        "the second node's manifest points into its own cache: {taken}"
    );
    assert_eq!(
        std::fs::read_to_string(&local).unwrap(),
        text,
        "the second node took the shared snapshot instead of converting"
    );

    // Clearing a node's cache leaves the shared one, which fills the node again.
    let cleared = ok(&second, &store, &location, &["context", "clear"]);
    assert!(cleared.contains(&location), "{cleared}");
    assert!(!local.exists());
    assert_eq!(std::fs::read_to_string(&object).unwrap(), text);
    let status = ok(
        &second,
        &store,
        &location,
        &["context", "status", "Sources"],
    );
    assert!(status.contains("file a.md: not prepared yet"), "{status}");
    assert!(status.contains(&location), "{status}");
    ok(&second, &store, &location, &["context", "retry", "Sources"]);
    assert_eq!(std::fs::read_to_string(&local).unwrap(), text);

    // A location that cannot be used is refused, naming the setting and what to write.
    let refused = on(
        &second,
        Some(&store),
        "ftp://team/context",
        &["context", "retry", "Sources"],
    );
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("[context] shared"), "{said}");
    assert!(said.contains("ftp://team/context"), "{said}");
    assert!(said.contains("s3://bucket/prefix"), "{said}");
}

#[test]
fn a_shared_context_cache_without_a_postgresql_store_is_refused_saying_why() {
    let node = Hearth::new();
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("a.md"), "# A\n").unwrap();
    let folder_arg = folder.path().display().to_string();
    node.ok(&["projects", "new", "Sources", "--folder", &folder_arg]);
    node.ok(&["projects", "add-source", "Sources", "a.md"]);
    let shared = tempfile::tempdir().unwrap();
    let location = format!("file://{}", shared.path().display());

    let refused = on(&node, None, &location, &["context", "retry", "Sources"]);

    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains(&location), "{said}");
    assert!(said.contains("[context] shared"), "{said}");
    assert!(said.contains("postgres://"), "{said}");
    assert!(
        !node
            .home
            .path()
            .join("context-cache")
            .join("files")
            .exists(),
        "nothing was converted"
    );
}

#[test]
fn hearth_serve_refuses_to_start_with_a_shared_context_cache_it_cannot_use() {
    let node = Hearth::new();
    let shared = tempfile::tempdir().unwrap();
    let location = format!("file://{}", shared.path().display());

    // Bounded: a server that started anyway would fail the test at the deadline.
    let refused = on(&node, None, &location, &["serve", "--port", "0"]);

    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("[context] shared"), "{said}");
    assert!(said.contains("postgres://"), "{said}");
}
