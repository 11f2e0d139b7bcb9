//! Directories for a terminal's working directory.

use std::io::ErrorKind;

use hearth_confine::{Error, FileKind};
use pretty_assertions::assert_eq;

use super::support::{Fixture, assert_matches, refused};

#[test]
fn directories_inside_the_root_resolve_to_their_canonical_path() {
    let fixture = Fixture::new();
    let link = fixture.symlink("sub", "sub-link");
    assert_eq!(
        fixture.roots.directory(&fixture.root).unwrap(),
        fixture.root
    );
    assert_eq!(
        fixture.roots.directory(&fixture.path("sub")).unwrap(),
        fixture.path("sub")
    );
    assert_eq!(fixture.roots.directory(&link).unwrap(), fixture.path("sub"));
    assert_eq!(
        fixture
            .roots
            .directory(&fixture.path("sub/./../sub/"))
            .unwrap(),
        fixture.path("sub")
    );
}

#[test]
fn a_file_is_not_a_directory() {
    let fixture = Fixture::new();
    let file = fixture.path("inside.txt");
    assert_matches!(
        refused(fixture.roots.directory(&file)),
        Error::NotDirectory { ref path, kind: FileKind::RegularFile } if *path == file
    );
}

#[test]
fn directories_outside_the_roots_are_refused() {
    let fixture = Fixture::new();
    let outside = fixture.outside.clone();
    assert_matches!(
        fixture.guarded(|| refused(fixture.roots.directory(&outside))),
        Error::OutsideRoots { ref path, .. } if *path == outside
    );
    let parent = fixture.path("..");
    assert_matches!(
        refused(fixture.roots.directory(&parent)),
        Error::OutsideRoots { ref path, .. } if *path == parent
    );
    let link = fixture.symlink(&fixture.outside, "out");
    assert_matches!(
        refused(fixture.roots.directory(&link)),
        Error::Escape { ref path } if *path == link
    );
    let relative = fixture.symlink("..", "sub/up-and-out");
    let through = relative.join("..");
    assert_matches!(
        refused(fixture.roots.directory(&through)),
        Error::Escape { ref path } if *path == through
    );
}

#[test]
fn the_data_directory_is_not_a_working_directory() {
    let fixture = Fixture::new();
    std::fs::create_dir(fixture.data.join("sessions")).unwrap();
    let link = fixture.symlink(".hearth/sessions", "sessions-link");
    for path in [fixture.data.clone(), fixture.data.join("sessions"), link] {
        assert_matches!(
            refused(fixture.roots.directory(&path)),
            Error::Denied { path: ref p } if *p == path
        );
    }
}

#[test]
fn a_missing_directory_is_an_error_saying_so() {
    let fixture = Fixture::new();
    let missing = fixture.path("missing");
    let error = refused(fixture.roots.directory(&missing));
    assert_matches!(
        error,
        Error::Io { ref path, ref source, .. }
            if *path == missing && source.kind() == ErrorKind::NotFound
    );
}
