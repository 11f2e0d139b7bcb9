//! The read half of the confinement matrix: every way out of the root, each refused
//! with its exact error, with nothing outside touched; and the controls that succeed.

use std::fs;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};

use hearth_confine::{Error, FileKind, Rule};
use pretty_assertions::assert_eq;

use super::support::{
    CAP, Fixture, INSIDE, NESTED, STATE, assert_matches, refused, within_deadline,
};

// Controls: the same fixture lets legitimate reads through.

#[test]
fn a_file_inside_the_root_is_read() {
    let fixture = Fixture::new();
    let read = fixture
        .roots
        .read(&fixture.path("inside.txt"), CAP)
        .unwrap();
    assert_eq!(read.as_deref(), Some(INSIDE));
    let read = fixture
        .roots
        .read(&fixture.path("sub/nested.txt"), CAP)
        .unwrap();
    assert_eq!(read.as_deref(), Some(NESTED));
}

#[test]
fn dot_and_dot_dot_that_stay_inside_are_resolved() {
    let fixture = Fixture::new();
    let path = fixture.path("sub/./../sub/nested.txt");
    assert_eq!(
        fixture.roots.read(&path, CAP).unwrap().as_deref(),
        Some(NESTED)
    );
}

#[test]
fn a_relative_symlink_that_stays_inside_is_followed() {
    let fixture = Fixture::new();
    let link = fixture.symlink("../inside.txt", "sub/to-inside");
    let directory_link = fixture.symlink("sub", "sub-link");
    assert_eq!(
        fixture.roots.read(&link, CAP).unwrap().as_deref(),
        Some(INSIDE)
    );
    let through = directory_link.join("nested.txt");
    assert_eq!(
        fixture.roots.read(&through, CAP).unwrap().as_deref(),
        Some(NESTED)
    );
}

#[test]
fn a_missing_file_inside_the_root_is_none() {
    let fixture = Fixture::new();
    assert_eq!(
        fixture.roots.read(&fixture.path("nope.txt"), CAP).unwrap(),
        None
    );
    assert_eq!(
        fixture
            .roots
            .read(&fixture.path("no/such/dir/nope.txt"), CAP)
            .unwrap(),
        None
    );
}

#[test]
fn a_file_exactly_at_the_cap_is_read() {
    let fixture = Fixture::new();
    let path = fixture.path("sixteen.txt");
    fs::write(&path, [b'x'; 16]).unwrap();
    assert_eq!(fixture.roots.read(&path, 16).unwrap(), Some(vec![b'x'; 16]));
}

// Rules 1 and 2: absolute paths under a root.

#[test]
fn a_relative_path_is_refused() {
    let fixture = Fixture::new();
    let error = fixture.read_refused(&PathBuf::from("inside.txt"));
    assert_matches!(
        error,
        Error::NotAbsolute { ref path } if path.as_path() == Path::new("inside.txt")
    );
    assert_eq!(error.rule(), Some(Rule::Absolute));
}

#[test]
fn an_absolute_path_outside_the_roots_is_refused() {
    let fixture = Fixture::new();
    let secret = fixture.outside.join("secret.txt");
    let error = fixture.read_refused(&secret);
    assert_matches!(
        error,
        Error::OutsideRoots { ref path, ref roots }
            if *path == secret && *roots == [fixture.root.as_path()]
    );
    let message = error.to_string();
    assert!(message.contains("rule 2 `inside_roots`"), "{message}");
}

#[test]
fn dot_dot_climbing_out_of_the_root_is_refused() {
    let fixture = Fixture::new();
    let path = fixture.path("../outside/secret.txt");
    assert_matches!(
        fixture.read_refused(&path),
        Error::OutsideRoots { path: ref p, .. } if *p == path
    );
}

#[test]
fn dot_dot_leaving_the_root_and_coming_back_is_refused() {
    let fixture = Fixture::new();
    // Out through `..` beneath the root: the kernel refuses.
    let path = fixture.path("sub/../../root/inside.txt");
    assert_matches!(fixture.read_refused(&path), Error::Escape { path: ref p } if *p == path);
    // Out before the root is even reached.
    let path = fixture.outside.join("../root/inside.txt");
    assert_matches!(fixture.read_refused(&path), Error::Escape { path: ref p } if *p == path);
}

// Rule 3: the kernel resolves beneath the root.

#[test]
fn a_symlinked_file_pointing_outside_is_refused() {
    let fixture = Fixture::new();
    let absolute = fixture.symlink(fixture.outside.join("secret.txt"), "absolute-link");
    let relative = fixture.symlink("../outside/secret.txt", "relative-link");
    for link in [absolute, relative] {
        assert_matches!(fixture.read_refused(&link), Error::Escape { ref path } if *path == link);
    }
}

#[test]
fn a_symlinked_directory_pointing_outside_in_the_middle_is_refused() {
    let fixture = Fixture::new();
    fixture.symlink(&fixture.outside, "out");
    fixture.symlink("../../outside", "sub/out-relative");
    for path in [
        fixture.path("out/secret.txt"),
        fixture.path("sub/out-relative/secret.txt"),
    ] {
        assert_matches!(fixture.read_refused(&path), Error::Escape { path: ref p } if *p == path);
    }
}

#[test]
fn an_absolute_symlink_back_into_the_root_is_refused() {
    // The kernel cannot resolve an absolute target beneath the root.
    let fixture = Fixture::new();
    let link = fixture.symlink(fixture.path("inside.txt"), "absolute-inside");
    assert_matches!(fixture.read_refused(&link), Error::Escape { ref path } if *path == link);
}

#[test]
fn a_symlink_loop_is_refused() {
    let fixture = Fixture::new();
    fixture.symlink("loop-b", "loop-a");
    fixture.symlink("loop-a", "loop-b");
    let itself = fixture.symlink("itself", "itself");
    for path in [fixture.path("loop-a"), itself, fixture.path("loop-a/x.txt")] {
        let error = fixture.read_refused(&path);
        assert_matches!(error, Error::SymlinkLoop { path: ref p } if *p == path);
        assert_eq!(error.rule(), Some(Rule::Beneath));
    }
}

#[test]
fn a_symlink_to_dev_null_is_refused() {
    let fixture = Fixture::new();
    let absolute = fixture.symlink("/dev/null", "null");
    let depth = fixture.root.components().count();
    let relative_target = format!("{}dev/null", "../".repeat(depth));
    let relative = fixture.symlink(relative_target, "null-relative");
    for link in [absolute, relative] {
        assert_matches!(fixture.read_refused(&link), Error::Escape { ref path } if *path == link);
    }
}

// Rule 4: Hearth's data directory, even inside the root.

#[test]
fn the_data_directory_inside_the_root_is_refused() {
    let fixture = Fixture::new();
    for path in [
        fixture.data.join("state.db"),
        fixture.data.clone(),
        fixture.data.join("missing.txt"),
        fixture.path("sub/../.hearth/state.db"),
    ] {
        let error = fixture.read_refused(&path);
        assert_matches!(error, Error::Denied { path: ref p } if *p == path);
        assert_eq!(error.rule(), Some(Rule::NotDenied));
    }
}

#[test]
fn the_data_directory_through_a_symlink_inside_the_root_is_refused() {
    let fixture = Fixture::new();
    let directory = fixture.symlink(".hearth", "data-link");
    let file = fixture.symlink("../.hearth/state.db", "sub/state-link");
    for path in [directory.join("state.db"), file] {
        assert_matches!(fixture.read_refused(&path), Error::Denied { path: ref p } if *p == path);
    }
    // Control: the data directory's file is there to be refused.
    assert_eq!(fs::read(fixture.data.join("state.db")).unwrap(), STATE);
}

// Rule 6: regular files only, and nothing else is ever opened.

#[test]
fn a_directory_is_not_read() {
    let fixture = Fixture::new();
    for path in [fixture.path("sub"), fixture.root.clone()] {
        assert_matches!(
            fixture.read_refused(&path),
            Error::NotRegularFile { path: ref p, kind: FileKind::Directory } if *p == path
        );
    }
}

#[test]
fn a_fifo_is_refused_without_blocking() {
    let fixture = Fixture::new();
    let fifo = fixture.path("pipe");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
    )
    .unwrap();
    let link = fixture.symlink("pipe", "pipe-link");
    for path in [fifo, link] {
        let roots = fixture.roots.clone();
        let asked = path.clone();
        let result = within_deadline(move || roots.read(&asked, CAP));
        assert_matches!(
            refused(result),
            Error::NotRegularFile { path: ref p, kind: FileKind::Fifo } if *p == path
        );
    }
}

#[test]
fn a_character_device_inside_the_root_is_refused() {
    let fixture = Fixture::new();
    let device = fixture.path("devnull");
    let made = rustix::fs::mknodat(
        rustix::fs::CWD,
        &device,
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::from_raw_mode(0o666),
        rustix::fs::makedev(1, 3),
    );
    if let Err(errno) = made {
        // Creating device nodes needs CAP_MKNOD; the symlink case above still covers
        // /dev/null from outside the root.
        eprintln!("skipped: cannot create a device node here ({errno})");
        return;
    }
    let link = fixture.symlink("devnull", "sub-null");
    for path in [device, link] {
        let roots = fixture.roots.clone();
        let asked = path.clone();
        let result = within_deadline(move || roots.read(&asked, CAP));
        assert_matches!(
            refused(result),
            Error::NotRegularFile { path: ref p, kind: FileKind::CharacterDevice } if *p == path
        );
    }
}

#[test]
fn a_unix_socket_is_refused() {
    let fixture = Fixture::new();
    let socket = fixture.path("hearth.sock");
    let _listener = UnixListener::bind(&socket).unwrap();
    assert_matches!(
        fixture.read_refused(&socket),
        Error::NotRegularFile { ref path, kind: FileKind::Socket } if *path == socket
    );
}

// Rule 7: hard links.

#[test]
fn a_hard_link_to_an_outside_file_is_refused() {
    let fixture = Fixture::new();
    let link = fixture.path("hard-link.txt");
    fs::hard_link(fixture.outside.join("secret.txt"), &link).unwrap();
    assert_matches!(
        fixture.read_refused(&link),
        Error::HardLinked { ref path, links: 2 } if *path == link
    );
}

// Rule 8: the size cap.

#[test]
fn a_file_over_the_cap_is_refused() {
    let fixture = Fixture::new();
    let path = fixture.path("seventeen.txt");
    fs::write(&path, [b'x'; 17]).unwrap();
    let error = fixture.guarded(|| refused(fixture.roots.read(&path, 16)));
    assert_matches!(
        error,
        Error::TooLarge { path: ref p, size: 17, limit: 16 } if *p == path
    );
}
