//! Documents built to crash their converter, read by a running `hearth serve`: each
//! ends only its own isolated converter, is reported as that source's failure with the
//! reason, and the server, the turn and the other sources carry on.

use std::path::Path;
use std::time::Instant;

use hearth_test_support::hostile;

use super::serve_support::Served;
use super::support::Hearth;

/// How many of each hostile kind: four kinds, a hundred documents.
const EACH: usize = 25;

/// Writes the hostile documents into `folder`; returns their names.
fn write_documents(folder: &Path) -> Vec<String> {
    let kinds: [(&str, Vec<u8>); 4] = [
        ("xlsx", hostile::xlsx_two_far_cells()),
        ("pdf", hostile::pdf_self_drawing_form()),
        ("epub", hostile::epub_nested_divs(100_000)),
        ("html", hostile::html_nested_divs(100_000)),
    ];
    let mut names = Vec::new();
    for index in 0..EACH {
        for (extension, bytes) in &kinds {
            let name = format!("hostile-{index:02}.{extension}");
            std::fs::write(folder.join(&name), bytes).unwrap();
            names.push(name);
        }
    }
    names
}

#[test]
fn serve_survives_a_hundred_hostile_documents_in_a_row() {
    let hearth = Hearth::new();
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("notes.md"), "# Notes\n\nThe good one.\n").unwrap();
    let names = write_documents(folder.path());
    let folder_arg = folder.path().display().to_string();
    let mut arguments = vec!["projects", "new", "Hostile", "--folder", &folder_arg];
    for name in &names {
        arguments.extend(["--source", name.as_str()]);
    }
    arguments.extend(["--source", "notes.md"]);
    hearth.ok(&arguments);

    let mut served = Served::start(hearth, &[], &[]);
    // The first prompt of a project session waits for its sources: all hundred hostile
    // documents are converted (and fail) inside the server's process tree.
    let started = Instant::now();
    let answer = served.hearth.ok(&["run", "--project", "Hostile", "hello"]);
    let took = started.elapsed();
    assert!(!answer.trim().is_empty());
    assert!(
        served.child.try_wait().unwrap().is_none(),
        "hearth serve died reading hostile documents"
    );
    eprintln!("100 hostile documents and one good one prepared in {took:?}");

    let status = served.hearth.ok(&["context", "status", "Hostile"]);
    let failed: Vec<&str> = status
        .lines()
        .filter(|line| line.contains("hostile-"))
        .collect();
    assert_eq!(failed.len(), 100, "{status}");
    for line in &failed {
        let expected = if line.contains(".xlsx") || line.contains(".pdf") {
            // The converter died (out of memory, a stack overflow): that source failed,
            // saying how.
            "its converter"
        } else {
            // Nested past what the parsers can take: read as text.
            ": ready"
        };
        assert!(line.contains(expected), "{line}\n{status}");
    }
    assert!(status.contains("file notes.md: ready"), "{status}");
    eprintln!("{}", failed[..4].join("\n"));

    // The server goes on serving turns.
    let again = served
        .hearth
        .ok(&["run", "-c", "--project", "Hostile", "and again?"]);
    assert!(!again.trim().is_empty());
    assert!(served.child.try_wait().unwrap().is_none());
    let stderr = served.stop();
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// A source that is a symlink (absolute or relative) or a hard link to Hearth's own
/// token or audit key is refused, so the secret never reaches the context cache, and
/// the agent's `file_read` of the snapshots finds no copy of it.
#[test]
fn a_source_leading_into_the_data_directory_is_refused() {
    let hearth = Hearth::new();
    // A command makes the token and the audit key.
    let served = Served::start(hearth, &[], &[]);
    let home = served.hearth.home.path().to_path_buf();
    let token = std::fs::read_to_string(home.join("token")).unwrap();
    let folder = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(home.join("token"), folder.path().join("tok.txt")).unwrap();
    std::os::unix::fs::symlink(home.join("audit.key"), folder.path().join("key.txt")).unwrap();
    let relative = pathdiff(folder.path(), &home.join("token"));
    std::os::unix::fs::symlink(&relative, folder.path().join("relative.txt")).unwrap();
    std::fs::write(folder.path().join("fine.md"), "# Fine\n").unwrap();
    let folder_arg = folder.path().display().to_string();
    served.hearth.ok(&[
        "projects",
        "new",
        "Leaky",
        "--folder",
        &folder_arg,
        "--source",
        "tok.txt",
        "--source",
        "key.txt",
        "--source",
        "relative.txt",
        "--source",
        "fine.md",
    ]);
    let output = served.hearth.run(&["context", "retry", "Leaky"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    for name in ["tok.txt", "key.txt", "relative.txt"] {
        let line = stdout
            .lines()
            .find(|line| line.contains(name))
            .unwrap_or_else(|| panic!("{name} in {stdout}"));
        assert!(line.contains("failed"), "{line}");
    }
    assert!(stdout.contains("fine.md  ready"), "{stdout}");
    let status = served.hearth.ok(&["context", "status", "Leaky"]);
    assert!(
        status.contains("never include Hearth's own data directory"),
        "{status}"
    );
    // No snapshot anywhere in the cache holds the token.
    for entry in walk(&home.join("context-cache")) {
        let text = std::fs::read_to_string(&entry).unwrap_or_default();
        assert!(
            !text.contains(token.trim()),
            "{} holds the token",
            entry.display()
        );
    }
}

/// `target` relative to `from` (both absolute), through `..`.
fn pathdiff(from: &Path, target: &Path) -> std::path::PathBuf {
    let ups = from.components().count() - 1;
    let mut relative = std::path::PathBuf::new();
    for _ in 0..ups {
        relative.push("..");
    }
    relative.join(target.strip_prefix("/").unwrap())
}

fn walk(directory: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = std::fs::read_dir(directory) else {
        return files;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}
