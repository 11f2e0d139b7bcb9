//! A path component that turns into a symlink between one use and the next, or while
//! Hearth is using it: the kernel's resolution beneath the root refuses it every time,
//! and nothing outside is ever read or changed.

use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use hearth_confine::Error;
use pretty_assertions::assert_eq;

use super::support::{CAP, Fixture, assert_matches, temp_files};

const FLIP: &[u8] = b"inside the flipping directory\n";

/// Attempts allowed before the concurrent test gives up waiting for every outcome.
const MAX_ATTEMPTS: usize = 200_000;
/// How many times each outcome must be seen.
const EACH_OUTCOME: usize = 25;

#[test]
fn a_directory_swapped_for_a_symlink_between_uses_is_refused() {
    let fixture = Fixture::new();
    let project = fixture.path("project");
    fs::create_dir(&project).unwrap();
    fs::write(project.join("secret.txt"), FLIP).unwrap();
    // First use: an ordinary directory.
    assert_eq!(
        fixture
            .roots
            .read(&project.join("secret.txt"), CAP)
            .unwrap()
            .as_deref(),
        Some(FLIP)
    );
    fixture
        .roots
        .write(&project.join("notes.txt"), b"notes\n")
        .unwrap();

    for target in [
        fixture.outside.clone(),
        Path::new("../outside").to_path_buf(),
    ] {
        if fs::symlink_metadata(&project).unwrap().is_symlink() {
            fs::remove_file(&project).unwrap();
        } else {
            fs::rename(&project, fixture.path("project.old")).unwrap();
        }
        std::os::unix::fs::symlink(&target, &project).unwrap();
        for path in [project.join("secret.txt"), project.join("notes.txt")] {
            assert_matches!(
                fixture.read_refused(&path),
                Error::Escape { path: ref p } if *p == path
            );
        }
        for path in [
            project.join("secret.txt"),
            project.join("new.txt"),
            project.join("new-dir/new.txt"),
        ] {
            assert_matches!(
                fixture.write_refused(&path),
                Error::Escape { path: ref p } if *p == path
            );
        }
    }
}

#[test]
fn a_directory_flipping_with_a_symlink_never_leads_outside() {
    let fixture = Fixture::new();
    let flip = fixture.path("flip");
    let other = fixture.path("flip-other");
    fs::create_dir(&flip).unwrap();
    fs::write(flip.join("secret.txt"), FLIP).unwrap();
    std::os::unix::fs::symlink(&fixture.outside, &other).unwrap();
    let path = flip.join("secret.txt");

    let outcomes = fixture.guarded(|| {
        let stop = Arc::new(AtomicBool::new(false));
        let flipper = {
            let stop = Arc::clone(&stop);
            let (flip, other) = (flip.clone(), other.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    // Atomically exchanges the directory and the symlink.
                    rustix::fs::renameat_with(
                        rustix::fs::CWD,
                        &flip,
                        rustix::fs::CWD,
                        &other,
                        rustix::fs::RenameFlags::EXCHANGE,
                    )
                    .unwrap();
                }
            })
        };
        let mut outcomes = Outcomes::default();
        // With and without the denied-directory check, which walks the ancestry of
        // what was opened and so meets the flipping directory too.
        for roots in [&fixture.roots, &fixture.bare]
            .into_iter()
            .cycle()
            .take(MAX_ATTEMPTS)
        {
            match roots.read(&path, CAP) {
                Ok(Some(content)) => {
                    assert_eq!(content, FLIP, "a read returned another file's content");
                    outcomes.read += 1;
                }
                Err(Error::Escape { .. }) => outcomes.read_refused += 1,
                Err(Error::Changed { .. }) => outcomes.changed += 1,
                other => panic!("unexpected read outcome {other:?}"),
            }
            match roots.write(&path, FLIP) {
                Ok(_) => outcomes.written += 1,
                Err(Error::Escape { .. }) => outcomes.write_refused += 1,
                Err(Error::Changed { .. }) => outcomes.changed += 1,
                other => panic!("unexpected write outcome {other:?}"),
            }
            if outcomes.all_seen() {
                break;
            }
        }
        stop.store(true, Ordering::Relaxed);
        flipper.join().unwrap();
        outcomes
    });
    assert!(
        outcomes.all_seen(),
        "not every outcome was seen in {MAX_ATTEMPTS} attempts: {outcomes:?}"
    );
    let directory = if flip.is_symlink() { &other } else { &flip };
    assert_eq!(fs::read(directory.join("secret.txt")).unwrap(), FLIP);
    assert_eq!(temp_files(directory), Vec::<String>::new());
    assert_eq!(temp_files(&fixture.outside), Vec::<String>::new());
}

#[derive(Debug, Default)]
struct Outcomes {
    read: usize,
    read_refused: usize,
    written: usize,
    write_refused: usize,
    /// Refusals because something changed during the checks (not required).
    changed: usize,
}

impl Outcomes {
    fn all_seen(&self) -> bool {
        [
            self.read,
            self.read_refused,
            self.written,
            self.write_refused,
        ]
        .iter()
        .all(|count| *count >= EACH_OUTCOME)
    }
}
