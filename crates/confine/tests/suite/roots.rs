//! Building a set of roots: canonical spellings, several roots, and the configurations
//! that are refused.

use std::fs;
use std::path::PathBuf;

use hearth_confine::{Error, Roots};
use pretty_assertions::assert_eq;

use super::support::{CAP, Fixture, INSIDE, Snapshot, assert_matches, refused};

#[test]
fn a_root_reached_through_a_symlink_answers_to_both_spellings() {
    let fixture = Fixture::new();
    let alias = fixture.base.join("alias");
    std::os::unix::fs::symlink(&fixture.root, &alias).unwrap();
    let roots = Roots::new(std::slice::from_ref(&alias), &[]).unwrap();
    assert_eq!(roots.roots(), std::slice::from_ref(&fixture.root));
    for path in [alias.join("inside.txt"), fixture.path("inside.txt")] {
        assert_eq!(roots.read(&path, CAP).unwrap().as_deref(), Some(INSIDE));
        assert!(roots.contains_lexically(&path));
    }
    assert_eq!(roots.directory(&alias).unwrap(), fixture.root);
}

#[test]
fn a_root_keeps_its_directory_when_its_path_is_swapped() {
    // Each root is opened once: replacing its path with a symlink to elsewhere later
    // does not move the root.
    let fixture = Fixture::new();
    let moved = fixture.base.join("root-moved");
    fs::rename(&fixture.root, &moved).unwrap();
    std::os::unix::fs::symlink(&fixture.outside, &fixture.root).unwrap();
    let outside = Snapshot::of(&fixture.outside);
    {
        // The root's directory has no secret.txt, and the read is not redirected to
        // the outside one.
        assert_eq!(
            fixture
                .roots
                .read(&fixture.path("secret.txt"), CAP)
                .unwrap(),
            None
        );
        assert_eq!(
            fixture
                .roots
                .read(&fixture.path("inside.txt"), CAP)
                .unwrap()
                .as_deref(),
            Some(INSIDE)
        );
        // A write names the file it wrote by its root's path, which now leads
        // elsewhere: refused rather than reported under a wrong name.
        assert_matches!(
            refused(fixture.roots.write(&fixture.path("secret.txt"), b"x")),
            Error::Changed { .. }
        );
    }
    assert_eq!(Snapshot::of(&fixture.outside), outside);
    assert!(!moved.join("secret.txt").exists());
}

#[test]
fn every_root_of_several_is_usable() {
    let fixture = Fixture::new();
    let second = fixture.base.join("second");
    fs::create_dir(&second).unwrap();
    fs::write(second.join("two.txt"), b"two\n").unwrap();
    let roots = Roots::new(
        &[fixture.root.clone(), second.clone()],
        std::slice::from_ref(&fixture.data),
    )
    .unwrap();
    assert_eq!(roots.roots(), &[fixture.root.clone(), second.clone()]);
    assert_eq!(
        roots.read(&second.join("two.txt"), CAP).unwrap().as_deref(),
        Some(&b"two\n"[..])
    );
    roots.write(&second.join("new.txt"), b"new\n").unwrap();
    assert_eq!(fs::read(second.join("new.txt")).unwrap(), b"new\n");
    assert_eq!(roots.directory(&second).unwrap(), second);
    let secret = fixture.outside.join("secret.txt");
    assert_matches!(
        refused(roots.read(&secret, CAP)),
        Error::OutsideRoots { ref roots, .. }
            if *roots == [fixture.root.as_path(), second.as_path()]
    );
    // One root's symlink does not lead into the other.
    std::os::unix::fs::symlink(fixture.path("inside.txt"), second.join("to-first")).unwrap();
    assert_matches!(
        refused(roots.read(&second.join("to-first"), CAP)),
        Error::Escape { .. }
    );
}

#[test]
fn nested_and_repeated_roots_are_accepted() {
    let fixture = Fixture::new();
    let sub = fixture.path("sub");
    let roots = Roots::new(
        &[fixture.root.clone(), sub.clone(), fixture.root.clone()],
        std::slice::from_ref(&fixture.data),
    )
    .unwrap();
    assert_eq!(roots.roots(), &[fixture.root.clone(), sub.clone()]);
    assert!(roots.read(&sub.join("nested.txt"), CAP).unwrap().is_some());
    assert!(
        roots
            .read(&fixture.path("sub/../inside.txt"), CAP)
            .unwrap()
            .is_some()
    );
}

#[test]
fn roots_are_shared_between_threads() {
    fn shared<T: Clone + Send + Sync>(_: &T) {}
    let fixture = Fixture::new();
    shared(&fixture.roots);
    let roots = fixture.roots.clone();
    let path = fixture.path("inside.txt");
    let read = std::thread::spawn(move || roots.read(&path, CAP).unwrap())
        .join()
        .unwrap();
    assert_eq!(read.as_deref(), Some(INSIDE));
}

#[test]
fn unusable_roots_are_refused() {
    let fixture = Fixture::new();
    let cases = [
        PathBuf::from("relative/root"),
        fixture.base.join("missing"),
        fixture.path("inside.txt"),
    ];
    for root in cases {
        assert_matches!(
            refused(Roots::new(std::slice::from_ref(&root), &[])),
            Error::InvalidRoot { ref path, .. } if *path == root
        );
    }
}

#[test]
fn a_root_inside_the_data_directory_is_refused() {
    let fixture = Fixture::new();
    let workspace = fixture.data.join("workspace");
    fs::create_dir(&workspace).unwrap();
    for root in [workspace, fixture.data.clone()] {
        assert_matches!(
            refused(Roots::new(std::slice::from_ref(&root), std::slice::from_ref(&fixture.data))),
            Error::RootDenied { root: ref r, ref denied } if *r == root && *denied == fixture.data
        );
    }
    // Through another spelling of the data directory.
    let alias = fixture.base.join("data-alias");
    std::os::unix::fs::symlink(&fixture.data, &alias).unwrap();
    assert_matches!(
        refused(Roots::new(std::slice::from_ref(&fixture.data), &[alias])),
        Error::RootDenied { .. }
    );
}

#[test]
fn unusable_denied_directories_are_refused() {
    let fixture = Fixture::new();
    for denied in [PathBuf::from("relative"), fixture.path("inside.txt")] {
        assert_matches!(
            refused(Roots::new(
                std::slice::from_ref(&fixture.root),
                std::slice::from_ref(&denied)
            )),
            Error::InvalidDenied { ref path, .. } if *path == denied
        );
    }
}

#[test]
fn a_data_directory_created_after_construction_is_still_denied() {
    let fixture = Fixture::new();
    let later = fixture.path("later-data");
    let roots = Roots::new(
        std::slice::from_ref(&fixture.root),
        std::slice::from_ref(&later),
    )
    .unwrap();
    fs::create_dir(&later).unwrap();
    fs::write(later.join("state.db"), b"state\n").unwrap();
    let path = later.join("state.db");
    assert_matches!(refused(roots.read(&path, CAP)), Error::Denied { path: ref p } if *p == path);
    assert_matches!(refused(roots.write(&path, b"x")), Error::Denied { .. });
    assert_eq!(fs::read(&path).unwrap(), b"state\n");
}

#[test]
fn contains_lexically_reads_the_path_only() {
    let fixture = Fixture::new();
    let roots = &fixture.roots;
    assert!(roots.contains_lexically(&fixture.path("inside.txt")));
    assert!(roots.contains_lexically(&fixture.path("not/yet/there.txt")));
    assert!(roots.contains_lexically(&fixture.root));
    assert!(roots.contains_lexically(&fixture.path("sub/../inside.txt")));
    assert!(!roots.contains_lexically(&fixture.path("../outside/secret.txt")));
    assert!(!roots.contains_lexically(&fixture.base.join("root2/file.txt")));
    assert!(!roots.contains_lexically(&PathBuf::from("inside.txt")));
}
