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
