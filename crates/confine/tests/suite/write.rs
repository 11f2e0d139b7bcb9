//! The write half of the confinement matrix, and what an atomic write promises: new
//! files and directories created inside, modes kept, hashes reported, nothing left
//! half-done.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use hearth_confine::{Error, FileKind, Rule, Written};
use pretty_assertions::assert_eq;

use super::support::{
    CAP, Fixture, INSIDE, SECRET, assert_matches, mode, refused, temp_files, umask, within_deadline,
};

const OLD: &[u8] = b"old content\n";
const NEW: &[u8] = b"new content\n";
const OLD_SHA256: &str = "40eda80edfc38b36bdcdc408aa6ff2cc40b708e46ece9dfd2b2801a05a18a5fc";
const NEW_SHA256: &str = "1c3ef9a7c817b4642bcb3cb1456fbce92a6f992df2e1d6ad9d8a2dfb4fdf42f6";

// Controls and what a successful write does.

#[test]
fn a_new_file_in_missing_nested_directories_is_created() {
    let fixture = Fixture::new();
    let path = fixture.path("a/b/c/new.txt");
    let written = fixture.guarded(|| fixture.roots.write(&path, NEW).unwrap());
    assert_eq!(
        written,
        Written {
            path: path.clone(),
            before_sha256: None,
            after_sha256: NEW_SHA256.to_owned(),
            created: true,
        }
    );
    assert_eq!(fs::read(&path).unwrap(), NEW);
    assert_eq!(mode(&path), 0o644 & !umask());
    assert!(fixture.path("a/b/c").is_dir());
    assert_eq!(temp_files(&fixture.path("a/b/c")), Vec::<String>::new());
}

#[test]
fn replacing_a_file_keeps_its_mode_and_reports_both_hashes() {
    let fixture = Fixture::new();
    for (name, kept) in [
        ("private.txt", 0o600),
        ("shared.txt", 0o666),
        ("script.sh", 0o775),
    ] {
        let path = fixture.path(name);
        fs::write(&path, OLD).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(kept)).unwrap();
        let written = fixture.guarded(|| fixture.roots.write(&path, NEW).unwrap());
        assert_eq!(
            written,
            Written {
                path: path.clone(),
                before_sha256: Some(OLD_SHA256.to_owned()),
                after_sha256: NEW_SHA256.to_owned(),
                created: false,
            }
        );
        assert_eq!(fs::read(&path).unwrap(), NEW);
        assert_eq!(mode(&path), kept);
    }
    assert_eq!(temp_files(&fixture.root), Vec::<String>::new());
}

#[test]
fn a_write_through_a_symlinked_directory_inside_names_the_real_file() {
    let fixture = Fixture::new();
    let link = fixture.symlink("sub", "sub-link");
    let written = fixture.roots.write(&link.join("nested.txt"), NEW).unwrap();
    assert_eq!(written.path, fixture.path("sub/nested.txt"));
    assert_eq!(fs::read(fixture.path("sub/nested.txt")).unwrap(), NEW);
}

#[test]
fn a_written_file_reads_back() {
    let fixture = Fixture::new();
    let path = fixture.path("round-trip.txt");
    fixture.roots.write(&path, NEW).unwrap();
    assert_eq!(
        fixture.roots.read(&path, CAP).unwrap().as_deref(),
        Some(NEW)
    );
}

// Rules 1 to 3.

#[test]
fn writes_outside_the_roots_are_refused() {
    let fixture = Fixture::new();
    assert_matches!(
        fixture.write_refused(Path::new("relative.txt")),
        Error::NotAbsolute { .. }
    );
    let secret = fixture.outside.join("secret.txt");
    assert_matches!(
        fixture.write_refused(&secret),
        Error::OutsideRoots { ref path, .. } if *path == secret
    );
    let climbing = fixture.path("../outside/secret.txt");
    assert_matches!(
        fixture.write_refused(&climbing),
        Error::OutsideRoots { ref path, .. } if *path == climbing
    );
    let back = fixture.path("sub/../../outside/../root/new.txt");
    assert_matches!(fixture.write_refused(&back), Error::Escape { ref path } if *path == back);
    assert!(!fixture.path("new.txt").exists());
}

#[test]
fn a_write_through_a_symlinked_directory_pointing_outside_is_refused() {
    let fixture = Fixture::new();
    fixture.symlink(&fixture.outside, "out");
    for path in [
        fixture.path("out/secret.txt"),
        fixture.path("out/new.txt"),
        fixture.path("out/new-dir/new.txt"),
    ] {
        assert_matches!(fixture.write_refused(&path), Error::Escape { path: ref p } if *p == path);
    }
}

// Rule 4.

#[test]
fn writes_into_the_data_directory_are_refused() {
    let fixture = Fixture::new();
    let link = fixture.symlink(".hearth", "data-link");
    for path in [
        fixture.data.join("state.db"),
        fixture.data.join("new.txt"),
        fixture.data.join("new-dir/deeper/new.txt"),
        link.join("state.db"),
        fixture.data.clone(),
    ] {
        let error = fixture.write_refused(&path);
        assert_matches!(error, Error::Denied { path: ref p } if *p == path);
        assert_eq!(error.rule(), Some(Rule::NotDenied));
    }
}

// Rule 5.

#[test]
fn a_symlink_as_the_final_component_is_not_replaced() {
    let fixture = Fixture::new();
    let inside = fixture.symlink("inside.txt", "inside-link");
    let outside = fixture.symlink(fixture.outside.join("secret.txt"), "outside-link");
    let dangling = fixture.symlink("missing.txt", "dangling-link");
    for link in [&inside, &outside, &dangling] {
        let error = fixture.write_refused(link);
        assert_matches!(error, Error::SymlinkTarget { ref path } if path == link);
        assert!(fs::symlink_metadata(link).unwrap().is_symlink());
    }
    assert_eq!(fs::read(fixture.path("inside.txt")).unwrap(), INSIDE);
    assert!(!fixture.path("missing.txt").exists());
}

// Rule 6.

#[test]
fn only_regular_files_are_written() {
    let fixture = Fixture::new();
    let fifo = fixture.path("pipe");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
    )
    .unwrap();
    let roots = fixture.roots.clone();
    let asked = fifo.clone();
    let result = within_deadline(move || roots.write(&asked, b"x"));
    assert_matches!(
        refused(result),
        Error::NotRegularFile { ref path, kind: FileKind::Fifo } if *path == fifo
    );
    for path in [
        fixture.path("sub"),
        fixture.root.clone(),
        fixture.path("sub/.."),
    ] {
        assert_matches!(
            fixture.write_refused(&path),
            Error::NotRegularFile { path: ref p, kind: FileKind::Directory } if *p == path
        );
    }
    assert_eq!(temp_files(&fixture.root), Vec::<String>::new());
}

// Rule 7.

#[test]
fn a_hard_link_to_an_outside_file_is_not_written() {
    let fixture = Fixture::new();
    let link = fixture.path("hard-link.txt");
    fs::hard_link(fixture.outside.join("secret.txt"), &link).unwrap();
    assert_matches!(
        fixture.write_refused(&link),
        Error::HardLinked { ref path, links: 2 } if *path == link
    );
    assert_eq!(fs::read(&link).unwrap(), SECRET);
}

// Atomicity.

#[test]
fn a_write_failing_midway_leaves_the_old_file_and_no_temporary_file() {
    let fixture = Fixture::new();
    let path = fixture.path("kept.txt");
    fs::write(&path, OLD).unwrap();
    let _unreplaceable = Unreplaceable::new(&path);
    let error = fixture.guarded(|| refused(fixture.roots.write(&path, NEW)));
    assert_matches!(error, Error::Io { ref path, .. } if *path == fixture.path("kept.txt"));
    assert_eq!(error.rule(), None);
    assert_eq!(fs::read(&path).unwrap(), OLD);
    assert_eq!(temp_files(&fixture.root), Vec::<String>::new());
}

/// Makes a file impossible to replace until dropped. As root, which permission bits do
/// not stop, the file is made immutable (`chattr +i`): the temporary file is written
/// and synced, and the rename over the target fails. Otherwise the directory is made
/// read-only, and creating the temporary file fails.
struct Unreplaceable {
    file: PathBuf,
    immutable: bool,
}

impl Unreplaceable {
    fn new(file: &Path) -> Self {
        let immutable = rustix::process::geteuid().is_root();
        if immutable {
            let status = Command::new("chattr").arg("+i").arg(file).status().unwrap();
            assert!(status.success(), "chattr +i failed on {}", file.display());
        } else {
            let directory = file.parent().unwrap();
            fs::set_permissions(directory, fs::Permissions::from_mode(0o555)).unwrap();
        }
        Unreplaceable {
            file: file.to_path_buf(),
            immutable,
        }
    }
}

impl Drop for Unreplaceable {
    fn drop(&mut self) {
        if self.immutable {
            Command::new("chattr")
                .arg("-i")
                .arg(&self.file)
                .status()
                .unwrap();
        } else {
            let directory = self.file.parent().unwrap();
            fs::set_permissions(directory, fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
}
