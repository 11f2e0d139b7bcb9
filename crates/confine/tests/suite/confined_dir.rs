//! A directory Hearth owns, reached with no symlink followed: what works inside it, and
//! every planted symlink, `..` and odd file refused with nothing outside touched.
//!
//! The fixture's root plays the owned directory; `outside/` beside it must never change.

use std::ffi::OsString;
use std::fs;
use std::io::Read as _;
use std::path::Path;

use hearth_confine::{ConfinedDir, DirEntry, Error, FileKind, Rule};
use pretty_assertions::assert_eq;

use super::support::{
    Fixture, INSIDE, SECRET, assert_matches, mode, refused, temp_files, umask, within_deadline,
};

const NEW: &[u8] = b"written by hearth\n";

fn owned(fixture: &Fixture) -> ConfinedDir {
    ConfinedDir::open(&fixture.root).unwrap()
}

// Controls: what works inside.

#[test]
fn files_and_directories_are_created_written_read_listed_and_removed() {
    let fixture = Fixture::new();
    let directory = owned(&fixture);
    fixture.guarded(|| {
        directory
            .create_directories(Path::new("cache/files"), 0o700)
            .unwrap();
        directory
            .write(Path::new("cache/files/one.md"), NEW, 0o600)
            .unwrap();
        assert_eq!(
            directory
                .read(Path::new("cache/files/one.md"), 1024)
                .unwrap(),
            Some(NEW.to_vec())
        );
        assert_eq!(
            directory.list(Path::new("cache/files")).unwrap(),
            Some(vec![DirEntry {
                name: OsString::from("one.md"),
                kind: FileKind::RegularFile,
                bytes: NEW.len() as u64,
            }])
        );
        assert!(
            directory
                .remove_file(Path::new("cache/files/one.md"))
                .unwrap()
        );
        assert!(
            !directory
                .remove_file(Path::new("cache/files/one.md"))
                .unwrap()
        );
        assert!(directory.remove_tree(Path::new("cache")).unwrap());
        assert!(!directory.remove_tree(Path::new("cache")).unwrap());
    });
    assert!(!fixture.path("cache").exists());
}

#[test]
fn modes_are_the_ones_asked_for_less_the_umask() {
    let fixture = Fixture::new();
    let directory = owned(&fixture);
    directory
        .create_directories(Path::new("private/deeper"), 0o700)
        .unwrap();
    directory
        .write(Path::new("private/deeper/file"), NEW, 0o600)
        .unwrap();
    directory
        .open_or_create(Path::new("private/lock"), 0o600)
        .unwrap();
    assert_eq!(mode(&fixture.path("private")), 0o700 & !umask());
    assert_eq!(mode(&fixture.path("private/deeper")), 0o700 & !umask());
    assert_eq!(mode(&fixture.path("private/deeper/file")), 0o600 & !umask());
    assert_eq!(mode(&fixture.path("private/lock")), 0o600 & !umask());
    assert_eq!(
        temp_files(&fixture.path("private/deeper")),
        Vec::<String>::new()
    );
}

#[test]
fn missing_things_are_none_or_false_not_errors() {
    let fixture = Fixture::new();
    let directory = owned(&fixture);
    assert_eq!(
        directory.read(Path::new("no/such/file"), 1024).unwrap(),
        None
    );
    assert_eq!(directory.list(Path::new("no/such")).unwrap(), None);
    assert!(!directory.remove_file(Path::new("no/such/file")).unwrap());
    assert!(!directory.remove_tree(Path::new("no/such")).unwrap());
}

#[test]
fn a_write_replaces_and_opening_a_lock_file_never_truncates() {
    let fixture = Fixture::new();
    let directory = owned(&fixture);
    directory
        .write(Path::new("inside.txt"), NEW, 0o600)
        .unwrap();
    assert_eq!(fs::read(fixture.path("inside.txt")).unwrap(), NEW);
    let mut lock = directory
        .open_or_create(Path::new("inside.txt"), 0o600)
        .unwrap();
    let mut held = String::new();
    lock.read_to_string(&mut held).unwrap();
    assert_eq!(held.as_bytes(), NEW);
    assert_eq!(temp_files(&fixture.root), Vec::<String>::new());
}

// Planted symlinks: never followed.

#[test]
fn a_symlinked_directory_on_the_way_refuses_every_operation() {
    let fixture = Fixture::new();
    let directory = owned(&fixture);
    fixture.symlink(&fixture.outside, "files");
    fixture.guarded(|| {
        let through = |error: Error| {
            assert_matches!(&error, Error::ThroughSymlink { .. });
            assert_eq!(error.rule(), Some(Rule::Beneath));
        };
        through(refused(directory.write(
            Path::new("files/secret.txt"),
            NEW,
            0o600,
        )));
        through(refused(directory.write(
            Path::new("files/new.txt"),
            NEW,
            0o600,
        )));
        through(refused(
            directory.create_directories(Path::new("files/deeper"), 0o700),
        ));
        through(refused(directory.read(Path::new("files/secret.txt"), 1024)));
        through(refused(
            directory.open_or_create(Path::new("files/lock"), 0o600),
        ));
        through(refused(directory.list(Path::new("files"))));
        through(refused(
            directory.remove_file(Path::new("files/secret.txt")),
        ));
        through(refused(directory.remove_tree(Path::new("files/x"))));
    });
    assert_eq!(
        fs::read(fixture.outside.join("secret.txt")).unwrap(),
        SECRET
    );
    assert!(!fixture.outside.join("new.txt").exists());
}

#[test]
fn a_symlink_at_the_final_name_is_refused_not_written_through() {
    let fixture = Fixture::new();
    let directory = owned(&fixture);
    let link = fixture.symlink(fixture.outside.join("secret.txt"), "snapshot.md");
    fixture.guarded(|| {
        assert_matches!(
            refused(directory.write(Path::new("snapshot.md"), NEW, 0o600)),
            Error::SymlinkTarget { .. }
        );
        assert_matches!(
            refused(directory.read(Path::new("snapshot.md"), 1024)),
            Error::ThroughSymlink { .. }
        );
        assert_matches!(
            refused(directory.open_or_create(Path::new("snapshot.md"), 0o600)),
            Error::ThroughSymlink { .. }
        );
    });
    assert!(fs::symlink_metadata(&link).unwrap().is_symlink());
    // Removing it removes the link, never what it points to.
    fixture.guarded(|| assert!(directory.remove_file(Path::new("snapshot.md")).unwrap()));
    assert!(fs::symlink_metadata(&link).is_err());
}

#[test]
fn a_relative_symlink_that_stays_inside_is_refused_too() {
    let fixture = Fixture::new();
    let directory = owned(&fixture);
    fixture.symlink("sub", "alias");
    assert_matches!(
        refused(directory.read(Path::new("alias/nested.txt"), 1024)),
        Error::ThroughSymlink { .. }
    );
    // Control: the real path reads.
    assert!(
        directory
            .read(Path::new("sub/nested.txt"), 1024)
            .unwrap()
            .is_some()
    );
}

#[test]
fn removing_a_tree_removes_links_inside_it_not_what_they_point_to() {
    let fixture = Fixture::new();
    let directory = owned(&fixture);
    fs::create_dir_all(fixture.path("markers/project")).unwrap();
    fs::write(fixture.path("markers/project/failed.json"), b"{}").unwrap();
    fixture.symlink(&fixture.outside, "markers/project/away");
    fixture.symlink(fixture.outside.join("secret.txt"), "markers/secret");
    fixture.guarded(|| assert!(directory.remove_tree(Path::new("markers")).unwrap()));
    assert!(!fixture.path("markers").exists());
    assert_eq!(
        fs::read(fixture.outside.join("secret.txt")).unwrap(),
        SECRET
    );
}

#[test]
fn a_symlink_named_as_a_tree_is_removed_itself() {
    let fixture = Fixture::new();
    let directory = owned(&fixture);
    fixture.symlink(&fixture.outside, "locks");
    fixture.guarded(|| assert!(directory.remove_tree(Path::new("locks")).unwrap()));
    assert!(fs::symlink_metadata(fixture.path("locks")).is_err());
}

// `..`, hard links, odd files.

#[test]
fn dot_dot_that_leaves_is_refused() {
    let fixture = Fixture::new();
    let directory = owned(&fixture);
    fixture.guarded(|| {
        assert_matches!(
            refused(directory.read(Path::new("../outside/secret.txt"), 1024)),
            Error::Escape { .. }
        );
        assert_matches!(
            refused(directory.write(Path::new("../outside/new.txt"), NEW, 0o600)),
            Error::Escape { .. }
        );
        assert_matches!(
            refused(directory.remove_file(Path::new("../outside/secret.txt"))),
            Error::Escape { .. }
        );
    });
}

#[test]
fn a_hard_linked_file_is_not_read() {
    let fixture = Fixture::new();
    let directory = owned(&fixture);
    fs::hard_link(fixture.outside.join("secret.txt"), fixture.path("linked")).unwrap();
    assert_matches!(
        refused(directory.read(Path::new("linked"), 1024)),
        Error::HardLinked { links: 2, .. }
    );
    // A write replaces the name; the other link keeps its content.
    directory.write(Path::new("linked"), NEW, 0o600).unwrap();
    assert_eq!(
        fs::read(fixture.outside.join("secret.txt")).unwrap(),
        SECRET
    );
}

#[test]
fn a_fifo_is_refused_without_blocking() {
    let fixture = Fixture::new();
    let status = std::process::Command::new("mkfifo")
        .arg(fixture.path("pipe"))
        .status()
        .unwrap();
    assert!(status.success());
    let root = fixture.root;
    let error = within_deadline(move || {
        let directory = ConfinedDir::open(&root).unwrap();
        refused(directory.read(Path::new("pipe"), 1024))
    });
    assert_matches!(
        error,
        Error::NotRegularFile {
            kind: FileKind::Fifo,
            ..
        }
    );
}

#[test]
fn reads_are_capped_and_kinds_are_checked() {
    let fixture = Fixture::new();
    let directory = owned(&fixture);
    assert_matches!(
        refused(directory.read(Path::new("inside.txt"), 3)),
        Error::TooLarge { limit: 3, .. }
    );
    assert_eq!(
        directory.read(Path::new("inside.txt"), 1024).unwrap(),
        Some(INSIDE.to_vec())
    );
    assert_matches!(
        refused(directory.write(Path::new("sub"), NEW, 0o600)),
        Error::NotRegularFile {
            kind: FileKind::Directory,
            ..
        }
    );
    assert_matches!(
        refused(directory.list(Path::new("inside.txt"))),
        Error::NotDirectory {
            kind: FileKind::RegularFile,
            ..
        }
    );
    assert_matches!(
        refused(directory.create_directories(Path::new("inside.txt/x"), 0o700)),
        Error::NotDirectory {
            kind: FileKind::RegularFile,
            ..
        }
    );
}
