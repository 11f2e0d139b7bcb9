//! `read_outside`: a source file anywhere, except where it really lies in a denied
//! directory — whatever absolute or relative symlink, or hard link, leads there.

use std::os::unix::fs::symlink;
use std::path::Path;

use hearth_confine::{Error, Rule, read_outside};

const LIMIT: u64 = 1024 * 1024;

struct Tree {
    _root: tempfile::TempDir,
    data: std::path::PathBuf,
    project: std::path::PathBuf,
    elsewhere: std::path::PathBuf,
}

fn tree() -> Tree {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let project = root.path().join("project");
    let elsewhere = root.path().join("elsewhere");
    for directory in [&data, &project, &elsewhere] {
        std::fs::create_dir(directory).unwrap();
    }
    std::fs::write(data.join("token"), "secret-token").unwrap();
    std::fs::create_dir(data.join("context-cache")).unwrap();
    std::fs::write(data.join("context-cache/snapshot.md"), "cached").unwrap();
    std::fs::write(elsewhere.join("notes.md"), "my notes").unwrap();
    std::fs::write(project.join("plain.md"), "plain").unwrap();
    Tree {
        _root: root,
        data,
        project,
        elsewhere,
    }
}

fn rule(result: hearth_confine::Result<Vec<u8>>) -> Option<Rule> {
    result.err().as_ref().and_then(Error::rule)
}

#[test]
fn a_source_into_the_data_directory_is_refused_however_it_gets_there() {
    let tree = tree();
    let denied = [tree.data.clone()];
    let absolute = tree.project.join("tok.txt");
    symlink(tree.data.join("token"), &absolute).unwrap();
    let relative = tree.project.join("relative.txt");
    symlink(Path::new("../data/token"), &relative).unwrap();
    let through_directory = tree.project.join("linked-data");
    symlink(&tree.data, &through_directory).unwrap();
    let chained = tree.project.join("chained.txt");
    symlink(&absolute, &chained).unwrap();
    let nested = tree.project.join("cache.md");
    symlink(tree.data.join("context-cache/snapshot.md"), &nested).unwrap();
    for path in [
        tree.data.join("token"),
        absolute,
        relative,
        through_directory.join("token"),
        chained,
        nested,
    ] {
        let read = read_outside(&path, &denied, LIMIT);
        assert_eq!(rule(read), Some(Rule::NotDenied), "{}", path.display());
    }
    // A hard link to the token: another name of a file inside.
    let hard = tree.project.join("hard.txt");
    std::fs::hard_link(tree.data.join("token"), &hard).unwrap();
    assert_eq!(
        rule(read_outside(&hard, &denied, LIMIT)),
        Some(Rule::SingleLink)
    );
}

#[test]
fn sources_elsewhere_are_read_through_any_symlink() {
    let tree = tree();
    let denied = [tree.data.clone()];
    let linked = tree.project.join("notes.md");
    symlink(tree.elsewhere.join("notes.md"), &linked).unwrap();
    assert_eq!(read_outside(&linked, &denied, LIMIT).unwrap(), b"my notes");
    assert_eq!(
        read_outside(&tree.project.join("plain.md"), &denied, LIMIT).unwrap(),
        b"plain"
    );
    // Without a denied directory the token itself would be read: the control.
    assert_eq!(
        read_outside(&tree.data.join("token"), &[], LIMIT).unwrap(),
        b"secret-token"
    );
    // Not a regular file, too large, missing: each its own refusal.
    assert_eq!(
        rule(read_outside(&tree.project, &denied, LIMIT)),
        Some(Rule::FileKind)
    );
    assert_eq!(
        rule(read_outside(&tree.project.join("plain.md"), &denied, 2)),
        Some(Rule::SizeCap)
    );
    assert!(read_outside(&tree.project.join("missing.md"), &denied, LIMIT).is_err());
}
