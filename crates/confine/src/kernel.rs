//! The kernel calls every decision rests on: `openat2` beneath a root's directory, file
//! identities (device and inode numbers), and the walk up a directory's ancestry.

use std::io;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{FileType, Mode, OFlags, ResolveFlags, Stat};
use rustix::io::Errno;

use crate::error::{Error, FileKind};

/// How every path given by a caller is resolved: beneath the directory it is resolved
/// from, never through a `/proc` magic link.
pub(crate) const BENEATH: ResolveFlags = ResolveFlags::BENEATH.union(ResolveFlags::NO_MAGICLINKS);

/// How a single name inside an already opened directory is resolved: no symlink at all.
pub(crate) const NAME_ONLY: ResolveFlags = BENEATH.union(ResolveFlags::NO_SYMLINKS);

/// `openat2` answers `EAGAIN` when a concurrent rename or mount raced with `..`
/// resolution; it is retried this many times.
const ATTEMPTS: usize = 16;

/// Directories deeper than this are not walked (the walk would not end otherwise on a
/// corrupted file system).
const MAX_DEPTH: usize = 4096;

/// Opens `relative` (empty for the directory itself) beneath `directory`.
pub(crate) fn open_beneath(
    directory: BorrowedFd<'_>,
    relative: &Path,
    flags: OFlags,
    mode: Mode,
    resolve: ResolveFlags,
) -> Result<OwnedFd, Errno> {
    let relative = if relative.as_os_str().is_empty() {
        Path::new(".")
    } else {
        relative
    };
    for _ in 0..ATTEMPTS {
        match rustix::fs::openat2(directory, relative, flags | OFlags::CLOEXEC, mode, resolve) {
            Err(Errno::AGAIN) => continue,
            outcome => return outcome,
        }
    }
    Err(Errno::AGAIN)
}

/// Opens `relative` beneath `directory` without reading it (`O_PATH`), following
/// symlinks that stay beneath.
pub(crate) fn locate_beneath(directory: BorrowedFd<'_>, relative: &Path) -> Result<OwnedFd, Errno> {
    open_beneath(directory, relative, OFlags::PATH, Mode::empty(), BENEATH)
}

/// The error for a failed open of the caller's `path`: refusals for what the kernel
/// refused, a failure otherwise.
pub(crate) fn open_error(errno: Errno, operation: &'static str, path: &Path) -> Error {
    let path = path.to_path_buf();
    match errno {
        Errno::XDEV => Error::Escape { path },
        Errno::LOOP => Error::SymlinkLoop { path },
        Errno::NOSYS => Error::Unsupported {
            reason: "the kernel does not provide openat2".to_owned(),
        },
        other => Error::Io {
            operation,
            path,
            source: io::Error::from(other),
        },
    }
}

/// A failure of `operation` on the caller's `path`.
pub(crate) fn io_error(errno: Errno, operation: &'static str, path: &Path) -> Error {
    Error::Io {
        operation,
        path: path.to_path_buf(),
        source: io::Error::from(errno),
    }
}

/// What makes a file the file it is: its device and inode numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Identity {
    device: u64,
    inode: u64,
}

impl Identity {
    /// The identity recorded in `stat`.
    #[allow(
        clippy::useless_conversion,
        reason = "the width of these fields differs between architectures"
    )]
    pub(crate) fn of(stat: &Stat) -> Self {
        Identity {
            device: u64::from(stat.st_dev),
            inode: u64::from(stat.st_ino),
        }
    }

    /// The identity of an open file.
    pub(crate) fn of_fd(fd: BorrowedFd<'_>) -> Result<Self, Errno> {
        rustix::fs::fstat(fd).map(|stat| Identity::of(&stat))
    }

    /// The identity `metadata` records.
    pub(crate) fn of_metadata(metadata: &std::fs::Metadata) -> Self {
        Identity {
            device: metadata.dev(),
            inode: metadata.ino(),
        }
    }

    /// The identity of the file at `path`, following symlinks; `None` when there is
    /// none.
    pub(crate) fn of_path(path: &Path) -> Option<Self> {
        std::fs::metadata(path)
            .ok()
            .map(|metadata| Identity::of_metadata(&metadata))
    }
}

/// The kind of file `stat` describes.
pub(crate) fn kind(stat: &Stat) -> FileKind {
    FileKind::from(FileType::from_raw_mode(stat.st_mode))
}

/// The number of hard links `stat` records.
#[allow(
    clippy::useless_conversion,
    reason = "the width of st_nlink differs between architectures"
)]
pub(crate) fn links(stat: &Stat) -> u64 {
    u64::from(stat.st_nlink)
}

/// Refuses what `stat` describes unless it is a regular file with one name: a
/// directory, device or pipe is not read or replaced as a file, and a file with other
/// hard links may be one outside the roots under another name.
pub(crate) fn one_regular_file(stat: &Stat, path: &Path) -> Result<(), Error> {
    match kind(stat) {
        FileKind::RegularFile => {}
        other => {
            return Err(Error::NotRegularFile {
                path: path.to_path_buf(),
                kind: other,
            });
        }
    }
    if links(stat) > 1 {
        return Err(Error::HardLinked {
            path: path.to_path_buf(),
            links: links(stat),
        });
    }
    Ok(())
}

/// The size `stat` records.
pub(crate) fn size(stat: &Stat) -> u64 {
    u64::try_from(stat.st_size).unwrap_or(0)
}

/// Where a directory's ancestry leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ancestry {
    /// To the root, through no denied directory.
    Root,
    /// Through the denied directory with this identity (the start may be it).
    Denied(Identity),
    /// To the top of the file system without meeting the root: the directory was moved
    /// out of the root after it was opened.
    Elsewhere,
}

/// Walks from `start` (a directory) up through `..` until `root`, the top of the file
/// system, or a directory in `denied`. Without a `root`, the walk goes to the top.
pub(crate) fn ancestry(
    start: BorrowedFd<'_>,
    root: Option<Identity>,
    denied: &[Identity],
) -> Result<Ancestry, Errno> {
    let mut current: Option<OwnedFd> = None;
    for _ in 0..MAX_DEPTH {
        let directory = current.as_ref().map_or(start, AsFd::as_fd);
        let identity = Identity::of_fd(directory)?;
        if denied.contains(&identity) {
            return Ok(Ancestry::Denied(identity));
        }
        if Some(identity) == root {
            return Ok(Ancestry::Root);
        }
        let parent = rustix::fs::openat(
            directory,
            "..",
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        if Identity::of_fd(parent.as_fd())? == identity {
            return Ok(Ancestry::Elsewhere);
        }
        current = Some(parent);
    }
    Err(Errno::NAMETOOLONG)
}

/// The canonical path of the file `relative` names under `root` (a canonical
/// directory), provided it is still the file `expected`.
pub(crate) fn confirmed_canonical(
    root: &Path,
    relative: &Path,
    expected: Identity,
) -> Option<PathBuf> {
    let candidate = std::fs::canonicalize(root.join(relative)).ok()?;
    let metadata = std::fs::symlink_metadata(&candidate).ok()?;
    (Identity::of_metadata(&metadata) == expected).then_some(candidate)
}

/// Opens the directory that holds the file at the canonical path `file`, provided its
/// entry there is still the file `expected`.
pub(crate) fn confirmed_parent(file: &Path, expected: Identity) -> Option<OwnedFd> {
    let parent = file.parent()?;
    let name = file.file_name()?;
    let directory = rustix::fs::openat2(
        rustix::fs::CWD,
        parent,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
    )
    .ok()?;
    let entry = rustix::fs::statat(&directory, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).ok()?;
    (Identity::of(&entry) == expected).then_some(directory)
}
